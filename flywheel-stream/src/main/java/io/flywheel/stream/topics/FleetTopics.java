package io.flywheel.stream.topics;

import java.util.List;

/**
 * The fleet's Kafka topics. Every record is keyed by robot id (UTF-8) and carries one protobuf message of
 * {@code flywheel/fleet/v1/events.proto}: {@link #EPISODES} an {@code EpisodeEvent}, {@link #OBSERVATIONS} an
 * {@code ObservationSummary}, {@link #ALERTS} an {@code Alert}. {@link #DEAD_LETTERS} receives what the labeller
 * could not use (the original key and value, with headers naming the source topic, partition, offset and reason).
 */
public final class FleetTopics {
    private FleetTopics() {}

    public static final String EPISODES = "fleet.episodes";
    public static final String OBSERVATIONS = "fleet.observations";
    public static final String ALERTS = "fleet.alerts";
    public static final String DEAD_LETTERS = "fleet.dead-letters";
    /** The topics the labeller reads. */
    public static final List<String> INPUTS = List.of(EPISODES, OBSERVATIONS, ALERTS);
    /** Every topic, for creating them on a new cluster. */
    public static final List<String> ALL = List.of(EPISODES, OBSERVATIONS, ALERTS, DEAD_LETTERS);

    /** Dead-letter header: the topic the record came from. */
    public static final String H_TOPIC = "flywheel.source.topic";
    /** Dead-letter header: its partition (decimal). */
    public static final String H_PARTITION = "flywheel.source.partition";
    /** Dead-letter header: its offset (decimal). */
    public static final String H_OFFSET = "flywheel.source.offset";
    /** Dead-letter header: why: {@code malformed}, {@code unknown_episode} or {@code late}. */
    public static final String H_REASON = "flywheel.reason";
}
