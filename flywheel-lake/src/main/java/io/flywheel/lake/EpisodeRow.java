package io.flywheel.lake;

import java.util.List;
import java.util.Objects;

/**
 * One row of {@code episodes} (see {@link TableSchemas}). All times are int64 ns since the Unix
 * epoch, durations int64 ns. Every field but {@code episodeId} is nullable.
 *
 * @param episodeId episode identifier (deterministic from the content hash, so a re-ingest gives
 *     the same id), not null
 * @param recordingId recording id
 * @param robotId robot id
 * @param task task text
 * @param scene scene
 * @param operator operator
 * @param outcome success / failure / intervention / unknown
 * @param startNs first frame time
 * @param endNs last frame time
 * @param durationNs end - start
 * @param masterTopic master clock topic or {@code rate:<hz>}
 * @param frameCount number of frames
 * @param qualityStatus pass / warn / fail
 * @param qualityFlags names of fired quality rules (empty list when none; null before rules ran)
 * @param qualityMetricsJson JSON object of metrics
 * @param metadataJson JSON object, anything else
 */
public record EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
        String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
        Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
        String metadataJson) {
    public EpisodeRow {
        Objects.requireNonNull(episodeId, "episodeId");
        qualityFlags = qualityFlags == null ? null : List.copyOf(qualityFlags);
    }
}
