package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.testkit.SharedData;

/**
 * {@code spark enrich} on local[2] writes the enrichment {@code enrich} writes on a copy of the same lake (three real
 * BridgeData recordings, the reference model): per frame and camera the same sharpness, static flag, pHash and
 * gripper phase, embeddings within 1e-5; the rows in one lake commit (after the model's registration,
 * as {@code enrich} registers it).
 */
class SparkEnrichCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void sparkEnrichWritesTheEnrichmentOfEnrichInOneCommit(@TempDir Path tmp) throws Exception {
        Path bridge = SharedData.data("camera/bridge-mcap");
        Path a = tmp.resolve("lake-a");
        assertEquals(0, CliRun.of("init", a.toString()).exitCode());
        for (String f : List.of("bridge_ep00.mcap", "bridge_ep01.mcap", "bridge_ep02.mcap")) {
            CliRun r = CliRun.of("ingest", a.toString(), bridge.resolve(f).toString());
            assertEquals(0, r.exitCode(), r.err());
        }
        Path b = tmp.resolve("lake-b");
        copyTree(a, b);
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();
        CliRun one = CliRun.of("enrich", a.toString(), "--threads", "2", "--model", model, "--json");
        assertEquals(0, one.exitCode(), one.err());
        long before;
        try (Lake l = Lake.open(b.toString())) {
            before = l.log(1000).size();
        }
        CliRun sp = CliRun.of("spark", "enrich", b.toString(), "--master", "local[2]", "--model", model, "--json");
        assertEquals(0, sp.exitCode(), sp.err());
        JsonNode x = JSON.readTree(one.out());
        JsonNode y = JSON.readTree(sp.out());
        assertEquals(3, y.path("episodes_enriched").asInt(), sp.out());
        assertEquals(30, y.path("frames").asInt()); // 10 steps per BridgeData episode
        assertEquals(0, y.path("failed").size());
        for (String k : List.of("frames", "images", "decode_errors", "blurry", "static", "embedded",
                "embedding_model")) {
            assertEquals(x.path(k), y.path(k), k);
        }
        try (Lake l = Lake.open(b.toString())) {
            List<String> ops = l.log(1000).stream().map(io.flywheel.lake.LakeSnapshot::operation).toList();
            // the model's registration (its columns, as enrich's first run of a model), then ONE commit of the rows
            assertEquals(before + 2, ops.size(), ops.toString());
            assertEquals(List.of("enrich", "model"), ops.subList(0, 2));
            assertEquals(1, ops.stream().filter("enrich"::equals).count(), ops.toString());
        }

        Map<String, FrameRow> fa = frames(a);
        Map<String, FrameRow> fb = frames(b);
        assertEquals(fa.keySet(), fb.keySet());
        assertEquals(30, fb.size());
        int embedded = 0;
        for (String k : fa.keySet()) {
            FrameRow p = fa.get(k);
            FrameRow q = fb.get(k);
            assertNotNull(q.phase(), k);
            assertEquals(p.phase(), q.phase(), k);
            assertEquals(p.gripperState(), q.gripperState(), k);
            assertEquals(p.enrichment().size(), q.enrichment().size(), k);
            for (int c = 0; c < p.enrichment().size(); c++) {
                ImageEnrichment u = p.enrichment().get(c);
                ImageEnrichment v = q.enrichment().get(c);
                assertNotNull(v.phash(), k);
                assertEquals(u.phash(), v.phash(), k);
                assertEquals(u.sharpness(), v.sharpness(), k);
                assertEquals(u.isStatic(), v.isStatic(), k);
                assertEquals(u.blurry(), v.blurry(), k);
                assertEquals(u.meanAbsDiff(), v.meanAbsDiff(), k);
                assertEquals(u.embeddings().keySet(), v.embeddings().keySet(), k);
                for (String m : u.embeddings().keySet()) {
                    assertArrayEquals(u.embeddings().get(m), v.embeddings().get(m), 1e-5f, k + " " + m);
                    embedded++;
                }
            }
        }
        assertTrue(embedded > 0, "embedded images compared");
        Map<String, EpisodeRow> ea = episodes(a);
        Map<String, EpisodeRow> eb = episodes(b);
        assertEquals(ea.keySet(), eb.keySet());
        for (String e : ea.keySet()) {
            assertNotNull(eb.get(e).enrichedAtNs(), e);
            assertEquals(ea.get(e).embeddings().keySet(), eb.get(e).embeddings().keySet(), e);
            assertFalse(eb.get(e).embeddings().isEmpty(), e);
            for (String m : ea.get(e).embeddings().keySet()) {
                assertArrayEquals(ea.get(e).embeddings().get(m).vector(), eb.get(e).embeddings().get(m).vector(),
                        1e-5f, e + " " + m);
            }
        }

