package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.image.ImageFormat;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.rows.RawFileRow;
import io.flywheel.lake.ScanRequest;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.testkit.Ros1BagWriter;
import io.flywheel.testkit.SharedData;

/**
 * A video camera faster than the master clock, in MCAP, in a ROS 1 bag and as a sidecar MP4.
 *
 * <p>Known truth: 60 video frames at 30 Hz, each a 320x240 window of a real 640x480 WidowX tic-tac-toe photo
 * (board state {@code move(i / 6)}, window at x = 5i, y = 2i: the camera pans, so every frame differs from the one
 * before), H.264 with a keyframe every 30 frames (units 0 and 30, and where the encoder sees a scene cut). The master camera is a 10 Hz JPEG camera (real
 * JPEG files, cycled); its frame j at T0 + 100 ms j is aligned (nearest, 20 ms) to video frame 3j at T0 + 33.3 ms 3j.
 * So a frame row holds every third access unit only; the P-frames in between are still needed to decode it. Every
 * enriched video image must decode without error and have the pHash of its source window (computed the same way,
 * from the raw RGB) within {@link #MAX_BITS} bits.
 */
class FastVideoCameraTest {
    static final long T0 = 1_700_000_000_000_000_000L;
    static final int VIDEO = 60;
    static final int GOP = 30;
    static final int MASTER = 20;
    static final int MAX_BITS = 6;
    static final long VIDEO_PERIOD = 100_000_000L / 3;
    static final String VIDEO_SCHEMA = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n";
    static final String IMAGE_SCHEMA = "std_msgs/Header header\nstring format\nuint8[] data\n"
            + "================================================================================\n"
            + "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
    static final String ROS1_VIDEO_DEF = "time timestamp\nstring frame_id\nuint8[] data\nstring format\n";
    static final String ROS1_IMAGE_DEF = "Header header\nstring format\nuint8[] data\n"
            + "================================================================================\n"
            + "MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";

    static List<RgbImage> source;
    static long[] sourceHash;
    static List<EncodedUnit> units;
    static byte[][] jpegs;

    @BeforeAll
    static void frames() throws Exception {
        List<RgbImage> photos = Frames.tictactoe(10);
        source = new ArrayList<>();
        for (int i = 0; i < VIDEO; i++) {
            source.add(crop(photos.get(i / 6), 5 * i, 2 * i, 320, 240));
        }
        sourceHash = new long[VIDEO];
        try (FrameAnalyzer a = new FrameAnalyzer(FrameAnalyzer.Options.defaults())) {
            for (int i = 0; i < VIDEO; i++) {
                sourceHash[i] = a.analyze(source.get(i).pixels(), ImageFormat.raw("rgb8", 320, 240), "source " + i).phash();
            }
        }
        units = new ArrayList<>();
        try (AnnexBEncoder enc = AnnexBEncoder.open(320, 240, EncoderOptions.builder().fps(30).keyframeInterval(GOP).build())) {
            for (RgbImage f : source) {
                units.addAll(enc.encode(f));
            }
            units.addAll(enc.finish());
        }
        assertEquals(VIDEO, units.size());
        // unit 0 is a keyframe; the encoder may add one at a scene cut (openh264 does when the board changes)
        assertTrue(units.get(0).keyframe());
        long keys = units.stream().filter(EncodedUnit::keyframe).count();
        assertTrue(keys <= 6, keys + " keyframes: the video is mostly P-frames");
        List<String> names = List.of("td_move0.jpg", "td_move3.jpg", "td_move4.jpg", "td_move5.jpg", "td_move6.jpg");
        jpegs = new byte[names.size()][];
        for (int k = 0; k < names.size(); k++) {
            jpegs[k] = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/top_down_cam/" + names.get(k)));
        }
    }

