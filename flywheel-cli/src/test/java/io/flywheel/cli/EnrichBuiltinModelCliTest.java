package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.enrich.model.NsfwjsPackage;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.testkit.Node;

/** {@code flywheel enrich --model NAME} with a built-in model taken from the per-user cache, on the BridgeData lake. */
class EnrichBuiltinModelCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * {@code enrich --model mobilenet_v2_mac} in a real process whose per-user model cache
     * ({@code FLYWHEEL_MODELS_DIR}) holds the MAC model: 384-d frame and episode embeddings under the
     * model's id, each of unit length.
     */
    @Test
    void enrichesWithTheMacModelByName(@TempDir Path tmp) throws Exception {
        Path lake = EnrichCliTest.bridgeLake(tmp);
        Path cache = tmp.resolve("models");
        new ModelCache(cache).install(BuiltinModel.MOBILENET_V2_BLOCK10_MAC,
                NsfwjsPackage.fromDirectory(Node.toolsDir().resolve("node_modules/nsfwjs")));
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Djava.io.tmpdir=" + tmp,
                "-Dorg.bytedeco.javacpp.cachedir=" + System.getProperty("org.bytedeco.javacpp.cachedir", tmp.toString()),
                "-cp", System.getProperty("java.class.path"), "io.flywheel.cli.Main", "enrich", lake.toString(),
                "--json", "--threads", "2", "--batch-episodes", "25", "--model", "mobilenet_v2_mac")
                .redirectError(tmp.resolve("enrich.err").toFile()).redirectOutput(tmp.resolve("enrich.out").toFile());
        pb.environment().put("FLYWHEEL_MODELS_DIR", cache.toString());
        Process p = pb.start();
        assertEquals(0, p.waitFor(), Files.readString(tmp.resolve("enrich.err")));
        assertTrue(!Files.readString(tmp.resolve("enrich.err")).contains("pulling"), "the cached model is used, not downloaded");
        JsonNode s = JSON.readTree(Files.readString(tmp.resolve("enrich.out")));
        assertEquals("mobilenet_v2_block10_mac", s.get("embedding_model").asText());
        // stride 5 plus the phase changes (101 frames of 250, EnrichCliTest counts them from the frames table), 3 cameras
        assertEquals(303, s.get("embedded").asLong());
        assertEquals(25, s.get("episodes_enriched").asLong());
        try (Lake l = Lake.open(lake.toString()); LakeTable e = l.table("episodes"); LakeTable f = l.table("frames")) {
            List<EpisodeRow> eps = e.episodes(ScanRequest.all());
            assertEquals(25, eps.size());
            assertEquals("emb_mobilenet_v2_block10_mac", l.models().get("mobilenet_v2_block10_mac").orElseThrow().column());
            assertEquals("fixed_size_list<float32, 384>", e.column("emb_mobilenet_v2_block10_mac").typeName(),
                    "a vector column LanceDB can search");
            for (EpisodeRow ep : eps) {
                assertEquals(Set.of("mobilenet_v2_block10_mac"), ep.embeddings().keySet());
                assertEquals(384, ep.embedding("mobilenet_v2_block10_mac").length, ep.episodeId());
                assertEquals(1.0, norm(ep.embedding("mobilenet_v2_block10_mac")), 1e-5, ep.episodeId());
            }
            long frameVectors = 0;
            for (FrameRow fr : f.frames(ScanRequest.all())) {
                for (ImageEnrichment ie : fr.enrichment()) {
                    float[] v = ie == null ? null : ie.embedding("mobilenet_v2_block10_mac");
                    if (v != null) {
                        assertEquals(384, v.length);
                        assertEquals(1.0, norm(v), 1e-5);
                        frameVectors++;
                    }
                }
            }
            assertEquals(303, frameVectors);
        }
    }

    private static double norm(float[] v) {
        double s = 0;
        for (float x : v) {
            s += x * x;
        }
        return Math.sqrt(s);
    }

}
