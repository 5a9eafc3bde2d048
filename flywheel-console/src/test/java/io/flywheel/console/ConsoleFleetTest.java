package io.flywheel.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.upload.StagedUpload;
import io.flywheel.fleet.upload.Staging;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.TelemetryRow;

/**
 * The fleet page and {@code /api/fleet} on a lake made by hand: tokens for arm-1 and arm-2, telemetry rows (two
 * heartbeats of arm-1, 3 s and 100 s old; its battery; a heartbeat of arm-3, which has nothing else; two alerts), two
 * recordings of arm-1 landed in {@code raw/arm-1/} of which one is ingested, an upload of arm-2 staged at 250 of
 * 1,000 bytes and one whose ingest failed. Every number on the page is one of those.
 */
class ConsoleFleetTest {
    private static final long T0 = 1_767_225_600_000_000_000L;
    private static final long S = 1_000_000_000L;

    @TempDir
    Path tmp;

    private static TelemetryRow row(String robot, long ts, long received, String cls, String kind, int qos, String id,
            Map<String, Double> values, String text, String episode) {
        return new TelemetryRow(robot, ts, received, kind, cls, qos, id, "fleet/" + robot + "/" + cls + "/" + kind,
                values, text, episode);
    }

    @Test
    void theFleetPageShowsRobotsHeartbeatsAlertsAndUploadsInProgress() throws Exception {
        Path lakeDir = tmp.resolve("lake");
        String ingestedSha = "a".repeat(64);
        String landedSha = "b".repeat(64);
        try (Lake lake = Lake.init(lakeDir)) {
            RobotTokens.add(lake, List.of("arm-1", "arm-2"));
            long now = System.currentTimeMillis() * 1_000_000L;
            lake.begin("test").append(FleetTables.TELEMETRY_TABLE, List.of(
                    row("arm-1", T0, now - 100 * S, TelemetryRow.TELEMETRY, "heartbeat", 0, null, Map.of(), null, null),
                    row("arm-1", T0 + 97 * S, now - 3 * S, TelemetryRow.TELEMETRY, "heartbeat", 0, null, Map.of(), null,
                            null),
                    row("arm-1", T0 + 90 * S, now - 10 * S, TelemetryRow.TELEMETRY, "battery", 0, null,
                            Map.of("soc_pct", 81.5), null, null),
                    row("arm-3", T0 + 50 * S, now - 50 * S, TelemetryRow.TELEMETRY, "heartbeat", 0, null, Map.of(),
                            null, null),
                    row("arm-1", T0 + 5 * S, now - 95 * S, TelemetryRow.ALERT, "estop", 1, "e-1", Map.of("speed", 0.25),
                            "e-stop pressed", "ep-arm1"),
                    row("arm-2", T0 + 9 * S, now - 91 * S, TelemetryRow.ALERT, "collision", 1, "c-1", Map.of(),
                            "bumped the bin", null)), Set.of()).commit();
            lake.begin("test").appendRawFiles(List.of(new RawFileRow(lakeDir.resolve("raw/arm-1/" + ingestedSha
                    + ".mcap").toString(), 10, ingestedSha, "mcap", "rec-1", "arm-1", T0, null, "ok", now)))
                    .appendEpisodes(List.of(new EpisodeRow("ep-arm1", "rec-1", "arm-1", "pick", "kitchen", "op",
                            "success", T0, T0 + 10 * S, 10 * S, "/cam", 10L, "pass", List.of(), null, null)))
                    .commit();
        }
        Files.createDirectories(lakeDir.resolve("raw/arm-1"));
        Files.write(lakeDir.resolve("raw/arm-1/" + ingestedSha + ".mcap"), new byte[10]);
        Files.write(lakeDir.resolve("raw/arm-1/" + landedSha + ".mcap"), new byte[12]);
        Staging staging = new Staging(lakeDir);
        StagedUpload u = new StagedUpload("u-123", "arm-2", "c".repeat(64), 1000, "MCAP", "ep_7.mcap", "ep_7", "", "",
                StagedUpload.STAGING, "", "", T0, System.currentTimeMillis() * 1_000_000L);
        staging.save(u);
        Files.write(staging.partFile(u), new byte[250]);
        // a file of arm-2 that ingest could not read: moved out of the raw layer, not waiting
        staging.save(new StagedUpload("u-456", "arm-2", "d".repeat(64), 40, "MCAP", "ep_3.mcap", "ep_3", "", "",
                StagedUpload.INGEST_FAILED, "_staging/rejected/arm-2/" + "d".repeat(64) + ".mcap", "not an MCAP",
                T0, T0));

        try (Lake lake = Lake.open(lakeDir.toString());
                ConsoleServer server = ConsoleServer.start(lake, ConsoleOptions.builder().port(0).build())) {
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> api = http.send(HttpRequest.newBuilder(server.uri().resolve("/api/fleet")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, api.statusCode(), api.body());
            JsonNode f = new ObjectMapper().readTree(api.body());
            assertEquals(3, f.get("totals").get("robots").asInt());
            assertEquals(2, f.get("totals").get("landed").asInt());
            assertEquals(1, f.get("totals").get("ingested").asInt());
            assertEquals(1, f.get("totals").get("waiting_for_ingest").asInt());
            assertEquals(1, f.get("totals").get("uploading").asInt());
            assertEquals(6, f.get("totals").get("telemetry_rows").asInt());

            JsonNode arm1 = f.get("robots").get(0);
            assertEquals("arm-1", arm1.get("robot_id").asText());
            assertEquals(1, arm1.get("tokens").asInt());
            assertEquals(T0 + 97 * S, arm1.get("last_heartbeat_ts_ns").asLong(), "the newest heartbeat, not the first");
            double age = arm1.get("heartbeat_age_s").asDouble();
            assertTrue(age >= 3 && age < 60, "age " + age);
            assertEquals(81.5, arm1.get("battery").get("soc_pct").asDouble());
            assertEquals(1, arm1.get("episodes").asInt());
            assertEquals(2, arm1.get("landed").asInt());
            assertEquals(1, arm1.get("ingested").asInt());
            assertEquals(1, arm1.get("waiting_for_ingest").asInt());
            JsonNode arm2 = f.get("robots").get(1);
            assertEquals("arm-2", arm2.get("robot_id").asText());
            assertTrue(arm2.get("last_heartbeat_ts_ns").isNull());
            assertEquals(1, arm2.get("uploading").asInt());
            assertEquals(1, arm2.get("ingest_failed").asInt());
            assertEquals(0, arm2.get("waiting_for_ingest").asInt());
            JsonNode arm3 = f.get("robots").get(2);
            assertEquals("arm-3", arm3.get("robot_id").asText(), "a robot known from its telemetry only");
            assertEquals(0, arm3.get("tokens").asInt());

            JsonNode alerts = f.get("alerts");
            assertEquals(2, alerts.size());
            assertEquals("collision", alerts.get(0).get("kind").asText(), "newest first by the robot's clock");
            assertEquals("ep-arm1", alerts.get(1).get("episode_id").asText());

            JsonNode up = f.get("uploads").get(0);
            assertEquals("arm-2", up.get("robot_id").asText());
            assertEquals("ep_7.mcap", up.get("file_name").asText());
            assertEquals(250, up.get("staged_bytes").asLong());
            assertEquals(1000, up.get("size_bytes").asLong());
            assertEquals(25.0, up.get("percent").asDouble());

            HttpResponse<String> page = http.send(HttpRequest.newBuilder(server.uri().resolve("/fleet")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, page.statusCode());
            String html = page.body();
            assertTrue(html.contains("<a href=\"/fleet\" class=\"on\">Fleet</a>"), "linked from the navigation");
            assertTrue(html.contains("<meta http-equiv=\"refresh\" content=\"5\">"));
            assertTrue(html.contains("<b id=\"n-robots\">3</b>"), html);
            assertTrue(html.contains("<b id=\"n-waiting\">1</b>"), html);
            assertTrue(html.matches("(?s).*<tr data-robot=\"arm-1\">.*<td class=\"c-battery\">82%</td>.*"), html);
            assertTrue(html.matches("(?s).*<tr data-robot=\"arm-3\">.*<td class=\"c-landed\">0</td>.*"), html);
            assertTrue(html.contains("<td class=\"c-kind\">estop</td><td>e-stop pressed</td><td>speed=0.25</td>"
                    + "<td class=\"c-episode\"><a href=\"/episodes/ep-arm1\">ep-arm1</a></td>"), html);
            assertTrue(html.contains("<td class=\"c-staged\">250</td><td class=\"c-size\">1000</td>"
                    + "<td class=\"c-percent\">25.0</td>"), html);
            assertTrue(html.matches("(?s).*<td class=\"c-age\">\\d+\\.\\d s ago</td>.*"), html);

            HttpResponse<String> episodes = http.send(HttpRequest.newBuilder(server.uri().resolve("/episodes")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(episodes.body().contains("<a href=\"/fleet\">Fleet</a>"), "every page links the fleet page");
        }
    }
}
