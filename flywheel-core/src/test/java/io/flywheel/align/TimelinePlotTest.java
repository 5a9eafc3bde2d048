package io.flywheel.align;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimelinePlotTest {
    /** 30 Hz camera stamping 12 ms ahead, 200 Hz joints with a 60 ms hole, as-of with 10 ms tolerance. */
    @Test
    void drawsPairingsAndMarksUnmatchedFramesRed(@TempDir Path tmp) throws IOException {
        long start = 1_000_000_000_000L;
        int frames = 12;
        long[] trueT = new long[frames];
        long[] stamp = new long[frames];
        for (int i = 0; i < frames; i++) {
            trueT[i] = start + i * 33_333_333L;
            stamp[i] = trueT[i] + 12_000_000L;
        }
        long[] joints = java.util.stream.LongStream.range(0, 80)
                .map(i -> start + i * 5_000_000L)
                .filter(t -> t < start + 150_000_000L || t > start + 210_000_000L)
                .toArray();
        Alignment a = Aligner.align(java.util.List.of(TopicStream.of("/cam", stamp), TopicStream.of("/joints", joints)),
                AlignOptions.builder().masterStream("/cam")
                        .policy("/joints", StreamPolicy.of(AlignMethod.ASOF, 10_000_000L)).build());
        StreamAlignment s = a.stream("/joints");
        int unmatched = 0;
        for (int i : s.index()) {
            unmatched += i < 0 ? 1 : 0;
        }
        assertTrue(unmatched >= 1, "the hole leaves a frame without a value");

        Path png = tmp.resolve("timeline.png");
        TimelinePlot.render(new TimelinePlot.Spec("test", "/cam", a.frameTimesNs(), "/joints", joints, s.index(), trueT,
                start, 400_000_000L), png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(1200, img.getWidth());
        assertEquals(480, img.getHeight());
        int red = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y);
                if ((rgb >> 16 & 0xFF) > 200 && (rgb >> 8 & 0xFF) < 60 && (rgb & 0xFF) < 60) {
                    red++;
                }
            }
        }
        assertTrue(red > 50, "unmatched frames drawn in red: " + red + " red pixels");
        assertThrows(IllegalArgumentException.class, () -> TimelinePlot.render(new TimelinePlot.Spec("x", "m",
                new long[2], "s", new long[0], new int[1], null, 0, 1), png));
    }
}
