package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.mcap.McapWriter;

/**
 * The loop on recorded eval episodes, through the real entry point: {@code sim --eval --mcap} (12 glass-cup rollouts of
 * arm-1, 1 s MCAP files with their outcome metadata) -> {@code eval ingest LAKE DIR} (episodes and eval rows, linked)
 * -> {@code eval report} (checked against the simulator's results and truth files) -> a second ingest adds nothing ->
 * {@code mine --failures-from-eval} finds nothing minable before {@code enrich} and every failed rollout after it.
 */
class EvalMcapCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void recordedRolloutsAreIngestedLinkedAndMinableOnceEnriched() throws Exception {
        Path out = tmp.resolve("evalsim");
        CliRun s = CliRun.of("sim", "--eval", "pick-v3", "--eval-cell", "robot=arm-1", "--eval-cell",
                "object=glass_cup", "--rollouts-per-cell", "2", "--seed", "11", "--mcap", "--jpeg", "imageio",
                "--out", out.toString(), "--json");
        assertEquals(0, s.exitCode(), s.err());
        JsonNode sim = JSON.readTree(s.out());
        assertEquals(12, sim.get("rollouts").asInt()); // 2 tasks x 3 lightings x 2
        assertEquals(12, sim.get("recordings").asInt());
        Path episodes = out.resolve("episodes");

