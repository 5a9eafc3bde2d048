package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.RgbImage;
import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * Known truth: the ten real 640x480 WidowX tic-tac-toe frames encoded as H.264 Annex B (keyframe
 * every 4 frames), written with our McapWriter as foxglove.CompressedVideo messages with jittered
 * log times, then decoded from the MCAP: every frame comes back, with its message's log time, and
 * looks like its source. Corrupt and truncated access units fail naming the message.
 */
class McapVideoTest {
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final String ROS2_SCHEMA = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n";
    private static final String JSON_SCHEMA = "{\"title\":\"foxglove.CompressedVideo\",\"type\":\"object\",\"properties\":{"
            + "\"timestamp\":{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\"},\"nsec\":{\"type\":\"integer\"}}},"
            + "\"frame_id\":{\"type\":\"string\"},\"data\":{\"type\":\"string\",\"contentEncoding\":\"base64\"},"
            + "\"format\":{\"type\":\"string\"}}}";

    private static List<RgbImage> src;
    private static List<EncodedUnit> units;

    @BeforeAll
    static void encode() throws Exception {
        src = Frames.tictactoe(10);
        units = new ArrayList<>();
        try (AnnexBEncoder enc = AnnexBEncoder.open(640, 480, EncoderOptions.builder().fps(10).keyframeInterval(4).build())) {
            for (RgbImage img : src) {
                units.addAll(enc.encode(img));
            }
            units.addAll(enc.finish());
        }
        assertEquals(10, units.size(), "one access unit per frame");
        for (EncodedUnit u : units) {
            assertEquals(u.frameIndex() % 4 == 0, u.keyframe(), "unit " + u.frameIndex());
            assertEquals(u.keyframe(), AnnexB.isKeyframe(VideoCodec.H264, u.data()), "IDR NAL in unit " + u.frameIndex());
            assertEquals(u.keyframe(), AnnexB.hasSequenceParameterSet(VideoCodec.H264, u.data()), "SPS in keyframes only");
        }
    }

    /** Log time of unit i: nominal 10 Hz plus a jitter of (i % 3) * 1.234567 ms, so nominal times would not match. */
    private static long logTime(int i) {
        return T0 + i * 100_000_000L + (i % 3) * 1_234_567L;
    }

    private static byte[] cdr(long stamp, byte[] data) {
        return new CdrWriter(data.length + 64).time(stamp).string("camera_optical").byteSequence(data, 0, data.length)
                .string("h264").toByteArray();
    }

