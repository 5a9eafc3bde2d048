package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.image.DecodedImage;
import io.flywheel.enrich.image.GreyImage;
import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.testkit.SharedData;

/**
 * A recording whose camera is a foxglove.CompressedVideo topic goes through ingest and enrich like a JPEG camera.
 *
 * <p>Known truth: the ten real 640x480 WidowX tic-tac-toe frames, each shown twice (20 frames, a 20 Hz camera over a
 * 10 Hz scene), encoded to H.264 Annex B with a keyframe every 6 frames (keyframes at 0, 6, 12, 18). The MCAP starts
 * at frame 2 (a recording that starts mid-GOP): 18 video messages, the first four (frames 2..5) before the first
 * keyframe, plus a JointState topic. Ingest must make one frame row per video message (the video camera is the
 * master clock) whose locator is the message's {@code data} with format h264 and whose time is the message's
 * {@code timestamp}; enrich must leave frames 2..5 with the decode error "before the first keyframe" and give
 * frames 6..19 the pHash of their source JPEG within a few bits, and a 320x240 hot JPEG.
 */
class VideoCameraIngestEnrichTest {
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final int FRAMES = 20;
    private static final int FIRST = 2;
    private static final int GOP = 6;
    private static final String VIDEO_SCHEMA = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n";
    private static final String JSON_SCHEMA = "{\"title\":\"foxglove.CompressedVideo\",\"type\":\"object\",\"properties\":{"
            + "\"timestamp\":{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\"},\"nsec\":{\"type\":\"integer\"}}},"
            + "\"frame_id\":{\"type\":\"string\"},\"data\":{\"type\":\"string\",\"contentEncoding\":\"base64\"},"
            + "\"format\":{\"type\":\"string\"}}}";
    private static final String JOINT_SCHEMA = "std_msgs/Header header\nstring[] name\nfloat64[] position\n"
            + "float64[] velocity\nfloat64[] effort\n================================================================================\n"
            + "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";

    private static List<EncodedUnit> units;
    /** pHash of each source frame's JPEG (grey from libjpeg, as enrich computes it for a JPEG camera). */
    private static long[] sourceHash;

    private static Path jpeg(int frame) {
        return SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move" + frame / 2 + ".jpg");
    }

    @BeforeAll
    static void encode() throws Exception {
        List<RgbImage> ten = Frames.tictactoe(10);
        units = new ArrayList<>();
        try (AnnexBEncoder enc = AnnexBEncoder.open(640, 480,
                EncoderOptions.builder().fps(20).keyframeInterval(GOP).build())) {
            for (int i = 0; i < FRAMES; i++) {
                units.addAll(enc.encode(ten.get(i / 2)));
            }
            units.addAll(enc.finish());
        }
        assertEquals(FRAMES, units.size(), "one access unit per frame");
        for (EncodedUnit u : units) {
            assertEquals(u.frameIndex() % GOP == 0, u.keyframe(), "unit " + u.frameIndex());
        }
        sourceHash = new long[FRAMES];
        try (ImageDecoder dec = new ImageDecoder()) {
            for (int i = 0; i < FRAMES; i++) {
                GreyImage y = dec.decodeGrey(Files.readAllBytes(jpeg(i)), ImageFormat.JPEG, 1, "source " + i);
                sourceHash[i] = PerceptualHash.of(y);
            }
        }
    }

    /** Log time of video frame i (20 Hz); its timestamp field is 3 ms earlier (capture before logging). */
    private static long logTime(int i) {
        return T0 + i * 50_000_000L;
    }

    private static long stamp(int i) {
        return logTime(i) - 3_000_000L;
    }

