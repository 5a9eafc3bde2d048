package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.align.StreamTimeline;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.StreamMatch;

/**
 * A camera whose header stamps jump back 2 s mid-recording while its log times run on. Ground truth of the generated
 * MCAP (4 s): {@code /joint_states} at 100 Hz, message {@code k} logged and stamped at {@code T0 + 10k ms}, its one
 * joint position {@code 0.01 k} (the seconds since T0, so a paired state names its moment); {@code /cam} at 20 Hz,
 * frame {@code i} captured at {@code T0 + 50i ms}, logged 3 ms later, its image bytes {@code FF D8 i FF D9}; its
 * header stamps are the capture times until frame 40, then 2 s earlier (frame 40 is stamped T0 again).
 *
 * <p>On the default timeline (auto: log times, as the stamps go back) frame row {@code f} shows camera frame {@code f}
 * at {@code T0 + 50f + 3 ms}, paired as-of with state {@code 5f} (value {@code 0.05 f}, residual -3 ms); the
 * discontinuity is reported at frame 40 (log time T0 + 2.003 s, stamps -2 s against the log times); the camera runs
 * at 20 Hz with no gap over 50 ms. Forced onto the stamps, the old reading comes back: frames sorted by stamp (row 1
 * is camera frame 40, paired with the state of T0, 2 s before it was captured), a false camera gap of 2.05 s and a
 * camera rate of 40.5 Hz.
 */
class StampJumpIngestTest {
    static final long T0 = StampJumpRecording.T0;
    static final long MS = StampJumpRecording.MS;
    static final int FRAMES = StampJumpRecording.FRAMES;

    @TempDir
    static Path dir;
    static Path file;

    @BeforeAll
    static void write() throws IOException {
        file = StampJumpRecording.write(dir.resolve("stamp-jump.mcap"));
    }

