package io.flywheel.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.eval.Evaluations;
import io.flywheel.lake.Lake;

/**
 * The evaluation page and its API on a lake with two runs: the cube, the heatmaps and the regression of glass (36/40
 * to 12/40) against the baseline; an unknown run is 404.
 */
class ConsoleEvalTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    static String csv(int cupOk, int glassOk) {
        StringBuilder b = new StringBuilder("episode_id,task,object,lighting,robot,success,duration_s\n");
        for (int i = 0; i < 40; i++) {
            b.append("c").append(i).append(",pick,cup,dim,arm-1,").append(i < cupOk).append(",10\n");
            b.append("g").append(i).append(",pick,glass,dim,arm-1,").append(i < glassOk).append(",10\n");
        }
        return b.toString();
    }

    @Test
    void evaluationPageShowsCubeHeatmapAndRegressions() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Evaluations.ingest(lake, Files.writeString(dir.resolve("a.csv"), csv(30, 36)), "A", "p1", null);
            Evaluations.ingest(lake, Files.writeString(dir.resolve("b.csv"), csv(29, 12)), "B", "p2", null);
            try (ConsoleServer server = ConsoleServer.start(lake, ConsoleOptions.builder().port(0).build())) {
                HttpClient http = HttpClient.newHttpClient();
                String base = "http://127.0.0.1:" + server.port();
                HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(base
                        + "/eval?run=B&by=object&against=A")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, page.statusCode());
                String html = page.body();
                assertTrue(html.contains("run B (policy p2): 2 cells, 80 rollouts"), html);
                assertTrue(html.contains("1 regression(s), 0 improvement(s) at BH q=0.05"), html);
                assertTrue(html.contains("<tr class=\"regression\"><td>glass</td><td>36/40</td><td>12/40</td>"), html);
                assertTrue(html.contains(">Evaluation</a>"));
                HttpResponse<byte[]> png = http.send(HttpRequest.newBuilder(URI.create(base
                        + "/api/eval/heatmap.png?a=A&b=B&by=object")).build(), HttpResponse.BodyHandlers.ofByteArray());
                assertEquals(200, png.statusCode());
                assertEquals("image/png", png.headers().firstValue("content-type").orElse(""));
                assertTrue(png.body().length > 500);
                JsonNode rep = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base
                        + "/api/eval/report?run=A&by=object")).build(), HttpResponse.BodyHandlers.ofString()).body());
                assertEquals(0.9, rep.get("cells").get(1).get("success_rate").asDouble(), 1e-12);
                JsonNode runs = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/eval/runs"))
                        .build(), HttpResponse.BodyHandlers.ofString()).body());
                assertEquals(2, runs.get("runs").size());
                assertEquals(404, http.send(HttpRequest.newBuilder(URI.create(base + "/api/eval/report?run=Z"))
                        .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
                assertEquals(400, http.send(HttpRequest.newBuilder(URI.create(base
                        + "/api/eval/report?run=A&by=colour")).build(), HttpResponse.BodyHandlers.ofString())
                        .statusCode());
                // q is validated and honoured; an empty by is refused
                for (String bad : List.of("/api/eval/compare?a=A&b=B&q=2", "/api/eval/compare?a=A&b=B&q=abc",
                        "/api/eval/compare?a=A&b=B&q=0", "/api/eval/report?run=A&by=", "/api/eval/report?run=A&by=task,,object")) {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + bad)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertEquals(400, r.statusCode(), bad + ": " + r.body());
                    assertTrue(r.body().contains(bad.contains("q=") ? "'q'" : "'by'"), r.body());
                }
                JsonNode cmp = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base
                        + "/api/eval/compare?a=A&b=B&by=object&q=0.2")).build(), HttpResponse.BodyHandlers.ofString())
                        .body());
                assertEquals(0.2, cmp.get("q").asDouble(), 1e-12);
            }
        }
    }
}
