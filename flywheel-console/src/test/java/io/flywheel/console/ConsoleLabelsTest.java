package io.flywheel.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StreamLabelLinks;
import io.flywheel.lake.StreamTables;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.LabelHistoryRow;

/**
 * The stream labels page and {@code /api/labels} while labels arrive: one ingested episode of arm-1 (the recording
 * calls it {@code run-7}), then a first label batch (run-7 failure), then a second committed while the console runs
 * (run-8 success, not ingested). Each request reads the newest commit, so the second shows without a restart; the
 * page reloads itself every 2 s; the episodes list shows the stream label beside the recorded outcome.
 */
class ConsoleLabelsTest {
    private static final long T0 = 1_767_225_600_000_000_000L;

    @TempDir
    Path tmp;

    @Test
    void labelsShowAsTheyArrive() throws Exception {
        Path lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            lake.begin("test").appendEpisodes(List.of(new EpisodeRow("ep-a", "rec-1", "arm-1", "pick", "kitchen", "op",
                    "success", T0, T0 + 10, 10L, "/cam", 10L, "pass", List.of(), null,
                    "{\"source_episode_id\":\"run-7\"}"))).commit();
        }
        try (Lake lake = Lake.open(lakeDir.toString());
                ConsoleServer server = ConsoleServer.start(lake, ConsoleOptions.builder().port(0).build())) {
            HttpClient http = HttpClient.newHttpClient();
            JsonNode none = json(http, server, "/api/labels");
            assertEquals(false, none.get("label_history").asBoolean());
            assertEquals(0, none.get("labels").size());
            assertTrue(get(http, server, "/labels").contains("id=\"no-labels\""));

            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(new LabelHistoryRow("run-7",
                    "arm-1", "failure", "empty_grasp", "label-rules-1", "fleet.episodes/0=3", -1, "g", T0 + 100)),
                    Set.of()).commit();
            StreamLabelLinks.apply(lake);
            JsonNode one = json(http, server, "/api/labels");
            assertEquals(1, one.get("total").asInt());
            assertEquals(1, one.get("applied").asInt());
            assertEquals("ep-a", one.get("labels").get(0).get("lake_episode_id").asText());
            assertEquals(1, one.get("by_label").get("failure").asInt());

            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(new LabelHistoryRow("run-8",
                    "arm-1", "success", "success_signal", "label-rules-1", "fleet.episodes/0=6", -1, "g", T0 + 200)),
                    Set.of()).commit();
            JsonNode two = json(http, server, "/api/labels");
            assertEquals(2, two.get("total").asInt());
            assertEquals(2, two.get("episodes").asInt());
            assertEquals("run-8", two.get("labels").get(0).get("episode_id").asText(), "newest first");
            assertTrue(two.get("labels").get(0).get("lake_episode_id").isNull(), "run-8 is not ingested");
            assertEquals(T0 + 200, two.get("newest_ns").asLong());
            assertEquals(List.of("label-rules-1"), List.of(two.get("rules_versions").get(0).asText()));
            assertEquals(1, json(http, server, "/api/labels?limit=1").get("labels").size());

            String page = get(http, server, "/labels");
            assertTrue(page.contains("<meta http-equiv=\"refresh\" content=\"2\">"), "the page reloads itself");
            assertTrue(page.contains("<a href=\"/labels\" class=\"on\">Labels</a>"));
            assertTrue(page.contains("<b id=\"n-episodes\">2</b> stream episode(s) labelled"), page);
            assertTrue(page.indexOf("data-episode=\"run-8\"") < page.indexOf("data-episode=\"run-7\""), "newest first");
            assertTrue(page.contains("<td class=\"c-lake\"><a href=\"/episodes/ep-a\">ep-a</a></td>"), page);
            assertTrue(page.contains("<td class=\"c-lake\">not ingested yet</td>"), page);

            String list = get(http, server, "/episodes");
            assertTrue(list.contains("stream label"), "the episodes list has the stream label column");
            JsonNode eps = json(http, server, "/api/episodes");
            assertEquals("failure", eps.get("rows").get(0).get("stream_outcome").asText());
            assertEquals("success", eps.get("rows").get(0).get("outcome").asText());
            JsonNode ep = json(http, server, "/api/episodes/ep-a");
            assertEquals("failure", ep.get("effective_outcome").asText(), "the stream's label over the recording's");
            assertEquals("stream", ep.get("outcome_source").asText());
            assertEquals("empty_grasp", ep.get("stream_rule").asText());
            String epPage = get(http, server, "/episodes/ep-a");
            assertTrue(epPage.contains("<td class=\"f-effective_outcome\">failure</td>"), epPage);
        }
    }

    private static String get(HttpClient http, ConsoleServer server, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.uri().resolve(path)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        return r.body();
    }

    private static JsonNode json(HttpClient http, ConsoleServer server, String path) throws Exception {
        return new ObjectMapper().readTree(get(http, server, path));
    }
}
