package io.flywheel.cli;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StorageConfig;
import picocli.CommandLine.Option;

/**
 * The S3 settings of a lake at an {@code s3://} URI, shared by every command that opens a lake (a picocli
 * {@code @Mixin}; most commands get it through {@link LakeLocation}): {@code --endpoint}, {@code --region} and
 * {@code --allow-http}. A setting given here wins over the config file named by {@code FLYWHEEL_CONFIG} and over
 * the environment ({@code AWS_ENDPOINT_URL}, {@code AWS_REGION}); credentials come from those two only
 * ({@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY}), never from the command line. A local lake ignores them.
 */
final class StorageOptions {
    @Option(names = "--endpoint", paramLabel = "URL",
            description = "S3 endpoint of an s3:// lake, e.g. http://127.0.0.1:9000 (an http:// one also allows HTTP;"
                    + " default: AWS_ENDPOINT_URL, else AWS)")
    String endpoint;

    @Option(names = "--region", description = "S3 region of an s3:// lake (default: AWS_REGION)")
    String region;

    @Option(names = "--allow-http", description = "allow a plain-HTTP S3 endpoint")
    boolean allowHttp;

    /** @return the lake's open options: the defaults (environment, config file) plus what was given here */
    Lake.Options lakeOptions() {
        if (endpoint == null && region == null && !allowHttp) {
            return Lake.Options.defaults();
        }
        StorageConfig.Builder b = StorageConfig.builder();
        if (endpoint != null) {
            b.endpoint(endpoint);
        }
        if (region != null) {
            b.region(region);
        }
        if (allowHttp) {
            b.allowHttp(true);
        }
        return Lake.Options.defaults().withStorage(b.build());
    }
}
