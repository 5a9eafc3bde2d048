package io.flywheel.spark;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.List;

import io.flywheel.ingest.SourceFormat;
import io.flywheel.ingest.Sources;

/**
 * One recording as a Spark task receives it: its format, the path given for it and its raw files, as strings (a
 * {@link Path} does not serialise).
 *
 * @param format the source format's name ({@link SourceFormat})
 * @param root the file or folder the recording was found as
 * @param files its raw files, in recording order
 */
record RecordingTask(String format, String root, List<String> files) implements Serializable {
    RecordingTask {
        files = List.copyOf(files);
    }

    static RecordingTask of(Sources.Source s) {
        return new RecordingTask(s.format().name(), s.root().toString(),
                s.files().stream().map(Path::toString).toList());
    }

    Sources.Source source() {
        return new Sources.Source(SourceFormat.valueOf(format), Path.of(root),
                files.stream().map(Path::of).toList());
    }

    /** @return the name the one-machine ingest shows: the single file, or the folder */
    String name() {
        return files.size() == 1 ? files.get(0) : root;
    }
}
