package io.flywheel.fleet.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.AlertLinks;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.TelemetryRow;
import io.flywheel.testkit.Mosquitto;

/**
 * The subscriber against a real mosquitto process (one for the class), robots played by HiveMQ MQTT 5 publishers:
 * each QoS class lands with its values, a QoS 1 message published twice lands once, malformed messages are counted
 * and not written, and an alert gets its episode whether the episode is in the lake first or arrives later.
 */
class TelemetrySubscriberTest {
    private static final long T0 = 1_767_225_600_000_000_000L; // 2026-01-01T00:00:00Z
    private static final long S = 1_000_000_000L;
    private static Mosquitto broker;

    @TempDir
    static Path shared;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = Mosquitto.start(shared.resolve("mosquitto"));
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private TelemetryOptions.Builder options(String clientId) {
        return TelemetryOptions.builder(broker.url()).clientId(clientId).batchInterval(Duration.ofMillis(200))
                .linkInterval(Duration.ofMillis(200));
    }

    static void await(String what, BooleanSupplier done, java.util.function.Supplier<Object> state)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        while (!done.getAsBoolean()) {
            assertTrue(System.currentTimeMillis() < deadline, "timed out waiting for " + what + ": " + state.get());
            Thread.sleep(50);
        }
    }

    static List<TelemetryRow> rows(Lake lake) {
        lake.refresh();
        try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
            return t.rows(FleetTables.TELEMETRY_TABLE, ScanRequest.all());
        }
    }

    static TelemetryRow one(List<TelemetryRow> rows, String robot, String messageId) {
        List<TelemetryRow> m = rows.stream().filter(r -> r.robotId().equals(robot)
                && messageId.equals(r.messageId())).toList();
        assertEquals(1, m.size(), robot + "/" + messageId + " in " + rows);
        return m.get(0);
    }

    @Test
    void eachQosClassLandsOnceWithItsValuesAndMalformedMessagesAreRefused() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (Lake lake = Lake.init(tmp.resolve("lake"));
                TelemetrySubscriber sub = TelemetrySubscriber.start(lake, options("gw-classes").build(), log::add);
                Publisher arm = new Publisher(broker.url(), "arm-1")) {
            arm.publish("fleet/arm-1/telemetry/battery", 0,
                    "{\"message_id\": \"b-1\", \"ts_ns\": " + (T0 + S) + ", \"values\": {\"voltage\": 48.1,"
                            + " \"current\": -2.5}}");
            arm.publish("fleet/arm-1/telemetry/heartbeat", 0, "{\"ts_ns\": " + (T0 + 2 * S) + "}");
            arm.publish("fleet/arm-1/alert/estop", 1, "{\"message_id\": \"e-1\", \"ts_ns\": " + (T0 + 3 * S)
                    + ", \"text\": \"e-stop pressed\", \"values\": {\"speed\": 0.25}}");
            // the same QoS 1 message again (a robot retrying after a lost PUBACK): once in the table
            arm.publish("fleet/arm-1/alert/estop", 1, "{\"message_id\": \"e-1\", \"ts_ns\": " + (T0 + 3 * S)
                    + ", \"text\": \"e-stop pressed\", \"values\": {\"speed\": 0.25}}");
            // QoS 2, message id as an MQTT 5 user property
            arm.publish("fleet/arm-1/audit/billing", 2, "{\"ts_ns\": " + (T0 + 4 * S) + ", \"values\": {\"kwh\": 1.75},"
                    + " \"text\": \"shift 7\"}", "a-1");
            // malformed: not JSON, no ts_ns, a QoS 1 message without an id, a bad robot id in the topic
            arm.publish("fleet/arm-1/telemetry/battery", 0, "{\"ts_ns\": 12,");
            arm.publish("fleet/arm-1/telemetry/battery", 1, "{\"message_id\": \"b-2\", \"values\": {}}");
            arm.publish("fleet/arm-1/alert/collision", 1, "{\"ts_ns\": " + (T0 + 5 * S) + "}");
            arm.publish("fleet/arm 1/telemetry/battery", 1, "{\"message_id\": \"b-3\", \"ts_ns\": 5}");
            await("4 rows, 4 malformed", () -> sub.stats().committed() == 4 && sub.stats().malformed() == 4,
                    () -> sub.stats() + " " + log);
            TelemetryStats s = sub.stats();
            assertEquals(9, s.received());
            assertEquals(1, s.duplicates());
            assertEquals(0, s.pending());

            List<TelemetryRow> rows = rows(lake);
            assertEquals(4, rows.size(), rows.toString());
            TelemetryRow battery = one(rows, "arm-1", "b-1");
            assertEquals(Map.of("voltage", 48.1, "current", -2.5), battery.values());
            assertEquals(List.of("voltage", "current"), List.copyOf(battery.values().keySet()));
            assertEquals(T0 + S, battery.tsNs());
            assertEquals(0, battery.qos());
            assertEquals("battery", battery.kind());
            assertEquals(TelemetryRow.TELEMETRY, battery.messageClass());
            assertEquals("fleet/arm-1/telemetry/battery", battery.topic());
            TelemetryRow heartbeat = rows.stream().filter(r -> r.kind().equals("heartbeat")).findFirst().orElseThrow();
            assertNull(heartbeat.messageId());
            assertEquals(Map.of(), heartbeat.values());
            TelemetryRow estop = one(rows, "arm-1", "e-1");
            assertEquals(1, estop.qos());
            assertEquals(TelemetryRow.ALERT, estop.messageClass());
            assertEquals("e-stop pressed", estop.text());
            assertEquals(Map.of("speed", 0.25), estop.values());
            assertNull(estop.episodeId()); // no episode in the lake
            TelemetryRow audit = one(rows, "arm-1", "a-1");
            assertEquals(2, audit.qos());
            assertEquals("shift 7", audit.text());
            assertEquals(Map.of("kwh", 1.75), audit.values());
            for (TelemetryRow r : rows) {
                long now = System.currentTimeMillis() * 1_000_000L;
                assertTrue(r.receivedNs() <= now && r.receivedNs() > now - 60 * S, r.toString());
            }
            String logged = String.join("\n", log);
            assertTrue(logged.contains("telemetry message on fleet/arm-1/telemetry/battery (robot arm-1) refused: the"
                    + " payload is not JSON"), logged);
            assertTrue(logged.contains("refused: ts_ns is missing"), logged);
            assertTrue(logged.contains("fleet/arm-1/alert/collision (robot arm-1) refused: a QoS 1 message needs a"
                    + " message_id"), logged);
            assertTrue(logged.contains("fleet/arm 1/telemetry/battery refused: robot:"), logged);
        }
    }

    @Test
    void alertGetsItsEpisodeWhicheverArrivesFirst() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            // arm-2: the episode is in the lake before the alert
            lake.begin("ingest").putEpisodes(List.of(episode("ep-arm2-a", "arm-2", T0, T0 + 60 * S),
                    episode("ep-arm2-b", "arm-2", T0 + 100 * S, T0 + 160 * S))).commit();
            try (TelemetrySubscriber sub = TelemetrySubscriber.start(lake, options("gw-links").build(), log::add);
                    Publisher arm2 = new Publisher(broker.url(), "arm-2");
                    Publisher arm3 = new Publisher(broker.url(), "arm-3")) {
                arm2.publish("fleet/arm-2/alert/estop", 1, "{\"message_id\": \"x-1\", \"ts_ns\": " + (T0 + 120 * S)
                        + "}");
                arm2.publish("fleet/arm-2/alert/estop", 1, "{\"message_id\": \"x-2\", \"ts_ns\": " + (T0 + 90 * S)
                        + "}"); // between the two episodes: none
                // arm-3: the alert first, its episode ingested later
                arm3.publish("fleet/arm-3/alert/collision", 1, "{\"message_id\": \"y-1\", \"ts_ns\": "
                        + (T0 + 30 * S) + ", \"text\": \"bumped the table\"}");
                arm3.publish("fleet/arm-3/telemetry/battery", 0, "{\"message_id\": \"y-2\", \"ts_ns\": "
                        + (T0 + 30 * S) + ", \"values\": {\"voltage\": 47.0}}");
                await("4 rows", () -> sub.stats().committed() == 4, () -> sub.stats() + " " + log);
                List<TelemetryRow> rows = rows(lake);
                assertEquals("ep-arm2-b", one(rows, "arm-2", "x-1").episodeId());
                assertNull(one(rows, "arm-2", "x-2").episodeId());
                assertNull(one(rows, "arm-3", "y-1").episodeId());
                assertEquals(1, sub.stats().linkedAtWrite());

                lake.begin("ingest").putEpisodes(List.of(episode("ep-arm3", "arm-3", T0 + 10 * S, T0 + 50 * S)))
                        .commit();
                await("the later link", () -> sub.stats().linkedLater() == 1, () -> sub.stats() + " " + log);
                rows = rows(lake);
                TelemetryRow y1 = one(rows, "arm-3", "y-1");
                assertEquals("ep-arm3", y1.episodeId());
                assertEquals("bumped the table", y1.text()); // the update wrote episode_id only
                assertEquals(T0 + 30 * S, y1.tsNs());
                assertNull(one(rows, "arm-3", "y-2").episodeId()); // telemetry is not linked, only alerts
                assertNull(one(rows, "arm-2", "x-2").episodeId());
            }
            // nothing left to link: no commit
            long seq = lake.refresh().seq();
            AlertLinks.Result again = AlertLinks.link(lake, null);
            assertEquals(1, again.unlinked()); // x-2, outside every episode
            assertEquals(0, again.linked());
            assertEquals(-1, again.lakeCommit());
            assertEquals(seq, lake.refresh().seq());
        }
        assertTrue(log.stream().anyMatch(l -> l.contains("linked 1 alert(s) to their episodes")), log.toString());
    }

    static EpisodeRow episode(String id, String robot, long start, long end) {
        return new EpisodeRow(id, "rec-" + id, robot, "pick", "hall", null, "unknown", start, end, end - start,
                "rate:10", 0L, null, null, null, null);
    }
}
