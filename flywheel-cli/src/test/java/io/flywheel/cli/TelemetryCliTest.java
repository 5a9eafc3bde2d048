package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.TelemetryRow;
import io.flywheel.testkit.Mosquitto;

/**
 * {@code flywheel gateway LAKE --mqtt URL} as a real process against a real mosquitto, killed with SIGKILL twice: first
 * between receiving QoS 1 and QoS 2 messages and committing them (paused with their data files staged), then after
 * committing a batch and before acknowledging it. After the restarts every QoS 1 and QoS 2 message, those published
 * while the gateway was down included, is in the table exactly once (the second restart drops the redeliveries of
 * what the killed one committed). Then {@code gateway telemetry} lists them and {@code gateway link-alerts} links the
 * alerts to an episode ingested afterwards.
 */
class TelemetryCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_767_225_600_000_000_000L;
    private static final long S = 1_000_000_000L;

    @TempDir
    Path tmp;

    private static Map<String, Integer> counts(Lake lake, String robot) {
        lake.refresh();
        Map<String, Integer> out = new TreeMap<>();
        if (!lake.hasTable(FleetTables.TELEMETRY)) {
            return out;
        }
        try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
            for (TelemetryRow r : t.rows(FleetTables.TELEMETRY_TABLE, ScanRequest.all())) {
                if (r.robotId().equals(robot) && r.qos() > 0) {
                    out.merge(r.messageId(), 1, Integer::sum);
                }
            }
        }
        return out;
    }

    private static void publish(Mqtt5BlockingClient c, String topic, int qos, String id, long ts) {
        c.publishWith().topic(topic).qos(MqttQos.fromCode(qos)).payload(("{\"message_id\": \"" + id + "\", \"ts_ns\": "
                + ts + ", \"values\": {\"n\": " + (ts - T0) / S + "}}").getBytes(StandardCharsets.UTF_8)).send();
    }

    @Test
    void qos1And2LandExactlyOnceAcrossKillsOfTheGateway() throws Exception {
        try (Mosquitto broker = Mosquitto.start(tmp.resolve("mosquitto"))) {
            String lake = tmp.resolve("lake").toString();
            assertEquals(0, CliRun.of("init", lake).exitCode());
            String[] gw = {"gateway", lake, "--grpc-port", "0", "--mqtt", broker.url(), "--mqtt-client-id", "gw-kill",
                    "--telemetry-batch", "300,5000", "--stats-every", "1", "--json"};
            Mqtt5BlockingClient robot = MqttClient.builder().useMqttVersion5().identifier("arm-7")
                    .serverHost("127.0.0.1").serverPort(broker.port()).buildBlocking();
            robot.connect();

            // 1. killed between receive and commit: the batch's data files staged, nothing committed or acknowledged
            GatewayProcess a = GatewayProcess.start(tmp.resolve("a"), "staged", gw);
            a.await(l -> l.contains("\"event\":\"listening\""));
            for (int i = 1; i <= 4; i++) {
                publish(robot, "fleet/arm-7/alert/estop", 1, "e-" + i, T0 + i * S);
                publish(robot, "fleet/arm-7/audit/billing", 2, "a-" + i, T0 + i * S);
            }
            publish(robot, "fleet/arm-7/alert/estop", 1, "e-2", T0 + 2 * S); // a robot's retry: the same id again
            publish(robot, "fleet/arm-7/telemetry/heartbeat", 0, "h-1", T0);
            a.await(l -> l.equals("PAUSED staged"));
            a.kill9();
            try (Lake l = Lake.open(lake)) {
                assertEquals(Map.of(), counts(l, "arm-7"));
            }
            // published while the gateway is down: kept in its session by the broker
            publish(robot, "fleet/arm-7/alert/estop", 1, "e-5", T0 + 5 * S);
            publish(robot, "fleet/arm-7/audit/billing", 2, "a-5", T0 + 5 * S);

            // 2. killed after a commit, before its acknowledgements
            GatewayProcess b = GatewayProcess.start(tmp.resolve("b"), "released", gw);
            b.await(l -> l.equals("PAUSED released"));
            b.kill9();
            Map<String, Integer> afterB;
            try (Lake l = Lake.open(lake)) {
                afterB = counts(l, "arm-7");
            }
            assertTrue(!afterB.isEmpty() && afterB.values().stream().allMatch(n -> n == 1), afterB.toString());

            // 3. a normal restart: the broker delivers the unacknowledged messages again; the committed ones are dropped
            GatewayProcess c = GatewayProcess.start(tmp.resolve("c"), null, gw);
            c.await(l -> {
                if (!l.contains("\"event\":\"stats\"")) {
                    return false;
                }
                try {
                    JsonNode t = JSON.readTree(l).get("telemetry");
                    return t.get("committed").asLong() + afterB.size() >= 10 && t.get("pending").asLong() == 0
                            && t.get("duplicates").asLong() >= afterB.size();
                } catch (Exception e) {
                    return false;
                }
            });
            c.process().destroy(); // SIGTERM: graceful, and a stop asked for exits 0
            assertTrue(c.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, c.process().exitValue());
            String stopped = c.await(l -> l.contains("\"event\":\"stopped\""));
            assertEquals(0, JSON.readTree(stopped).get("telemetry").get("malformed").asLong());

            Map<String, Integer> expected = new TreeMap<>();
            for (int i = 1; i <= 5; i++) {
                expected.put("e-" + i, 1);
                expected.put("a-" + i, 1);
            }
            try (Lake l = Lake.open(lake)) {
                assertEquals(expected, counts(l, "arm-7"));
                // an episode ingested after the alerts: link-alerts gives e-2 and e-3 their episode
                l.begin("ingest").putEpisodes(List.of(new EpisodeRow("ep-7", "rec-7", "arm-7", "pick", "hall", null,
                        "unknown", T0 + 2 * S, T0 + 3 * S, S, "rate:10", 0L, null, null, null, null))).commit();
            }
            robot.disconnect();
            CliRun link = CliRun.of("gateway", "link-alerts", lake, "--json");
            assertEquals(0, link.exitCode(), link.err());
            JsonNode lr = JSON.readTree(link.out());
            assertEquals(5, lr.get("unlinked_before").asLong());
            assertEquals(2, lr.get("linked").asLong());
            CliRun again = CliRun.of("gateway", "link-alerts", lake);
            assertTrue(again.out().contains("linked 0 of 3 alert(s) without an episode (nothing committed)"),
                    again.out());

            CliRun list = CliRun.of("gateway", "telemetry", lake, "--robot", "arm-7", "--class", "alert", "--json");
            assertEquals(0, list.exitCode(), list.err());
            JsonNode rows = JSON.readTree(list.out()).get("rows");
            assertEquals(5, rows.size());
            assertEquals("e-5", rows.get(0).get("message_id").asText()); // newest first
            assertEquals(5.0, rows.get(0).get("values").get("n").asDouble());
            assertEquals("ep-7", rows.get(2).get("episode_id").asText()); // e-3
            CliRun text = CliRun.of("gateway", "telemetry", lake, "--kind", "billing", "--limit", "2");
            assertTrue(text.out().contains("2 of 5 telemetry row(s)"), text.out());
            assertTrue(text.out().contains("arm-7  audit/billing  qos 2  a-5  n=5.0"), text.out());
            assertEquals(2, CliRun.of("gateway", "telemetry", lake, "--class", "bogus").exitCode());
            assertEquals(2, CliRun.of("gateway", lake, "--mqtt", "http://x:1").exitCode());
            assertEquals(2, CliRun.of("gateway", lake, "--mqtt", broker.url(), "--embedded-mqtt").exitCode());
            CliRun noBroker = CliRun.of("gateway", lake, "--telemetry-batch", "100,10");
            assertEquals(2, noBroker.exitCode());
            assertTrue(noBroker.err().contains("--telemetry-batch is for telemetry: give --mqtt URL or --embedded-mqtt"),
                    noBroker.err());
            assertEquals(2, CliRun.of("gateway", lake, "--mqtt", broker.url(), "--mqtt-port", "1884").exitCode());
        }
    }

    @Test
    void embeddedBrokerNeedsNoSetup() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        GatewayProcess gw = GatewayProcess.start(tmp.resolve("gw"), null, "gateway", lake, "--grpc-port", "0", "--embedded-mqtt",
                "--mqtt-port", Integer.toString(port), "--telemetry-batch", "200,5000", "--stats-every", "1");
        gw.await(l -> l.startsWith("telemetry from the embedded MQTT broker on tcp://127.0.0.1:" + port));
        var robot = MqttClient.builder().useMqttVersion3().identifier("arm-8").serverHost("127.0.0.1")
                .serverPort(port).buildBlocking();
        robot.connect();
        robot.publishWith().topic("fleet/arm-8/alert/estop").qos(MqttQos.AT_LEAST_ONCE).payload(("{\"message_id\":"
                + " \"s-1\", \"ts_ns\": " + T0 + ", \"text\": \"stop\"}").getBytes(StandardCharsets.UTF_8)).send();
        robot.publishWith().topic("fleet/arm-8/telemetry/battery").payload("not json".getBytes(StandardCharsets.UTF_8))
                .send();
        robot.disconnect();
        gw.await(l -> l.contains("telemetry: connected, 2 received, 1 committed in 1 batch(es), 0 duplicate(s)"
                + " dropped, 1 malformed, 0 waiting"));
        assertTrue(gw.lines().stream().anyMatch(l -> l.contains("flywheel gateway: telemetry message on"
                + " fleet/arm-8/telemetry/battery (robot arm-8) refused: the payload is not JSON")), gw.lines().toString());
        gw.process().destroy();
        assertTrue(gw.process().waitFor(30, TimeUnit.SECONDS));
        try (Lake l = Lake.open(lake)) {
            assertEquals(Map.of("s-1", 1), counts(l, "arm-8"));
        }
    }
}
