package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * {@code flywheel eval ingest | report | compare | runs} through the real entry point: summaries, --json, the heatmap,
 * and exit codes (an unknown run or dimension and a bad results file are 1, naming them; a missing option is 2).
 */
class EvalCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;
    static String lake;

    /** Run A: cup 30/40, glass 36/40; run B: cup 29/40, glass 12/40 (a regression), bowl 3/4 vs 4/4 (Fisher). */
    static String csv(String run, int cupOk, int glassOk, int bowlOk) {
        StringBuilder b = new StringBuilder("episode_id,task,object,lighting,robot,success,duration_s,failure_mode\n");
        int[][] cells = {{40, cupOk}, {40, glassOk}, {4, bowlOk}};
        String[] objects = {"cup", "glass", "bowl"};
        for (int o = 0; o < 3; o++) {
            for (int i = 0; i < cells[o][0]; i++) {
                boolean ok = i < cells[o][1];
                b.append(run).append('-').append(objects[o]).append(i).append(",pick,").append(objects[o])
                        .append(",dim,arm-1,").append(ok ? 1 : 0).append(",10,").append(ok ? "" : "slip").append('\n');
            }
        }
        return b.toString();
    }

    @BeforeAll
    static void build() throws Exception {
        lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        Files.writeString(tmp.resolve("a.csv"), csv("a", 30, 36, 3));
        Files.writeString(tmp.resolve("b.csv"), csv("b", 29, 12, 4));
        CliRun a = CliRun.of("eval", "ingest", lake, tmp.resolve("a.csv").toString(), "--run", "A", "--policy", "p1");
        assertEquals(0, a.exitCode(), a.err());
        assertTrue(a.out().contains("run A (policy p1): 84 rollouts, 69 succeeded"), a.out());
        CliRun b = CliRun.of("eval", "ingest", lake, tmp.resolve("b.csv").toString(), "--run", "B", "--policy", "p2",
                "--json");
        assertEquals(0, b.exitCode(), b.err());
        assertEquals(84, JSON.readTree(b.out()).get("rows").asLong());
    }

    @Test
    void reportAndCompare() throws Exception {
        CliRun r = CliRun.of("eval", "report", lake, "--run", "A", "--by", "object,robot", "--heatmap",
                tmp.resolve("a.png").toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("glass   arm-1  40  36  0.900"), r.out());
        assertTrue(r.out().contains("run A (policy p1): 3 cell(s), 84 rollouts, success 0.821"), r.out());
        assertTrue(Files.size(tmp.resolve("a.png")) > 1000);
        JsonNode j = JSON.readTree(CliRun.of("eval", "report", lake, "--run", "A", "--json").out());
        assertEquals(3, j.get("cells").size());
        assertEquals("robot", j.get("dimensions").get(3).asText());
        assertEquals(0.9, j.get("cells").get(2).get("success_rate").asDouble(), 1e-12);

        CliRun c = CliRun.of("eval", "compare", lake, "A", "B", "--by", "object");
        assertEquals(0, c.exitCode(), c.err());
        assertTrue(c.out().contains("REGRESSION"), c.out());
        assertTrue(c.out().contains("B (policy p2) vs A (policy p1): 3 cell(s) tested (1 by Fisher's exact test), 1"
                + " regression(s), 0 improvement(s) at BH q=0.05"), c.out());
        JsonNode cj = JSON.readTree(CliRun.of("eval", "compare", lake, "A", "B", "--by", "object", "--json").out());
        assertEquals(1, cj.get("regressions").asInt());
        assertEquals("fisher", cj.get("cells").get(0).get("test").asText());
        assertEquals("regression", cj.get("cells").get(2).get("verdict").asText());
        CliRun runs = CliRun.of("eval", "runs", lake);
        assertTrue(runs.out().contains("B  policy p2  84 rollouts") && runs.out().contains("eval run(s) in"), runs.out());
    }

    @Test
    void exitCodes() throws Exception {
        CliRun unknownRun = CliRun.of("eval", "report", lake, "--run", "Z", "--json");
        assertEquals(1, unknownRun.exitCode());
        assertTrue(unknownRun.err().contains("no eval run 'Z' in the lake; runs there: A, B"), unknownRun.err());
        assertEquals("not_found", JSON.readTree(unknownRun.out()).get("error").get("kind").asText());
        CliRun dim = CliRun.of("eval", "compare", lake, "A", "B", "--by", "object,colour");
        assertEquals(1, dim.exitCode());
        assertTrue(dim.err().contains("unknown dimension 'colour'"), dim.err());
        Files.writeString(tmp.resolve("bad.csv"), "episode_id,task,object,lighting,robot,success\ne,t,o,l,r,perhaps\n");
        CliRun bad = CliRun.of("eval", "ingest", lake, tmp.resolve("bad.csv").toString(), "--run", "C", "--policy",
                "p");
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("bad.csv: line 2, column 6 (success): 'perhaps' is not a boolean"), bad.err());
        CliRun again = CliRun.of("eval", "ingest", lake, tmp.resolve("a.csv").toString(), "--run", "A", "--policy",
                "p1", "--json");
        assertEquals(1, again.exitCode());
        assertEquals("conflict", JSON.readTree(again.out()).get("error").get("kind").asText());
        assertEquals(2, CliRun.of("eval", "report", lake).exitCode()); // --run missing
        assertEquals(2, CliRun.of("eval").exitCode());
        assertEquals(2, CliRun.of("eval", "compare", lake, "A", "B", "--q", "2").exitCode());
        assertTrue(unknownRun.noStackTrace() && dim.noStackTrace() && bad.noStackTrace());
    }

    @Test
    void simEvalWritesRolloutsWithTheirTruth() throws Exception {
        Path out = tmp.resolve("evalsim");
        CliRun s = CliRun.of("sim", "--eval", "pick-v2", "--eval-shift", "object=glass_cup:-0.35", "--seed", "3",
                "--rollouts-per-cell", "16", "--out", out.toString(), "--json");
        assertEquals(0, s.exitCode(), s.err());
        JsonNode j = JSON.readTree(s.out());
        assertEquals("pick-v2-s3", j.get("run_id").asText());
        assertEquals(48 * 16 + 24 * 4, j.get("rollouts").asInt()); // arm-3: max(4, 16 / 8)
        assertEquals(18, j.get("shifted_cells").asInt());
        JsonNode truth = JSON.readTree(out.resolve("eval_truth.json").toFile());
        assertEquals(72, truth.get("cells").size());
        // glass_cup, bright, pick_place, arm-1: 0.65 + 0 + 0 + 0 - 0.35
        for (JsonNode c : truth.get("cells")) {
            if (c.get("object").asText().equals("glass_cup") && c.get("lighting").asText().equals("bright")
                    && c.get("task").asText().equals("pick_place") && c.get("robot").asText().equals("arm-1")) {
                assertEquals(0.3, c.get("true_rate").asDouble(), 1e-9);
            }
        }
        CliRun in = CliRun.of("eval", "ingest", lake, out.resolve("eval_results.csv").toString());
        assertEquals(0, in.exitCode(), in.err());
        JsonNode r = JSON.readTree(CliRun.of("eval", "report", lake, "--run", "pick-v2-s3", "--json").out());
        assertEquals(72, r.get("cells").size());
        assertEquals(2, CliRun.of("sim", "--eval", "p", "--eval-shift", "colour=red:0.1", "--out",
                tmp.resolve("x").toString()).exitCode());
        assertEquals(1, CliRun.of("sim", "--eval", "p", "--out", out.toString()).exitCode()); // results there
    }

    @Test
    void simEvalRefusesBadIdsBeforeWritingAndForceRemovesEarlierRecordings() throws Exception {
        Path bad = tmp.resolve("bad-ids");
        for (String[] args : List.of(new String[] {"--eval", "a/b"}, new String[] {"--eval", ".."},
                new String[] {"--eval", "p", "--run", "../x"}, new String[] {"--eval", "p", "--run", ""},
                new String[] {"--eval", "p", "--run", "has space"}, new String[] {"--eval", ""})) {
            List<String> a = new java.util.ArrayList<>(List.of("sim"));
            a.addAll(List.of(args));
            a.addAll(List.of("--out", bad.toString()));
            CliRun r = CliRun.of(a.toArray(String[]::new));
            assertEquals(2, r.exitCode(), String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().contains("is not valid"), r.err());
        }
        assertTrue(!Files.exists(bad), "nothing written");

        Path out = tmp.resolve("force");
        assertEquals(0, CliRun.of("sim", "--eval", "p1", "--eval-cell", "robot=arm-1", "--eval-cell", "object=glass_cup",
                "--eval-cell", "lighting=dim", "--rollouts-per-cell", "1", "--mcap", "--jpeg", "imageio", "--out",
                out.toString()).exitCode());
        assertTrue(Files.exists(out.resolve("episodes")));
        CliRun again = CliRun.of("sim", "--eval", "p2", "--eval-cell", "robot=arm-1", "--rollouts-per-cell", "1",
                "--force", "--out", out.toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(!Files.exists(out.resolve("episodes")), "the earlier run's recordings are gone");
    }
}
