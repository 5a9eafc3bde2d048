package io.flywheel.curate.align;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.align.StreamTimeline;
import io.flywheel.curate.SourceFiles;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * The alignment report of a recording whose camera's header stamps jump back 2 s: an MCAP of 4 s with
 * {@code /joint_states} at 100 Hz (message k logged and stamped at T0 + 10k ms) and {@code /cam} at 20 Hz (frame i
 * captured at T0 + 50i ms, logged 3 ms later, stamped with its capture time until frame 40 and 2 s earlier from
 * there). Ingested on the default timeline (log times for /cam), every frame is paired as-of with the state 3 ms
 * before it: the report's residuals are those 3 ms, and it names the discontinuity (episode, /cam, message 40, 2.003 s
 * after the episode start, stamps back 2 s, timeline log times). Forced onto the stamps, the stored pairings (frames
 * 40..79 with the states of 2 s before their capture) all have residual 0: the report shows what was stored.
 */
class StampJumpAlignmentReportTest {
    static final long T0 = 1_767_225_600_000_000_000L;
    static final long MS = 1_000_000L;

    @TempDir
    static Path dir;
    static Path file;

    @BeforeAll
    static void write() throws IOException {
        file = dir.resolve("stamp-jump.mcap");
        try (McapWriter w = McapWriter.builder().profile("ros2").build(file)) {
            int img = w.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.COMPRESSED_IMAGE.getBytes(StandardCharsets.UTF_8));
            int js = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8));
            int cam = w.registerChannel("/cam", "cdr", img, Map.of());
            int j = w.registerChannel("/joint_states", "cdr", js, Map.of());
            CdrWriter cdr = new CdrWriter(256);
            int k = 0;
            for (int i = 0; i <= 80; i++) {
                long log = T0 + i * 50 * MS + 3 * MS;
                for (; k <= 400 && T0 + k * 10 * MS <= log; k++) {
                    long t = T0 + k * 10 * MS;
                    w.writeMessage(j, k, t, t, cdr.reset().header(t, "base").stringSequence(List.of("j0"))
                            .float64Sequence(new double[] {k * 0.01}).float64Sequence(new double[0])
                            .float64Sequence(new double[0]).toByteArray());
                }
                if (i == 80) {
                    break;
                }
                byte[] jpeg = {(byte) 0xFF, (byte) 0xD8, (byte) i, (byte) 0xFF, (byte) 0xD9};
                long stamp = T0 + i * 50 * MS - (i >= 40 ? 2_000 * MS : 0);
                w.writeMessage(cam, i, log, log, cdr.reset().header(stamp, "cam").string("jpeg")
                        .byteSequence(jpeg, 0, jpeg.length).toByteArray());
            }
        }
    }

    static RecordingRows ingest(RobotProfile profile) throws IOException {
        List<RecordingRows> committed = new ArrayList<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                committed.add(rows);
                return OptionalLong.of(committed.size());
            }
        };
        IngestJob.Result r = IngestJob.run(sink, List.of(file), IngestOptions.builder().profile(profile).build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(List.of(), r.failed());
        return committed.get(0);
    }

    static AlignmentReport report(RecordingRows rows) {
        Map<String, EpisodeRow> episodes = new LinkedHashMap<>();
        rows.episodes().forEach(e -> episodes.put(e.episodeId(), e));
        return AlignmentReport.of(null, rows.frames(), episodes, null);
    }

    @Test
    void theReportShowsTheStoredPairingAndNamesTheDiscontinuity() throws IOException {
        RecordingRows rows = ingest(RobotProfile.builder().build());
        AlignmentReport a = report(rows);
        assertEquals(80, a.frames().size());
        StreamReport joints = a.streams().get(0);
        assertEquals(new StreamReport("/joint_states", 80, 80, 0, 3.0, 3.0, 3.0, 3.0, null, null), joints);
        assertEquals(1, a.discontinuities().size());
        AlignmentReport.Discontinuity d = a.discontinuities().get(0);
        String episode = a.frames().get(0).episodeId();
        // the episode starts at T0 (the first joint state)
        assertEquals(new AlignmentReport.Discontinuity(episode, "/cam", 40, T0 + 2_003 * MS, 2.003, -2000.0, -1950.0,
                "backward", "log_time"), d);
        assertEquals(List.of(), a.masterGaps());
        // the raw times read again for the timeline plot: the camera's log times, as paired
        EpisodeRow e = rows.episodes().get(0);
        assertEquals(Map.of(), EpisodeStreams.timelines(e.metadataJson()));
        long[] cam = EpisodeStreams.read(e.episodeId(), SourceFiles.uris(e.metadataJson()),
                EpisodeStreams.timelines(e.metadataJson()), SourceFiles::localPath).timesNs("/cam");
        for (int i = 0; i < 80; i++) {
            assertEquals(T0 + i * 50 * MS + 3 * MS, cam[i], "message " + i);
        }
    }

    @Test
    void forcedOntoTheStampsTheReportShowsThoseOtherPairings() throws IOException {
        RecordingRows rows = ingest(RobotProfile.builder().timeline("/cam", StreamTimeline.STAMPS).build());
        AlignmentReport a = report(rows);
        StreamReport joints = a.streams().get(0);
        // sorted by stamp, frames sit at T0 + 50i ms (twice each for i < 40): the as-of state is the one at the same
        // time, residual 0, for every frame
        assertEquals(new StreamReport("/joint_states", 80, 80, 0, 0.0, 0.0, 0.0, 0.0, null, null), joints);
        assertEquals("stamps", a.discontinuities().get(0).timeline());
        // the episode records the timeline set, and reading the raw files again follows it: sorted stamps
        EpisodeRow e = rows.episodes().get(0);
        assertEquals(Map.of("/cam", StreamTimeline.STAMPS), EpisodeStreams.timelines(e.metadataJson()));
        long[] cam = EpisodeStreams.read(e.episodeId(), SourceFiles.uris(e.metadataJson()),
                EpisodeStreams.timelines(e.metadataJson()), SourceFiles::localPath).timesNs("/cam");
        for (int i = 0; i < 80; i++) {
            assertEquals(T0 + (i / 2) * 50 * MS, cam[i], "message " + i + " in stamp order");
        }
    }
}
