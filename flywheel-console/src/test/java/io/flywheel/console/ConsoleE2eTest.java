package io.flywheel.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;

/**
 * Every console page in headless Debian Chromium (one browser for all pages), driven by
 * {@code tools/node/console-e2e.mjs} (playwright-core with the system browser): loads the pages, sorts,
 * filters, pages, scrubs frames, changes the alignment policy, clicks a map point and a training set,
 * and reports what was shown; the expected values come from the lake itself. Screenshots are saved in
 * {@code target/console-e2e/}. Without {@code /usr/bin/chromium} (Debian package {@code chromium}) the
 * test is skipped, except with {@code CI=true}, where that is a failure.
 */
class ConsoleE2eTest {
    private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium"));

    @Test
    void everyPageInHeadlessChromium() throws Exception {
        if (!Files.isExecutable(CHROMIUM)) {
            String msg = CHROMIUM + " is missing: apt-get install -y chromium";
            if (SharedData.isCi()) {
                Assertions.fail(msg + "; CI=true, so this is a failure");
            }
            Assumptions.abort(msg);
        }
        Path lakeDir = TestLake.get();
        Path shots = Path.of(System.getProperty("java.io.tmpdir")).resolve("console-e2e");
        try (Lake lake = Lake.open(lakeDir.toString());
                ConsoleServer server = ConsoleServer.start(lake, ConsoleOptions.builder().port(0).build())) {
            String failure = TestLake.failureEpisode(lake);
            List<Object[]> eps = new ArrayList<>();
            try (LakeTable t = lake.table("episodes")) {
                t.scan(ScanRequest.builder().columns("episode_id", "scene", "outcome", "frame_count", "robot_id").build(),
                        b -> {
                    for (int i = 0; i < b.rowCount(); i++) {
                        eps.add(new Object[] {RowJson.str(b, "episode_id", i), RowJson.str(b, "scene", i),
                            RowJson.str(b, "outcome", i), b.value("frame_count", i), RowJson.str(b, "robot_id", i)});
                    }
                });
            }
            String sim = eps.stream().filter(e -> "kitchen".equals(e[1]) && !e[2].toString().startsWith("failure"))
                    .map(e -> (String) e[0]).sorted().findFirst().orElseThrow();
            long simFrames = eps.stream().filter(e -> e[0].equals(sim)).map(e -> (Long) e[3]).findFirst().orElseThrow();
            long kitchen = eps.stream().filter(e -> "kitchen".equals(e[1])).count();
            long maxFrames = eps.stream().mapToLong(e -> (Long) e[3]).max().orElseThrow();

            String spec = new ObjectMapper().writeValueAsString(Map.of("sim", sim, "failure", failure));
            Node.Result r = Node.run("console-e2e.mjs", server.uri().toString(), shots.toString(), spec);
            assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
            JsonNode o = new ObjectMapper().readTree(r.stdout());
            assertEquals(0, o.get("errors").size(), "browser errors: " + o.get("errors"));

            JsonNode e = o.get("episodes");
            assertEquals(31, e.get("total").asInt());
            assertEquals(31, e.get("rows").asInt());
            assertEquals(Long.toString(maxFrames), e.get("sorted_frames").get(0).asText());
            assertEquals("10", e.get("sorted_frames").get(30).asText()); // BridgeData episodes last
            assertEquals(kitchen, e.get("kitchen_total").asLong());
            e.get("kitchen_scenes").forEach(s -> assertEquals("kitchen", s.asText()));
            assertEquals("11-20", e.get("second_page_range").asText());

            JsonNode ep = o.get("episode");
            assertEquals(sim, ep.get("id").asText());
            assertEquals(3, ep.get("cameras").asInt()); // three simulated cameras
            long step = (simFrames + 23) / 24;
            assertEquals((simFrames + step - 1) / step, ep.get("strip").asLong());
            assertEquals(160, ep.get("image_width").asInt()); // tiny preset renders 160x120
            assertEquals(simFrames, ep.get("ticks").asLong());
            assertTrue(ep.get("plots").asInt() >= 2, "state and action plots: " + ep);
            assertTrue(ep.get("state_series").asInt() > 0);
            assertTrue(ep.get("qc_rows").asInt() > 0);
            assertTrue(ep.get("residual_rows").asInt() > 0);
            assertEquals("not enriched yet", ep.get("enrichment").asText());
            assertEquals("frame " + 2 * step + " / " + simFrames, ep.get("after_strip_click").asText());
            assertEquals("frame 7 / " + simFrames, ep.get("after_scrub").asText());
            assertEquals("1", ep.get("camera_after_pick").asText());

            JsonNode al = o.get("align");
            assertEquals("/head_camera/image_raw/compressed", al.get("master").asText());
            assertTrue(al.get("streams").toString().contains("/teleop/command"), al.toString());
            int window = (int) Math.min(60, simFrames);
            assertEquals(window, al.get("narrow_frames").asInt());
            assertTrue(al.get("narrow_misses").asInt() > window / 2, al.toString());
            assertEquals(window, al.get("narrow_misses").asInt() + al.get("narrow_pairs").asInt());
            assertTrue(al.get("narrow_summary").asText().contains("within 1 ms"), al.toString());
            assertEquals(0, al.get("wide_misses").asInt());
            assertEquals(window, al.get("wide_pairs").asInt());
            assertTrue(al.get("wide_summary").asText().contains(simFrames + " matched, 0 without a message"), al.toString());
            assertTrue(al.get("bad_summary").asText().startsWith("tolerance_ms must be in 0..60000"), al.toString());

            JsonNode m = o.get("map");
            assertEquals(31, m.get("points").asInt());
            assertEquals(1, m.get("failures").asInt());
            assertEquals(TestLake.mined().size(), m.get("mined").asInt());
            assertEquals(3, m.get("legend_scenes").asInt()); // kitchen, warehouse and the BridgeData's unknown
            assertTrue(m.get("status").asText().startsWith("31 of 31 episodes (" + TestLake.MODEL + ", 192-d)"));
            assertEquals(failure, m.get("clicked_opened").asText());

            JsonNode ts = o.get("trainsets");
            assertEquals(2, ts.get("rows").asInt());
            assertEquals("train-v2", ts.get("composition_of").asText());
            assertTrue(ts.get("composition_bars").asInt() > 0);
            assertTrue(ts.get("diff_summary").asText().startsWith("train-v1 (9 episodes) -> train-v2 (12 episodes): +3 / -0"),
                    ts.toString());
            assertEquals(3, ts.get("added").size());
            assertEquals(0, ts.get("removed").asInt());
            assertTrue(ts.get("diff_bars").asInt() > 0);
            assertEquals("train-v1", ts.get("composition_after_click").asText());

            JsonNode fl = o.get("fleet");
            assertEquals("Fleet", fl.get("nav_on").asText());
            long robots = eps.stream().map(x -> x[4]).filter(x -> !"".equals(x)).distinct().count();
            assertEquals(robots, fl.get("robots").size(), fl.toString()); // robots of the simulated episodes
            assertEquals(Long.toString(robots), fl.get("summary_robots").asText());

            // the only failed requests: the deliberate bad tolerance and the missing episode
            assertEquals(2, o.get("http_errors").size(), o.get("http_errors").toString());
            assertTrue(o.get("http_errors").get(0).asText().startsWith("400 /api/episodes/" + sim + "/align?"));
            assertTrue(o.get("http_errors").get(0).asText().contains("tolerance_ms=-3"));
            assertEquals("404 /episodes/rec-0000000000000000-e00", o.get("http_errors").get(1).asText());
            assertEquals(404, o.get("missing").get("status").asInt());
            assertTrue(o.get("missing").get("message").asText().startsWith("no episode 'rec-0000000000000000-e00'"));
            for (String png : List.of("episodes.png", "episode.png", "align.png", "align-narrow.png", "map.png",
                    "trainsets.png")) {
                assertTrue(Files.size(shots.resolve(png)) > 10_000, png);
            }
        }
    }
}
