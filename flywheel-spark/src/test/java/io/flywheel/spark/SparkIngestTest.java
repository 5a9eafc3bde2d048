package io.flywheel.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.StagedRows;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;
import io.flywheel.testkit.SharedData;

/**
 * The Spark ingest job on local[2] (one session for the class): the staged rows, read back through the connector, are
 * the rows the one-machine ingest gives; a truncated recording is listed and stages nothing.
 */
class SparkIngestTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("SparkIngestTest")
                .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.close();
        }
    }

    @TempDir
    Path tmp;

    @Test
    void stagedRowsAreTheOneMachineRowsAndTheBrokenRecordingIsListed() throws Exception {
        Path bridge = SharedData.data("camera/bridge-mcap");
        Path in = Files.createDirectories(tmp.resolve("in"));
        Files.copy(bridge.resolve("bridge_ep03.mcap"), in.resolve("bridge_ep03.mcap"));
        Files.copy(bridge.resolve("bridge_ep04.mcap"), in.resolve("bridge_ep04.mcap"));
        byte[] whole = Files.readAllBytes(bridge.resolve("bridge_ep01.mcap"));
        Files.write(in.resolve("cut.mcap"), java.util.Arrays.copyOf(whole, whole.length / 2));

        Path staging = tmp.resolve("staging");
        SparkIngest.Summary s = SparkIngest.run(spark, new SparkIngest.Options(List.of(in), staging, null, null, null));
        assertEquals(3, s.recordings());
        assertEquals(2, s.ingested());
        assertEquals(2, s.episodes());
        assertEquals(20, s.frames()); // 10 steps per BridgeData episode
        assertEquals(2, s.rawFiles());
        assertEquals(1, s.failed().size());
        assertEquals(in.resolve("cut.mcap").toString(), s.failed().get(0).input());
        assertEquals("bad_input", s.failed().get(0).kind());
        assertTrue(s.failed().get(0).message().contains("cut.mcap"), s.failed().get(0).message());

        // read back through the connector: one row per frame, nothing of the cut recording
        List<Row> staged = spark.read().format("lance").load(staging.resolve("frames.lance").toString())
                .collectAsList();
        assertEquals(20, staged.size());
        List<FrameRow> fromSpark = new ArrayList<>();
        for (Row r : staged) {
            FrameRow f = StagedRows.frame(r.getString(r.fieldIndex("row")));
            assertEquals(f.timestampNs(), r.getLong(r.fieldIndex("timestamp_ns")));
            assertEquals(f.frameIndex(), r.getInt(r.fieldIndex("frame_index")));
            fromSpark.add(f);
        }
        fromSpark.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
        List<String> uris = spark.read().format("lance").load(staging.resolve("raw_files.lance").toString())
                .select("uri").as(org.apache.spark.sql.Encoders.STRING()).collectAsList();
        assertEquals(2, uris.size());
        assertFalse(uris.stream().anyMatch(u -> u.contains("cut.mcap")), uris.toString());

        // the one-machine ingest of the two good recordings, in this JVM
        List<FrameRow> direct = new ArrayList<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                direct.addAll(rows.frames());
                return OptionalLong.of(1);
            }
        };
        IngestJob.run(sink, List.of(in.resolve("bridge_ep03.mcap"), in.resolve("bridge_ep04.mcap")),
                IngestOptions.defaults(), IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        direct.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
        assertEquals(direct, fromSpark);
        // BridgeData's nominal 5 Hz: 200 ms between frames
        assertEquals(200_000_000L, fromSpark.get(1).timestampNs() - fromSpark.get(0).timestampNs());
    }
}