        // the simulator's own results: per cell (task, lighting) the rollouts and successes; failures
        Map<String, int[]> truthCounts = new HashMap<>();
        int failures = 0;
        List<String> lines = Files.readAllLines(out.resolve("eval_results.csv"));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1); // run,policy,episode,task,object,lighting,robot,scene,success,...
            int[] c = truthCounts.computeIfAbsent(f[3] + "/" + f[5], k -> new int[2]);
            c[0]++;
            c[1] += Boolean.parseBoolean(f[8]) ? 1 : 0;
            failures += Boolean.parseBoolean(f[8]) ? 0 : 1;
        }
        JsonNode truth = JSON.readTree(out.resolve("eval_truth.json").toFile());
        assertEquals(6, truth.get("cells").size());
        for (JsonNode c : truth.get("cells")) {
            assertTrue(truthCounts.containsKey(c.get("task").asText() + "/" + c.get("lighting").asText()), c.toString());
        }
        assertTrue(failures > 0 && failures < 12, "glass cups fail about half the time: " + failures);

        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("eval", "ingest", lake, episodes.toString(), "--json");
        assertEquals(0, in.exitCode(), in.err());
        JsonNode ij = JSON.readTree(in.out());
        assertEquals(12, ij.get("recordings_ingested").asInt());
        assertEquals(12, ij.get("rows").asInt());
        assertEquals("pick-v3-s11", ij.get("runs").get(0).get("run_id").asText());
        assertEquals(12, ij.get("runs").get(0).get("minable").asInt());

        // every eval row names the lake episode of its own recording
        Set<String> linked = new HashSet<>();
        ij.get("episode_ids").forEach(e -> linked.add(e.asText()));
        Set<String> lakeEpisodes = new HashSet<>();
        JSON.readTree(CliRun.of("qc", "report", lake, "--json").out()).get("episodes")
                .forEach(e -> lakeEpisodes.add(e.get("episode_id").asText()));
        assertEquals(12, lakeEpisodes.size());
        assertEquals(lakeEpisodes, linked);

        JsonNode report = JSON.readTree(CliRun.of("eval", "report", lake, "--run", "pick-v3-s11", "--by",
                "task,lighting", "--json").out());
        assertEquals(6, report.get("cells").size());
        for (JsonNode c : report.get("cells")) {
            int[] want = truthCounts.get(c.get("task").asText() + "/" + c.get("lighting").asText());
            assertEquals(want[0], c.get("episodes").asInt(), c.toString());
            assertEquals(want[1], c.get("successes").asInt(), c.toString());
        }

        // a second ingest: nothing new
        CliRun again = CliRun.of("eval", "ingest", lake, episodes.toString(), "--json");
        assertEquals(0, again.exitCode(), again.err());
        JsonNode aj = JSON.readTree(again.out());
        assertEquals(0, aj.get("rows").asInt());
        assertEquals(12, aj.get("rows_present").asInt());
        assertEquals(12, aj.get("recordings_skipped").asInt());

        // not minable before enrich (no vectors), every failure minable after it
        assertEquals(1, CliRun.of("mine", lake, "--failures-from-eval", "pick-v3-s11", "-k", "1").exitCode());
        CliRun en = CliRun.of("enrich", lake, "--threads", "2");
        assertEquals(0, en.exitCode(), en.err());
        CliRun m = CliRun.of("mine", lake, "--failures-from-eval", "pick-v3-s11", "-k", "1", "--out",
                tmp.resolve("mined.json").toString(), "--json");
        assertEquals(0, m.exitCode(), m.err());
        JsonNode ev = JSON.readTree(m.out()).get("eval");
        assertEquals(failures, ev.get("failures").asInt());
        assertEquals(failures, ev.get("queries").size());
        assertEquals(0, ev.get("not_minable").size());
        ev.get("queries").forEach(q -> assertTrue(linked.contains(q.asText()), q.asText()));
    }

    @Test
    void badRecordingsAreExitOneNamingFileAndKey() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        Path bad = tmp.resolve("bad.mcap");
        try (McapWriter w = McapWriter.builder().build(bad)) {
            w.writeMetadata("flywheel.eval", Map.of("run_id", "r", "policy_version", "p", "task", "t", "object", "o",
                    "lighting", "l", "robot", "arm-1", "success", "maybe"));
        }
        CliRun r = CliRun.of("eval", "ingest", lake, bad.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains(bad + ": Metadata 'flywheel.eval', key success: 'maybe' is not a boolean"),
                r.err());
        assertTrue(r.noStackTrace());
        CliRun j = CliRun.of("eval", "ingest", lake, bad.toString(), "--json");
        assertEquals("bad_input", JSON.readTree(j.out()).get("error").get("kind").asText());
        Path none = tmp.resolve("none.mcap");
        try (McapWriter w = McapWriter.builder().build(none)) {
            w.writeMetadata("episode", Map.of("task", "t"));
        }
        CliRun n = CliRun.of("eval", "ingest", lake, none.toString());
        assertEquals(1, n.exitCode());
        assertTrue(n.err().contains(none + ": no Metadata record named 'flywheel.eval'"), n.err());
        assertEquals(2, CliRun.of("eval", "ingest", lake, none.toString(), "--run", "R").exitCode());
        JsonNode runs = JSON.readTree(CliRun.of("eval", "runs", lake, "--json").out());
        assertEquals(0, runs.isArray() ? runs.size() : runs.path("runs").size()); // nothing committed
    }

    /** A truncated recording in a folder: reported as ingest reports it (recover hint), exit 1, the others land. */
    @Test
    void aTruncatedRecordingIsReportedAndTheOthersAreCommitted() throws Exception {
        io.flywheel.sim.eval.EvalRollouts.Result sim = io.flywheel.sim.eval.EvalRollouts.generate(
                new io.flywheel.sim.eval.EvalRollouts.Options("pick-v3", "ev-cut", 5, 1, List.of(),
                        Map.of("robot", "arm-1", "object", "glass_cup")));
        Path all = tmp.resolve("all");
        io.flywheel.sim.EvalRecordings.write(sim, all, io.flywheel.sim.JpegEncoder.Kind.IMAGEIO);
        Path in = Files.createDirectories(tmp.resolve("in"));
        for (int i = 0; i < 2; i++) {
            String name = sim.rollouts().get(i).episodeId() + ".mcap";
            Files.copy(all.resolve("arm-1").resolve(name), in.resolve(name));
        }
        byte[] whole = Files.readAllBytes(all.resolve("arm-1").resolve(sim.rollouts().get(2).episodeId() + ".mcap"));
        Files.write(in.resolve("zz-cut.mcap"), java.util.Arrays.copyOf(whole, whole.length / 2));
        long ok = sim.rollouts().subList(0, 2).stream().filter(io.flywheel.sim.eval.EvalRollouts.Rollout::success)
                .count();
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun r = CliRun.of("eval", "ingest", lake, in.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("zz-cut.mcap") && r.err().contains("flywheel mcap recover"), r.err());
        assertTrue(r.out().contains("run ev-cut (policy pick-v3): 2 recorded rollouts, " + ok + " succeeded"), r.out());
        assertTrue(r.noStackTrace());
        JsonNode rows = JSON.readTree(CliRun.of("sql", lake, "SELECT count(*) FROM eval_episodes", "--json").out());
        assertEquals(2, rows.get("rows").get(0).get(0).asInt());

        // only the truncated one: no run is reported as landed; --json still names the failure on stderr
        String lake2 = tmp.resolve("lake2").toString();
        assertEquals(0, CliRun.of("init", lake2).exitCode());
        Path cutOnly = Files.createDirectories(tmp.resolve("cut-only"));
        Files.copy(in.resolve("zz-cut.mcap"), cutOnly.resolve("zz-cut.mcap"));
        CliRun t = CliRun.of("eval", "ingest", lake2, cutOnly.toString());
        assertEquals(1, t.exitCode(), t.err());
        assertTrue(!t.out().contains("recorded rollouts"), t.out());
        CliRun j = CliRun.of("eval", "ingest", lake2, cutOnly.toString(), "--json");
        assertEquals(1, j.exitCode(), j.err());
        assertEquals(0, JSON.readTree(j.out()).get("runs").size(), j.out());
        assertTrue(j.err().contains("zz-cut.mcap") && j.err().contains("flywheel mcap recover"), j.err());
    }
}
