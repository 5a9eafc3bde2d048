package io.flywheel.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * The console's HTTP API on the test lake ({@link TestLake}): status codes, JSON, paging, sorting and
 * filters checked against direct scans of the lake, images, the alignment recompute checked against
 * what ingest stored, the map, training sets, and requests that try to leave the lake.
 */
class ConsoleApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Lake lake;
    private static ConsoleServer server;
    private static HttpClient http;
    /** episode id to its episodes row (id, scene, outcome, frame_count, master_topic), read with the lake API */
    private static final Map<String, Map<String, Object>> EPISODES = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws IOException {
        lake = Lake.open(TestLake.get().toString());
        server = ConsoleServer.start(lake, ConsoleOptions.builder().port(0).build());
        http = HttpClient.newHttpClient();
        try (LakeTable t = lake.table("episodes")) {
            t.scan(ScanRequest.builder().columns("episode_id", "scene", "outcome", "frame_count", "master_topic",
                    "task").build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            EPISODES.put(RowJson.str(b, "episode_id", i), RowJson.row(b, i));
                        }
                    });
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (lake != null) {
            lake.close();
        }
    }

    private record Reply(int status, String type, byte[] body) {
        JsonNode json() throws IOException {
            return JSON.readTree(body);
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private static Reply get(String pathAndQuery) throws Exception {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(server.uri().resolve(pathAndQuery)).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        return new Reply(r.statusCode(), r.headers().firstValue("content-type").orElse(""), r.body());
    }

    private static String bridgeEpisode() {
        return EPISODES.values().stream().filter(e -> Long.valueOf(10).equals(e.get("frame_count")))
                .map(e -> (String) e.get("episode_id")).sorted().findFirst().orElseThrow();
    }

    private static String simEpisode() {
        return EPISODES.values().stream().filter(e -> "kitchen".equals(e.get("scene")) || "warehouse".equals(e.get("scene")))
                .filter(e -> !String.valueOf(e.get("outcome")).startsWith("failure"))
                .map(e -> (String) e.get("episode_id")).sorted().findFirst().orElseThrow();
    }

    @Test
    void summaryCountsTheTables() throws Exception {
        Reply r = get("/api/summary");
        assertEquals(200, r.status());
        assertTrue(r.type().startsWith("application/json"), r.type());
        JsonNode s = r.json();
        assertEquals(31, s.get("tables").get("episodes").get("rows").asLong());
        long frames = EPISODES.values().stream().mapToLong(e -> (Long) e.get("frame_count")).sum();
        assertEquals(frames, s.get("tables").get("frames").get("rows").asLong());
        assertEquals(31, s.get("tables").get("raw_files").get("rows").asLong()); // one file per episode here
        assertTrue(s.get("enriched").asBoolean());
        assertEquals(2, s.get("trainsets").asInt());
    }

    @Test
    void episodesArePagedSortedAndFiltered() throws Exception {
        // paging: pages of 7 cover every episode once, in episode_id order
        List<String> seen = new ArrayList<>();
        for (int off = 0; off < 35; off += 7) {
            JsonNode p = get("/api/episodes?limit=7&offset=" + off).json();
            assertEquals(31, p.get("total").asLong());
            assertEquals(Math.min(7, Math.max(0, 31 - off)), p.get("rows").size(), "page at " + off);
            p.get("rows").forEach(row -> seen.add(row.get("episode_id").asText()));
        }
        assertEquals(new ArrayList<>(new TreeSet<>(EPISODES.keySet())), seen);
        assertEquals(0, get("/api/episodes?offset=40").json().get("rows").size());

        // sort by frame count, descending: the longest episode first; ties broken by id
        JsonNode byFrames = get("/api/episodes?sort=frame_count&order=desc&limit=31").json();
        long max = EPISODES.values().stream().mapToLong(e -> (Long) e.get("frame_count")).max().orElseThrow();
        assertEquals(max, byFrames.get("rows").get(0).get("frame_count").asLong());
        long prev = Long.MAX_VALUE;
        for (JsonNode row : byFrames.get("rows")) {
            assertTrue(row.get("frame_count").asLong() <= prev);
            prev = row.get("frame_count").asLong();
        }
        // 25 BridgeData episodes have 10 frames each: the last 25 rows
        assertEquals(10, byFrames.get("rows").get(30).get("frame_count").asLong());

        // filters: exact scene, id/task substring
        long kitchen = EPISODES.values().stream().filter(e -> "kitchen".equals(e.get("scene"))).count();
        assertTrue(kitchen > 0);
        JsonNode k = get("/api/episodes?scene=kitchen").json();
        assertEquals(kitchen, k.get("total").asLong());
        k.get("rows").forEach(row -> assertEquals("kitchen", row.get("scene").asText()));
        long carrot = EPISODES.values().stream().filter(e -> String.valueOf(e.get("task")).contains("carrot")).count();
        assertTrue(carrot > 0);
        assertEquals(carrot, get("/api/episodes?q=carrot").json().get("total").asLong());
        assertEquals(1, get("/api/episodes?outcome=" + EPISODES.values().stream()
                .map(e -> String.valueOf(e.get("outcome"))).filter(o -> o.startsWith("failure")).findFirst().orElseThrow()
                .replace(" ", "%20")).json().get("total").asLong());
        // a quote in a filter value is data, not SQL
        assertEquals(0, get("/api/episodes?scene=x%27%20OR%20%271%27=%271").json().get("total").asLong());
        assertEquals(200, get("/api/episodes?flag=low_fps").status());
    }

    @Test
    void badParametersGet400WithAMessage() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("/api/episodes?limit=0", "limit must be in 1..1000, got 0");
        cases.put("/api/episodes?limit=abc", "limit must be an integer, got 'abc'");
        cases.put("/api/episodes?offset=-5", "offset must be in 0..");
        cases.put("/api/episodes?sort=password", "sort: unknown column 'password'");
        cases.put("/api/episodes?order=up", "order must be asc or desc, got 'up'");
        cases.put("/api/episodes/bad%20id", "episode id 'bad id' is not valid");
        cases.put("/api/episodes/" + bridgeEpisode() + "/frames?limit=5000", "limit must be in 1..1000, got 5000");
        cases.put("/api/episodes/" + bridgeEpisode() + "/frames/x/image", "frame index must be an integer, got 'x'");
        cases.put("/api/episodes/" + bridgeEpisode() + "/align?method=sideways", "method must be nearest, asof or interpolate");
        cases.put("/api/episodes/" + bridgeEpisode() + "/align?tolerance_ms=-1", "tolerance_ms must be in 0..60000");
        cases.put("/api/episodes/" + bridgeEpisode() + "/align?tolerance_ms=NaN", "tolerance_ms must be a number");
        cases.put("/api/trainset-diff?from=train-v1", "parameter 'to' is required");
        cases.put("/api/episodes?robt=arm-1", "unknown parameter 'robt'; filters: robot, task, scene, operator, outcome,"
                + " quality; also: offset, limit, sort, order, q, flag");
        cases.put("/api/episodes?scene=kit%00chen", "parameter 'scene': control character U+0000 at character 3");
        cases.put("/api/episodes?q=%FF%FEx", "");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Reply r = get(c.getKey());
            assertEquals(400, r.status(), c.getKey() + ": " + r.text());
            assertTrue(r.type().startsWith("application/json"), c.getKey());
            assertEquals(400, r.json().get("status").asInt());
            assertTrue(r.json().get("error").asText().startsWith(c.getValue()), c.getKey() + ": " + r.json().get("error"));
            assertFalse(r.text().contains(TestLake.get().toString()), c.getKey() + " names the lake: " + r.text());
            assertFalse(r.text().contains("episode_id ="), c.getKey() + " shows the internal filter: " + r.text());
        }
        Reply unknownOnPage = get("/episodes?robt=arm-1");
        assertEquals(400, unknownOnPage.status());
        assertTrue(unknownOnPage.text().contains("unknown parameter"), unknownOnPage.text());
        Map<String, String> missing = Map.of("/api/episodes/rec-0000000000000000-e00", "no episode 'rec-0000000000000000-e00'",
                "/api/episodes/" + bridgeEpisode() + "/frames/99/image", "episode '" + bridgeEpisode() + "' has no frame 99",
                "/api/episodes/" + bridgeEpisode() + "/frames/0/image?camera=5", "frame 0 of episode '" + bridgeEpisode()
                        + "' has 3 camera(s); camera 5 does not exist",
                "/api/trainsets/train-v9", "no training set 'train-v9'",
                "/api/trainset-diff?from=train-v1&to=nope", "no training set 'nope'",
                "/api/nothing", "no API path /api/nothing");
        for (Map.Entry<String, String> c : missing.entrySet()) {
            Reply r = get(c.getKey());
            assertEquals(404, r.status(), c.getKey() + ": " + r.text());
            assertTrue(r.json().get("error").asText().startsWith(c.getValue()), c.getKey() + ": " + r.json().get("error"));
        }
        HttpResponse<String> post = http.send(HttpRequest.newBuilder(server.uri().resolve("/api/episodes"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
        assertTrue(post.body().contains("read-only"), post.body());
        Reply page = get("/episodes/rec-0000000000000000-e00");
        assertEquals(404, page.status());
        assertTrue(page.type().startsWith("text/html"));
        assertTrue(page.text().contains("no episode"), page.text());
    }

    @Test
    void episodeFramesAndImages() throws Exception {
        String id = bridgeEpisode();
        JsonNode e = get("/api/episodes/" + id).json();
        assertEquals(10, e.get("frame_count").asInt());
        assertEquals(3, e.get("cameras").size());
        assertFalse(e.has("emb_test_pixels_8x8") || e.has("emb_test_pixels_8x8_at_ns"),
                "the embedding is not sent with the episode");
        assertEquals(TestLake.MODEL, e.get("embedding_model").asText());
        assertEquals(List.of(TestLake.MODEL), List.of(e.get("embedding_models").get(0).asText()));
        assertTrue(e.get("metadata").get("source_files").isArray());
        assertTrue(e.get("residuals").size() > 0);
        for (JsonNode s : e.get("residuals")) {
            assertEquals(10, s.get("matched").asInt() + s.get("unmatched").asInt(), s.toString());
        }
        JsonNode f = get("/api/episodes/" + id + "/frames?offset=2&limit=4").json();
        assertEquals(10, f.get("frame_count").asInt());
        List<Integer> idx = new ArrayList<>();
        f.get("frames").forEach(x -> idx.add(x.get("frame_index").asInt()));
        assertEquals(List.of(2, 3, 4, 5), idx);
        assertEquals(7, f.get("frames").get(0).get("state").size()); // BridgeData: 7-d end-effector state
        // the names of those values, as the recording's JointState names them
        assertEquals("[\"x\",\"y\",\"z\",\"roll\",\"pitch\",\"yaw\",\"gripper\"]", e.get("state_names").toString());
        assertEquals(7, e.get("action_names").size());
        String page = get("/episodes/" + id).text();
        assertTrue(page.contains("<td class=\"f-state_names\">7: x, y, z, roll, pitch, yaw, gripper</td>"), page);

        Reply img = get("/api/episodes/" + id + "/frames/3/image?camera=1");
        assertEquals(200, img.status());
        assertEquals("image/jpeg", img.type());
        BufferedImage decoded = ImageIO.read(new ByteArrayInputStream(img.body()));
        assertEquals(64, decoded.getWidth()); // the BridgeData frames are 64x64 JPEGs
        assertEquals(64, decoded.getHeight());
        // a simulated 160x120 frame scaled to a 40-pixel-wide thumbnail
        Reply thumb = get("/api/episodes/" + simEpisode() + "/frames/0/image?camera=0&thumb=40");
        assertEquals(200, thumb.status());
        BufferedImage t = ImageIO.read(new ByteArrayInputStream(thumb.body()));
        assertEquals(40, t.getWidth());
        assertEquals(30, t.getHeight());
    }

    @Test
    void alignmentRecomputeMatchesWhatIngestStored() throws Exception {
        String id = simEpisode();
        // ingest's default for joint states: asof within 50 ms; recomputing with it gives the stored pairs
        Map<Integer, Long> stored = new LinkedHashMap<>();
        try (LakeTable t = lake.table("frames")) {
            t.scan(ScanRequest.builder().columns("frame_index", "streams").filter(ConsoleApi.episodeFilter(id)).build(), b -> {
                for (int i = 0; i < b.rowCount(); i++) {
                    for (io.flywheel.rows.StreamMatch m : b.streamMatches(i)) {
                        if ("/joint_states".equals(m.stream())) {
                            stored.put(b.column("frame_index").getInt(i), m.residualNs());
                        }
                    }
                }
            });
        }
        int frames = ((Long) EPISODES.get(id).get("frame_count")).intValue();
        assertEquals(frames, stored.size());
        JsonNode a = get("/api/episodes/" + id + "/align?stream=/joint_states&method=asof&tolerance_ms=50&count=5000").json();
        assertEquals(frames, a.get("summary").get("frames").asInt());
        assertEquals("/head_camera/image_raw/compressed", a.get("master_topic").asText());
        for (JsonNode p : a.get("pairs")) {
            Long want = stored.get(p.get("frame").asInt());
            assertEquals(want, p.get("residual_ns").isNull() ? null : p.get("residual_ns").asLong(), "frame " + p.get("frame"));
            assertTrue(p.get("residual_ns").isNull() || p.get("residual_ns").asLong() <= 0, "asof never pairs a later message");
        }
        // commands arrive every 20 ms: within 50 ms every frame has one; within 1 ms most do not
        JsonNode wide = get("/api/episodes/" + id + "/align?stream=/teleop/command&method=nearest&tolerance_ms=50").json();
        assertEquals(frames, wide.get("summary").get("matched").asInt());
        assertEquals(60, wide.get("pairs").size()); // the default window
        JsonNode narrow = get("/api/episodes/" + id + "/align?stream=/teleop/command&method=nearest&tolerance_ms=1").json();
        int unmatched = narrow.get("summary").get("unmatched").asInt();
        assertTrue(unmatched > frames / 2, "unmatched " + unmatched + " of " + frames);
        assertEquals(frames, narrow.get("summary").get("matched").asInt() + unmatched);
        assertTrue(narrow.get("summary").get("max_ms").asDouble() <= 1.0);
        JsonNode drop = get("/api/episodes/" + id + "/align?stream=/teleop/command&method=nearest&tolerance_ms=1&on_miss=drop").json();
        assertEquals(unmatched, drop.get("summary").get("dropped").asInt());
        assertEquals(0, drop.get("summary").get("unmatched").asInt());
        int notKept = 0;
        for (JsonNode p : drop.get("pairs")) {
            notKept += p.get("kept").asBoolean() ? 0 : 1;
        }
        int missInWindow = 0;
        for (JsonNode p : narrow.get("pairs")) {
            missInWindow += p.get("message").asInt() < 0 ? 1 : 0;
        }
        assertEquals(missInWindow, notKept);
        assertEquals(404, get("/api/episodes/" + id + "/align?stream=/nope").status());
    }

    @Test
    void mapAndTrainingSets() throws Exception {
        JsonNode m = get("/api/map").json();
        assertTrue(m.get("enriched").asBoolean());
        assertEquals(TestLake.MODEL, m.get("model").asText());
        assertEquals(192, m.get("dimension").asInt());
        assertEquals(31, m.get("points").size());
        assertEquals("train-v2", m.get("mined_from").asText());
        Set<String> mined = new HashSet<>();
        int failures = 0;
        for (JsonNode p : m.get("points")) {
            if (p.get("mined").asBoolean()) {
                mined.add(p.get("episode_id").asText());
            }
            failures += p.get("failure").asBoolean() ? 1 : 0;
        }
        assertEquals(new HashSet<>(TestLake.mined()), mined);
        assertEquals(1, failures);
        Reply png = get("/api/map.png");
        assertEquals("image/png", png.type());
        assertEquals(960, ImageIO.read(new ByteArrayInputStream(png.body())).getWidth());
        assertEquals(0, get("/api/map?trainset=train-v1").json().get("points").findValues("mined").stream()
                .filter(JsonNode::asBoolean).count());

        JsonNode sets = get("/api/trainsets").json().get("trainsets");
        assertEquals(2, sets.size());
        assertEquals("train-v1", sets.get(1).get("parent").asText());
        assertEquals(3, sets.get(1).get("mined").asInt());
        JsonNode v2 = get("/api/trainsets/train-v2").json();
        assertEquals(v2.get("episodes").asInt(), v2.get("episode_list").size());
        long scenes = 0;
        for (JsonNode c : v2.get("composition").get("scene")) {
            scenes += c.asLong();
        }
        assertEquals(v2.get("episodes").asLong(), scenes);
        JsonNode d = get("/api/trainset-diff?from=train-v1&to=train-v2").json();
        assertEquals(0, d.get("removed").size());
        assertEquals(sets.get(1).get("episodes").asInt() - sets.get(0).get("episodes").asInt(), d.get("added").size());
        assertEquals(sets.get(0).get("episodes").asInt(), d.get("kept").asInt());
        Reply chart = get("/api/trainset-diff.png?from=train-v1&to=train-v2");
        assertEquals(200, chart.status());
        assertEquals("image/png", chart.type());
    }

    @Test
    void pagesRender() throws Exception {
        Reply list = get("/episodes?sort=frame_count&order=desc&limit=5");
        assertEquals(200, list.status());
        assertTrue(list.text().contains("<span id=\"total\">31</span>"), list.text());
        assertTrue(list.text().contains("next 5"));
        for (String p : List.of("/episodes/" + bridgeEpisode(), "/episodes/" + simEpisode() + "/align", "/map", "/trainsets",
                "/static/console.js", "/static/console.css")) {
            assertEquals(200, get(p).status(), p);
        }
        HttpResponse<Void> root = http.send(HttpRequest.newBuilder(server.uri()).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        assertEquals(302, root.statusCode());
        assertTrue(root.headers().firstValue("location").orElse("").endsWith("/episodes"));
    }

    /** Sends a raw request line, so that nothing on the client side normalises the path. */
    private static String raw(String target) throws IOException {
        try (Socket s = new Socket(server.uri().getHost(), server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void nothingOutsideTheLakeIsServed() throws Exception {
        List<String> attacks = List.of("/static/../../../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd",
                "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/static/console.js/../../../pom.xml",
                "/api/episodes/..%2F..%2F..%2Fetc%2Fpasswd", "/api/episodes/%2e%2e/frames/0/image",
                "/static/..\\..\\pom.xml", "/..;/etc/passwd", "/static//etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                "/static/ConsoleServer.class", "/static/../ConsoleServer.class", "/etc/passwd",
                "/api/episodes/" + bridgeEpisode() + "/frames/0/image?camera=0&path=/etc/passwd");
        for (String a : attacks) {
            String reply = raw(a);
            int status = Integer.parseInt(reply.substring(9, 12));
            if (a.endsWith("path=/etc/passwd")) {
                assertEquals(200, status, a); // an unknown parameter is ignored: the lake's image is sent
            } else {
                assertTrue(status >= 400 && status < 500, a + " -> " + reply.lines().findFirst().orElse(""));
            }
            assertFalse(reply.contains("root:"), a);
            assertFalse(reply.contains("<project"), a);
            assertFalse(reply.contains("cafebabe") || reply.contains("\u00ca\u00fe\u00ba\u00be"), a);
        }
        // a locator naming a file that raw_files does not register is refused
        ConsoleApi api = server.api();
        ApiException e = assertThrows(ApiException.class, () -> api.rawFile("file:///etc/passwd"));
        assertEquals(403, e.status());
        assertEquals("raw file file:///etc/passwd is not registered in the lake's raw_files table", e.getMessage());
        JsonNode ep = get("/api/episodes/" + bridgeEpisode()).json();
        assertNotNull(api.rawFile(ep.get("metadata").get("source_files").get(0).asText()));
        assertEquals(URI.create(ep.get("metadata").get("source_files").get(0).asText()).getPath(),
                api.rawFile(ep.get("metadata").get("source_files").get(0).asText()).toString());
    }
}
