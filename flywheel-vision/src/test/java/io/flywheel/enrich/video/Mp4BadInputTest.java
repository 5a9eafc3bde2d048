package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.RgbImage;

/** Damaged MP4 files fail with a VideoFormatException naming the file and the position; none crashes the JVM. */
class Mp4BadInputTest {
    @TempDir
    static Path dir;
    private static Path good;
    private static byte[] bytes;

    @BeforeAll
    static void write() throws Exception {
        good = dir.resolve("good.mp4");
        List<RgbImage> src = Frames.bridgeEpisode(1);
        try (Mp4VideoWriter w = Mp4VideoWriter.open(good, 64, 64, EncoderOptions.builder().fps(5).keyframeInterval(10).build())) {
            for (RgbImage img : src) {
                w.write(img);
            }
        }
        bytes = Files.readAllBytes(good);
    }

    private static int decodeAll(Path p) throws Exception {
        int n = 0;
        try (Mp4VideoReader r = Mp4VideoReader.open(p)) {
            while (r.next() != null) {
                n++;
            }
        }
        return n;
    }

    @Test
    void goodFileDecodesAtFiveFps() throws Exception {
        try (Mp4VideoReader r = Mp4VideoReader.open(good)) {
            VideoFrame f;
            int i = 0;
            while ((f = r.next()) != null) {
                assertEquals(i * 0.2, f.seconds(), 1e-12);
                assertEquals(i * 200_000_000L, f.timestampNs());
                i++;
            }
            assertEquals(10, i);
        }
    }

    @Test
    void truncatedFileNamesTheMissingSamples() throws Exception {
        Path cut = dir.resolve("cut.mp4");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length * 2 / 3));
        VideoFormatException e = assertThrows(VideoFormatException.class, () -> decodeAll(cut));
        System.out.println("truncated mp4: " + e.getMessage());
        assertTrue(e.getMessage().startsWith(cut.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("packet"), e.getMessage());
    }

    @Test
    void everyTruncationFailsInsteadOfReturningFewerFrames() throws Exception {
        int checked = 0;
        for (int len = 0; len < bytes.length; len += Math.max(1, bytes.length / 60)) {
            Path cut = dir.resolve("cut-" + len + ".mp4");
            Files.write(cut, Arrays.copyOf(bytes, len));
            assertThrows(VideoFormatException.class, () -> decodeAll(cut), "cut at " + len + " of " + bytes.length);
            checked++;
        }
        assertTrue(checked >= 60);
    }

    @Test
    void corruptSampleNamesThePacketAndOffset() throws Exception {
        Path bad = dir.resolve("corrupt.mp4");
        byte[] b = bytes.clone();
        // The moov box is in front (faststart); overwrite bytes in the middle of mdat.
        java.util.Random rnd = new java.util.Random(3);
        for (int i = b.length / 2; i < b.length / 2 + 400; i++) {
            b[i] = (byte) rnd.nextInt(256);
        }
        Files.write(bad, b);
        VideoFormatException e = assertThrows(VideoFormatException.class, () -> decodeAll(bad));
        System.out.println("corrupt mp4: " + e.getMessage());
        assertTrue(e.getMessage().startsWith(bad.toString()), e.getMessage());
        assertTrue(e.getMessage().matches(".*video packet \\d+ at byte \\d+.*"), e.getMessage());
    }

    @Test
    void notAVideoFile() throws Exception {
        Path txt = dir.resolve("notes.mp4");
        Files.write(txt, "this is not a video\n".repeat(50).getBytes(StandardCharsets.UTF_8));
        VideoFormatException e = assertThrows(VideoFormatException.class, () -> Mp4VideoReader.open(txt));
        assertTrue(e.getMessage().startsWith(txt + ": not a readable video container"), e.getMessage());
        assertThrows(NoSuchFileException.class, () -> Mp4VideoReader.open(dir.resolve("missing.mp4")));
    }

    @Test
    void oddSizesAndSizeChangesAreRejectedByTheWriter() throws Exception {
        assertThrows(IllegalArgumentException.class,
                () -> Mp4VideoWriter.open(dir.resolve("odd.mp4"), 63, 64, EncoderOptions.builder().build()));
        try (Mp4VideoWriter w = Mp4VideoWriter.open(dir.resolve("sizes.mp4"), 64, 64, EncoderOptions.builder().build())) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> w.write(new RgbImage(32, 32, new byte[32 * 32 * 3])));
            assertTrue(e.getMessage().contains("32x32"), e.getMessage());
        }
    }
}
