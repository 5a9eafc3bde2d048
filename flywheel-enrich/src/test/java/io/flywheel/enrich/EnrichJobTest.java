package io.flywheel.enrich;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.image.DecodedImage;
import io.flywheel.enrich.image.GreyImage;
import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.ImageMetrics;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;

/** Enrich a lake of the 25 real BridgeData episodes (10 frames x 3 cameras of 64 x 64 JPEG). */
class EnrichJobTest {
    private static final long BRIDGE_T0 = 1_700_000_000_000_000_000L;

    private static Lake bridgeLake(Path tmp) throws IOException {
        Lake lake = Lake.init(tmp.resolve("lake"));
        IngestJob.Result r = IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(250, r.frames());
        return lake;
    }

    private static List<FrameRow> frames(Lake lake) {
        try (LakeTable t = lake.table("frames")) {
            List<FrameRow> f = new ArrayList<>(t.frames(ScanRequest.all()));
            f.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
            return f;
        }
    }

    private static List<EpisodeRow> episodes(Lake lake) {
        try (LakeTable t = lake.table("episodes")) {
            return t.episodes(ScanRequest.all());
        }
    }

    private static long[] versions(Lake lake) {
        try (LakeTable f = lake.table("frames"); LakeTable e = lake.table("episodes")) {
            return new long[] {f.version(), e.version()};
        }
    }

    /** The JPEG file of camera {@code cam} at {@code step} of the episode starting at {@code startNs}. */
    private static Path jpeg(long startNs, int cam, int step) {
        long index = (startNs - BRIDGE_T0) / 100_000_000_000L;
        return SharedData.data(String.format("camera/bridge-octo-rlds/frames_jpeg/ep%02d/image_%d/%02d.jpg", index, cam, step));
    }

    @Test
    void everyImageGetsTheMetricsOfItsJpegAndARerunAddsNothing(@TempDir Path tmp) throws IOException {
        try (Lake lake = bridgeLake(tmp); PixelEmbedder emb = new PixelEmbedder(); ImageDecoder dec = new ImageDecoder()) {
            List<EnrichJob.Progress> progress = new ArrayList<>();
            EnrichJob.Result r = EnrichJob.run(lake, emb, EnrichOptions.builder().threads(2).batchEpisodes(10)
                    .stride(Stride.every(1)).embedBatch(8).build(), progress::add);
            assertEquals(25, r.episodesEnriched());
            assertEquals(250, r.frames());
            assertEquals(750, r.images());
            assertEquals(0, r.decodeErrors());
            assertEquals(750, r.embedded(), "stride 1: every camera of every frame");
            assertEquals(3, r.batches());
            assertEquals(3, progress.size());
            assertEquals(250, progress.get(2).framesDone());
            assertTrue(emb.batches.stream().allMatch(b -> b <= 8) && emb.batches.contains(8), emb.batches.toString());

            Map<String, Long> start = new HashMap<>();
            List<FrameRow> frames = frames(lake);
            assertEquals(250, frames.size());
            for (FrameRow f : frames) {
                start.merge(f.episodeId(), f.timestampNs(), Math::min);
            }
            double maxSharp = 0;
            // per episode and camera: (sharpness, blurry) of each image
            java.util.Map<String, List<double[]>> seen = new java.util.HashMap<>();
            for (FrameRow f : frames) {
                assertEquals(3, f.enrichment().size());
                assertNotNull(f.gripperState() == null ? "" : f.gripperState());
                for (int cam = 0; cam < 3; cam++) {
                    assertEquals("/camera" + cam + "/image/compressed", f.images().get(cam).topic());
                    byte[] bytes = Files.readAllBytes(jpeg(start.get(f.episodeId()), cam, f.frameIndex()));
                    DecodedImage d = dec.decode(bytes, ImageFormat.JPEG, "expected");
                    GreyImage y = dec.decodeGrey(bytes, ImageFormat.JPEG, 1, "expected");
                    ImageEnrichment e = f.enrichment().get(cam);
                    assertEquals(ImageMetrics.sharpness(y), e.sharpness(), 1e-9, f.episodeId() + "#" + f.frameIndex());
                    assertEquals(PerceptualHash.of(y), e.phash());
                    seen.computeIfAbsent(f.episodeId() + " cam" + cam, k -> new java.util.ArrayList<>())
                            .add(new double[] {e.sharpness(), e.blurry() ? 1 : 0});
                    assertArrayEquals(bytes, e.hotJpeg(), "64x64 JPEGs are their own hot copy");
                    assertEquals(Integer.valueOf(64), f.images().get(cam).width());
                    assertArrayEquals(PixelEmbedder.of(d.rgb()), e.embedding(emb.modelId()), 0f);
                    if (f.frameIndex() == 0) {
                        assertNull(e.meanAbsDiff());
                        assertNull(e.isStatic());
                    } else {
                        assertNotNull(e.meanAbsDiff());
                        assertEquals(e.meanAbsDiff() < 1.0, e.isStatic());
                    }
                    maxSharp = Math.max(maxSharp, e.sharpness());
                }
            }
            assertTrue(maxSharp > 0);
            // blurry: below the floor (12) or below 0.35 of the median of its camera's images in the episode
            int blurry = 0;
            for (Map.Entry<String, List<double[]>> c : seen.entrySet()) {
                double[] v = c.getValue().stream().mapToDouble(x -> x[0]).sorted().toArray();
                double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
                double limit = Math.max(12, 0.35 * median);
                for (double[] x : c.getValue()) {
                    assertEquals(x[0] < limit, x[1] == 1, c.getKey() + ": sharpness " + x[0] + ", limit " + limit);
                    blurry += (int) x[1];
                }
            }
            assertTrue(blurry < 250 * 3 / 10, "real BridgeData frames are mostly sharp: " + blurry + " blurry");
            for (EpisodeRow ep : episodes(lake)) {
                assertNotNull(ep.enrichedAtNs());
                assertEquals(java.util.Set.of("test_pixels_4x4"), ep.embeddings().keySet());
                assertEquals(ep.enrichedAtNs(), ep.embeddings().get("test_pixels_4x4").embeddedAtNs());
                float[] v = ep.embedding("test_pixels_4x4");
                assertEquals(48, v.length);
                // the mean of the master camera's 10 embeddings, normalised
                double[] sum = new double[48];
                for (FrameRow f : frames) {
                    if (f.episodeId().equals(ep.episodeId())) {
                        int m = f.images().get(0).topic().equals(ep.masterTopic()) ? 0 : -1;
                        for (int c = 0; c < 3; c++) {
                            if (f.images().get(c).topic().equals(ep.masterTopic())) {
                                m = c;
                            }
                        }
                        float[] x = f.enrichment().get(m).embedding(emb.modelId());
                        for (int k = 0; k < 48; k++) {
                            sum[k] += x[k];
                        }
                    }
                }
                double n = 0;
                for (double s : sum) {
                    n += s * s;
                }
                for (int k = 0; k < 48; k++) {
                    assertEquals(sum[k] / Math.sqrt(n), v[k], 1e-6);
                }
                assertTrue(ep.enrichmentJson().contains("\"images\":30"), ep.enrichmentJson());
            }

            long[] before = versions(lake);
            EnrichJob.Result again = EnrichJob.run(lake, emb, EnrichOptions.defaults(), p -> { });
            assertEquals(0, again.episodesPending());
            assertEquals(25, again.episodesAlreadyEnriched());
            assertEquals(0, again.frames());
            assertArrayEquals(before, versions(lake), "a re-run commits nothing");
        }
    }