    static RgbImage crop(RgbImage src, int x0, int y0, int w, int h) {
        byte[] px = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            System.arraycopy(src.pixels(), ((y0 + y) * src.width() + x0) * 3, px, y * w * 3, w * 3);
        }
        return new RgbImage(w, h, px);
    }

    static long videoTime(int i) {
        return T0 + i * VIDEO_PERIOD;
    }

    static long masterTime(int j) {
        return T0 + j * 100_000_000L;
    }

    /** An MCAP: the JPEG master camera (channel 1), and the video camera unless {@code withVideo} is false. */
    static Path writeMcap(Path file, boolean withVideo) throws IOException {
        try (McapWriter w = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD)
                .chunkSize(64 * 1024).build(file)) {
            int master = w.registerChannel("/master/image/compressed", "cdr", w.registerSchema(
                    "sensor_msgs/msg/CompressedImage", "ros2msg", IMAGE_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            int video = withVideo ? w.registerChannel("/cam/video", "cdr", w.registerSchema(
                    "foxglove_msgs/msg/CompressedVideo", "ros2msg", VIDEO_SCHEMA.getBytes(StandardCharsets.UTF_8)),
                    Map.of()) : -1;
            int seq = 0;
            for (int i = 0; i < VIDEO; i++) {
                long t = videoTime(i);
                if (i % 3 == 0) {
                    byte[] jpeg = jpegs[(i / 3) % jpegs.length];
                    byte[] msg = new CdrWriter(jpeg.length + 64).header(masterTime(i / 3), "top_down").string("jpeg")
                            .byteSequence(jpeg, 0, jpeg.length).toByteArray();
                    w.writeMessage(master, seq++, masterTime(i / 3), masterTime(i / 3), msg);
                }
                if (withVideo) {
                    byte[] d = units.get(i).data();
                    byte[] msg = new CdrWriter(d.length + 64).time(t).string("cam").byteSequence(d, 0, d.length)
                            .string("h264").toByteArray();
                    w.writeMessage(video, seq++, t, t, msg);
                }
            }
        }
        return file;
    }

    /** ROS 1 serialization: little-endian, strings and arrays as uint32 length + bytes. */
    static byte[] ros1Video(long t, byte[] data) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(Ros1BagWriter.time(t));
        bytes(b, "cam".getBytes(StandardCharsets.UTF_8));
        bytes(b, data);
        bytes(b, "h264".getBytes(StandardCharsets.UTF_8));
        return b.toByteArray();
    }

    static byte[] ros1Image(int seq, long t, byte[] jpeg) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(Ros1BagWriter.u32(seq));
        b.writeBytes(Ros1BagWriter.time(t));
        bytes(b, "top_down".getBytes(StandardCharsets.UTF_8));
        bytes(b, "jpeg".getBytes(StandardCharsets.UTF_8));
        bytes(b, jpeg);
        return b.toByteArray();
    }

    private static void bytes(ByteArrayOutputStream b, byte[] x) {
        b.writeBytes(Ros1BagWriter.u32(x.length));
        b.writeBytes(x);
    }

    static Path writeBag(Path file, String compression) throws IOException {
        Ros1BagWriter w = new Ros1BagWriter();
        int master = w.connection("/master/image/compressed", "sensor_msgs/CompressedImage", ROS1_IMAGE_DEF);
        int video = w.connection("/cam/video", "foxglove_msgs/CompressedVideo", ROS1_VIDEO_DEF);
        for (int i = 0; i < VIDEO; i++) {
            if (i % 3 == 0) {
                w.message(master, masterTime(i / 3), ros1Image(i / 3, masterTime(i / 3), jpegs[(i / 3) % jpegs.length]));
            }
            w.message(video, videoTime(i), ros1Video(videoTime(i), units.get(i).data()));
        }
        w.write(file, compression, 16);
        return file;
    }

    static List<FrameRow> frames(Lake lake) {
        try (LakeTable t = lake.table("frames")) {
            List<FrameRow> f = new ArrayList<>(t.frames(ScanRequest.all()));
            f.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
            return f;
        }
    }

    static int index(FrameRow f, String topic) {
        for (int k = 0; k < f.images().size(); k++) {
            if (f.images().get(k).topic().equals(topic)) return k;
        }
        throw new AssertionError("frame " + f.frameIndex() + " has no image of " + topic);
    }

    /**
     * Ingests and enriches {@code input}, then checks every master frame: the video image is video frame 3j, decoded
     * without error, pHash within {@link #MAX_BITS} of its source. Returns the pHash distances.
     */
    static int[] ingestEnrichAndCheck(Path input, Path lakeDir, String videoTopic, String format) throws IOException {
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.Result ingest = IngestJob.run(lake, List.of(input), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            assertEquals(MASTER, ingest.frames(), "one frame row per master image");
            List<FrameRow> rows = frames(lake);
            for (int j = 0; j < MASTER; j++) {
                FrameRow f = rows.get(j);
                assertEquals(masterTime(j), f.timestampNs(), "frame " + j + " is on the master clock");
                ImageLocator l = f.images().get(index(f, videoTopic));
                assertEquals("h264", l.format(), "frame " + j);
                assertNotNull(l.residualNs());
                assertTrue(l.residualNs() < 1000, "frame " + j + " is aligned to video frame " + 3 * j + " (residual "
                        + l.residualNs() + " ns)");
            }
            EnrichJob.Result r = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            assertEquals(MASTER, r.frames());
            List<FrameRow> enriched = frames(lake);
            int[] bits = new int[MASTER];
            for (int j = 0; j < MASTER; j++) {
                FrameRow f = enriched.get(j);
                int k = index(f, videoTopic);
                ImageEnrichment e = f.enrichment().get(k);
                assertNull(e.decodeError(), "master frame " + j + " (video frame " + 3 * j + ")");
                bits[j] = PerceptualHash.hammingDistance(e.phash(), sourceHash[3 * j]);
                assertTrue(bits[j] <= MAX_BITS, format + ": master frame " + j + " (video frame " + 3 * j + "): pHash "
                        + bits[j] + " bits from its source; all " + Arrays.toString(bits));
                assertEquals(320, f.images().get(k).width());
                assertEquals(240, f.images().get(k).height());
            }
            assertEquals(0, r.decodeErrors(), "no image failed to decode");
            assertEquals(2L * MASTER, r.images());
            System.out.printf("%s: 30 Hz video under a 10 Hz master: %d frame rows, 0 decode errors, pHash distance to"
                    + " the source per frame %s%n", format, enriched.size(), Arrays.toString(bits));
            return bits;
        }
    }

    @Test
    void mcapVideoFasterThanTheMasterDecodesEveryFrameRow(@TempDir Path tmp) throws IOException {
        Path mcap = writeMcap(tmp.resolve("fast.mcap"), true);
        ingestEnrichAndCheck(mcap, tmp.resolve("lake"), "/cam/video", "mcap");
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "bz2", "lz4"})
    void ros1BagCompressedVideoIsACameraAndDecodes(String compression, @TempDir Path tmp) throws IOException {
        Path bag = writeBag(tmp.resolve("fast-" + compression + ".bag"), compression);
        try (Lake lake = Lake.init(tmp.resolve("probe"))) {
            IngestJob.run(lake, List.of(bag), IngestOptions.defaults(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            FrameRow f = frames(lake).get(1);
            ImageLocator l = f.images().get(index(f, "/cam/video"));
            assertEquals(compression.equals("none") ? "" : compression, l.compression());
            assertEquals(compression.equals("none"), l.plain());
            assertEquals(units.get(3).data().length, l.length(), "the locator spans video frame 3's access unit");
        }
        ingestEnrichAndCheck(bag, tmp.resolve("lake"), "/cam/video", "ros1 " + compression);
    }

    @Test
    void sidecarMp4NextToAnMcapIsACamera(@TempDir Path tmp) throws IOException {
        Path mcap = writeMcap(tmp.resolve("run.mcap"), false);
        Path mp4 = tmp.resolve("run.wrist.mp4");
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 320, 240, EncoderOptions.builder().fps(30)
                .keyframeInterval(GOP).build())) {
            for (RgbImage f : source) {
                w.write(f);
            }
        }
        // the sample table's times agree with FFmpeg's demuxer, frame by frame
        Mp4SampleTable table = Mp4SampleTable.read(mp4);
        assertEquals(VIDEO, table.samples().size());
        try (Mp4VideoReader r = Mp4VideoReader.open(mp4)) {
            for (int i = 0; i < VIDEO; i++) {
                VideoFrame vf = r.next();
                assertEquals(vf.timestampNs(), table.samples().get(i).presentationNs(), "sample " + i);
                assertEquals(Math.round(i * 1e9 / 30), table.samples().get(i).presentationNs(), "sample " + i);
            }
        }
        int[] bits = ingestEnrichAndCheck(mcap, tmp.resolve("lake"), "/wrist/video", "sidecar mp4");
        assertEquals(MASTER, bits.length);
        try (Lake lake = Lake.open(tmp.resolve("lake"))) {
            List<FrameRow> rows = frames(lake);
            ImageLocator l = rows.get(2).images().get(index(rows.get(2), "/wrist/video"));
            assertTrue(l.plain(), "a sidecar sample is a plain byte range of the MP4");
            assertEquals("", l.compression());
            assertEquals(mp4.toAbsolutePath().normalize().toUri().toString(), l.rawUri());
            assertEquals(table.samples().get(6).offset(), l.offset(), "master frame 2 is video sample 6");
            assertEquals(table.samples().get(6).size(), l.length());
            try (LakeTable t = lake.table("raw_files")) {
                List<RawFileRow> raw = t.rawFiles(ScanRequest.all());
                RawFileRow video = raw.stream().filter(x -> x.uri().endsWith(".mp4")).findFirst().orElseThrow();
                assertEquals("mp4", video.format());
                assertEquals(io.flywheel.ingest.Sources.sha256(mp4), video.sha256());
                assertEquals(Files.size(mp4), video.bytes());
            }
        }
    }

    @Test
    void sidecarTimestampsFileGivesTheFrameTimes(@TempDir Path tmp) throws IOException {
        Path mcap = writeMcap(tmp.resolve("run.mcap"), false);
        Path mp4 = tmp.resolve("run.wrist.mp4");
        // the MP4 runs at 15 fps (its own times would be wrong); the timestamps file says 30 Hz from T0
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 320, 240, EncoderOptions.builder().fps(15)
                .keyframeInterval(GOP).build())) {
            for (RgbImage f : source) {
                w.write(f);
            }
        }
        StringBuilder ts = new StringBuilder();
        for (int i = 0; i < VIDEO; i++) {
            ts.append(videoTime(i)).append('\n');
        }
        Files.writeString(tmp.resolve("run.wrist.timestamps"), ts.toString());
        ingestEnrichAndCheck(mcap, tmp.resolve("lake"), "/wrist/video", "sidecar mp4 + timestamps");
    }
}
