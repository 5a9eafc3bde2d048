package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Neighbour;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.model.OnnxEmbedder;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;

/**
 * Dedup and mining on the 25 real BridgeData episodes, embedded with the reference MobileNetV2
 * model: every stored group and neighbour is checked against brute force over the same vectors.
 */
class CurationJobTest {
    @TempDir
    static Path tmp;
    static Path lakeDir;

    @BeforeAll
    static void build() throws IOException {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
                OnnxEmbedder e = OnnxEmbedder.open(SharedData.shared("models/mobilenet_v2_block10_gap.onnx"))) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            EnrichJob.run(lake, e, EnrichOptions.builder().stride(Stride.every(5)).threads(2).build(), p -> { });
        }
    }

    @Test
    void episodeGroupsKeepEveryMemberWithinTheThresholdOfItsRepresentative() {
        try (Lake lake = Lake.open(lakeDir)) {
            EpisodeVectors ev = EpisodeVectors.read(lake);
            assertEquals(25, ev.size());
            assertEquals(96, ev.vectors()[0].length);
            assertEquals("mobilenet_v2_block10_gap", ev.model());
            // a threshold at the 10th percentile of pairwise distances merges some but not all episodes
            double[] d = new double[25 * 24 / 2];
            int n = 0;
            for (int i = 0; i < 25; i++) {
                for (int j = i + 1; j < 25; j++) {
                    d[n++] = ExactSearch.cosineDistance(ev.vectors()[i], ev.vectors()[j]);
                }
            }
            java.util.Arrays.sort(d);
            double threshold = d[d.length / 10];
            DedupJob.Result r = DedupJob.run(lake, new DedupJob.Options(threshold, 0));
            assertEquals(25, r.episodes());
            assertTrue(r.episodeGroups() > 1 && r.episodeGroups() < 25, "groups " + r.episodeGroups());
            assertEquals(25, r.episodeGroups() + r.episodesRemoved());
            Map<String, String> rep = DedupTables.representatives(lake);
            assertEquals(25, rep.size());
            Set<String> reps = new HashSet<>(rep.values());
            assertEquals(r.episodeGroups(), reps.size());
            for (Map.Entry<String, String> e : rep.entrySet()) {
                int a = ev.indexOf(e.getKey());
                int b = ev.indexOf(e.getValue());
                assertTrue(ExactSearch.cosineDistance(ev.vectors()[a], ev.vectors()[b]) <= threshold + 1e-6);
                assertEquals(e.getValue(), rep.get(e.getValue()), "a representative represents itself");
            }

            // frames at 0 bits: exactly the frames whose master pHash equals an earlier kept frame's
            DedupJob.MasterFrames mf = DedupJob.MasterFrames.read(lake);
            assertEquals(250, mf.size());
            Set<Long> distinct = new HashSet<>();
            for (long h : mf.phash()) {
                distinct.add(h);
            }
            assertEquals(distinct.size(), r.frameGroups());
            assertEquals(250 - distinct.size(), r.framesRemoved());
            try (LakeTable t = lake.table(DedupTables.FRAME_GROUPS)) {
                assertEquals(250 - distinct.size(), t.countRows());
            }
        }
    }

    @Test
    void miningReturnsTheBruteForceNeighboursOfThePoolAndFeedsATrainingSet() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            DedupJob.run(lake, new DedupJob.Options(0, -1)); // no near-duplicates: every episode in the pool
            EpisodeVectors ev = EpisodeVectors.read(lake);
            String q1 = ev.infos().get(3).episodeId();
            String q2 = ev.infos().get(17).episodeId();
            MiningJob.Result r = MiningJob.run(lake, ev, List.of(MiningJob.episode(ev, q1), MiningJob.episode(ev, q2)),
                    MiningJob.Options.k(5));
            assertEquals("FLAT", r.index().kind().name());
            assertEquals("emb_mobilenet_v2_block10_gap", ev.column());
            assertEquals(23, r.poolSize()); // the two queries are not in the pool
            assertTrue(r.lineage().get("searched").toString().startsWith("episodes.emb_mobilenet_v2_block10_gap (the"
                    + " lake's column"), r.lineage().toString());
            assertEquals(List.of(), r.lineage().get("scalar_indexes"), "the lake's column: nothing written");
            // the same vectors given as a scratch pool (not a lake column): the same neighbours, and every prefilter
            // column of the pool has its bitmap index
            EpisodeVectors given = new EpisodeVectors(ev.infos(), ev.vectors(), ev.model(), ev.sha256(),
                    ev.episodesVersion());
            MiningJob.Result p = MiningJob.run(lake, given, List.of(MiningJob.episode(given, q1),
                    MiningJob.episode(given, q2)), MiningJob.Options.k(5));
            assertEquals(List.of("quality_status_bitmap", "failed_bitmap", "duplicate_bitmap", "robot_id_bitmap",
                    "task_bitmap"), p.lineage().get("scalar_indexes"));
            assertTrue(p.lineage().get("searched").toString().startsWith("a scratch pool of 23 vectors"),
                    p.lineage().toString());
            assertEquals(r.neighbours().stream().map(MinedEpisode::episodeId).toList(),
                    p.neighbours().stream().map(MinedEpisode::episodeId).toList());
            ExactSearch exact = ExactSearch.of(ev.vectors());
            for (String q : List.of(q1, q2)) {
                List<MinedEpisode> got = r.neighbours().stream().filter(m -> m.queryEpisodeId().equals(q)).toList();
                int qi = ev.indexOf(q);
                List<Neighbour> want = exact.knn(ev.vectors()[qi], 5, row -> row != ev.indexOf(q1) && row != ev.indexOf(q2));
                assertEquals(5, got.size());
                for (int i = 0; i < 5; i++) {
                    assertEquals(ev.infos().get(want.get(i).row()).episodeId(), got.get(i).episodeId(), q + " rank " + (i + 1));
                    assertEquals(want.get(i).distance(), got.get(i).distance(), 1e-4);
                    assertEquals(i + 1, got.get(i).rank());
                }
            }
            assertEquals(List.of(q1, q2), r.lineage().get("query_episode_ids"));
            var set = TrainsetBuilder.build(lake, TrainsetSpec.builder("mined-only").baseRatio(0).sampleRateHz(0)
                    .mined(r.neighbours()).build(), TrainsetBuilder.Progress.NONE).trainset();
            Set<String> distinct = new HashSet<>();
            r.neighbours().forEach(m -> distinct.add(m.episodeId()));
            assertEquals(distinct.size(), set.episodeCount());
            assertEquals(10L * distinct.size(), set.sampleCount());

            // a dedup that merges everything leaves one episode in the pool
            DedupJob.run(lake, new DedupJob.Options(2.0, -1));
            Map<String, String> rep = DedupTables.representatives(lake);
            assertEquals(1, new HashSet<>(rep.values()).size());
            var one = TrainsetBuilder.build(lake, TrainsetSpec.builder("deduped").baseRatio(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            assertEquals(1, one.poolSize());
            io.flywheel.error.NotFoundException unknown = assertThrows(io.flywheel.error.NotFoundException.class,
                    () -> MiningJob.episode(ev, "no-such-episode"));
            assertTrue(unknown.getMessage().startsWith("episode 'no-such-episode' has no embedding"), unknown.getMessage());
        }
    }

    @Test
    void sweepWritesAContactSheetWhoseCountsMatchTheDedupAtEachThreshold() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            Path out = tmp.resolve("sweep");
            ContactSheet.Report rep = ContactSheet.sweep(lake, new double[] {0.0, 0.05, 2.0}, new int[] {0, 10}, 3, out);
            assertEquals(3, rep.episodes().size());
            assertEquals(25, rep.episodes().get(0).groups() + rep.episodes().get(0).removed());
            assertEquals(1, rep.episodes().get(2).groups());
            DedupJob.Result r = DedupJob.run(lake, new DedupJob.Options(0.05, 10));
            assertEquals(r.episodeGroups(), rep.episodes().get(1).groups());
            assertEquals(r.frameGroups(), rep.frames().get(1).groups());
            String html = Files.readString(rep.html());
            assertTrue(html.contains("data:image/jpeg;base64,"), "thumbnails inline");
            assertEquals(List.of(out.resolve("sweep.png")), rep.pngs()); // at most 15 pairs: one page
            assertTrue(Files.size(rep.pngs().get(0)) > 1000);
            assertFalse(html.contains("(no hot copy)"));

            // many pairs: pages of 24 in a 4-column grid, each page readable at once
            ContactSheet.Report many = ContactSheet.sweep(lake, new double[] {0.02, 0.05, 0.1, 0.2, 0.5, 2.0},
                    new int[] {0, 4, 10, 20, 40}, 20, out);
            int pairs = java.util.stream.Stream.concat(many.episodes().stream(), many.frames().stream())
                    .mapToInt(st -> st.justInside().size()).sum();
            assertTrue(pairs > ContactSheet.PAIRS_PER_PAGE, "pairs: " + pairs);
            int pages = (pairs + ContactSheet.PAIRS_PER_PAGE - 1) / ContactSheet.PAIRS_PER_PAGE;
            assertEquals(pages, many.pngs().size());
            assertEquals(out.resolve("sweep-2.png"), many.pngs().get(1));
            for (Path png : many.pngs()) {
                java.awt.image.BufferedImage img = javax.imageio.ImageIO.read(png.toFile());
                assertTrue(img.getHeight() <= 1000 && img.getWidth() <= 1200, png + ": " + img.getWidth() + "x"
                        + img.getHeight());
            }
            // a shorter sweep into the same folder leaves no stale page behind
            ContactSheet.sweep(lake, new double[] {0.05}, new int[] {10}, 1, out);
            assertFalse(Files.exists(out.resolve("sweep-2.png")));
        }
    }

}
