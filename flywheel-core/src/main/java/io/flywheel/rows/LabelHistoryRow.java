package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code label_history}: one stream label committed for one episode (see
 * {@code io.flywheel.lake.StreamTables}). An episode's current stream label is its row with the highest
 * {@code labelledAtNs}; exactly-once labelling means one row per episode per consumer group.
 *
 * @param episodeId the episode; not null
 * @param robotId the robot; not null
 * @param label {@code success}, {@code failure} or {@code needs_review}; not null
 * @param rule the rule that decided it ({@code e_stop}, {@code intervention}, {@code empty_grasp},
 *     {@code success_signal}, {@code no_success_signal}); not null
 * @param rulesVersion the labelling rules' version, e.g. {@code label-rules-1}; not null
 * @param offsets the Kafka offsets the commit covers, {@code topic/partition=next offset} joined by commas, sorted;
 *     not null
 * @param checkpointId the Flink checkpoint id the commit belongs to, or -1 for a labeller without checkpoints
 * @param consumerGroup the labeller's consumer group (the offsets' owner); not null
 * @param labelledAtNs when the label was committed, int64 ns since the Unix epoch
 */
public record LabelHistoryRow(String episodeId, String robotId, String label, String rule, String rulesVersion,
        String offsets, long checkpointId, String consumerGroup, long labelledAtNs) {
    public LabelHistoryRow {
        Objects.requireNonNull(episodeId, "episodeId");
        Objects.requireNonNull(robotId, "robotId");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(rulesVersion, "rulesVersion");
        Objects.requireNonNull(offsets, "offsets");
        Objects.requireNonNull(consumerGroup, "consumerGroup");
    }
}
