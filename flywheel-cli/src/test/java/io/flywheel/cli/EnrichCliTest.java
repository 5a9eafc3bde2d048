package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.testkit.SharedData;

/** {@code flywheel enrich} on the BridgeData lake: summary, --json, re-run, bad usage, and a killed run resumed. */
class EnrichCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static Path bridgeLake(Path tmp) {
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString());
        assertEquals(0, r.exitCode(), r.err());
        return lake;
    }

    @Test
    void enrichesEveryFrameOnceAndSaysSo(@TempDir Path tmp) throws Exception {
        Path lake = bridgeLake(tmp);
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();
        CliRun r = CliRun.of("enrich", lake.toString(), "--json", "--threads", "2", "--batch-episodes", "10",
                "--model", model);
        assertEquals(0, r.exitCode(), r.err());
        JsonNode s = JSON.readTree(r.out());
        // stride 5: frames 0 and 5 of each episode plus the frames where the phase changes, every camera. The phases
        // come from the "gripper" component of the EEF state (a JointState joint named gripper: GripperJoint)
        Map<String, List<FrameRow>> byEpisode = new HashMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("frames")) {
            for (FrameRow f : t.frames(ScanRequest.all())) {
                byEpisode.computeIfAbsent(f.episodeId(), k -> new java.util.ArrayList<>()).add(f);
            }
        }
        long selected = 0;
        long changes = 0;
        for (List<FrameRow> fs : byEpisode.values()) {
            fs.sort(java.util.Comparator.comparingInt(FrameRow::frameIndex));
            for (int i = 0; i < fs.size(); i++) {
                assertTrue(fs.get(i).gripper() != null && fs.get(i).phase() != null, fs.get(i).toString());
                boolean change = i > 0 && !fs.get(i).phase().equals(fs.get(i - 1).phase());
                changes += change ? 1 : 0;
                selected += fs.get(i).frameIndex() % 5 == 0 || change ? 1 : 0;
            }
        }
        assertTrue(changes > 0, "BridgeData's gripper opens and closes");
        assertEquals(3 * selected, s.get("embedded").asLong());
        assertEquals("mobilenet_v2_block10_gap", s.get("embedding_model").asText());
        assertEquals(25, s.get("episodes_enriched").asLong());
        assertEquals(250, s.get("frames").asLong());
        assertEquals(750, s.get("images").asLong());
        assertEquals(0, s.get("decode_errors").asLong());
        assertEquals(3, s.get("batches").asLong());
        assertTrue(r.err().contains("enrich: 250/250 frames (100%), 25/25 episodes"), r.err());

        CliRun again = CliRun.of("enrich", lake.toString(), "--model", "none");
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("0 episode(s) enriched, 25 already enriched"), again.out());

        CliRun badModel = CliRun.of("enrich", lake.toString(), "--model", "resnet9000");
        assertEquals(2, badModel.exitCode());
        assertTrue(badModel.err().contains("unknown model 'resnet9000'"), badModel.err());
        CliRun bad = CliRun.of("enrich", lake.toString(), "--stride", "often");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--stride 'often': expected a positive integer k"), bad.err());
        assertTrue(bad.noStackTrace());
        CliRun none = CliRun.of("enrich", tmp.resolve("nowhere").toString());
        assertEquals(1, none.exitCode());
        assertTrue(none.err().contains("no Flywheel lake at"), none.err());
    }

    /**
     * A real {@code flywheel enrich} process killed at a random moment: every episode marked enriched has all of
     * its frames enriched, no frame is lost or doubled; the next run finishes the rest.
     */
    @Test
    void aKilledEnrichResumes(@TempDir Path tmp) throws Exception {
        Path lake = bridgeLake(tmp);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Djava.io.tmpdir=" + tmp,
                "-Dorg.bytedeco.javacpp.cachedir=" + System.getProperty("org.bytedeco.javacpp.cachedir", tmp.toString()),
                "-cp", System.getProperty("java.class.path"), "io.flywheel.cli.Main", "enrich", lake.toString(),
                "--batch-episodes", "2", "--threads", "1", "--model", "none")
                .redirectErrorStream(true).redirectOutput(tmp.resolve("enrich.log").toFile()).start();
        Thread.sleep(3_000 + new java.util.Random(11).nextInt(6_000));
        p.destroyForcibly();
        p.waitFor();
        long marked = assertConsistent(lake);
        CliRun rest = CliRun.of("enrich", lake.toString(), "--json", "--model", "none");
        assertEquals(0, rest.exitCode(), rest.err());
        JsonNode s = JSON.readTree(rest.out());
        assertEquals(marked, s.get("episodes_already_enriched").asLong());
        assertEquals(25 - marked, s.get("episodes_enriched").asLong());
        assertEquals(25, assertConsistent(lake));
    }

    /** @return episodes marked enriched */
    private static long assertConsistent(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable e = l.table("episodes"); LakeTable f = l.table("frames")) {
            List<EpisodeRow> eps = e.episodes(ScanRequest.all());
            List<FrameRow> frames = f.frames(ScanRequest.all());
            assertEquals(25, eps.size());
            assertEquals(250, frames.size(), "no frame lost or doubled");
            Map<String, Long> enriched = new HashMap<>();
            for (FrameRow fr : frames) {
                enriched.merge(fr.episodeId(), fr.enrichment().isEmpty() ? 0L : 1L, Long::sum);
            }
            long marked = 0;
            for (EpisodeRow ep : eps) {
                if (ep.enrichedAtNs() != null) {
                    marked++;
                    assertEquals(10L, enriched.get(ep.episodeId()), ep.episodeId() + " is marked, so all frames are");
                }
            }
            return marked;
        }
    }
}
