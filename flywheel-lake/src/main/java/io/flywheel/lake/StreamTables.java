package io.flywheel.lake;

import java.util.List;

import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.LabelHistoryRow;

/**
 * The realtime labelling tables of a lake, typed: written by the stream labeller through {@link LakeTransaction},
 * read with {@link LakeTable#rows}.
 *
 * <h2>label_history</h2> One {@link LabelHistoryRow} per stream label committed, appended in label batches, each
 * batch in one lake commit with the Kafka offsets it covers (the lake property {@link #offsetsProperty}). Created by
 * the first batch. Columns: episode_id, robot_id, label, rule, rules_version, offsets, consumer_group utf8 not null;
 * checkpoint_id int64 not null (-1 without checkpoints); labelled_at_ns int64 not null (ns since the Unix epoch).
 */
public final class StreamTables {
    private StreamTables() {}

    /** The label history table's name. */
    public static final String LABEL_HISTORY = "label_history";
    public static final String LABEL = "label";
    public static final String RULE = "rule";
    public static final String RULES_VERSION = "rules_version";
    public static final String OFFSETS = "offsets";
    public static final String CHECKPOINT_ID = "checkpoint_id";
    public static final String CONSUMER_GROUP = "consumer_group";
    public static final String LABELLED_AT_NS = "labelled_at_ns";

    /**
     * @param consumerGroup a labeller's consumer group
     * @return the lake property holding the Kafka offsets that group's committed labels cover
     *     ({@code topic/partition=next offset}, comma-separated)
     */
    public static String offsetsProperty(String consumerGroup) {
        return "stream.offsets." + consumerGroup;
    }

    /**
     * @param consumerGroup a labeller's consumer group
     * @return the lake property holding the highest Kafka positions that group had read at its last commit
     */
    public static String seenProperty(String consumerGroup) {
        return "stream.seen." + consumerGroup;
    }

    /**
     * @param consumerGroup a labeller's consumer group
     * @return the lake property naming the last checkpoint whose labels that group committed, {@code RUN:ID} (the
     *     Flink job id and checkpoint id); absent for a labeller without checkpoints
     */
    public static String checkpointProperty(String consumerGroup) {
        return "stream.checkpoint." + consumerGroup;
    }

    static final Schema LABEL_HISTORY_SCHEMA = new Schema(List.of(
            TableSchemas.field(TableSchemas.EPISODE_ID, TableSchemas.UTF8, false, "the labelled episode"),
            TableSchemas.field(TableSchemas.ROBOT_ID, TableSchemas.UTF8, false, "the episode's robot"),
            TableSchemas.field(LABEL, TableSchemas.UTF8, false, "success | failure | needs_review"),
            TableSchemas.field(RULE, TableSchemas.UTF8, false, "the rule that decided the label"),
            TableSchemas.field(RULES_VERSION, TableSchemas.UTF8, false, "the labelling rules' version"),
            TableSchemas.field(OFFSETS, TableSchemas.UTF8, false, "Kafka offsets the commit covers,"
                    + " topic/partition=next offset, comma-separated"),
            TableSchemas.field(CHECKPOINT_ID, TableSchemas.I64, false, "Flink checkpoint id, -1 without checkpoints"),
            TableSchemas.field(CONSUMER_GROUP, TableSchemas.UTF8, false, "the labeller's consumer group"),
            TableSchemas.field(LABELLED_AT_NS, TableSchemas.I64, false, "commit time, int64 ns since Unix epoch")));

    /** The label history table: one row per committed stream label. */
    public static final TypedTable<LabelHistoryRow> LABEL_HISTORY_TABLE = new TypedTable<>(LABEL_HISTORY,
            m -> LABEL_HISTORY_SCHEMA, StreamRows::labels, StreamRows::label);
}