    /**
     * A lake enriched with model A, then enriched with model B: B only embeds (no image is decoded from the raw files,
     * the image metrics keep their values and their data files), the same frames as A's run are chosen by the stride,
     * B's vectors are those of the stored hot copies, and A's columns keep their data files in both tables.
     */
    @Test
    void aSecondModelEmbedsOnlyAndKeepsTheFirstModelsColumns(@TempDir Path tmp) throws IOException {
        try (Lake lake = bridgeLake(tmp); PixelEmbedder a = new PixelEmbedder(4); PixelEmbedder b = new PixelEmbedder(2);
                ImageDecoder dec = new ImageDecoder()) {
            EnrichJob.Result ra = EnrichJob.run(lake, a, EnrichOptions.builder().threads(2).stride(Stride.every(3))
                    .build(), p -> { });
            assertEquals("emb_test_pixels_4x4", ra.model().column());
            assertEquals(0, ra.episodesEmbeddedOnly());
            List<FrameRow> before = frames(lake);
            List<EpisodeRow> episodesBefore = episodes(lake);
            java.util.Set<String> aFrameFiles = files(lake, "frames", "emb_test_pixels_4x4");
            java.util.Set<String> aEpisodeFiles = files(lake, "episodes", "emb_test_pixels_4x4");
            java.util.Set<String> imageFiles = files(lake, "frames", "images");
            assertFalse(aFrameFiles.isEmpty() || aEpisodeFiles.isEmpty() || imageFiles.isEmpty());

            EnrichJob.Result rb = EnrichJob.run(lake, b, EnrichOptions.builder().threads(2).stride(Stride.every(3))
                    .build(), p -> { });
            assertEquals(25, rb.episodesPending());
            assertEquals(25, rb.episodesEmbeddedOnly(), "every episode: metrics done, model b not run yet");
            assertEquals(0, rb.images(), "no image decoded from the raw files: the metrics are not recomputed");
            assertEquals(ra.embedded(), rb.embedded(), "the stride chooses the same frames from the stored phases");
            assertEquals(java.util.List.of(List.of("emb_test_pixels_2x2")), rb.commits().stream()
                    .map(c -> lake.snapshot(c.snapshot().seq()).changes().stream().filter(x -> x.table().equals("frames"))
                            .findFirst().orElseThrow().columns()).distinct().toList(), "only b's frames column is written");
            assertEquals(aFrameFiles, files(lake, "frames", "emb_test_pixels_4x4"), "a's frames column kept its files");
            assertEquals(aEpisodeFiles, files(lake, "episodes", "emb_test_pixels_4x4"), "a's episodes column too");
            assertEquals(imageFiles, files(lake, "frames", "images"), "the image metrics kept their files");

            List<FrameRow> after = frames(lake);
            long bVectors = 0;
            for (int i = 0; i < after.size(); i++) {
                FrameRow x = before.get(i);
                FrameRow y = after.get(i);
                assertEquals(x.images(), y.images());
                assertEquals(x.phase(), y.phase());
                for (int cam = 0; cam < 3; cam++) {
                    ImageEnrichment ex = x.enrichment().get(cam);
                    ImageEnrichment ey = y.enrichment().get(cam);
                    assertEquals(ex.sharpness(), ey.sharpness());
                    assertEquals(ex.phash(), ey.phash());
                    assertArrayEquals(ex.hotJpeg(), ey.hotJpeg());
                    assertArrayEquals(ex.embedding(a.modelId()), ey.embedding(a.modelId()), "a's vectors as they were");
                    float[] vb = ey.embedding(b.modelId());
                    assertEquals(ex.embedding(a.modelId()) != null, vb != null, "b embeds the images a embedded");
                    if (vb != null) {
                        assertArrayEquals(PixelEmbedder.of(dec.decode(ey.hotJpeg(), ImageFormat.JPEG, "hot").rgb(), 2), vb,
                                0f);
                        bVectors++;
                    }
                }
            }
            assertEquals(rb.embedded(), bVectors);
            Map<String, EpisodeRow> was = new HashMap<>();
            episodesBefore.forEach(e -> was.put(e.episodeId(), e));
            for (EpisodeRow e : episodes(lake)) {
                EpisodeRow w = was.get(e.episodeId());
                assertEquals(w.enrichedAtNs(), e.enrichedAtNs());
                assertEquals(w.enrichmentJson(), e.enrichmentJson());
                assertEquals(w.embeddings().get(a.modelId()), e.embeddings().get(a.modelId()));
                assertEquals(12, e.embedding(b.modelId()).length);
                assertTrue(e.embeddings().get(b.modelId()).embeddedAtNs() > e.enrichedAtNs());
            }
            EnrichJob.Result again = EnrichJob.run(lake, b, EnrichOptions.defaults(), p -> { });
            assertEquals(0, again.episodesPending(), "b is done too");
        }
    }