    private static Path writeMcap(Path file, boolean json) throws IOException {
        try (McapWriter w = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD).build(file)) {
            int video = json
                    ? w.registerChannel("/cam/video", "json", w.registerSchema("foxglove.CompressedVideo", "jsonschema",
                            JSON_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of())
                    : w.registerChannel("/cam/video", "cdr", w.registerSchema("foxglove_msgs/msg/CompressedVideo",
                            "ros2msg", VIDEO_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            int joints = w.registerChannel("/joint_states", "cdr", w.registerSchema("sensor_msgs/msg/JointState",
                    "ros2msg", JOINT_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            int seq = 0;
            for (int i = FIRST; i < FRAMES; i++) {
                byte[] data = units.get(i).data();
                long s = stamp(i);
                byte[] msg = json
                        ? ("{\"timestamp\":{\"sec\":" + s / 1_000_000_000L + ",\"nsec\":" + s % 1_000_000_000L
                                + "},\"frame_id\":\"over_shoulder\",\"data\":\"" + Base64.getEncoder().encodeToString(data)
                                + "\",\"format\":\"h264\"}").getBytes(StandardCharsets.UTF_8)
                        : new CdrWriter(data.length + 64).time(s).string("over_shoulder")
                                .byteSequence(data, 0, data.length).string("h264").toByteArray();
                w.writeMessage(video, seq++, logTime(i), logTime(i), msg);
                // joint states at 40 Hz, the first joint's position = the video frame index
                for (int h = 0; h < 2; h++) {
                    long t = logTime(i) + h * 25_000_000L;
                    byte[] js = new CdrWriter(128).header(t, "base").stringSequence(List.of("j1", "j2"))
                            .float64Sequence(new double[] {i + h * 0.5, -i}).float64Sequence(new double[0])
                            .float64Sequence(new double[0]).toByteArray();
                    w.writeMessage(joints, seq++, t, t, js);
                }
            }
        }
        return file;
    }

    @ParameterizedTest
    @ValueSource(strings = {"cdr", "json"})
    void videoCameraIsIngestedAndEnrichedFromTheFirstKeyframe(String encoding, @TempDir Path tmp) throws IOException {
        Path mcap = writeMcap(tmp.resolve("video-" + encoding + ".mcap"), encoding.equals("json"));
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            IngestJob.Result ingest = IngestJob.run(lake, List.of(mcap), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            assertEquals(FRAMES - FIRST, ingest.frames(), "one frame per video message");
            List<FrameRow> rows = frames(lake);
            assertEquals(FRAMES - FIRST, rows.size());
            for (int r = 0; r < rows.size(); r++) {
                int i = FIRST + r;
                FrameRow f = rows.get(r);
                assertEquals(stamp(i), f.timestampNs(), "frame " + i + " is timed by the message's timestamp field");
                assertEquals(1, f.images().size());
                ImageLocator l = f.images().get(0);
                assertEquals("/cam/video", l.topic());
                assertEquals("h264", l.format());
                assertEquals(mcap.toAbsolutePath().normalize().toUri().toString(), l.rawUri());
                assertEquals(encoding.equals("json") ? "zstd+base64" : "zstd", l.compression());
                long b64 = 4L * ((units.get(i).data().length + 2) / 3);
                assertEquals(encoding.equals("json") ? b64 : units.get(i).data().length, l.length(),
                        "the locator spans the access unit of frame " + i);
                if (r > 0) { // frame 2 is stamped 3 ms before the first joint state
                    assertNotNull(f.state(), "frame " + i);
                    assertEquals(i, f.state()[0], 0.5, "joint state aligned to frame " + i);
                }
            }

            EnrichJob.Result r = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            int before = GOP - FIRST; // frames 2..5
            assertEquals(FRAMES - FIRST, r.frames());
            assertEquals(before, r.decodeErrors());
            assertEquals(FRAMES - GOP, r.images());

            List<FrameRow> enriched = frames(lake);
            int maxBits = 0;
            int[] bits = new int[FRAMES];
            try (ImageDecoder dec = new ImageDecoder()) {
                for (int k = 0; k < enriched.size(); k++) {
                    int i = FIRST + k;
                    FrameRow f = enriched.get(k);
                    ImageEnrichment e = f.enrichment().get(0);
                    if (i < GOP) {
                        assertNotNull(e.decodeError(), "frame " + i);
                        assertTrue(e.decodeError().contains("before the first keyframe"), e.decodeError());
                        assertNull(e.phash());
                        continue;
                    }
                    assertNull(e.decodeError(), "frame " + i);
                    assertNotNull(e.sharpness());
                    assertTrue(e.sharpness() > 0, "frame " + i + " sharpness " + e.sharpness());
                    bits[i] = PerceptualHash.hammingDistance(e.phash(), sourceHash[i]);
                    maxBits = Math.max(maxBits, bits[i]);
                    assertTrue(bits[i] <= 4, "frame " + i + ": pHash of the decoded frame is " + bits[i]
                            + " bits from its source JPEG's");
                    DecodedImage hot = dec.decode(e.hotJpeg(), ImageFormat.JPEG, "hot copy of frame " + i);
                    assertEquals(320, hot.width(), "frame " + i);
                    assertEquals(240, hot.height(), "frame " + i);
                    assertEquals(640, f.images().get(0).width());
                    assertEquals(480, f.images().get(0).height());
                    if (i % 2 == 1 && i - 1 >= GOP) {
                        // the same source picture as the frame before: a tiny thumbnail difference
                        assertNotNull(e.meanAbsDiff(), "frame " + i);
                        assertTrue(e.meanAbsDiff() < 2.0, "frame " + i + " mean abs diff " + e.meanAbsDiff());
                    }
                }
            } catch (io.flywheel.enrich.image.ImageDecodeException ex) {
                throw new AssertionError(ex);
            }
            System.out.printf("video camera (%s): %d frames, %d before the first keyframe, %d enriched; pHash distance to"
                    + " the source JPEG max %d bits, per frame %s%n", encoding, enriched.size(), before, r.images(), maxBits,
                    java.util.Arrays.toString(java.util.Arrays.copyOfRange(bits, GOP, FRAMES)));
        }
    }

    private static List<FrameRow> frames(Lake lake) {
        try (LakeTable t = lake.table("frames")) {
            List<FrameRow> f = new ArrayList<>(t.frames(ScanRequest.all()));
            f.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
            return f;
        }
    }
}