    static RecordingRows ingest(RobotProfile p, List<IngestJob.RecordingResult> results) throws IOException {
        FrameSkipsIngestTest.Rows sink = new FrameSkipsIngestTest.Rows();
        IngestJob.Result r = IngestJob.run(sink, List.of(file), IngestOptions.builder().profile(p).build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(List.of(), r.failed());
        results.addAll(r.recordings());
        return sink.committed.get(0);
    }

    /** @return the camera frame number held in the image bytes a frame row points to */
    static int cameraFrame(LocatorReader reader, FrameRow f) throws IOException {
        ImageLocator l = f.images().get(0);
        byte[] b = reader.read(RawLocator.fromStored(l.rawUri(), l.chunkOffset(), l.offset(), l.length(),
                l.compression()));
        assertEquals(5, b.length);
        return b[2] & 0xFF;
    }

    static StreamMatch match(FrameRow f, String topic) {
        return f.streams().stream().filter(m -> m.stream().equals(topic)).findFirst().orElseThrow();
    }

    @Test
    void framesKeepTheRecordedOrderAndPairWithTheStateOfTheirMoment() throws IOException {
        List<IngestJob.RecordingResult> results = new java.util.ArrayList<>();
        RecordingRows rows = ingest(RobotProfile.builder().build(), results);
        EpisodeRow e = rows.episodes().get(0);
        assertEquals("/cam", e.masterTopic());
        assertEquals(FRAMES, rows.frames().size());
        try (LocatorReader reader = new LocatorReader()) {
            for (FrameRow f : rows.frames()) {
                int i = f.frameIndex();
                assertEquals(i, cameraFrame(reader, f), "frame row " + i + " shows camera frame " + i);
                assertEquals(T0 + i * 50 * MS + 3 * MS, f.timestampNs(), "frame " + i + ": the camera's log time");
                assertEquals(i * 0.05, f.state()[0], 1e-9, "frame " + i + ": the state captured 3 ms before it");
                StreamMatch m = match(f, "/joint_states");
                assertTrue(m.matched());
                // the stored residual is the stored pairing's: the paired state's time (from its value) - frame time
                long stateTime = T0 + Math.round(f.state()[0] * 1e9);
                assertEquals(stateTime - f.timestampNs(), m.residualNs().longValue(), "frame " + i);
                assertEquals(-3 * MS, m.residualNs().longValue());
            }
        }
        // frame 40 (after the jump) is paired with the state of 2.0 s, not the one of 0.0 s its stamp says
        assertEquals(2.0, rows.frames().get(40).state()[0], 1e-9);

        JsonNode meta = FrameSkipsIngestTest.JSON.readTree(e.metadataJson());
        JsonNode ds = meta.path(IngestJob.STAMP_DISCONTINUITIES);
        assertEquals(1, ds.size(), meta.toString());
        JsonNode d = ds.get(0);
        assertEquals("/cam", d.path("topic").asText());
        assertEquals(40, d.path("index").asInt());
        assertEquals(T0 + 2_003 * MS, d.path("log_time_ns").asLong());
        assertEquals(T0, d.path("stamp_ns").asLong());
        assertEquals(T0 + 1_950 * MS, d.path("previous_stamp_ns").asLong());
        assertEquals(-1_950 * MS, d.path("stamp_step_ns").asLong());
        assertEquals(50 * MS, d.path("log_step_ns").asLong());
        assertEquals(-2_000 * MS, d.path("jump_ns").asLong());
        assertEquals("backward", d.path("direction").asText());
        assertEquals("log_time", d.path("timeline").asText());

        // quality: 20 Hz, largest gap one period, no camera_gap; the stamps did go back once (a warning)
        JsonNode cam = FrameSkipsIngestTest.stream(e, "/cam");
        assertEquals(20.0, cam.path("measuredRateHz").asDouble(), 1e-9, "79 periods in 3.95 s");
        assertEquals(50 * MS, cam.path("largestGapNs").asLong());
        assertEquals(1, cam.path("monotonicityViolations").asInt());
        assertEquals(3 * MS, FrameSkipsIngestTest.stream(e, "/joint_states").path("residualP99Ns").asLong());
        assertFalse(e.qualityFlags().contains("camera_gap"), e.qualityFlags().toString());
        assertEquals(List.of("non_monotonic_stamps"), e.qualityFlags());
        assertEquals("warn", e.qualityStatus());

        // the run's timestamp issues name the stream, the frame and the jump, and the timeline chosen
        IngestJob.TimestampIssue issue = results.get(0).timestampIssues().stream()
                .filter(t -> t.topic().equals("/cam")).findFirst().orElseThrow();
        assertEquals(List.of("stamp discontinuities"), issue.findings());
        assertEquals("80 msgs, header 0, log 80, stamp discontinuities: 1 at [40 (stamps -2.000 s)], timeline: log times",
                issue.summary());
        assertTrue(results.get(0).timestampIssues().stream().noneMatch(t -> t.topic().equals("/joint_states")));
    }

    @Test
    void aProfileCanForceTheStampsTimeline() throws IOException {
        RecordingRows rows = ingest(RobotProfile.builder().timeline("/cam", StreamTimeline.STAMPS).build(),
                new java.util.ArrayList<>());
        EpisodeRow e = rows.episodes().get(0);
        try (LocatorReader reader = new LocatorReader()) {
            // sorted by stamp: frames 0 and 40 share the stamp T0 (input order kept), then 1 and 41, ...
            assertEquals(0, cameraFrame(reader, rows.frames().get(0)));
            assertEquals(40, cameraFrame(reader, rows.frames().get(1)));
            assertEquals(1, cameraFrame(reader, rows.frames().get(2)));
        }
        FrameRow f1 = rows.frames().get(1);
        assertEquals(T0, f1.timestampNs());
        assertEquals(0.0, f1.state()[0], 1e-9, "camera frame 40, captured at 2.0 s, paired with the state of 0.0 s");
        assertEquals(0L, match(f1, "/joint_states").residualNs().longValue(), "a residual of 0 for the wrong moment");
        JsonNode cam = FrameSkipsIngestTest.stream(e, "/cam");
        assertEquals(79 / 1.95, cam.path("measuredRateHz").asDouble(), 1e-9);
        assertEquals(2_050 * MS, cam.path("largestGapNs").asLong(), "from the last stamp (1.95 s) to the end (4 s)");
        assertTrue(e.qualityFlags().contains("camera_gap"), e.qualityFlags().toString());
        JsonNode d = FrameSkipsIngestTest.JSON.readTree(e.metadataJson()).path(IngestJob.STAMP_DISCONTINUITIES).get(0);
        assertEquals(40, d.path("index").asInt());
        assertEquals("stamps", d.path("timeline").asText());
    }

    /** A profile naming a topic no recording of the run has is bad input: nothing is committed (like --policy). */
    @Test
    void aProfileTopicNoRecordingHasCommitsNothing() {
        FrameSkipsIngestTest.Rows sink = new FrameSkipsIngestTest.Rows();
        RobotProfile p = RobotProfile.builder().role("/cam", StreamRole.CAMERA).role("/nope", StreamRole.STATE).build();
        io.flywheel.error.NotFoundException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.flywheel.error.NotFoundException.class, () -> IngestJob.run(sink, List.of(file),
                        IngestOptions.builder().profile(p).build(), IngestJob.AlignConfig.defaults(), RuleSet.defaults(),
                        line -> { }));
        assertTrue(e.getMessage().contains("topic '/nope' (state): no recording of this run has that stream (streams:"
                + " /cam, /joint_states); nothing was committed"), e.getMessage());
        assertEquals(List.of(), sink.committed);
    }
}
