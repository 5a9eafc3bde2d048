package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.flywheel.error.BadInputException;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;
import io.flywheel.rows.StreamMatch;
import io.flywheel.testkit.SharedData;

/** Rows cross as JSON documents and come back equal, on a real recording's rows and on edge values. */
class StagedRowsTest {
    @Test
    void realRecordingRowsRoundTrip() throws Exception {
        Path file = SharedData.data("camera/bridge-mcap/bridge_ep00.mcap");
        List<RecordingRows> got = new ArrayList<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                got.add(rows);
                return OptionalLong.of(got.size());
            }
        };
        IngestJob.Result r = IngestJob.run(sink, IngestJob.discover(List.of(file)), IngestOptions.builder().build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(1, got.size());
        assertEquals(1, r.episodes());
        RecordingRows rows = got.get(0);
        assertTrue(rows.frames().size() >= 10, "frames: " + rows.frames().size());
        for (RawFileRow f : rows.rawFiles()) {
            assertEquals(f, StagedRows.rawFile(StagedRows.encode(f)));
        }
        for (EpisodeRow e : rows.episodes()) {
            assertEquals(e, StagedRows.episode(StagedRows.encode(e)));
        }
        for (FrameRow f : rows.frames()) {
            assertEquals(f, StagedRows.frame(StagedRows.encode(f)));
            assertEquals(3, f.images().size());
        }
    }

    @Test
    void edgeValuesRoundTrip() {
        FrameRow f = new FrameRow("ep", 3, -1L, new double[] {Double.NaN, 0.1 + 0.2, -0.0, Double.MAX_VALUE},
                null, null, List.of(new ImageLocator("/cam", "file:/x.mcap", 17, 4, 9, "zstd", -250L)),
                List.of(new StreamMatch("/joint_states", false, null)), List.of("unmatched:/joint_states"));
        FrameRow back = StagedRows.frame(StagedRows.encode(f));
        assertEquals(f, back);
        assertEquals(0.30000000000000004, back.state()[1]);
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(back.state()[2]));
        EpisodeRow e = new EpisodeRow("ep", "rec", null, "pick \"cup\"\n", null, null, "unknown", 1L, 2L, 1L,
                "/cam", 1L, "pass", List.of(), "{}", null);
        assertEquals(e, StagedRows.episode(StagedRows.encode(e)));
    }

    @Test
    void aDocumentOfAnotherShapeIsRefused() {
        BadInputException e = assertThrows(BadInputException.class,
                () -> StagedRows.frame("{\"episodeId\":\"e\",\"frameIndex\":0,\"colour\":\"red\"}"));
        assertTrue(e.getMessage().contains("colour"), e.getMessage());
    }
}
