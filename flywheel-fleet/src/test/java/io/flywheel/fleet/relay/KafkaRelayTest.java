package io.flywheel.fleet.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;

import io.flywheel.fleet.telemetry.EmbeddedBroker;
import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The relay from MQTT to Kafka: robot arm-1 publishes an episode (started, two observation seconds, ended) with an
 * e-stop alert in the middle, then an alert after the episode; a malformed observation and an episode event claiming
 * to be arm-2 are refused. Kafka then holds 2 episode events, 2 observations and 2 alerts, all keyed arm-1; the
 * e-stop is E_STOP of episode ep-1, the later alert has no episode.
 */
class KafkaRelayTest {
    private static final long T0 = 1_767_225_600_000_000_000L;
    private static final long S = 1_000_000_000L;

    @Test
    void robotsStreamReachesTheFleetTopicsKeyedByRobot() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(null, 1);
                EmbeddedBroker mqtt = EmbeddedBroker.start("127.0.0.1", 0)) {
            List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (KafkaRelay relay = KafkaRelay.start(mqtt.url(), "relay-test", kafka.bootstrap(), log::add)) {
                Mqtt3BlockingClient robot = MqttClient.builder().useMqttVersion3().identifier("arm-1")
                        .serverHost("127.0.0.1").serverPort(mqtt.port()).buildBlocking();
                robot.connect();
                publish(robot, "fleet/arm-1/stream/episode", EpisodeEvent.newBuilder().setRobotId("arm-1")
                        .setEpisodeId("ep-1").setKind(EpisodeEvent.Kind.STARTED).setTimeNs(T0).setTask("pick").build()
                        .toByteArray());
                for (int s = 0; s < 2; s++) {
                    ObservationSummary.Builder b = ObservationSummary.newBuilder().setRobotId("arm-1").setEpisodeId("ep-1")
                            .setTimeNs(T0 + s * S).setSamplePeriodNs(S / 10).setSuccessSignal(s == 1).setInterventions(s);
                    for (int k = 0; k < 10; k++) {
                        b.addGripperOpening(0.5f).addGripperForceN(3f);
                    }
                    publish(robot, "fleet/arm-1/stream/observation", b.build().toByteArray());
                }
                publish(robot, "fleet/arm-1/alert/estop", ("{\"message_id\":\"a-1\",\"ts_ns\":" + (T0 + S)
                        + ",\"text\":\"e-stop pressed\"}").getBytes(StandardCharsets.UTF_8));
                publish(robot, "fleet/arm-1/stream/observation", new byte[] {(byte) 0xff, 1, 2}); // malformed
                publish(robot, "fleet/arm-1/stream/episode", EpisodeEvent.newBuilder().setRobotId("arm-2")
                        .setEpisodeId("ep-9").setKind(EpisodeEvent.Kind.STARTED).setTimeNs(T0).build().toByteArray());
                publish(robot, "fleet/arm-1/stream/episode", EpisodeEvent.newBuilder().setRobotId("arm-1")
                        .setEpisodeId("ep-1").setKind(EpisodeEvent.Kind.ENDED).setTimeNs(T0 + 2 * S).build().toByteArray());
                publish(robot, "fleet/arm-1/alert/joint_fault", ("{\"message_id\":\"a-2\",\"ts_ns\":" + (T0 + 5 * S)
                        + "}").getBytes(StandardCharsets.UTF_8));
                robot.disconnect();

                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (relay.stats().alerts() + relay.stats().episodes() < 4 && System.nanoTime() < until) {
                    Thread.sleep(50);
                }
                relay.flush();
                assertEquals(new KafkaRelay.Stats(2, 2, 2, 2), relay.stats());
                assertEquals(2, log.size(), log.toString());
                assertEquals(true, log.stream().anyMatch(l -> l.contains("robot_id 'arm-2' is not the topic's robot 'arm-1'")),
                        log.toString());
            }
            List<ConsumerRecord<byte[], byte[]>> eps = read(kafka, FleetTopics.EPISODES, 2);
            assertEquals(List.of(EpisodeEvent.Kind.STARTED, EpisodeEvent.Kind.ENDED),
                    eps.stream().map(r -> parse(r).getKind()).toList());
            for (ConsumerRecord<byte[], byte[]> r : eps) {
                assertEquals("arm-1", new String(r.key(), StandardCharsets.UTF_8));
            }
            List<ConsumerRecord<byte[], byte[]>> obs = read(kafka, FleetTopics.OBSERVATIONS, 2);
            ObservationSummary second = ObservationSummary.parseFrom(obs.get(1).value());
            assertEquals(T0 + S, second.getTimeNs());
            assertEquals(true, second.getSuccessSignal());
            assertEquals(1, second.getInterventions());
            assertEquals(10, second.getGripperForceNCount());
            List<ConsumerRecord<byte[], byte[]>> al = read(kafka, FleetTopics.ALERTS, 2);
            Alert estop = Alert.parseFrom(al.get(0).value());
            assertEquals(Alert.Kind.E_STOP, estop.getKind());
            assertEquals("ep-1", estop.getEpisodeId(), "raised while ep-1 ran");
            assertEquals(T0 + S, estop.getTimeNs());
            assertEquals("e-stop pressed", estop.getMessage());
            Alert fault = Alert.parseFrom(al.get(1).value());
            assertEquals(Alert.Kind.FAULT, fault.getKind());
            assertEquals("", fault.getEpisodeId(), "raised after ep-1 ended");
            assertEquals("arm-1", new String(al.get(1).key(), StandardCharsets.UTF_8));
        }
    }

    private static void publish(Mqtt3BlockingClient c, String topic, byte[] payload) {
        c.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(payload).send();
    }

    private static EpisodeEvent parse(ConsumerRecord<byte[], byte[]> r) {
        try {
            return EpisodeEvent.parseFrom(r.value());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(EmbeddedKafka kafka, String topic, int n) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "relay-test-" + topic);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topic));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out.size() < n && System.nanoTime() < until) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        assertEquals(n, out.size(), topic);
        return out;
    }
}
