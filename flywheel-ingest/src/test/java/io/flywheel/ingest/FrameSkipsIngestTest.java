package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * Recordings with a frame-skip channel ({@link FrameSkips}), as the fleet gateway writes a live stream: two 30 Hz
 * cameras over 3 s (frames 0..90, header stamps 5 ms before the log times) and 100 Hz joint states, with nominal
 * rates 30 and 100 Hz. /cam_a (the master) skipped frames 10-39 (30 frames, 1 s, each repeating frame 9), /cam_b
 * frames 50-59 (repeating 49). In the second recording /cam_a also lost frames 70-85 (16 frames, not skipped: a real
 * gap of 17 frame periods, 567 ms). Default quality rules: the skips alone pass; the loss fails camera_gap (over
 * 500 ms), low_fps_camera (24.7 Hz, under 90% of 30) and dropped_messages (16 of 91 missing, over 5%; with the skips
 * counted as missing it would be 46 of 91, heavy_drops).
 */
class FrameSkipsIngestTest {
    static final long T0 = 1_767_225_600_000_000_000L;
    static final ObjectMapper JSON = new ObjectMapper();

    static long frameTime(int i) {
        return T0 + Math.round(i * 1e9 / 30);
    }

    static Path write(Path file, boolean lose) throws IOException {
        try (McapWriter w = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD).build(file)) {
            int img = w.registerSchema(Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.COMPRESSED_IMAGE.getBytes(StandardCharsets.UTF_8));
            int js = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8));
            int a = w.registerChannel("/cam_a", "cdr", img, Map.of());
            int b = w.registerChannel("/cam_b", "cdr", img, Map.of());
            int j = w.registerChannel("/joint_states", "cdr", js, Map.of());
            int sk = w.registerChannel(FrameSkips.TOPIC, FrameSkips.MESSAGE_ENCODING, w.registerSchema(
                    FrameSkips.SCHEMA_NAME, FrameSkips.SCHEMA_ENCODING, FrameSkips.schema()), Map.of());
            CdrWriter cdr = new CdrWriter(1024);
            byte[] jpeg = {(byte) 0xFF, (byte) 0xD8, 1, 2, 3, (byte) 0xFF, (byte) 0xD9};
            for (int i = 0; i <= 300; i++) {
                long t = T0 + i * 10_000_000L;
                byte[] m = cdr.reset().header(t, "base").stringSequence(List.of("j0", "j1"))
                        .float64Sequence(new double[] {i * 0.01, -i * 0.01}).float64Sequence(new double[0])
                        .float64Sequence(new double[0]).toByteArray();
                w.writeMessage(j, i, t, t, m);
            }
            for (int i = 0; i <= 90; i++) {
                long t = frameTime(i);
                byte[] m = cdr.reset().header(t - 5_000_000L, "cam").string("jpeg").byteSequence(jpeg, 0, jpeg.length)
                        .toByteArray();
                if (i >= 10 && i < 40) {
                    w.writeMessage(sk, i, t, t, FrameSkips.encode(new FrameSkips.Skip("/cam_a", t, frameTime(9), 2, 4)));
                } else if (!lose || i < 70 || i > 85) {
                    w.writeMessage(a, i, t, t, m);
                }
                if (i >= 50 && i < 60) {
                    w.writeMessage(sk, i, t, t, FrameSkips.encode(new FrameSkips.Skip("/cam_b", t, frameTime(49), 0, 4)));
                } else {
                    w.writeMessage(b, i, t, t, m);
                }
            }
        }
        return file;
    }

    /** Keeps the rows of every commit. */
    static final class Rows implements RowSink {
        final List<RecordingRows> committed = new ArrayList<>();

        @Override
        public Set<String> committedRawFiles() {
            return Set.of();
        }

        @Override
        public OptionalLong commit(RecordingRows rows) {
            committed.add(rows);
            return OptionalLong.of(committed.size());
        }
    }

    static RecordingRows ingest(Path file) throws IOException {
        Rows sink = new Rows();
        RobotProfile p = RobotProfile.builder().nominalRateHz("/cam_a", 30).nominalRateHz("/cam_b", 30)
                .nominalRateHz("/joint_states", 100).build();
        IngestJob.Result r = IngestJob.run(sink, List.of(file), IngestOptions.builder().profile(p).build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(List.of(), r.failed());
        return sink.committed.get(0);
    }

    static JsonNode stream(EpisodeRow e, String topic) throws IOException {
        for (JsonNode s : JSON.readTree(e.qualityMetricsJson()).path("metrics").path("streams")) {
            if (s.path("stream").asText().equals(topic)) {
                return s;
            }
        }
        throw new AssertionError("no metrics of " + topic);
    }

    @Test
    void skippedFramesAreCountedAsReceivedNotAsFrameRows(@TempDir Path tmp) throws IOException {
        RecordingRows rows = ingest(write(tmp.resolve("skips.mcap"), false));
        EpisodeRow e = rows.episodes().get(0);
        assertEquals("/cam_a", e.masterTopic());
        assertEquals(61L, e.frameCount(), "91 frames less the 30 skipped on the master camera");
        assertEquals(61, rows.frames().size());
        assertEquals("pass", e.qualityStatus(), e.qualityFlags() + " " + e.qualityMetricsJson());
        JsonNode a = stream(e, "/cam_a");
        assertEquals(61, a.path("messageCount").asLong());
        assertEquals(30, a.path("skippedFrames").asLong());
        assertEquals(0.0, a.path("dropRatio").asDouble(), 1e-12);
        assertEquals(frameTime(2) - frameTime(1), a.path("largestGapNs").asLong(), "one frame period, 33.3 ms");
        assertEquals(30.0, a.path("measuredRateHz").asDouble(), 1e-6);
        assertEquals(10, stream(e, "/cam_b").path("skippedFrames").asLong());
        assertEquals(0, stream(e, "/joint_states").path("skippedFrames").asLong());
        JsonNode meta = JSON.readTree(e.metadataJson());
        assertEquals(30, meta.path("skipped_frames").path("/cam_a").asInt());
        assertEquals(10, meta.path("skipped_frames").path("/cam_b").asInt());
        assertFalse(meta.path("skipped_frames").has(FrameSkips.TOPIC));
        // the master frames at /cam_b's skipped frames 50..59 have no /cam_b image, and say why
        int skippedFlags = 0;
        for (FrameRow f : rows.frames()) {
            long t = f.timestampNs() + 5_000_000L; // back to the log time of the master frame
            boolean bSkipped = t >= frameTime(50) && t <= frameTime(59);
            assertEquals(bSkipped, f.flags().contains("skipped:/cam_b"), f.frameIndex() + " " + f.flags());
            assertFalse(f.flags().contains("unmatched:/cam_b"), f.frameIndex() + " " + f.flags());
            assertEquals(bSkipped ? 1 : 2, f.images().size());
            skippedFlags += bSkipped ? 1 : 0;
        }
        assertEquals(10, skippedFlags);
        // the channel is a record of skips, not a stream (raw_files.topics lists the streams)
        assertTrue(rows.rawFiles().get(0).topicsJson().contains("/cam_b"));
        assertFalse(rows.rawFiles().get(0).topicsJson().contains(FrameSkips.TOPIC));
        for (JsonNode s : JSON.readTree(e.qualityMetricsJson()).path("metrics").path("streams")) {
            assertFalse(s.path("stream").asText().equals(FrameSkips.TOPIC));
        }
    }

    @Test
    void aRealGapBesideTheSkipsIsStillReported(@TempDir Path tmp) throws IOException {
        RecordingRows rows = ingest(write(tmp.resolve("lost.mcap"), true));
        EpisodeRow e = rows.episodes().get(0);
        assertEquals(45L, e.frameCount(), "91 - 30 skipped - 16 lost");
        JsonNode a = stream(e, "/cam_a");
        assertEquals(45, a.path("messageCount").asLong());
        assertEquals(frameTime(86) - frameTime(69), a.path("largestGapNs").asLong(), "the lost stretch, 567 ms");
        assertEquals(16 / 91.0, a.path("dropRatio").asDouble(), 1e-12, "the 16 lost of 91; the 30 skipped are not");
        assertEquals((75 - 1) / 3.0, a.path("measuredRateHz").asDouble(), 1e-6, "75 frames sent or skipped in 3 s");
        assertEquals("fail", e.qualityStatus());
        assertEquals(List.of("low_fps_camera", "camera_gap", "dropped_messages"), e.qualityFlags());
    }

    @Test
    void skipMessagesRoundTrip() throws IOException {
        FrameSkips.Skip s = new FrameSkips.Skip("/a \"quoted\" topic", 1_767_225_600_033_333_333L,
                1_767_225_600_000_000_000L, 3, 4);
        byte[] m = FrameSkips.encode(s);
        assertEquals("{\"topic\":\"/a \\\"quoted\\\" topic\",\"log_time\":{\"sec\":1767225600,\"nsec\":33333333},"
                + "\"repeats_log_time\":{\"sec\":1767225600,\"nsec\":0},\"hamming_distance\":3,\"threshold\":4}",
                new String(m, StandardCharsets.UTF_8));
        assertEquals(s, FrameSkips.decode(ByteBuffer.wrap(m), "x.mcap", 0));
        MalformedDataException bad = org.junit.jupiter.api.Assertions.assertThrows(MalformedDataException.class,
                () -> FrameSkips.decode(ByteBuffer.wrap("{\"topic\":\"/a\"}".getBytes(StandardCharsets.UTF_8)),
                        "x.mcap", 120));
        assertEquals("x.mcap at byte 120: /flywheel/frame_skips message: \"log_time\" is not {\"sec\", \"nsec\"}",
                bad.getMessage());
    }
}
