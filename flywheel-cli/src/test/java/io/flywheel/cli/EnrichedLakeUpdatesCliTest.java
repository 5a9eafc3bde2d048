package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * Updates on an enriched lake keep what they do not name: on the 25 real BridgeData episodes, enriched with the
 * reference model, {@code qc report --rules F --apply} (quality columns), a label update (the outcome column, as a
 * labelling job writes it) and {@code dedup} leave every episode and frame embedding, hot copy and pHash
 * byte-identical, and enrich still finds nothing to do. (Before the column-scoped updates, {@code qc --apply}
 * rebuilt each episode row without its enrichment: 25 episodes pending again, no embeddings for map.)
 */
class EnrichedLakeUpdatesCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The reference model's id: its file name. */
    private static final String M = "mobilenet_v2_block10_gap";

    @Test
    void qcApplyThenALabelUpdateThenDedupKeepEveryEmbeddingByteIdentical(@TempDir Path tmp) throws Exception {
        Path lake = EnrichCliTest.bridgeLake(tmp);
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();
        CliRun enrich = CliRun.of("enrich", lake.toString(), "--threads", "2", "--model", model);
        assertEquals(0, enrich.exitCode(), enrich.err());
        Map<String, EpisodeRow> episodesBefore = episodes(lake);
        Map<String, FrameRow> framesBefore = frames(lake);
        long embedded = framesBefore.values().stream().flatMap(f -> f.enrichment().stream())
                .filter(e -> e != null && e.embedding(M) != null).count();
        assertTrue(embedded > 100, "the reference model embedded the keyframes: " + embedded);
        assertEquals(25, episodesBefore.values().stream().filter(e -> e.embedding(M) != null).count());

        // 1. quality rules that fail every episode (each lasts 9 x 200 ms = 1.8 s), applied
        Path strict = tmp.resolve("strict.yaml");
        Files.writeString(strict, "rules:\n  - {id: under_2s, metric: duration_s, op: \"<\", value: 2.0,"
                + " severity: error, message: too short}\n");
        CliRun qc = CliRun.of("qc", "report", lake.toString(), "--rules", strict.toString(), "--apply", "--json");
        assertEquals(0, qc.exitCode(), qc.err());
        assertEquals(25, JSON.readTree(qc.out()).get("status_changes").get("pass -> fail").asLong());

        // 2. a label update of one column, as the labelling job writes outcomes
        List<EpisodeRow> labels = new ArrayList<>();
        for (EpisodeRow e : episodesBefore.values()) {
            labels.add(new EpisodeRow(e.episodeId(), null, null, null, null, null, "needs_review", null, null, null,
                    null, null, null, null, null, null));
        }
        try (Lake l = Lake.open(lake.toString())) {
            l.begin("label").updateEpisodes(List.of("outcome"), labels).commit();
        }

        // 3. dedup
        CliRun dedup = CliRun.of("dedup", lake.toString(), "--json");
        assertEquals(0, dedup.exitCode(), dedup.err());

        Map<String, EpisodeRow> after = episodes(lake);
        try (Lake l = Lake.open(lake.toString())) {
            // the console lists an episode's representative only when it is another episode
            Map<String, String> reps = io.flywheel.curate.pool.DedupTables.representatives(l);
            assertEquals(25, reps.size());
            List<?> rows = (List<?>) new io.flywheel.console.ConsoleApi(l, 100).episodes(
                    new io.flywheel.console.EpisodeQuery(0, 100, null, false, Map.of(), null, null)).get("rows");
            int representatives = 0;
            for (Object o : rows) {
                Map<?, ?> r = (Map<?, ?>) o;
                String id = (String) r.get("episode_id");
                String rep = reps.get(id);
                assertEquals(id.equals(rep) ? null : rep, r.get("duplicate_of"), id);
                representatives += id.equals(rep) ? 1 : 0;
            }
            assertEquals(25, rows.size());
            assertEquals(reps.values().stream().distinct().count(), representatives);
        }
        Map<String, FrameRow> framesAfter = frames(lake);
        assertEquals(episodesBefore.keySet(), after.keySet());
        for (EpisodeRow b : episodesBefore.values()) {
            EpisodeRow a = after.get(b.episodeId());
            assertArrayEquals(b.embedding(M), a.embedding(M), b.episodeId() + ": episode embedding");
            assertEquals(b.embeddings(), a.embeddings(), "every model's vector and commit time");
            assertEquals(b.enrichedAtNs(), a.enrichedAtNs(), "enrichment state");
            assertEquals(b.enrichmentJson(), a.enrichmentJson());
            assertEquals("fail", a.qualityStatus(), "qc --apply's status");
            assertEquals(List.of("under_2s"), a.qualityFlags());
            assertEquals("needs_review", a.outcome(), "the label");
            assertEquals(b.task(), a.task(), "columns no update named");
            assertEquals(b.metadataJson(), a.metadataJson());
        }
        assertEquals(framesBefore.keySet(), framesAfter.keySet());
        for (Map.Entry<String, FrameRow> e : framesBefore.entrySet()) {
            FrameRow b = e.getValue();
            FrameRow a = framesAfter.get(e.getKey());
            assertEquals(b.images(), a.images(), e.getKey());
            for (int k = 0; k < b.enrichment().size(); k++) {
                ImageEnrichment x = b.enrichment().get(k);
                ImageEnrichment y = a.enrichment().get(k);
                assertArrayEquals(x.embedding(M), y.embedding(M), e.getKey() + " camera " + k + ": frame embedding");
                assertArrayEquals(x.hotJpeg(), y.hotJpeg(), e.getKey() + " camera " + k + ": hot copy");
                assertEquals(x.phash(), y.phash());
            }
            assertEquals(b.phase(), a.phase());
        }

        CliRun again = CliRun.of("enrich", lake.toString(), "--model", model, "--json");
        assertEquals(0, again.exitCode(), again.err());
        JsonNode s = JSON.readTree(again.out());
        assertEquals(0, s.get("episodes_pending").asLong(), "nothing became pending again");
        assertEquals(25, s.get("episodes_already_enriched").asLong());
        CliRun map = CliRun.of("map", lake.toString(), "--out", tmp.resolve("map.png").toString());
        assertEquals(0, map.exitCode(), "map finds the embeddings: " + map.err());
    }

    private static Map<String, EpisodeRow> episodes(Path lake) {
        Map<String, EpisodeRow> out = new TreeMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(TableSchemas.EPISODES)) {
            t.episodes(ScanRequest.all()).forEach(e -> out.put(e.episodeId(), e));
        }
        return out;
    }

    private static Map<String, FrameRow> frames(Path lake) {
        Map<String, FrameRow> out = new TreeMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table(TableSchemas.FRAMES)) {
            t.frames(ScanRequest.all()).forEach(f -> out.put(f.episodeId() + "#" + f.frameIndex(), f));
        }
        return out;
    }
}
