package io.flywheel.curate.trainset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.ingest.IngestOptions;
import io.flywheel.rows.FrameRow;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;

/** Training sets built on a lake of the 25 real BridgeData episodes (10 frames each, 5 Hz). */
class TrainsetBuilderTest {
    @TempDir
    static Path tmp;
    static Path lakeDir;
    static List<String> episodeIds;
    static Map<String, List<FrameRow>> framesByEpisode = new HashMap<>();

    @BeforeAll
    static void ingest() throws IOException {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            try (LakeTable t = lake.table("frames")) {
                for (FrameRow f : t.frames(ScanRequest.all())) {
                    framesByEpisode.computeIfAbsent(f.episodeId(), k -> new ArrayList<>()).add(f);
                }
            }
        }
        framesByEpisode.values().forEach(l -> l.sort((a, b) -> Integer.compare(a.frameIndex(), b.frameIndex())));
        episodeIds = new ArrayList<>(new TreeSet<>(framesByEpisode.keySet()));
        assertEquals(25, episodeIds.size());
    }

    @Test
    void baseSampleAt2_5HzTakesEveryOtherFrameAndSamplesEqualTheFrameRows() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            TrainsetBuilder.Result r = TrainsetBuilder.build(lake, TrainsetSpec.builder("half-rate")
                    .baseRatio(0.3).seed(7).sampleRateHz(2.5).build(), TrainsetBuilder.Progress.NONE);
            Trainset s = r.trainset();
            assertEquals(25, r.poolSize());
            // round(0.3 * 25) = 8 episodes; frames at 0, 200, ..., 1800 ms sampled every 400 ms: 0,2,4,6,8
            assertEquals(8, s.episodeCount());
            assertEquals(40, s.sampleCount());
            assertEquals(2.5, r.achievedRateHz(), 1e-9, "4 intervals over 1.6 s per episode");
            assertEquals(40, r.samplesWithAction(), "every BridgeData frame has its 7-value action");
            assertEquals(2.5, (double) s.lineage().get("achieved_sample_rate_hz"), 1e-9);
            assertEquals(UniformSample.select(episodeIds, 0.3, 7), Trainsets.episodes(lake, s).stream()
                    .filter(TrainsetEpisode::inBase).map(e -> e.info().episodeId()).sorted(
                            java.util.Comparator.comparingLong(id -> UniformSample.key(7, id))).toList());
            try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.tag("half-rate"))) {
                assertEquals(40, t.countRows());
                List<String> ids = new ArrayList<>();
                List<Integer> idx = new ArrayList<>();
                List<Long> sampleIndex = new ArrayList<>();
                t.scan(ScanRequest.builder().columns("sample_index", "episode_id", "frame_index").build(), b -> {
                    for (int i = 0; i < b.rowCount(); i++) {
                        sampleIndex.add(b.column("sample_index").getLong(i));
                        ids.add(b.column("episode_id").getString(i));
                        idx.add(b.column("frame_index").getInt(i));
                    }
                });
                for (int i = 0; i < 40; i++) {
                    assertEquals(i, sampleIndex.get(i));
                    assertEquals(2 * (i % 5), idx.get(i), "sample " + i);
                }
                // the sample rows carry the frame's aligned values unchanged
                List<TrainsetEpisode> eps = Trainsets.episodes(lake, s);
                for (TrainsetEpisode e : eps) {
                    assertEquals(5, e.sampleCount());
                    assertEquals(5L * e.episodeIndex(), e.firstSample());
                    assertEquals(e.info().episodeId(), ids.get((int) e.firstSample()));
                }
                long[] rows = {0, 13, 39};
                List<FrameRow> taken = new ArrayList<>();
                t.take(rows, List.of("episode_id", "frame_index", "state", "action"), b -> {
                    for (int i = 0; i < b.rowCount(); i++) {
                        String id = b.column("episode_id").getString(i);
                        int fi = b.column("frame_index").getInt(i);
                        FrameRow f = framesByEpisode.get(id).get(fi);
                        assertArrayEquals(f.state(), b.column("state").getDoubles(i));
                        taken.add(f);
                    }
                });
                assertEquals(3, taken.size());
            }
        }
    }

    @Test
    void askingMoreThanTheFramesHoldReportsTheTrueRate() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            TrainsetBuilder.Result r = TrainsetBuilder.build(lake, TrainsetSpec.builder("too-fast")
                    .baseRatio(0.2).seed(3).sampleRateHz(10).build(), TrainsetBuilder.Progress.NONE);
            // 5 episodes of 10 frames at 5 Hz: every frame is taken, 9 intervals over 1.8 s each
            assertEquals(50, r.trainset().sampleCount());
            assertEquals(5.0, r.achievedRateHz(), 1e-9);
            assertEquals(10.0, (double) r.trainset().lineage().get("sample_rate_hz"), 0);
        }
    }

    @Test
    void minedNeighboursJoinTheBaseOlderTagsStayAndTheDiffCountsThem() throws IOException {
        try (Lake lake = Lake.open(lakeDir)) {
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.2).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            List<String> base = UniformSample.select(episodeIds, 0.2, 1);
            assertEquals(5, base.size());
            List<String> outside = new ArrayList<>(episodeIds);
            outside.removeAll(base);
            String query = outside.get(0);
            List<MinedEpisode> mined = List.of(
                    new MinedEpisode(outside.get(1), query, 0.05, 1),
                    new MinedEpisode(outside.get(2), query, 0.07, 2),
                    new MinedEpisode(base.get(0), query, 0.09, 3));
            TrainsetBuilder.Result r = TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v2").baseRatio(0.2).seed(1)
                    .sampleRateHz(0).mined(mined).lineage("command", "test").build(),
                    TrainsetBuilder.Progress.NONE);
            // 5 base + 2 new mined (the third is already in the base): merged without repeats
            assertEquals(7, r.trainset().episodeCount());
            assertEquals(70, r.trainset().sampleCount());
            assertEquals(5, r.trainset().baseCount());
            assertEquals(3, r.trainset().minedCount());
            assertEquals(List.of(query), r.trainset().lineage().get("query_episode_ids"));
            assertEquals("test", r.trainset().lineage().get("command"));

            Trainset v1 = Trainsets.open(lake, "train-v1");
            assertEquals(5, v1.episodeCount());
            try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.tag("train-v1"))) {
                assertEquals(50, t.countRows());
            }
            try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.tag("train-v2"))) {
                assertEquals(70, t.countRows());
            }
            List<TrainsetEpisode> v2 = Trainsets.episodes(lake, r.trainset());
            TrainsetEpisode both = v2.stream().filter(e -> e.info().episodeId().equals(base.get(0))).findFirst().orElseThrow();
            assertTrue(both.inBase());
            assertEquals(0.09, both.minedBy().get(0).distance());
            assertEquals(3, both.minedBy().get(0).rank());

            Set<String> hard = new HashSet<>(List.of(outside.get(1), outside.get(2)));
            TrainsetDiff d = TrainsetDiff.of(lake, "train-v1", "train-v2", e -> hard.contains(e.episodeId()), "planted");
            assertEquals(List.of(outside.get(1), outside.get(2)).stream().sorted().toList(), d.added());
            assertEquals(List.of(), d.removed());
            assertEquals(5, d.kept());
            assertEquals(0.0, d.hardShareFrom());
            assertEquals(2.0 / 7, d.hardShareTo(), 1e-12);
            long tasksTo = d.composition().get("task").values().stream().mapToLong(c -> c[1]).sum();
            assertEquals(7, tasksTo);
            Path png = tmp.resolve("diff.png");
            CompositionChart.write(d, png);
            assertTrue(ImageIO.read(png.toFile()).getHeight() > 100);

            io.flywheel.error.ConflictException again = assertThrows(io.flywheel.error.ConflictException.class,
                    () -> TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").build(),
                            TrainsetBuilder.Progress.NONE));
            assertTrue(again.getMessage().contains("already exists"), again.getMessage());
            assertThrows(io.flywheel.error.NotFoundException.class, () -> Trainsets.open(lake, "nope"));
            io.flywheel.error.BadInputException empty = assertThrows(io.flywheel.error.BadInputException.class,
                    () -> TrainsetBuilder.build(lake, TrainsetSpec.builder("empty").baseRatio(0).build(),
                            TrainsetBuilder.Progress.NONE));
            assertTrue(empty.getMessage().contains("would hold no episode"), empty.getMessage());
            assertTrue(Trainsets.find(lake, "empty").isEmpty(), "nothing committed");
            try (var left = Files.list(tmp)) {
                assertEquals(Set.of("lake", "diff.png"), left.map(p -> p.getFileName().toString())
                        .collect(java.util.stream.Collectors.toSet()),
                        "no staging file anywhere: the samples are copied inside the lake");
            }
        }
    }
}
