package io.flywheel.enrich.video;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import io.flywheel.enrich.RgbImage;
import io.flywheel.testkit.SharedData;

/** Real camera frames from the shared data, decoded with ImageIO, and image metrics for the tests. */
final class Frames {
    private Frames() {}

    /** @return the 10 JPEG frames of camera image_0 of BridgeData episode {@code ep} (64x64) */
    static List<RgbImage> bridgeEpisode(int ep) {
        Path dir = SharedData.data(String.format("camera/bridge-octo-rlds/frames_jpeg/ep%02d/image_0", ep));
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> files = s.filter(p -> p.toString().endsWith(".jpg")).sorted().toList();
            List<RgbImage> out = new ArrayList<>();
            for (Path p : files) {
                out.add(read(p));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the over-the-shoulder WidowX tic-tac-toe frames move0..move{n-1} (640x480) */
    static List<RgbImage> tictactoe(int n) {
        List<RgbImage> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(read(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move" + i + ".jpg")));
        }
        return out;
    }

    static RgbImage read(Path p) {
        try {
            BufferedImage bi = ImageIO.read(p.toFile());
            int w = bi.getWidth();
            int h = bi.getHeight();
            byte[] px = new byte[w * h * 3];
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    int rgb = bi.getRGB(x, y);
                    int o = (y * w + x) * 3;
                    px[o] = (byte) (rgb >> 16);
                    px[o + 1] = (byte) (rgb >> 8);
                    px[o + 2] = (byte) rgb;
                }
            }
            return new RgbImage(w, h, px);
        } catch (IOException e) {
            throw new UncheckedIOException(p.toString(), e);
        }
    }

    /** @return PSNR in dB of {@code b} against {@code a} over all RGB samples (peak 255) */
    static double psnr(RgbImage a, RgbImage b) {
        if (a.width() != b.width() || a.height() != b.height()) {
            throw new IllegalArgumentException(a.width() + "x" + a.height() + " vs " + b.width() + "x" + b.height());
        }
        double se = 0;
        byte[] pa = a.pixels();
        byte[] pb = b.pixels();
        for (int i = 0; i < pa.length; i++) {
            int d = (pa[i] & 0xFF) - (pb[i] & 0xFF);
            se += d * d;
        }
        double mse = se / pa.length;
        return mse == 0 ? Double.POSITIVE_INFINITY : 10 * Math.log10(255.0 * 255.0 / mse);
    }
}
