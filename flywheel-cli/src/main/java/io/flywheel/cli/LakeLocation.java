package io.flywheel.cli;

import io.flywheel.lake.Lake;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * Where the lake of a command is: the first positional parameter {@code LAKE} (a local folder or
 * {@code s3://bucket/prefix}) and its {@link StorageOptions}. A picocli {@code @Mixin} of every command that opens a
 * lake; the command's own positional parameters start at index 1.
 */
final class LakeLocation {
    @Parameters(index = "0", paramLabel = "LAKE", description = "lake folder or s3://bucket/prefix")
    String lake;

    @Mixin
    StorageOptions storage;

    /** @return the location as given */
    String uri() {
        return lake;
    }

    /** @return the lake's open options (S3 settings given on the command line, else the environment's) */
    Lake.Options options() {
        return storage.lakeOptions();
    }

    /**
     * @return the lake, opened with {@link #options()}; close it
     * @throws io.flywheel.error.NotFoundException when there is no lake at the location
     */
    Lake open() {
        return Lake.open(lake, options());
    }
}
