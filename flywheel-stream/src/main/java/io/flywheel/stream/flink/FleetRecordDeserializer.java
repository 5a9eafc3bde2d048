package io.flywheel.stream.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import com.google.protobuf.InvalidProtocolBufferException;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.stream.topics.FleetTopics;

/**
 * Decodes the fleet topics' protobuf values into {@link FleetRecord}s. Never throws on bad input: a value that does
 * not decode, an episode event of no known kind, an observation summary whose gripper sample counts differ (or
 * that has samples and no sample period), or a message without robot id, episode id (alerts may lack it) or a
 * positive time becomes a {@link FleetRecord#MALFORMED} record naming what was wrong.
 */
public final class FleetRecordDeserializer implements KafkaRecordDeserializationSchema<FleetRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<FleetRecord> out) {
        out.collect(decode(r.topic(), r.partition(), r.offset(), r.key(), r.value()));
    }

    /**
     * @return the decoded record; {@link FleetRecord#MALFORMED} with {@link FleetRecord#error} set when bad
     */
    public static FleetRecord decode(String topic, int partition, long offset, byte[] key, byte[] value) {
        FleetRecord f = new FleetRecord();
        f.topic = topic;
        f.partition = partition;
        f.offset = offset;
        f.key = key;
        f.value = value == null ? new byte[0] : value;
        try {
            switch (topic) {
                case FleetTopics.EPISODES -> {
                    EpisodeEvent e = EpisodeEvent.parseFrom(f.value);
                    if (e.getKind() == EpisodeEvent.Kind.STARTED) {
                        f.kind = FleetRecord.STARTED;
                    } else if (e.getKind() == EpisodeEvent.Kind.ENDED) {
                        f.kind = FleetRecord.ENDED;
                    } else {
                        throw new InvalidProtocolBufferException("episode event kind " + e.getKindValue());
                    }
                    set(f, e.getRobotId(), e.getEpisodeId(), e.getTimeNs());
                }
                case FleetTopics.OBSERVATIONS -> {
                    ObservationSummary s = ObservationSummary.parseFrom(f.value);
                    if (s.getGripperOpeningCount() != s.getGripperForceNCount()
                            || (s.getGripperOpeningCount() > 0 && s.getSamplePeriodNs() <= 0)) {
                        throw new InvalidProtocolBufferException("gripper samples: " + s.getGripperOpeningCount()
                                + " openings, " + s.getGripperForceNCount() + " forces, period " + s.getSamplePeriodNs() + " ns");
                    }
                    f.kind = FleetRecord.OBSERVATION;
                    set(f, s.getRobotId(), s.getEpisodeId(), s.getTimeNs());
                }
                case FleetTopics.ALERTS -> {
                    Alert a = Alert.parseFrom(f.value);
                    f.kind = FleetRecord.ALERT;
                    set(f, a.getRobotId(), a.getEpisodeId(), a.getTimeNs());
                }
                default -> throw new InvalidProtocolBufferException("not a fleet input topic");
            }
            if (f.robotId.isEmpty() || (f.episodeId.isEmpty() && f.kind != FleetRecord.ALERT) || f.timeNs <= 0) {
                throw new InvalidProtocolBufferException("robot_id, episode_id and time_ns are required (got '"
                        + f.robotId + "', '" + f.episodeId + "', " + f.timeNs + ")");
            }
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            f.kind = FleetRecord.MALFORMED;
            f.robotId = "";
            f.episodeId = "";
            f.timeNs = 0;
            f.error = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
        return f;
    }

    private static void set(FleetRecord f, String robot, String episode, long timeNs) {
        f.robotId = robot;
        f.episodeId = episode;
        f.timeNs = timeNs;
    }

    @Override
    public TypeInformation<FleetRecord> getProducedType() {
        return TypeInformation.of(FleetRecord.class);
    }
}
