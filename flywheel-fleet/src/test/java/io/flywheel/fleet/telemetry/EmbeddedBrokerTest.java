package io.flywheel.fleet.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;

import io.flywheel.lake.Lake;
import io.flywheel.rows.TelemetryRow;

/**
 * The one-machine default end to end in one JVM: Moquette 0.17 (Netty 4.1) embedded, the subscriber over MQTT
 * 3.1.1, Lance and Arrow writing the table beside them; a robot publishing QoS 0, 1 and 2 over MQTT 3.1.1.
 */
class EmbeddedBrokerTest {
    @TempDir
    Path tmp;

    @Test
    void messagesThroughTheEmbeddedBrokerLandInTheTable() throws Exception {
        long t0 = 1_767_225_600_000_000_000L;
        try (Lake lake = Lake.init(tmp.resolve("lake")); EmbeddedBroker broker = EmbeddedBroker.start("127.0.0.1", 0);
                TelemetrySubscriber sub = TelemetrySubscriber.start(lake, TelemetryOptions.builder(broker.url())
                        .mqtt5(false).clientId("gw-embedded").batchInterval(Duration.ofMillis(200)).build(), l -> { })) {
            Mqtt3BlockingClient robot = MqttClient.builder().useMqttVersion3().identifier("arm-9")
                    .serverHost("127.0.0.1").serverPort(broker.port()).buildBlocking();
            robot.connect();
            String[][] msgs = {
                    {"fleet/arm-9/telemetry/joint_temp", "0", "{\"ts_ns\": " + (t0 + 1) + ", \"values\": {\"j1\": 41.5,"
                            + " \"j2\": 39.0}}"},
                    {"fleet/arm-9/alert/estop", "1", "{\"message_id\": \"s-1\", \"ts_ns\": " + (t0 + 2) + "}"},
                    {"fleet/arm-9/alert/estop", "1", "{\"message_id\": \"s-1\", \"ts_ns\": " + (t0 + 2) + "}"},
                    {"fleet/arm-9/audit/billing", "2", "{\"message_id\": \"b-1\", \"ts_ns\": " + (t0 + 3) + "}"},
                    // 20 KB, past Moquette's own default of 8,092 bytes: reaches the subscriber, refused as malformed
                    {"fleet/arm-9/alert/big", "1", "{\"message_id\": \"x-1\", \"ts_ns\": " + (t0 + 4) + ", \"text\": \""
                            + "x".repeat(20_000) + "\"}"}};
            for (String[] m : msgs) {
                robot.publishWith().topic(m[0]).qos(MqttQos.fromCode(Integer.parseInt(m[1])))
                        .payload(m[2].getBytes(StandardCharsets.UTF_8)).send();
            }
            robot.disconnect();
            TelemetrySubscriberTest.await("3 rows", () -> sub.stats().committed() == 3 && sub.stats().pending() == 0
                    && sub.stats().malformed() == 1, sub::stats);
            assertEquals(1, sub.stats().duplicates());
            List<TelemetryRow> rows = TelemetrySubscriberTest.rows(lake);
            assertEquals(3, rows.size(), rows.toString());
            TelemetryRow temp = rows.stream().filter(r -> r.kind().equals("joint_temp")).findFirst().orElseThrow();
            assertEquals(Map.of("j1", 41.5, "j2", 39.0), temp.values());
            assertEquals(1, TelemetrySubscriberTest.one(rows, "arm-9", "s-1").qos());
            assertEquals(2, TelemetrySubscriberTest.one(rows, "arm-9", "b-1").qos());
        }
    }

    @Test
    void aTakenPortIsAConflict() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            io.flywheel.error.ConflictException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.flywheel.error.ConflictException.class, () -> EmbeddedBroker.start("127.0.0.1", taken.getLocalPort()));
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("--mqtt-port 0 picks a free port"),
                    e.getMessage());
        }
    }
}
