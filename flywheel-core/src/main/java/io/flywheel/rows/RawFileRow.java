package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code raw_files} (see {@code io.flywheel.lake.TableSchemas}).
 *
 * @param uri location of the raw file (absolute path or URI), not null
 * @param bytes file size in bytes, &ge; 0
 * @param sha256 lower-case hex SHA-256 of the content (64 chars), not null; the idempotency key
 * @param format {@code mcap}, {@code ros1bag}, {@code rosbag2} or {@code rlds}, not null
 * @param recordingId recording the file belongs to, nullable
 * @param robotId robot identifier, nullable
 * @param recordedAtNs recording start, ns since epoch, nullable
 * @param topicsJson JSON summary of topics, nullable
 * @param ingestStatus {@code ok}, {@code partial} or {@code failed}, nullable
 * @param ingestedAtNs ingest time, ns since epoch, nullable
 */
public record RawFileRow(String uri, long bytes, String sha256, String format, String recordingId,
        String robotId, Long recordedAtNs, String topicsJson, String ingestStatus, Long ingestedAtNs) {
    public RawFileRow {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(sha256, "sha256");
        Objects.requireNonNull(format, "format");
        if (bytes < 0) {
            throw new IllegalArgumentException("raw file " + uri + ": bytes must be >= 0, got " + bytes);
        }
    }
}
