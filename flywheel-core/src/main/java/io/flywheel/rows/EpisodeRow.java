package io.flywheel.rows;

import java.util.List;
import java.util.Objects;

/**
 * One row of {@code episodes} (see {@code io.flywheel.lake.TableSchemas}). All times are int64 ns since the Unix
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
 * @param embedding episode embedding, float32[D] L2-normalised (enrich), nullable
 * @param embeddingModel model id of the episode's embeddings, nullable
 * @param embeddingSha256 SHA-256 of the model file, nullable
 * @param enrichedAtNs when enrich committed the episode, ns since epoch; null = not enriched
 * @param enrichmentJson JSON object: enrich settings and counts, nullable
 */
public record EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
        String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
        Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
        String metadataJson, float[] embedding, String embeddingModel, String embeddingSha256, Long enrichedAtNs,
        String enrichmentJson) {
    public EpisodeRow {
        Objects.requireNonNull(episodeId, "episodeId");
        qualityFlags = qualityFlags == null ? null : List.copyOf(qualityFlags);
        embedding = embedding == null ? null : embedding.clone();
    }

    /** An episode before enrichment. */
    public EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
            String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
            Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
            String metadataJson) {
        this(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs, durationNs, masterTopic,
                frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson, null, null, null, null, null);
    }

    /** @return this episode with enrich's columns set */
    public EpisodeRow withEnrichment(float[] newEmbedding, String model, String sha256, long enrichedAt, String json) {
        return new EpisodeRow(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs,
                durationNs, masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson,
                newEmbedding, model, sha256, enrichedAt, json);
    }

    @Override
    public float[] embedding() {
        return embedding == null ? null : embedding.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EpisodeRow e && episodeId.equals(e.episodeId) && Objects.equals(recordingId, e.recordingId)
                && Objects.equals(robotId, e.robotId) && Objects.equals(task, e.task) && Objects.equals(scene, e.scene)
                && Objects.equals(operator, e.operator) && Objects.equals(outcome, e.outcome)
                && Objects.equals(startNs, e.startNs) && Objects.equals(endNs, e.endNs)
                && Objects.equals(durationNs, e.durationNs) && Objects.equals(masterTopic, e.masterTopic)
                && Objects.equals(frameCount, e.frameCount) && Objects.equals(qualityStatus, e.qualityStatus)
                && Objects.equals(qualityFlags, e.qualityFlags) && Objects.equals(qualityMetricsJson, e.qualityMetricsJson)
                && Objects.equals(metadataJson, e.metadataJson) && java.util.Arrays.equals(embedding, e.embedding)
                && Objects.equals(embeddingModel, e.embeddingModel) && Objects.equals(embeddingSha256, e.embeddingSha256)
                && Objects.equals(enrichedAtNs, e.enrichedAtNs) && Objects.equals(enrichmentJson, e.enrichmentJson);
    }

    @Override
    public int hashCode() {
        return Objects.hash(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs, durationNs,
                masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson,
                java.util.Arrays.hashCode(embedding), embeddingModel, embeddingSha256, enrichedAtNs, enrichmentJson);
    }
}
