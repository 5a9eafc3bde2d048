package io.flywheel.rows;

import java.util.Objects;

/**
 * An episode's realtime (stream) label, as stored in the {@code stream_*} columns of {@code episodes}: what the stream
 * labeller decided from the fleet's live events, kept apart from the outcome the recording itself states.
 *
 * @param outcome {@code success}, {@code failure} or {@code needs_review}; not null
 * @param rule the rule that decided it ({@code e_stop}, {@code intervention}, {@code empty_grasp},
 *     {@code success_signal}, {@code no_success_signal}); not null
 * @param rulesVersion the labelling rules' version (e.g. {@code label-rules-1}); not null
 * @param labelledAtNs when the label was committed to {@code label_history}, int64 ns since the Unix epoch
 * @param streamEpisodeId the episode's id in the fleet stream (the robot's name of it, which may differ from the
 *     lake's content-derived {@code episode_id}); not null
 */
public record StreamLabel(String outcome, String rule, String rulesVersion, long labelledAtNs, String streamEpisodeId) {
    /**
     * The key of an episode's metadata JSON that holds the recording's own name of the episode (ingest takes it from
     * the recording's {@code episode_id} metadata): what the fleet stream calls the episode.
     */
    public static final String SOURCE_EPISODE_ID = "source_episode_id";

    public StreamLabel {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(rulesVersion, "rulesVersion");
        Objects.requireNonNull(streamEpisodeId, "streamEpisodeId");
    }
}
