package io.flywheel.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.error.ConflictException;
import io.flywheel.error.NotFoundException;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.TrainsetSampleRow;
import io.flywheel.testkit.SharedData;

/**
 * Two training sets of the 25 real BridgeData episodes exported into one SQLite JDBC catalog, then read back with
 * Iceberg's own generic reader at each tag's snapshot and compared, value by value, with the lake's rows.
 */
class IcebergExportTest {
    @TempDir
    static Path tmp;
    private static Path lakeDir;

    @BeforeAll
    static void lake() throws Exception {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir.toString())) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.2).seed(5).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v2").baseRatio(0.6).seed(9).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
        }
    }

    private static Map<Long, TrainsetSampleRow> lakeSamples(Lake lake, String tag) {
        Map<Long, TrainsetSampleRow> out = new TreeMap<>();
        try (LakeTable t = lake.table("trainset_samples", TableRef.tag(tag))) {
            t.forEachRow(CurationTables.TRAINSET_SAMPLES, ScanRequest.all(), r -> out.put(r.sampleIndex(), r));
        }
        return out;
    }

    private static List<Record> read(Table t, String tag) throws Exception {
        List<Record> out = new ArrayList<>();
        try (CloseableIterable<Record> it = IcebergGenerics.read(t).useSnapshot(t.refs().get(tag).snapshotId()).build()) {
            it.forEach(r -> out.add(r.copy()));
        }
        return out;
    }

    @Test
    void eachTagIsItsOwnSnapshotWithTheSetsRowsAndReExportingIsANoOp() throws Exception {
        Path warehouse = tmp.resolve("warehouse");
        IcebergExport.Options o = IcebergExport.Options.sqlite(warehouse);
        List<String> lines = new ArrayList<>();
        try (Lake lake = Lake.open(lakeDir.toString())) {
            IcebergExport.Result r1 = IcebergExport.export(lake, "train-v1", o, lines::add);
            IcebergExport.Result r2 = IcebergExport.export(lake, "train-v2", o, lines::add);
            assertFalse(r1.alreadyExported());
            assertEquals(50, r1.tables().get(0).rows()); // 5 episodes x 10 frames
            assertEquals(5, r1.tables().get(1).rows());
            assertEquals(150, r2.tables().get(0).rows()); // 15 episodes x 10 frames
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("iceberg: flywheel.samples 50/50 rows")), lines.toString());
            assertEquals("jdbc:sqlite:" + warehouse.toAbsolutePath().resolve("catalog.db"), r1.catalogUri());

            try (JdbcCatalog catalog = IcebergExport.open(o)) {
                Table samples = catalog.loadTable(TableIdentifier.of("flywheel", "samples"));
                Table episodes = catalog.loadTable(TableIdentifier.of("flywheel", "episodes"));
                for (String tag : List.of("train-v1", "train-v2")) {
                    Map<Long, TrainsetSampleRow> want = lakeSamples(lake, tag);
                    List<Record> got = read(samples, tag);
                    assertEquals(want.size(), got.size(), tag);
                    for (Record g : got) {
                        TrainsetSampleRow w = want.get((Long) g.getField("sample_index"));
                        FrameRow f = w.frame();
                        assertEquals(tag, g.getField("trainset_tag"));
                        assertEquals(w.episodeIndex(), g.getField("episode_index"));
                        assertEquals(f.episodeId(), g.getField("episode_id"));
                        assertEquals(f.frameIndex(), g.getField("frame_index"));
                        assertEquals(f.timestampNs(), g.getField("timestamp_ns"));
                        assertEquals(f.timestampNs() / 1000, java.time.temporal.ChronoUnit.MICROS.between(
                                java.time.Instant.EPOCH, ((java.time.OffsetDateTime) g.getField("timestamp")).toInstant()));
                        assertEquals(toList(f.state()), g.getField("state"));
                        assertEquals(toList(f.action()), g.getField("action"));
                        List<?> images = (List<?>) g.getField("images");
                        assertEquals(f.images().size(), images.size());
                        Record i0 = (Record) images.get(0);
                        assertEquals(f.images().get(0).topic(), i0.getField("topic"));
                        assertEquals(f.images().get(0).rawUri(), i0.getField("raw_uri"));
                        assertEquals(f.images().get(0).offset(), i0.getField("offset"));
                        assertEquals(f.images().get(0).length(), i0.getField("length"));
                    }
                    List<Record> eps = read(episodes, tag);
                    assertEquals(want.values().stream().map(s -> s.frame().episodeId()).distinct().count(), eps.size());
                    for (Record e : eps) {
                        assertEquals(10L, e.getField("sample_count"), e.toString());
                        assertEquals(tag, e.getField("trainset_tag"));
                        // the names of the state values, as the BridgeData recordings' JointState names them
                        assertEquals(List.of("x", "y", "z", "roll", "pitch", "yaw", "gripper"),
                                e.getField("state_names"), e.toString());
                    }
                }
                // the current snapshot is the set exported last; the tags keep both
                assertEquals(samples.refs().get("train-v2").snapshotId(), samples.currentSnapshot().snapshotId());
                assertNotEquals(samples.refs().get("train-v1").snapshotId(), samples.refs().get("train-v2").snapshotId());
                assertEquals("train-v1", samples.snapshot(samples.refs().get("train-v1").snapshotId()).summary()
                        .get(IcebergExport.SUMMARY_TAG));
            }

            // exporting a tag again writes nothing: same snapshots, no new data file
            long files = dataFiles(warehouse);
            IcebergExport.Result again = IcebergExport.export(lake, "train-v1", o, l -> { });
            assertTrue(again.alreadyExported());
            assertEquals(r1.tables().get(0).snapshotId(), again.tables().get(0).snapshotId());
            assertEquals(50, again.tables().get(0).rows());
            assertEquals(files, dataFiles(warehouse));
            assertEquals(Map.of("flywheel.samples", List.of("train-v1", "train-v2"), "flywheel.episodes",
                    List.of("train-v1", "train-v2")), IcebergExport.tags(o));

            NotFoundException unknown = assertThrows(NotFoundException.class,
                    () -> IcebergExport.export(lake, "train-v9", o, l -> { }));
            assertTrue(unknown.getMessage().contains("no training set 'train-v9'"), unknown.getMessage());
        }

        // another lake's set under a tag the catalog holds: refused, nothing written
        Path other = tmp.resolve("other");
        try (Lake lake = Lake.init(other.toString())) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap/bridge_ep01.mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(1).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            long files = dataFiles(warehouse);
            ConflictException c = assertThrows(ConflictException.class,
                    () -> IcebergExport.export(lake, "train-v1", o, l -> { }));
            assertTrue(c.getMessage().contains("has a tag 'train-v1' holding another set"), c.getMessage());
            assertEquals(files, dataFiles(warehouse));
            // into its own namespace it goes
            IcebergExport.Result own = IcebergExport.export(lake, "train-v1",
                    new IcebergExport.Options(null, warehouse, "other_lake", null), l -> { });
            assertEquals(10, own.tables().get(0).rows());
        }
    }

    private static List<Double> toList(double[] v) {
        if (v == null) {
            return null;
        }
        List<Double> out = new ArrayList<>();
        for (double d : v) {
            out.add(d);
        }
        return out;
    }

    private static long dataFiles(Path warehouse) throws Exception {
        try (Stream<Path> s = Files.walk(warehouse)) {
            return s.filter(p -> p.toString().endsWith(".parquet")).count();
        }
    }
}
