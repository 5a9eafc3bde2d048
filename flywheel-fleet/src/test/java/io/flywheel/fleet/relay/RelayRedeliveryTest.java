package io.flywheel.fleet.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
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
import org.junit.jupiter.api.io.TempDir;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;

import io.flywheel.fleet.sim.CuttableLink;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.stream.label.EpisodeEvidence;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetTopics;
import io.flywheel.testkit.Mosquitto;

/**
 * A QoS 1 redelivery through a real mosquitto: the robot's link is cut when the broker's PUBACK for the PUBLISH
 * comes back, before the robot sees it, so the robot (persistent session) sends the message again on reconnecting, with
 * DUP set, and mosquitto delivers it to the relay a second time (QoS 1 is at least once). The relay publishes both
 * copies to Kafka; the labeller's evidence takes the second for what it is: the take-over it carries counts once.
 */
class RelayRedeliveryTest {
    private static final long T0 = 1_767_225_600_000_000_000L;

    @Test
    void aSummaryTheRobotSendsAgainReachesKafkaTwiceAndCountsOnce(@TempDir Path dir) throws Exception {
        ObservationSummary.Builder b = ObservationSummary.newBuilder().setRobotId("arm-7").setEpisodeId("ep-7")
                .setTimeNs(T0).setSamplePeriodNs(100_000_000L).setInterventions(1);
        for (int k = 0; k < 10; k++) {
            b.addGripperOpening(0.5f).addGripperForceN(3f);
        }
        byte[] payload = b.build().toByteArray();
        String topic = "fleet/arm-7/stream/observation";
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Mosquitto mqtt = Mosquitto.start(dir.resolve("mosquitto"));
             EmbeddedKafka kafka = EmbeddedKafka.start(null, 1)) {
            try (KafkaRelay relay = KafkaRelay.start(mqtt.url(), "relay-redelivery", kafka.bootstrap(), log::add);
                 CuttableLink link = CuttableLink.start("127.0.0.1", mqtt.port(), "arm-7-link")) {
                Mqtt3AsyncClient robot = MqttClient.builder().useMqttVersion3().identifier("arm-7")
                        .serverHost("127.0.0.1").serverPort(link.port()).automaticReconnect()
                        .initialDelay(100, TimeUnit.MILLISECONDS).maxDelay(500, TimeUnit.MILLISECONDS)
                        .applyAutomaticReconnect().buildAsync();
                robot.connectWith().cleanSession(false).send().get(10, TimeUnit.SECONDS);
                // mosquitto answers the PUBLISH with PUBACK once it took it: the link drops that and is cut
                link.cutBeforeNextReply();
                robot.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(payload).send()
                        .get(30, TimeUnit.SECONDS); // acknowledged after the reconnect, for the copy
                assertEquals(1, link.cuts(), "the link was cut once, between the PUBLISH and its PUBACK");
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (relay.stats().observations() < 2 && System.nanoTime() < until) {
                    Thread.sleep(50);
                }
                relay.flush();
                assertEquals(new KafkaRelay.Stats(0, 2, 0, 0), relay.stats(), "mosquitto delivered it twice: " + log);
                robot.disconnect().get(5, TimeUnit.SECONDS);
            }
            List<ConsumerRecord<byte[], byte[]>> obs = read(kafka, FleetTopics.OBSERVATIONS, 2);
            assertArrayEquals(payload, obs.get(0).value());
            assertArrayEquals(payload, obs.get(1).value(), "the copy is the same message");
            EpisodeEvidence e = new EpisodeEvidence("arm-7", "ep-7");
            assertEquals(true, e.add(ObservationSummary.parseFrom(obs.get(0).value())));
            assertEquals(false, e.add(ObservationSummary.parseFrom(obs.get(1).value())), "the copy is ignored");
            assertEquals(1, e.interventions(), "one take-over, not two");
            assertEquals(10, e.samples().size());
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(EmbeddedKafka kafka, String topic, int n) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "redelivery-" + topic);
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
            // nothing more comes: exactly the two copies
            c.poll(Duration.ofMillis(500)).forEach(out::add);
        }
        assertEquals(n, out.size(), topic);
        return out;
    }
}
