package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.EpisodeGroupRow;
import io.flywheel.rows.FrameGroupRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.TrainsetEpisodeRow;
import io.flywheel.rows.TrainsetRow;
import io.flywheel.rows.TrainsetSampleRow;

/**
 * The curation tables written with typed rows and read back as records, in the stored layout they always had, and a
 * training set's samples copied from frames inside the lake ({@link RowCopy}).
 */
class CurationTablesTest {
    @TempDir
    Path dir;

    /** @return each column as {@code name type [not null]}, children included in the type */
    static List<String> layout(LakeTable t) {
        return t.columns().stream().map(c -> c.name() + " " + c.typeName() + (c.nullable() ? "" : " not null"))
                .toList();
    }

    @Test
    void everyColumnConstantNamesItsColumnInOrder() {
        assertEquals(List.of(CurationTables.TAG, CurationTables.CREATED_AT_NS, CurationTables.SAMPLES_VERSION,
                CurationTables.EPISODES_VERSION, CurationTables.EPISODE_COUNT, CurationTables.SAMPLE_COUNT,
                CurationTables.BASE_COUNT, CurationTables.MINED_COUNT, CurationTables.LINEAGE),
                CurationTables.TRAINSETS.columnNames());
        assertEquals(List.of(CurationTables.EPISODE_INDEX, TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID,
                TableSchemas.TASK, TableSchemas.SCENE, CurationTables.OBJECT, TableSchemas.OUTCOME, CurationTables.IN_BASE,
                CurationTables.MINED_BY, CurationTables.FIRST_SAMPLE, CurationTables.SAMPLE_COUNT),
                CurationTables.TRAINSET_EPISODES.columnNames());
        assertEquals(List.of(CurationTables.MINED_BY_QUERY_EPISODE_ID, CurationTables.MINED_BY_DISTANCE,
                CurationTables.MINED_BY_RANK), CurationTables.TRAINSET_EPISODES.columns(EmbeddingModels.none()).get(8)
                .item().children().stream().map(ColumnSpec::name).toList());
        assertEquals(List.of(TableSchemas.EPISODE_ID, CurationTables.REPRESENTATIVE_ID, CurationTables.DISTANCE,
                CurationTables.GROUP_SIZE, CurationTables.THRESHOLD, CurationTables.EMBEDDING_MODEL),
                CurationTables.EPISODE_GROUPS.columnNames());
        assertEquals(List.of(TableSchemas.EPISODE_ID, TableSchemas.FRAME_INDEX, CurationTables.REPRESENTATIVE_EPISODE_ID,
                CurationTables.REPRESENTATIVE_FRAME_INDEX, CurationTables.HAMMING, CurationTables.THRESHOLD),
                CurationTables.FRAME_GROUPS.columnNames());
        List<String> samples = new ArrayList<>(List.of(CurationTables.SAMPLE_INDEX, CurationTables.EPISODE_INDEX));
        samples.addAll(TableSchemas.frames().getFields().stream().map(f -> f.getName()).toList());
        assertEquals(samples, CurationTables.TRAINSET_SAMPLES.columnNames(), "then every frames column");
        assertEquals(TableSchemas.KNOWN_TABLES.subList(3, 8), CurationTables.ALL.stream().map(TypedTable::name).toList());
    }

