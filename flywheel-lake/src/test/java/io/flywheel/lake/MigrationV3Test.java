package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.StreamMatch;

/**
 * A schema version 3 lake, written by Flywheel's code of that version (the test resource {@code v3-lake}, made by
 * {@code V3LakeGenerator.java.txt} beside it: five episodes, embeddings of two models as list&lt;float32&gt; in
 * {@code episodes.embedding} and {@code frames.images[].embedding}), is refused by name, then migrated in place in one
 * lake commit: every vector value lands in its model's fixed-size-list column, every other value is kept, the old
 * columns are gone, tags still open the old versions, and a migration that dies before its commit point leaves the
 * lake at version 3 and runs again.
 */
class MigrationV3Test {
    static final long T0 = 1_700_000_000_000_000_000L;
    static final long ENRICHED = T0 + 900_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aVersion3LakeIsMigratedWithEveryVectorInItsModelsColumn() {
        Path lakeDir = copyFixture();
        LakeFormatException refused = assertThrows(LakeFormatException.class, () -> Lake.open(lakeDir));
        assertTrue(refused.getMessage().contains("schema version 3")
                && refused.getMessage().contains("flywheel lake migrate " + lakeDir), refused.getMessage());

        Lake.Migration m = Lake.migrate(lakeDir.toString(), Lake.Options.defaults());
        assertTrue(m.migrated());
        assertEquals("3", m.fromSchemaVersion());
        assertEquals("4", m.toSchemaVersion());
        LakeSnapshot s = m.snapshot();
        assertEquals(9, s.seq(), "one lake commit on top of the fixture's 8");
        assertEquals("migrate", s.operation());
        assertEquals(Map.of("raw_files", 6L, "episodes", 8L, "frames", 8L), s.tables(), "one new version each");
        assertEquals(Map.of("before-enrich", Map.of("episodes", 6L, "frames", 6L)), s.tags());
        assertEquals("3", s.properties().get("migrated_from_schema_version"));
        assertAfterMigration(lakeDir);

        Lake.Migration again = Lake.migrate(lakeDir.toString(), Lake.Options.defaults());
        assertFalse(again.migrated(), "a second migrate is a no-op");
        assertEquals(10, again.snapshot().seq(), "the label commit after the migration is the newest");
    }

    @Test
    void aMigrationThatDiesBeforeItsCommitPointLeavesVersion3AndRunsAgain() {
        Path lakeDir = copyFixture();
        CommitHooks.listen(step -> {
            if (step.equals("table-committed:episodes")) { // episodes rewritten as a Lance version, frames not yet
                throw new StorageUnavailableException("the storage died at " + step);
            }
        });
        try {
            assertThrows(StorageUnavailableException.class, () -> Lake.migrate(lakeDir.toString(),
                    Lake.Options.defaults()));
        } finally {
            CommitHooks.listen(null);
        }
        LakeFormatException stillV3 = assertThrows(LakeFormatException.class, () -> Lake.open(lakeDir));
        assertTrue(stillV3.getMessage().contains("schema version 3"), stillV3.getMessage());

        Lake.Migration m = Lake.migrate(lakeDir.toString(), Lake.Options.defaults());
        assertTrue(m.migrated());
        assertEquals(9, m.snapshot().seq());
        assertAfterMigration(lakeDir);
    }

