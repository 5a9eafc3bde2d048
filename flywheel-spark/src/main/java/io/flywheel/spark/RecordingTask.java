package io.flywheel.spark;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.List;

import io.flywheel.ingest.RawFiles;
import io.flywheel.ingest.SourceFormat;
import io.flywheel.ingest.Sources;

/**
 * One recording as a Spark task receives it, as strings (a {@link Path} does not serialise): local paths, or
 * {@code s3://} URIs for a recording found on S3 ({@link S3Discovery}).
 *
 * @param format the source format's name ({@link SourceFormat}); "" for an S3 folder, detected once copied
 * @param root the file or folder the recording was found as
 * @param files its raw files, in recording order (for an S3 folder: none, found once copied)
 * @param copies S3 objects the task copies to its temporary folder before reading (folders, TFRecords, sidecar
 *     videos); the others are read in place by byte range
 */
record RecordingTask(String format, String root, List<String> files, List<String> copies) implements Serializable {
    RecordingTask {
        files = List.copyOf(files);
        copies = List.copyOf(copies);
    }

    static RecordingTask of(Sources.Source s) {
        return new RecordingTask(s.format().name(), s.root().toString(),
                s.files().stream().map(Path::toString).toList(), List.of());
    }

    /** @return true for a recording on S3 */
    boolean remote() {
        return root.startsWith("s3://");
    }

    /** @return the local recording */
    Sources.Source source() {
        return new Sources.Source(SourceFormat.valueOf(format), Path.of(root),
                files.stream().map(Path::of).toList());
    }

    /**
     * @param raw the mirror of the store (its copies made)
     * @return the recording, its paths in the mirror
     */
    Sources.Source source(RawFiles raw) throws java.io.IOException {
        if (format.isEmpty()) {
            return Sources.detect(raw.pathOf(root));
        }
        return new Sources.Source(SourceFormat.valueOf(format), raw.pathOf(root),
                files.stream().map(raw::pathOf).toList());
    }

    /** @return the name the one-machine ingest shows: the single file, or the folder */
    String name() {
        return files.size() == 1 ? files.get(0) : root;
    }
}