        // nothing left to enrich: no commit
        CliRun again = CliRun.of("spark", "enrich", b.toString(), "--model", model, "--json");
        assertEquals(0, again.exitCode(), again.err());
        assertEquals(0, JSON.readTree(again.out()).path("episodes_enriched").asInt());
        try (Lake l = Lake.open(b.toString())) {
            assertEquals(before + 2, l.log(1000).size(), "no commit without work");
        }
        // a wrong master is wrong usage
        CliRun bad = CliRun.of("spark", "enrich", b.toString(), "--master", "mesos://x");
        assertEquals(2, bad.exitCode(), bad.err());
    }

    @Test
    void anEpisodeWhoseRawFileIsGoneFailsAloneAndIsNamed(@TempDir Path tmp) throws Exception {
        Path raw = Files.createDirectories(tmp.resolve("raw"));
        for (String f : List.of("bridge_ep03.mcap", "bridge_ep04.mcap")) {
            Files.copy(SharedData.data("camera/bridge-mcap").resolve(f), raw.resolve(f));
        }
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun in = CliRun.of("ingest", lake.toString(), raw.toString());
        assertEquals(0, in.exitCode(), in.err());
        Files.delete(raw.resolve("bridge_ep04.mcap"));
        Path staging = tmp.resolve("staging");
        CliRun sp = CliRun.of("spark", "enrich", lake.toString(), "--model", "none", "--staging", staging.toString(),
                "--json");
        assertEquals(1, sp.exitCode(), sp.err());
        JsonNode y = JSON.readTree(sp.out());
        assertEquals(1, y.path("episodes_enriched").asInt(), sp.out());
        assertEquals(1, y.path("failed").size(), sp.out());
        assertTrue(y.path("failed").get(0).path("reason").asText().contains("bridge_ep04.mcap"), sp.out());
        assertTrue(Files.isRegularFile(staging.resolve("summary.json")), "a given --staging folder is kept");
        Map<String, EpisodeRow> e = episodes(lake);
        assertEquals(2, e.size());
        String failed = y.path("failed").get(0).path("episode").asText();
        for (EpisodeRow r : e.values()) {
            assertEquals(r.episodeId().equals(failed), r.enrichedAtNs() == null, r.episodeId());
        }
    }

    private static Map<String, FrameRow> frames(Path lake) {
        Map<String, FrameRow> out = new TreeMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(TableSchemas.FRAMES)) {
            t.frames(ScanRequest.all()).forEach(f -> out.put(f.episodeId() + "#" + f.frameIndex(), f));
        }
        return out;
    }

    private static Map<String, EpisodeRow> episodes(Path lake) {
        Map<String, EpisodeRow> out = new TreeMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(TableSchemas.EPISODES)) {
            t.episodes(ScanRequest.all()).forEach(e -> out.put(e.episodeId(), e));
        }
        return out;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        List<Path> all = new ArrayList<>();
        try (var s = Files.walk(from)) {
            s.forEach(all::add);
        }
        for (Path p : all) {
            Path q = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p)) {
                Files.createDirectories(q);
            } else {
                Files.copy(p, q);
            }
        }
    }
}
