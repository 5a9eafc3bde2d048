package io.flywheel.ingest;

import java.util.List;
import java.util.Map;

/**
 * One recording: the raw files that belong together and the episodes read from them. Storage-free.
 *
 * @param recordingId {@code rec-} + the first 16 hex digits of SHA-256 over the files' SHA-256 hex digests
 *     in order: the same bytes always give the same id (ingest is idempotent on it)
 * @param format container format
 * @param files the raw files, in recording order
 * @param robotId robot id (profile, else metadata), "" when unknown
 * @param metadata recording-level metadata (MCAP header profile and library, rosbag2 metadata, ...)
 * @param profile the robot profile used: the one given, or the one detected ({@link RobotProfile#describe()}
 *     prints it)
 * @param episodes the episodes, in order
 */
public record Recording(String recordingId, SourceFormat format, List<SourceFile> files, String robotId,
                        Map<String, String> metadata, RobotProfile profile, List<Episode> episodes) {
    public Recording {
        files = List.copyOf(files);
        // in the recording's order: Map.copyOf iterates in an order that changes from JVM to JVM, and this map
        // becomes JSON in the lake rows
        Map.copyOf(metadata); // refuses null keys and values
        metadata = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(metadata));
        episodes = List.copyOf(episodes);
    }

    /** @return total bytes of the raw files */
    public long bytes() {
        long n = 0;
        for (SourceFile f : files) n += f.bytes();
        return n;
    }
}
