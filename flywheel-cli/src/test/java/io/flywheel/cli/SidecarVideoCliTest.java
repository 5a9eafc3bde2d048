package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.video.EncoderOptions;
import io.flywheel.enrich.video.Mp4VideoWriter;
import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel ingest} with a sidecar MP4 next to an MCAP: it becomes the camera {@code /wrist/video}; a truncated
 * MP4 and a timestamps file with the wrong count are bad input (exit 1, one line naming the file).
 *
 * <p>Known truth: an MCAP of 10 real JPEG frames at 10 Hz from T0 ({@code /master/image/compressed}) and
 * {@code run.wrist.mp4}: 20 frames at 20 fps (a 160x120 crop of a real photo, moving 4 px per frame).
 */
class SidecarVideoCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final String IMAGE_SCHEMA = "std_msgs/Header header\nstring format\nuint8[] data\n"
            + "================================================================================\n"
            + "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";

    @TempDir
    Path tmp;
    Path mcap;
    Path mp4;

    @BeforeEach
    void write() throws IOException {
        mcap = tmp.resolve("run.mcap");
        writeMcap(mcap, T0);
        mp4 = tmp.resolve("run.wrist.mp4");
        java.awt.image.BufferedImage bi = javax.imageio.ImageIO.read(
                SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg").toFile());
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 160, 120, EncoderOptions.builder().fps(20).build())) {
            for (int i = 0; i < 20; i++) {
                byte[] px = new byte[160 * 120 * 3];
                for (int y = 0; y < 120; y++) {
                    for (int x = 0; x < 160; x++) {
                        int rgb = bi.getRGB(4 * i + x, y + 100);
                        int o = (y * 160 + x) * 3;
                        px[o] = (byte) (rgb >> 16);
                        px[o + 1] = (byte) (rgb >> 8);
                        px[o + 2] = (byte) rgb;
                    }
                }
                w.write(new RgbImage(160, 120, px));
            }
        }
    }

    /** Ten master camera frames at 10 Hz from {@code t0}. */
    private static void writeMcap(Path out, long t0) throws IOException {
        byte[] jpeg = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/top_down_cam/td_move0.jpg"));
        try (McapWriter w = McapWriter.builder().profile("ros2").build(out)) {
            int ch = w.registerChannel("/master/image/compressed", "cdr", w.registerSchema("sensor_msgs/msg/CompressedImage",
                    "ros2msg", IMAGE_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            for (int j = 0; j < 10; j++) {
                long t = t0 + j * 100_000_000L;
                w.writeMessage(ch, j, t, t, new CdrWriter(jpeg.length + 64).header(t, "top").string("jpeg")
                        .byteSequence(jpeg, 0, jpeg.length).toByteArray());
            }
        }
    }

    @Test
    void sidecarBecomesACameraAlignedToTheMaster() throws IOException {
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        // a video beside the recording that is no sidecar of it (no recording front_cam): said, not taken
        Path stray = Files.copy(mp4, tmp.resolve("front_cam.mp4"));
        CliRun r = CliRun.of("ingest", lake.toString(), mcap.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode sum = JSON.readTree(r.out());
        assertEquals(10, sum.get("frames").asLong(), r.out());
        assertEquals("[\"" + stray.toAbsolutePath().normalize() + "\"]", sum.get("videos_not_taken").toString(), r.out());
        Files.delete(stray);
        try (io.flywheel.lake.Lake l = io.flywheel.lake.Lake.open(lake);
             io.flywheel.lake.LakeTable t = l.table("frames")) {
            List<io.flywheel.rows.FrameRow> rows = new java.util.ArrayList<>(t.frames(io.flywheel.lake.ScanRequest.all()));
            rows.sort(java.util.Comparator.comparingInt(io.flywheel.rows.FrameRow::frameIndex));
            for (io.flywheel.rows.FrameRow f : rows) {
                io.flywheel.rows.ImageLocator v = f.images().stream().filter(x -> x.topic().equals("/wrist/video"))
                        .findFirst().orElseThrow();
                // master frame j at T0 + 100 ms j meets video frame 2j at T0 + 50 ms 2j exactly
                assertEquals(0L, v.residualNs(), "frame " + f.frameIndex());
                assertTrue(v.plain());
                assertEquals("h264", v.format());
            }
        }
        CliRun e = CliRun.of("enrich", lake.toString(), "--model", "none", "--json");
        assertEquals(0, e.exitCode(), e.err());
        JsonNode en = JSON.readTree(e.out());
        assertEquals(0, en.get("decode_errors").asLong(), e.out());
        assertEquals(20, en.get("images").asLong(), e.out());
    }

    /**
     * Sample k's first NAL length prefix says 60109 bytes (the sample is far shorter), and a second recording without
     * video is in the lake: enrich exits 0, the frame rows from sample k up to the next sync sample get a decode
     * error naming the MP4 and the sample, both episodes are enriched, and a rerun has nothing to do.
     */
    @Test
    void damagedSampleIsADecodeErrorNotAFailedRun() throws IOException {
        io.flywheel.ingest.Mp4SampleTable table = io.flywheel.ingest.Mp4SampleTable.read(mp4);
        int k = 6; // master frame 3 meets video frame 6
        int next = k + 1;
        while (next < table.samples().size() && !table.samples().get(next).sync()) next++;
        try (java.nio.channels.FileChannel fc = java.nio.channels.FileChannel.open(mp4,
                java.nio.file.StandardOpenOption.WRITE)) {
            fc.write(java.nio.ByteBuffer.allocate(4).putInt(0, 60109), table.samples().get(k).offset());
        }
        // another recording without a sidecar (an hour later: other bytes, so not the same raw file)
        Path other = Files.createDirectories(tmp.resolve("other")).resolve("other.mcap");
        writeMcap(other, T0 + 3_600_000_000_000L);
        long expected = 0;
        for (int j = 0; j < 10; j++) {
            expected += 2 * j >= k && 2 * j < next ? 1 : 0;
        }
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), mcap.toString(), other.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(20, JSON.readTree(r.out()).get("frames").asLong(), r.out());
        CliRun e = CliRun.of("enrich", lake.toString(), "--model", "none", "--json");
        assertEquals(0, e.exitCode(), e.err());
        JsonNode en = JSON.readTree(e.out());
        assertEquals(expected, en.get("decode_errors").asLong(), e.out());
        assertEquals(30 - expected, en.get("images").asLong(), e.out());
        assertEquals(2, en.get("episodes_enriched").asLong(), e.out());
        try (io.flywheel.lake.Lake l = io.flywheel.lake.Lake.open(lake);
             io.flywheel.lake.LakeTable t = l.table("frames")) {
            for (io.flywheel.rows.FrameRow f : t.frames(io.flywheel.lake.ScanRequest.all())) {
                for (int i = 0; i < f.images().size(); i++) {
                    String err = f.enrichment().get(i).decodeError();
                    int unit = 2 * f.frameIndex();
                    boolean bad = f.images().get(i).topic().equals("/wrist/video") && unit >= k && unit < next;
                    assertEquals(bad, err != null, f.episodeId() + " frame " + f.frameIndex() + ": " + err);
                    if (bad) {
                        assertTrue(err.contains("run.wrist.mp4"), err);
                        assertTrue(err.contains(unit == k ? "sample " + k + ": video sample " + k + " of 20"
                                : "sample " + unit + ": h264 access unit after the damaged sample " + k), err);
                    }
                }
            }
        }
        CliRun again = CliRun.of("enrich", lake.toString(), "--model", "none", "--json");
        assertEquals(0, again.exitCode(), again.err());
    }

    @Test
    void truncatedMp4IsBadInput() throws IOException {
        byte[] all = Files.readAllBytes(mp4);
        Files.write(mp4, java.util.Arrays.copyOf(all, all.length * 2 / 3));
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), mcap.toString());
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().contains("run.wrist.mp4"), r.err());
        assertTrue(r.err().contains("truncated"), r.err());
        assertTrue(r.noStackTrace(), r.err());
    }

    @Test
    void timestampsFileWithTheWrongCountIsBadInput() throws IOException {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 19; i++) {
            s.append(T0 + i * 50_000_000L).append('\n');
        }
        Files.writeString(tmp.resolve("run.wrist.timestamps"), s.toString());
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), mcap.toString());
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.err().contains("run.wrist.timestamps"), r.err());
        assertTrue(r.err().contains("line 20"), r.err());
        assertTrue(r.err().contains("19 timestamps for the 20 video frames"), r.err());
        assertTrue(r.noStackTrace(), r.err());
    }
}