    /** @return the data files holding a column of a table */
    private static java.util.Set<String> files(Lake lake, String table, String column) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        try (LakeTable t = lake.table(table)) {
            List<Integer> ids = t.fieldIds(column);
            for (io.flywheel.lake.DataFileRef d : t.dataFiles()) {
                if (java.util.Arrays.stream(d.fields()).anyMatch(ids::contains)) {
                    out.add(d.path());
                }
            }
        }
        return out;
    }

    @Test
    void anInterruptedRunResumesWhereItStopped(@TempDir Path tmp) throws IOException {
        try (Lake lake = bridgeLake(tmp)) {
            EnrichJob.Result first = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).batchEpisodes(4)
                    .stopAfterBatches(2).build(), p -> { });
            assertTrue(first.stoppedEarly());
            assertEquals(8, first.episodesEnriched());
            assertEquals(80, first.frames());
            List<EpisodeRow> eps = episodes(lake);
            assertEquals(25, eps.size());
            assertEquals(8, eps.stream().filter(e -> e.enrichedAtNs() != null).count());
            assertTrue(eps.stream().filter(e -> e.enrichedAtNs() != null).allMatch(e -> e.embeddings().isEmpty()),
                    "no embedder: no embedding");
            List<FrameRow> fr = frames(lake);
            assertEquals(250, fr.size(), "no frame lost or duplicated");
            assertEquals(80, fr.stream().filter(f -> !f.enrichment().isEmpty()).count());

            EnrichJob.Result rest = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            assertEquals(17, rest.episodesPending());
            assertEquals(8, rest.episodesAlreadyEnriched());
            assertEquals(17, rest.episodesEnriched());
            assertFalse(rest.stoppedEarly());
            fr = frames(lake);
            assertEquals(250, fr.size());
            assertTrue(fr.stream().allMatch(f -> f.enrichment().size() == 3 && f.enrichment().get(0).phash() != null));

            // a model after a run without one: every episode gets its embeddings, the metrics are not recomputed
            try (PixelEmbedder m = new PixelEmbedder(4)) {
                EnrichJob.Result withModel = EnrichJob.run(lake, m, EnrichOptions.builder().threads(2).build(), p -> { });
                assertEquals(25, withModel.episodesPending());
                assertEquals(25, withModel.episodesEmbeddedOnly());
                assertEquals(0, withModel.images());
                assertTrue(withModel.embedded() > 0);
                assertTrue(episodes(lake).stream().allMatch(e -> e.embedding(m.modelId()) != null));
            }
        }
    }
}
