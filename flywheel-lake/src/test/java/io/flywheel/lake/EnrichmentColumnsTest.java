package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The enrichment fields and each model's vector columns round-trip; column updates rewrite rows in one commit without
 * touching other episodes, and a second model's update leaves the first model's data files as they were.
 */
class EnrichmentColumnsTest {
    @Test
    void upsertedFramesAndEpisodesCarryTheirEnrichment(@TempDir Path tmp) {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            Fixtures.ingest(lake, 1, 3);
            Fixtures.ingest(lake, 2, 3);
            EmbeddingModel m = lake.registerModel("tiny.model-A", 2, "abc");
            assertEquals("emb_tiny_model_a", m.column(), "the model id made a column name");
            assertEquals(List.of(m), lake.models().all());
            List<FrameRow> before;
            List<EpisodeRow> eps;
            try (LakeTable f = lake.table("frames"); LakeTable e = lake.table("episodes")) {
                before = f.frames(ScanRequest.builder().filter("episode_id = '" + Fixtures.episodeId(1) + "'").build());
                eps = e.episodes(ScanRequest.builder().filter("episode_id = '" + Fixtures.episodeId(1) + "'").build());
                Field vec = e.schema().findField("emb_tiny_model_a");
                assertEquals(new ArrowType.FixedSizeList(2), vec.getType(), "episodes: fixed_size_list<float32, 2>");
                Field frameVec = f.schema().findField("emb_tiny_model_a");
                assertEquals(ArrowType.List.INSTANCE, frameVec.getType());
                assertEquals(new ArrowType.FixedSizeList(2), frameVec.getChildren().get(0).getType(),
                        "frames: list<fixed_size_list<float32, 2>>");
            }
            assertTrue(before.get(0).enrichment().isEmpty());
            assertNull(eps.get(0).enrichedAtNs());
            assertTrue(eps.get(0).embeddings().isEmpty());
            List<FrameRow> enriched = new ArrayList<>();
            for (FrameRow r : before) {
                List<ImageLocator> imgs = new ArrayList<>();
                List<ImageEnrichment> en = new ArrayList<>();
                for (int k = 0; k < r.images().size(); k++) {
                    imgs.add(r.images().get(k).withSize(64, 48));
                    // camera 0 of frames 0 and 2 embedded, camera 1 never decodes
                    en.add(k == 0 ? new ImageEnrichment(12.5, false, r.frameIndex() == 0 ? null : 0.25, true,
                            0x8000_0000_0000_0001L + r.frameIndex(), new byte[] {(byte) 0xFF, (byte) 0xD8, 1},
                            r.frameIndex() == 1 ? Map.of() : Map.of(m.id(), new float[] {0.6f, 0.8f * r.frameIndex()}),
                            null) : ImageEnrichment.failed("bad bytes"));
                }
                enriched.add(r.withEnrichment(imgs, en, "open", "idle"));
            }
            EpisodeRow ep = eps.get(0).withEnrichment(42L, "{\"stride\":1}").withEmbedding(m.id(),
                    new float[] {1f, 0f}, 43L);
            List<String> frameCols = new ArrayList<>(TableSchemas.FRAME_ENRICHMENT_COLUMNS);
            frameCols.add(m.column());
            List<String> episodeCols = new ArrayList<>(TableSchemas.EPISODE_ENRICHMENT_COLUMNS);
            episodeCols.addAll(TableSchemas.episodeModelColumns(m));
            CommitResult c = lake.begin("enrich").updateFrames(frameCols, enriched).updateEpisodes(episodeCols,
                    List.of(ep)).commit();
            assertEquals(before.size(), c.table("frames").rowsWritten());
            assertEquals(c.table("frames").fromVersion() + 1, c.table("frames").toVersion(), "one commit");
            try (LakeTable f = lake.table("frames"); LakeTable e = lake.table("episodes")) {
                List<FrameRow> all = new ArrayList<>(f.frames(ScanRequest.all()));
                assertEquals(6, all.size(), "no row added or lost");
                List<FrameRow> after = new ArrayList<>(all.stream()
                        .filter(r -> r.episodeId().equals(Fixtures.episodeId(1))).toList());
                after.sort(Comparator.comparingInt(FrameRow::frameIndex));
                assertEquals(enriched, after);
                assertEquals(Integer.valueOf(64), after.get(1).images().get(0).width());
                assertEquals("bad bytes", after.get(1).enrichment().get(after.get(1).images().size() - 1).decodeError());
                assertArrayEquals(new float[] {0.6f, 1.6f}, after.get(2).enrichment().get(0).embedding(m.id()));
                assertNull(after.get(1).enrichment().get(0).embedding(m.id()), "frame 1 was not embedded");
                assertEquals(2, f.countRows("emb_tiny_model_a IS NOT NULL"), "frames 0 and 2 of episode 1 hold vectors");
                assertTrue(all.stream().filter(r -> r.episodeId().equals(Fixtures.episodeId(2)))
                        .allMatch(r -> r.enrichment().isEmpty() && r.phase() == null));
                EpisodeRow back = e.episodes(ScanRequest.builder().filter("enriched_at_ns IS NOT NULL").build()).get(0);
                assertEquals(ep, back);
                assertEquals(43L, back.embeddings().get(m.id()).embeddedAtNs());
                assertEquals(1, e.countRows("enriched_at_ns IS NULL"));
            }
        }
    }

    @Test
    void aSecondModelsUpdateKeepsTheFirstModelsDataFiles(@TempDir Path tmp) {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            Fixtures.ingest(lake, 1, 3);
            EmbeddingModel a = lake.registerModel("a", 2, "sha-a");
            EpisodeRow e = Fixtures.episode(1, 3);
            lake.begin("enrich").updateEpisodes(TableSchemas.episodeModelColumns(a),
                    List.of(e.withEmbedding("a", new float[] {0.6f, 0.8f}, 10L))).commit();
            Set<String> aFiles = filesOf(lake, a.column());
            EmbeddingModel b = lake.registerModel("b", 3, "sha-b");
            assertEquals(List.of("a", "b"), lake.models().all().stream().map(EmbeddingModel::id).toList());
            assertEquals(b, lake.registerModel("b", 3, "sha-b"), "registering again returns the model");
            assertThrows(io.flywheel.error.BadInputException.class, () -> lake.registerModel("b", 4, "sha-b"),
                    "the same id with another dimension is refused");
            lake.begin("enrich").updateEpisodes(TableSchemas.episodeModelColumns(b),
                    List.of(e.withEmbedding("b", new float[] {0f, 0f, 1f}, 20L))).commit();
            assertEquals(aFiles, filesOf(lake, a.column()), "model a's column keeps its data files");
            try (LakeTable t = lake.table("episodes")) {
                EpisodeRow got = t.episodes(ScanRequest.all()).get(0);
                assertArrayEquals(new float[] {0.6f, 0.8f}, got.embedding("a"));
                assertArrayEquals(new float[] {0f, 0f, 1f}, got.embedding("b"));
                assertEquals(10L, got.embeddings().get("a").embeddedAtNs());
                assertEquals(20L, got.embeddings().get("b").embeddedAtNs());
            }
            assertThrows(IllegalArgumentException.class, () -> lake.begin("x").updateEpisodes(List.of("emb_c"),
                    List.of(e)).commit(), "an update of a column the table lacks is refused");
        }
    }

    /** @return the data files holding a column's values */
    private static Set<String> filesOf(Lake lake, String column) {
        Set<String> out = new TreeSet<>();
        try (LakeTable t = lake.table("episodes")) {
            int id = t.fieldIds(column).get(0);
            for (DataFileRef d : t.dataFiles()) {
                if (d.columnOf(id) >= 0 || java.util.Arrays.stream(d.fields()).anyMatch(x -> x == id)) {
                    out.add(d.path());
                }
            }
        }
        return out;
    }
}
