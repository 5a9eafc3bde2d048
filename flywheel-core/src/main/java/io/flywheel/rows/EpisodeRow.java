package io.flywheel.rows;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

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
 * @param outcome what the recording states: success / failure / intervention / needs_review / unknown (the
 *     effective outcome, which a stream label overrides, is {@link #effectiveOutcome()})
 * @param startNs first frame time
 * @param endNs last frame time
 * @param durationNs end - start
 * @param masterTopic master clock topic or {@code rate:<hz>}
 * @param frameCount number of frames
 * @param qualityStatus pass / warn / fail
 * @param qualityFlags names of fired quality rules (empty list when none; null before rules ran)
 * @param qualityMetricsJson JSON object of metrics
 * @param metadataJson JSON object, anything else
 * @param embeddings per embedding model id, what enrich committed for the episode ({@link EpisodeEmbedding}: the
 *     vector, or null, and when); a model absent from the map has not embedded the episode yet (an empty map before
 *     enrich). Stored one column pair per model, {@code emb_<key>} and {@code emb_<key>_at_ns}
 * @param enrichedAtNs when enrich committed the episode's image metrics and labels, ns since epoch; null = not
 *     enriched
 * @param enrichmentJson JSON object: enrich settings and counts, nullable
 * @param stateNames one name per value of the frames' {@code state} vectors, in vector order (joint names, field
 *     paths, prefixed by topic where two topics share one: {@code left_follow.joint_1}); null when unknown (an
 *     episode ingested before names were stored, or one without state)
 * @param actionNames the same for {@code action}; null when unknown
 * @param streamLabel the realtime label the stream gave the episode (columns {@code stream_outcome},
 *     {@code stream_rule}, {@code stream_rules_version}, {@code stream_labelled_at_ns}, {@code stream_episode_id});
 *     null when it has none
 */
public record EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
        String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
        Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
        String metadataJson, Map<String, EpisodeEmbedding> embeddings, Long enrichedAtNs, String enrichmentJson,
        List<String> stateNames, List<String> actionNames, StreamLabel streamLabel) {
    /** Where the effective outcome comes from: the stream's label. */
    public static final String SOURCE_STREAM = "stream";
    /** Where the effective outcome comes from: the recording. */
    public static final String SOURCE_RECORDING = "recording";

    public EpisodeRow {
        Objects.requireNonNull(episodeId, "episodeId");
        qualityFlags = qualityFlags == null ? null : List.copyOf(qualityFlags);
        embeddings = embeddings == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(embeddings));
        stateNames = stateNames == null ? null : List.copyOf(stateNames);
        actionNames = actionNames == null ? null : List.copyOf(actionNames);
    }

    /** An episode without value names (see the canonical constructor). */
    public EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
            String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
            Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
            String metadataJson, Map<String, EpisodeEmbedding> embeddings, Long enrichedAtNs, String enrichmentJson) {
        this(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs, durationNs, masterTopic,
                frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson, embeddings, enrichedAtNs,
                enrichmentJson, null, null, null);
    }

    /** An episode with value names and without a stream label. */
    public EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
            String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
            Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
            String metadataJson, Map<String, EpisodeEmbedding> embeddings, Long enrichedAtNs, String enrichmentJson,
            List<String> stateNames, List<String> actionNames) {
        this(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs, durationNs, masterTopic,
                frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson, embeddings, enrichedAtNs,
                enrichmentJson, stateNames, actionNames, null);
    }

    /** An episode before enrichment. */
    public EpisodeRow(String episodeId, String recordingId, String robotId, String task, String scene,
            String operator, String outcome, Long startNs, Long endNs, Long durationNs, String masterTopic,
            Long frameCount, String qualityStatus, List<String> qualityFlags, String qualityMetricsJson,
            String metadataJson) {
        this(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs, durationNs, masterTopic,
                frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson, Map.of(), null, null, null,
                null);
    }

    /** @return this episode with another metadata JSON */
    public EpisodeRow withMetadataJson(String json) {
        return new EpisodeRow(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs,
                durationNs, masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, json,
                embeddings, enrichedAtNs, enrichmentJson, stateNames, actionNames, streamLabel);
    }

    /** @return this episode with enrich's image-metrics columns set ({@code enriched_at_ns}, {@code enrichment}) */
    public EpisodeRow withEnrichment(long enrichedAt, String json) {
        return new EpisodeRow(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs,
                durationNs, masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson,
                embeddings, enrichedAt, json, stateNames, actionNames, streamLabel);
    }

    /**
     * @param model the embedding model id
     * @param vector float32[D], L2-normalised, or null when the episode had nothing to embed
     * @param embeddedAt when the embedding is committed, ns since epoch
     * @return this episode with the model's embedding set (other models' kept)
     */
    public EpisodeRow withEmbedding(String model, float[] vector, long embeddedAt) {
        Map<String, EpisodeEmbedding> m = new TreeMap<>(embeddings);
        m.put(Objects.requireNonNull(model, "model"), new EpisodeEmbedding(vector, embeddedAt));
        return new EpisodeRow(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs,
                durationNs, masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson,
                m, enrichedAtNs, enrichmentJson, stateNames, actionNames, streamLabel);
    }

    /** @return the model's episode vector (float32[D], L2-normalised), or null when it has none */
    public float[] embedding(String model) {
        EpisodeEmbedding e = embeddings.get(model);
        return e == null ? null : e.vector();
    }

    /** @return this episode with another stream label (null: none) */
    public EpisodeRow withStreamLabel(StreamLabel label) {
        return new EpisodeRow(episodeId, recordingId, robotId, task, scene, operator, outcome, startNs, endNs,
                durationNs, masterTopic, frameCount, qualityStatus, qualityFlags, qualityMetricsJson, metadataJson,
                embeddings, enrichedAtNs, enrichmentJson, stateNames, actionNames, label);
    }

    /**
     * @return the episode's outcome as the lake uses it: the stream label's when there is one, else what the recording
     *     states ({@link #outcome()}, possibly null)
     */
    public String effectiveOutcome() {
        return effectiveOutcome(outcome, streamLabel == null ? null : streamLabel.outcome());
    }

    /** @return {@link #SOURCE_STREAM} when a stream label decides the outcome, else {@link #SOURCE_RECORDING} */
    public String outcomeSource() {
        return streamLabel != null ? SOURCE_STREAM : SOURCE_RECORDING;
    }

    /**
     * The rule for the effective outcome, for readers that scan the two columns themselves.
     *
     * @param recorded the {@code outcome} column (null or empty when unknown)
     * @param stream the {@code stream_outcome} column (null when the stream has not labelled the episode)
     * @return {@code stream} when it is non-empty, else {@code recorded}
     */
    public static String effectiveOutcome(String recorded, String stream) {
        return stream != null && !stream.isEmpty() ? stream : recorded;
    }
}