    private static Path writeMcap(Path file, List<byte[]> datas, int firstUnit, boolean json) throws Exception {
        try (McapWriter w = McapWriter.builder().profile("").compression(McapWriter.Compression.ZSTD).build(file)) {
            int ch = json
                    ? w.registerChannel("/cam/video", "json",
                            w.registerSchema("foxglove.CompressedVideo", "jsonschema", JSON_SCHEMA.getBytes(StandardCharsets.UTF_8)),
                            Map.of())
                    : w.registerChannel("/cam/video", "cdr",
                            w.registerSchema("foxglove_msgs/msg/CompressedVideo", "ros2msg",
                                    ROS2_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            for (int k = 0; k < datas.size(); k++) {
                int i = firstUnit + k;
                long t = logTime(i);
                byte[] payload = json
                        ? ("{\"timestamp\":{\"sec\":" + t / 1_000_000_000L + ",\"nsec\":" + t % 1_000_000_000L
                                + "},\"frame_id\":\"camera_optical\",\"data\":\"" + Base64.getEncoder().encodeToString(datas.get(k))
                                + "\",\"format\":\"h264\"}").getBytes(StandardCharsets.UTF_8)
                        : cdr(t, datas.get(k));
                w.writeMessage(ch, i, t, t, payload);
            }
        }
        return file;
    }

    private static List<byte[]> datas(int from) {
        return units.subList(from, units.size()).stream().map(EncodedUnit::data).toList();
    }

    @Test
    void everyFrameComesBackWithItsLogTime(@TempDir Path tmp) throws Exception {
        Path mcap = writeMcap(tmp.resolve("video.mcap"), datas(0), 0, false);
        List<VideoFrame> out = new ArrayList<>();
        McapVideo.Summary s = McapVideo.decodeTopic(mcap, "/cam/video", DecoderOptions.defaults(), out::add);
        assertEquals(new McapVideo.Summary("/cam/video", VideoCodec.H264, 10, 10, 0, 640, 480), s);
        assertEquals(10, out.size());
        double minPsnr = Double.POSITIVE_INFINITY;
        for (int i = 0; i < 10; i++) {
            VideoFrame f = out.get(i);
            assertEquals(logTime(i), f.timestampNs(), "frame " + i + " carries its message's log time");
            assertEquals(i % 4 == 0, f.keyframe(), "frame " + i);
            minPsnr = Math.min(minPsnr, Frames.psnr(src.get(i), f.image()));
        }
        System.out.printf("mcap h264 640x480: %d frames, %d bytes of access units, min PSNR %.2f dB%n", out.size(),
                units.stream().mapToInt(u -> u.data().length).sum(), minPsnr);
        assertTrue(minPsnr > 30.0, "min PSNR " + minPsnr);
    }

    @Test
    void recordingStartingMidGopSkipsToTheFirstKeyframe(@TempDir Path tmp) throws Exception {
        // JSON encoding (base64 data) this time; units 2 and 3 precede the keyframe at unit 4.
        Path mcap = writeMcap(tmp.resolve("midgop.mcap"), datas(2), 2, true);
        List<VideoFrame> out = new ArrayList<>();
        McapVideo.Summary s = McapVideo.decodeTopic(mcap, "/cam/video", DecoderOptions.defaults(), out::add);
        assertEquals(8, s.messages());
        assertEquals(2, s.skippedBeforeKeyframe());
        assertEquals(6, s.frames());
        for (int k = 0; k < out.size(); k++) {
            assertEquals(logTime(4 + k), out.get(k).timestampNs());
            assertTrue(Frames.psnr(src.get(4 + k), out.get(k).image()) > 30.0, "frame " + (4 + k));
        }
    }

    @Test
    void truncatedAccessUnitNamesTheMessage(@TempDir Path tmp) throws Exception {
        List<byte[]> d = new ArrayList<>(datas(0));
        byte[] five = d.get(5);
        d.set(5, Arrays.copyOf(five, five.length / 2));
        Path mcap = writeMcap(tmp.resolve("truncated.mcap"), d, 0, false);
        List<VideoFrame> out = new ArrayList<>();
        VideoFormatException e = assertThrows(VideoFormatException.class,
                () -> McapVideo.decodeTopic(mcap, "/cam/video", DecoderOptions.defaults(), out::add));
        System.out.println("truncated: " + e.getMessage());
        assertTrue(e.getMessage().contains("truncated.mcap topic /cam/video"), e.getMessage());
        assertTrue(e.getMessage().contains("access unit 5 (time " + logTime(5) + " ns)"), e.getMessage());
        assertEquals(5, out.size(), "the five frames before the bad message were delivered");
    }

    @Test
    void bytesThatAreNotAnnexBAreRejectedBeforeTheDecoder(@TempDir Path tmp) throws Exception {
        List<byte[]> d = new ArrayList<>(datas(0));
        byte[] avcc = d.get(3).clone();
        // Replace the 4-byte start code by a big-endian length, as MP4 samples have.
        int len = avcc.length - 4;
        avcc[0] = (byte) (len >>> 24);
        avcc[1] = (byte) (len >>> 16);
        avcc[2] = (byte) (len >>> 8);
        avcc[3] = (byte) len;
        d.set(3, avcc);
        Path mcap = writeMcap(tmp.resolve("avcc.mcap"), d, 0, false);
        VideoFormatException e = assertThrows(VideoFormatException.class,
                () -> McapVideo.decodeTopic(mcap, "/cam/video", DecoderOptions.defaults(), f -> { }));
        assertTrue(e.getMessage().contains("access unit 3 (time " + logTime(3) + " ns)"), e.getMessage());
        assertTrue(e.getMessage().contains("expected an Annex B byte stream"), e.getMessage());
        assertTrue(e.getMessage().contains("length-prefixed"), e.getMessage());
    }

    @Test
    void corruptKeyframeFailsCleanlyAndTheDecoderStaysUsable() throws Exception {
        byte[] key = units.get(0).data().clone();
        // Overwrite the middle of the IDR slice with noise (keeping the NAL headers).
        java.util.Random rnd = new java.util.Random(7);
        for (int i = key.length / 2; i < key.length / 2 + 200; i++) {
            key[i] = (byte) rnd.nextInt(256);
        }
        try (AnnexBDecoder dec = AnnexBDecoder.open(VideoCodec.H264, "corrupt-test")) {
            VideoFormatException e = assertThrows(VideoFormatException.class, () -> dec.decode(key, 42L));
            assertTrue(e.getMessage().startsWith("corrupt-test message/access unit 0 (time 42 ns)"), e.getMessage());
            // The next keyframe recovers.
            List<VideoFrame> f = dec.decode(units.get(4).data(), 400L);
            assertEquals(1, f.size());
            assertEquals(400L, f.get(0).timestampNs());
            assertTrue(Frames.psnr(src.get(4), f.get(0).image()) > 30.0);
        }
    }

    @Test
    void unsupportedFormatIsNamed(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("vp9.mcap");
        try (McapWriter w = McapWriter.builder().profile("").build(file)) {
            int ch = w.registerChannel("/cam/video", "cdr", w.registerSchema("foxglove_msgs/msg/CompressedVideo", "ros2msg",
                    ROS2_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            byte[] data = units.get(0).data();
            w.writeMessage(ch, 0, T0, T0, new CdrWriter(data.length + 64).time(T0).string("cam")
                    .byteSequence(data, 0, data.length).string("vp9").toByteArray());
        }
        VideoFormatException e = assertThrows(VideoFormatException.class,
                () -> McapVideo.decodeTopic(file, "/cam/video", DecoderOptions.defaults(), f -> { }));
        assertTrue(e.getMessage().contains("message 0 (log time " + T0 + " ns)"), e.getMessage());
        assertTrue(e.getMessage().contains("'vp9'"), e.getMessage());
    }
}
