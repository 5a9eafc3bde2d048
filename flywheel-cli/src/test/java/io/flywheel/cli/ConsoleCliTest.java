package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.console.TestLake;

/** {@code flywheel serve} and {@code flywheel map} on the console's test lake (BridgeData + a tiny simulated fleet). */
class ConsoleCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void mapDrawsEveryEpisodeWithFailuresAndMined(@TempDir Path tmp) throws Exception {
        String lake = TestLake.get().toString();
        Path png = tmp.resolve("map.png");
        CliRun r = CliRun.of("map", lake, "--out", png.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode o = JSON.readTree(r.out());
        assertEquals(31, o.get("points_drawn").asInt());
        assertEquals(31, o.get("points").size());
        assertEquals(1, o.get("failures").asInt());
        assertEquals(TestLake.mined().size(), o.get("mined").asInt());
        assertEquals("train-v2", o.get("mined_from").asText());
        assertEquals(25, o.get("scenes").get("").asInt()); // the BridgeData episodes have no scene
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(960, img.getWidth());
        assertEquals(720, img.getHeight());

        CliRun text = CliRun.of("map", lake, "--out", png.toString(), "--trainset", "train-v1", "--max-points", "10");
        assertEquals(0, text.exitCode(), text.err());
        // 31 embedded episodes, at most 10 drawn: every 4th (ceil(31 / 10)), rows 0, 4, ..., 28
        assertTrue(text.out().startsWith("embedding map of 8 of 31 episode(s) (test-pixels-8x8), 192-d"), text.out());
        assertTrue(text.out().contains("0 mined episode(s) in train-v1"), text.out());

        Path empty = tmp.resolve("empty");
        assertEquals(0, CliRun.of("init", empty.toString()).exitCode());
        CliRun none = CliRun.of("map", empty.toString(), "--out", png.toString());
        assertEquals(1, none.exitCode());
        assertTrue(none.err().contains("has an embedding yet (0 episode(s), not enriched yet"), none.err());
        assertTrue(none.noStackTrace());
        CliRun badTag = CliRun.of("map", lake, "--out", png.toString(), "--trainset", "nope");
        assertEquals(1, badTag.exitCode(), badTag.err());
        assertTrue(badTag.err().contains("no training set 'nope'"), badTag.err());
    }

    @Test
    void serveAnswersTheApiThenStops() throws Exception {
        String lake = TestLake.get().toString();
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        final int p = port;
        CompletableFuture<CliRun> run = CompletableFuture.supplyAsync(
                () -> CliRun.of("serve", lake, "--port", Integer.toString(p), "--max-requests", "2", "--json"));
        HttpClient http = HttpClient.newHttpClient();
        URI base = URI.create("http://127.0.0.1:" + port + "/");
        HttpResponse<String> summary = null;
        for (int i = 0; i < 600 && summary == null; i++) { // wait until it listens (lake open + server start)
            try {
                summary = http.send(HttpRequest.newBuilder(base.resolve("/api/summary")).build(),
                        HttpResponse.BodyHandlers.ofString());
            } catch (ConnectException notYet) {
                Thread.sleep(100);
            }
        }
        assertEquals(200, summary.statusCode());
        assertEquals(31, JSON.readTree(summary.body()).get("tables").get("episodes").get("rows").asInt());
        HttpResponse<String> bad = http.send(HttpRequest.newBuilder(base.resolve("/api/episodes?limit=0")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(400, bad.statusCode());
        CliRun r = run.get(60, TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().strip().split("\n");
        assertEquals(base.toString(), JSON.readTree(lines[0]).get("url").asText());
        assertEquals(2, JSON.readTree(lines[1]).get("requests").asInt());
        assertEquals(1, JSON.readTree(lines[1]).get("errors").asInt());
    }

    /** SIGTERM (what Ctrl-C, systemd and Kubernetes send) stops serve with its summary and exit 0. */
    @Test
    void serveStopsOnSigtermWithItsSummary(@TempDir Path tmp) throws Exception {
        String lake = TestLake.get().toString();
        GatewayProcess serve = GatewayProcess.start(tmp.resolve("serve"), null, "serve", lake, "--port", "0", "--json");
        try {
            URI base = URI.create(JSON.readTree(serve.await(l -> l.contains("\"url\""))).get("url").asText());
            HttpResponse<String> s = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(base.resolve("/api/summary")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, s.statusCode());
        } finally {
            serve.process().destroy(); // SIGTERM
            assertTrue(serve.process().waitFor(60, TimeUnit.SECONDS));
        }
        assertEquals(0, serve.process().exitValue(), String.join("\n", serve.lines()));
        JsonNode done = JSON.readTree(serve.await(l -> l.contains("\"requests\"")));
        assertEquals(1, done.get("requests").asInt());
        assertEquals(0, done.get("errors").asInt());
    }

    @Test
    void serveRefusesABusyPortAndAMissingLake(@TempDir Path tmp) throws IOException {
        String lake = TestLake.get().toString();
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            CliRun r = CliRun.of("serve", lake, "--port", Integer.toString(busy.getLocalPort()));
            assertEquals(1, r.exitCode());
            assertTrue(r.err().contains("cannot listen on 127.0.0.1:" + busy.getLocalPort()), r.err());
            assertTrue(r.noStackTrace(), r.err());
        }
        CliRun missing = CliRun.of("serve", tmp.resolve("nothing").toString(), "--port", "0");
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no Flywheel lake at"), missing.err());
        assertEquals(2, CliRun.of("serve", lake, "--port", "70000").exitCode());
    }
}