    private void assertAfterMigration(Path lakeDir) {
        try (Lake lake = Lake.open(lakeDir)) {
            EmbeddingModels models = lake.models();
            assertEquals(List.of(new EmbeddingModel("tiny-b.v2", 6, "sha-tiny-b.v2", "emb_tiny_b_v2",
                    models.get("tiny-b.v2").orElseThrow().registeredAtNs()), new EmbeddingModel("tiny_a", 4, "sha-tiny_a",
                    "emb_tiny_a", models.get("tiny_a").orElseThrow().registeredAtNs())), models.all());
            try (LakeTable e = lake.table("episodes"); LakeTable f = lake.table("frames")) {
                List<String> cols = e.schema().getFields().stream().map(Field::getName).toList();
                assertFalse(cols.contains("embedding") || cols.contains("embedding_model")
                        || cols.contains("embedding_sha256"), "the version 3 columns are gone: " + cols);
                assertEquals(new ArrowType.FixedSizeList(4), e.schema().findField("emb_tiny_a").getType());
                assertEquals(new ArrowType.FixedSizeList(6), e.schema().findField("emb_tiny_b_v2").getType());
                assertFalse(SchemaV3.imagesHaveEmbedding(f.schema()), "images[].embedding is gone");
                assertEquals(new ArrowType.FixedSizeList(4),
                        f.schema().findField("emb_tiny_a").getChildren().get(0).getType());

                List<EpisodeRow> eps = new ArrayList<>(e.episodes(ScanRequest.all()));
                eps.sort(Comparator.comparing(EpisodeRow::episodeId));
                List<EpisodeRow> wantEps = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    wantEps.add(expectedEpisode(i));
                }
                assertEquals(wantEps, eps, "every episode value, every vector value");
                assertArrayEquals(vector(2, 4), eps.get(0).embedding("tiny_a"));
                assertNull(eps.get(1).embedding("tiny_a"), "episode 1: model run, no vector");
                assertEquals(ENRICHED + 1, eps.get(1).embeddings().get("tiny_a").embeddedAtNs());

                List<FrameRow> frames = new ArrayList<>(f.frames(ScanRequest.all()));
                frames.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
                List<FrameRow> want = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    want.addAll(expectedFrames(i));
                }
                assertEquals(want, frames, "every frame value, every image vector value");
                assertEquals(3, countVectors(frames, "tiny_a"), "episode 0: /cam0 frames 0 and 2, /cam1 frame 0");
                assertEquals(4, countVectors(frames, "tiny-b.v2"), "episode 2: /cam0, every frame");

                List<VectorHit> hits = e.nearest(VectorQuery.builder(vector(2, 4)).column("emb_tiny_a")
                        .idColumn("episode_id").k(5).build());
                assertEquals(1, hits.size(), "the migrated column is searchable; episode 1 has no vector");
                assertEquals(episodeId(0), hits.get(0).id());
                assertEquals(0, hits.get(0).distance(), 1e-6);
            }
            try (LakeTable old = lake.table("episodes", TableRef.tag("before-enrich"))) {
                assertEquals(6, old.version());
                assertTrue(old.episodes(ScanRequest.all()).stream().allMatch(x -> x.embeddings().isEmpty()
                        && x.enrichedAtNs() == null), "the tag opens the version 3 layout of before enrich");
            }
            lake.begin("label").updateEpisodes(List.of("quality_status"), List.of(expectedEpisode(4))).commit();
        }
    }

    private static long countVectors(List<FrameRow> frames, String model) {
        return frames.stream().flatMap(r -> r.enrichment().stream()).filter(x -> x != null && x.embedding(model) != null)
                .count();
    }

    /** The generator's episode {@code i} after its enrich commit, vectors under their model ids. */
    static EpisodeRow expectedEpisode(int i) {
        long t0 = T0 + i * 60_000_000_000L;
        EpisodeRow e = new EpisodeRow(episodeId(i), "rec-" + i, "robot-1", "pick 'cube'", "lab", "op",
                i == 1 ? "failure" : "success", t0, t0 + 300_000_000L, 300_000_000L, "/cam0", 4L, "pass", List.of(),
                "{}", "{\"i\":" + i + "}");
        if (i == 4) {
            return e;
        }
        e = e.withEnrichment(ENRICHED + i, "{\"stride\":\"every 2\"}");
        return switch (i) {
            case 0 -> e.withEmbedding("tiny_a", vector(2, 4), ENRICHED);
            case 1 -> e.withEmbedding("tiny_a", null, ENRICHED + 1);
            case 2 -> e.withEmbedding("tiny-b.v2", vector(2 + 13 * 2, 6), ENRICHED + 2);
            default -> e;
        };
    }

    /** The generator's frames of episode {@code i} after its enrich commit. */
    static List<FrameRow> expectedFrames(int i) {
        long t0 = T0 + i * 60_000_000_000L;
        List<FrameRow> out = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            List<ImageLocator> images = List.of(
                    new ImageLocator("/cam0", "/data/run" + i + ".mcap", -1, 4096L * j, 1234, "", 0L, "jpeg", null, null),
                    new ImageLocator("/cam1", "/data/run" + i + ".mcap", 777L * i, 50L * j, 999, "zstd", 1_000_000L + j,
                            "jpeg", null, null));
            FrameRow f = new FrameRow(episodeId(i), j, t0 + j * 100_000_000L, new double[] {i, j}, new double[] {j * 0.5},
                    0.25 * j, images, List.of(new StreamMatch("/joint_states", true, 1000L * j)), List.of());
            if (i == 4) {
                out.add(f);
                continue;
            }
            String model = i == 2 ? "tiny-b.v2" : "tiny_a";
            int dim = i == 2 ? 6 : 4;
            List<ImageLocator> sized = new ArrayList<>();
            List<ImageEnrichment> en = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                sized.add(images.get(c).withSize(64, 48));
                boolean embedded = (i == 0 && ((c == 0 && j % 2 == 0) || (c == 1 && j == 0))) || (i == 2 && c == 0);
                en.add(new ImageEnrichment(10.0 + j + c, false, j == 0 ? null : 0.5 * j, false, 0x1000L * i + 16 * j + c,
                        new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) i, (byte) j, (byte) c},
                        embedded ? Map.of(model, vector(1 + 7 * i + 3 * j + 5 * c, dim)) : Map.of(), null));
            }
            out.add(f.withEnrichment(sized, en, "open", "idle"));
        }
        return out;
    }

    /** The generator's vectors: normalise(sin(seed + 11 d)), in StrictMath, as float32. */
    static float[] vector(int seed, int dim) {
        double[] v = new double[dim];
        double s = 0;
        for (int d = 0; d < dim; d++) {
            v[d] = StrictMath.sin(seed + 11.0 * d);
            s += v[d] * v[d];
        }
        float[] out = new float[dim];
        for (int d = 0; d < dim; d++) {
            out[d] = (float) (v[d] / StrictMath.sqrt(s));
        }
        return out;
    }

    static String episodeId(int i) {
        return "ep-" + String.format("%064x", 0xABCDEF00L + i).substring(56) + "-0";
    }

    private Path copyFixture() {
        Path to = dir.resolve("lake");
        try {
            Path from = Path.of(MigrationV3Test.class.getResource("v3-lake").toURI());
            try (Stream<Path> all = Files.walk(from)) {
                for (Path p : (Iterable<Path>) all::iterator) {
                    Path q = to.resolve(from.relativize(p).toString());
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(q);
                    } else {
                        Files.copy(p, q);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        return to;
    }
}