    @Test
    void theRegistryIsAppendedToAndReadAsRecordsInItsStoredLayout() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            TrainsetRow a = new TrainsetRow("train-v1", 1_000L, -1, -1, 3, 30, 3, 0, "{\"seed\":1}");
            TrainsetRow b = new TrainsetRow("train-v2", 2_000L, 7, 8, 5, 50, 3, 2, "{\"seed\":2,\"mined\":[\"x\"]}");
            lake.begin("trainset").append(CurationTables.TRAINSETS, List.of(a), Set.of("train-v1")).commit();
            CommitResult c = lake.begin("trainset").append(CurationTables.TRAINSETS, List.of(b), Set.of("train-v2"))
                    .commit();
            assertEquals("append", c.snapshot().changes().get(0).kind());
            assertEquals(List.of("train-v2"), c.snapshot().changes().get(0).keys());
            try (LakeTable t = lake.table(TableSchemas.TRAINSETS)) {
                assertEquals(List.of(a, b), t.rows(CurationTables.TRAINSETS, ScanRequest.all()));
                assertEquals(List.of("tag utf8 not null", "created_at_ns int64 not null", "samples_version int64 not null",
                        "episodes_version int64 not null", "episode_count int64 not null",
                        "sample_count int64 not null", "base_count int64 not null", "mined_count int64 not null",
                        "lineage utf8 not null"), layout(t));
                assertEquals(List.of(b), t.rows(CurationTables.TRAINSETS,
                        ScanRequest.builder().filter("tag = 'train-v2'").build()));
            }
            assertThrows(IllegalArgumentException.class, () -> {
                try (LakeTable t = lake.table(TableSchemas.TRAINSETS)) {
                    t.rows(CurationTables.TRAINSETS, ScanRequest.builder().columns("tag").build());
                }
            }, "a record needs every column");
        }
    }

    @Test
    void trainsetEpisodesKeepTheirMinedByListsAndEachOverwriteIsAVersion() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            List<TrainsetEpisodeRow> first = List.of(
                    new TrainsetEpisodeRow(0, "ep-a", "robot-1", "pick", "lab", "cup", "success", true, List.of(), 0, 10),
                    new TrainsetEpisodeRow(1, "ep-b", null, null, "kitchen", "", "success", false,
                            List.of(new TrainsetEpisodeRow.MinedBy("ep-f", 0.05, 1),
                                    new TrainsetEpisodeRow.MinedBy("ep-g", 0.125, 3)), 10, 4),
                    new TrainsetEpisodeRow(2, "ep-c", "robot-2", "place", "lab", "glass_cup", "success", true,
                            List.of(new TrainsetEpisodeRow.MinedBy("ep-f", 0.25, 2)), 14, 6));
            long v1 = lake.begin("trainset").overwrite(CurationTables.TRAINSET_EPISODES, first).commit()
                    .table(TableSchemas.TRAINSET_EPISODES).toVersion();
            List<TrainsetEpisodeRow> second = List.of(
                    new TrainsetEpisodeRow(0, "ep-z", "robot-3", "pick", "lab", "", "success", true, List.of(), 0, 1));
            long v2 = lake.begin("trainset").overwrite(CurationTables.TRAINSET_EPISODES, second).commit()
                    .table(TableSchemas.TRAINSET_EPISODES).toVersion();
            assertEquals(v1 + 1, v2);
            try (LakeTable t = lake.table(TableSchemas.TRAINSET_EPISODES)) {
                assertEquals(second, t.rows(CurationTables.TRAINSET_EPISODES, ScanRequest.all()));
                assertEquals(List.of("episode_index int32 not null", "episode_id utf8 not null", "robot_id utf8",
                        "task utf8", "scene utf8", "object utf8", "outcome utf8", "in_base bool not null",
                        "mined_by list<struct<query_episode_id utf8, distance float64, rank int32>>",
                        "first_sample int64 not null", "sample_count int64 not null"), layout(t));
            }
            try (LakeTable t = lake.table(TableSchemas.TRAINSET_EPISODES, TableRef.version(v1))) {
                assertEquals(first, t.rows(CurationTables.TRAINSET_EPISODES, ScanRequest.all()), "the older version");
            }
        }
    }

    @Test
    void groupsAreOverwrittenBatchByBatchAndNoRowsWriteAnEmptyVersion() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            int n = 70_000; // two batches of the typed writer (65,536 rows each)
            int[] iterators = {0};
            Iterable<FrameGroupRow> frames = () -> {
                iterators[0]++;
                return IntStream.range(0, n).mapToObj(i -> new FrameGroupRow("ep-" + (i / 100), i % 100, "ep-0", 0,
                        i % 7, 4)).iterator();
            };
            List<EpisodeGroupRow> episodes = List.of(new EpisodeGroupRow("ep-0", "ep-0", 0, 2, 0.0005, "m"),
                    new EpisodeGroupRow("ep-1", "ep-0", 0.0004, 2, 0.0005, "m"));
            lake.begin("dedup").overwrite(CurationTables.EPISODE_GROUPS, episodes)
                    .overwrite(CurationTables.FRAME_GROUPS, frames).commit();
            assertEquals(1, iterators[0], "the rows are read once");
            try (LakeTable e = lake.table(TableSchemas.EPISODE_GROUPS); LakeTable f = lake.table(TableSchemas.FRAME_GROUPS)) {
                assertEquals(episodes, e.rows(CurationTables.EPISODE_GROUPS, ScanRequest.all()));
                assertEquals(List.of("episode_id utf8 not null", "representative_id utf8 not null",
                        "distance float64 not null", "group_size int32 not null", "threshold float64 not null",
                        "embedding_model utf8 not null"), layout(e));
                assertEquals(n, f.countRows());
                assertEquals(10_000, f.countRows("hamming = 0"), "i % 7 == 0 for i = 0, 7, ..., 69993");
                List<FrameGroupRow> last = f.rows(CurationTables.FRAME_GROUPS,
                        ScanRequest.builder().filter("episode_id = 'ep-699' AND frame_index = 99").build());
                assertEquals(List.of(new FrameGroupRow("ep-699", 99, "ep-0", 0, 69_999 % 7, 4)), last);
                assertEquals(List.of("episode_id utf8 not null", "frame_index int32 not null",
                        "representative_episode_id utf8 not null", "representative_frame_index int32 not null",
                        "hamming int32 not null", "threshold int32 not null"), layout(f));
            }
            lake.begin("dedup").overwrite(CurationTables.EPISODE_GROUPS, List.of()).commit();
            try (LakeTable e = lake.table(TableSchemas.EPISODE_GROUPS)) {
                assertEquals(0, e.countRows());
                assertEquals(6, e.columns().size(), "an empty version keeps the columns");
            }
        }
    }

    /** Episodes 0..2 of 4 frames; frames of episode 1 enriched with a hot copy and a 2-d vector on camera 0. */
    private static EmbeddingModel lakeWithFrames(Lake lake) {
        for (int i = 0; i < 3; i++) {
            Fixtures.ingest(lake, i, 4);
        }
        EmbeddingModel m = lake.registerModel("m", 2, "sha");
        List<FrameRow> enriched = new ArrayList<>();
        for (FrameRow r : Fixtures.frames(1, 4)) {
            enriched.add(r.withEnrichment(r.images(), List.of(new ImageEnrichment(1.5, false, null, false,
                    100L + r.frameIndex(), new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) r.frameIndex()},
                    Map.of("m", new float[] {0.6f, 0.8f + r.frameIndex()}), null), ImageEnrichment.failed("no")),
                    "open", "approach"));
        }
        lake.begin("enrich").updateFrames(List.of("images", "gripper_state", "phase", m.column()), enriched).commit();
        return m;
    }

    @Test
    void samplesAreFramesRowsCopiedByOffsetNumberedAndGrouped() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            lakeWithFrames(lake);
            long framesVersion;
            List<FrameRow> byOffset;
            List<String> frameColumns;
            try (LakeTable f = lake.table("frames")) {
                framesVersion = f.version();
                byOffset = f.takeFrames(LongRange.of(0, f.countRows()));
                frameColumns = f.columnNames();
            }
            assertEquals(12, byOffset.size());
            // group 0: the rows at offsets 6 and 4 (in that order), group 1: none, group 2: offset 0
            long[][] groups = {{6, 4}, {}, {0}};
            List<long[]> progress = new ArrayList<>();
            CommitResult c = lake.begin("trainset").overwrite(TableSchemas.TRAINSET_SAMPLES, RowCopy.from("frames",
                    framesVersion).groups(groups).positionColumn(CurationTables.SAMPLE_INDEX)
                    .groupColumn(CurationTables.EPISODE_INDEX).progress((d, t) -> progress.add(new long[] {d, t}))
                    .build()).commit();
            assertEquals(3, c.table(TableSchemas.TRAINSET_SAMPLES).rowsWritten());
            assertEquals("create", c.snapshot().changes().get(0).kind(), "the table's first version");
            assertEquals(List.of("3/3"), progress.stream().map(p -> p[0] + "/" + p[1]).toList(),
                    "one take: after it, all 3 groups done");
            try (LakeTable s = lake.table(TableSchemas.TRAINSET_SAMPLES)) {
                List<String> cols = new ArrayList<>(List.of("sample_index", "episode_index"));
                cols.addAll(frameColumns);
                assertEquals(cols, s.columnNames(), "the two leading columns, then every frames column");
                assertEquals(List.of("sample_index int64 not null", "episode_index int32 not null"),
                        layout(s).subList(0, 2));
                List<TrainsetSampleRow> rows = s.rows(CurationTables.TRAINSET_SAMPLES, ScanRequest.all());
                assertEquals(List.of(new TrainsetSampleRow(0, 0, byOffset.get(6)), new TrainsetSampleRow(1, 0,
                        byOffset.get(4)), new TrainsetSampleRow(2, 2, byOffset.get(0))), rows);
                assertEquals(Fixtures.episodeId(1), rows.get(0).frame().episodeId());
                assertEquals(0.8f + 2, rows.get(0).frame().enrichment().get(0).embedding("m")[1],
                        "offset 6 is episode 1's frame 2, enriched: its vector came along");
                assertEquals(3, rows.get(0).frame().enrichment().get(0).hotJpeg().length);
            }
        }
    }

    @Test
    void samplesWrittenAsTypedRowsReadBackWithTheirModelColumns() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            EmbeddingModel m = lakeWithFrames(lake);
            List<FrameRow> frames;
            try (LakeTable f = lake.table("frames")) {
                frames = f.takeFrames(5, 6, 1);
            }
            List<TrainsetSampleRow> rows = List.of(new TrainsetSampleRow(0, 0, frames.get(0)),
                    new TrainsetSampleRow(1, 0, frames.get(1)), new TrainsetSampleRow(2, 1, frames.get(2)));
            lake.begin("trainset").overwrite(CurationTables.TRAINSET_SAMPLES, rows).commit();
            try (LakeTable s = lake.table(TableSchemas.TRAINSET_SAMPLES)) {
                assertEquals(rows, s.rows(CurationTables.TRAINSET_SAMPLES, ScanRequest.all()));
                assertEquals(m.column(), s.columnNames().get(s.columnNames().size() - 1), "the model's column last");
                assertEquals(1, s.countRows(m.column() + " IS NULL"), "offset 1 is episode 0's frame: not embedded");
            }
        }
    }

    @Test
    void aCopyLargerThanOneTakeComesInOrderAndReportsEachChunk() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            lake.begin("ingest").putFrames(Fixtures.frames(0, 9_000)).putEpisodes(List.of(Fixtures.episode(0, 9_000)))
                    .commit();
            long v;
            try (LakeTable f = lake.table("frames")) {
                v = f.version();
            }
            // group 0: rows 8999 down to 4000 (5,000 rows); group 1: rows 0..3999 (4,000): 9,000 rows, two takes
            long[] g0 = new long[5_000];
            Arrays.setAll(g0, i -> 8_999 - i);
            long[] g1 = LongRange.of(0, 4_000);
            List<long[]> progress = new ArrayList<>();
            lake.begin("trainset").overwrite(TableSchemas.TRAINSET_SAMPLES, RowCopy.from("frames", v)
                    .groups(new long[][] {g0, g1}).positionColumn("sample_index").groupColumn("episode_index")
                    .progress((d, t) -> progress.add(new long[] {d, t})).build()).commit();
            assertEquals(List.of("1/2", "2/2"), progress.stream().map(p -> p[0] + "/" + p[1]).toList(),
                    "after the first take of 8,192 rows group 0 is done, after the second both");
            try (LakeTable s = lake.table(TableSchemas.TRAINSET_SAMPLES)) {
                assertEquals(9_000, s.countRows());
                long[] bad = {0};
                long[] seen = {0};
                s.scan(ScanRequest.builder().columns("sample_index", "episode_index", "frame_index").build(), b -> {
                    ColumnView si = b.column("sample_index");
                    ColumnView ei = b.column("episode_index");
                    ColumnView fi = b.column("frame_index");
                    for (int r = 0; r < b.rowCount(); r++) {
                        long p = seen[0]++;
                        long wantFrame = p < 5_000 ? 8_999 - p : p - 5_000;
                        if (si.getLong(r) != p || ei.getInt(r) != (p < 5_000 ? 0 : 1) || fi.getInt(r) != wantFrame) {
                            bad[0]++;
                        }
                    }
                });
                assertEquals(9_000, seen[0]);
                assertEquals(0, bad[0], "sample p is frame 8999 - p, then frame p - 5000");
            }
        }
    }

    @Test
    void aCopyReadsTheSourceAtItsVersionAndRefusesOffsetsOutsideIt() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 4);
            long v;
            try (LakeTable f = lake.table("frames")) {
                v = f.version();
            }
            Fixtures.ingest(lake, 1, 4); // frames gets a later version with 8 rows
            lake.begin("trainset").overwrite(TableSchemas.TRAINSET_SAMPLES, RowCopy.from("frames", v)
                    .groups(new long[][] {{3}}).positionColumn("sample_index").groupColumn("episode_index").build())
                    .commit();
            try (LakeTable s = lake.table(TableSchemas.TRAINSET_SAMPLES)) {
                assertEquals(Fixtures.frames(0, 4).get(3),
                        s.rows(CurationTables.TRAINSET_SAMPLES, ScanRequest.all()).get(0).frame());
            }
            long seq = lake.refresh().seq();
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> lake.begin("trainset")
                    .overwrite(TableSchemas.TRAINSET_SAMPLES, RowCopy.from("frames", v).groups(new long[][] {{1, 4}})
                            .positionColumn("sample_index").groupColumn("episode_index").build()).commit());
            assertTrue(bad.getMessage().contains("frames.lance at version " + v) && bad.getMessage().contains("4")
                    && bad.getMessage().contains("[0, 4)"), bad.getMessage());
            assertEquals(seq, lake.refresh().seq(), "nothing committed");
            assertThrows(IllegalArgumentException.class, () -> lake.begin("x").overwrite("frames",
                    RowCopy.from("episodes", 1).positionColumn("a").groupColumn("b").build()),
                    "the ingest tables are written with put/update rows only");
        }
    }

    /** Offsets {@code from..to-1}. */
    static final class LongRange {
        static long[] of(long from, long to) {
            long[] out = new long[(int) (to - from)];
            Arrays.setAll(out, i -> from + i);
            return out;
        }
    }
}
