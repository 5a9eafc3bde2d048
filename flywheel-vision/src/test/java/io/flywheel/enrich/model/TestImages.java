package io.flywheel.enrich.model;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;

import javax.imageio.ImageIO;

import io.flywheel.enrich.RgbImage;
import io.flywheel.testkit.SharedData;

/** Real camera images from shared/data, decoded with ImageIO for the model tests. */
final class TestImages {
    private TestImages() {}

    static RgbImage load(String relative) throws IOException {
        Path p = SharedData.data(relative);
        ImageIO.setUseCache(false);
        BufferedImage img = ImageIO.read(p.toFile());
        if (img == null) {
            throw new IOException(p + ": ImageIO cannot decode it");
        }
        return toRgb(img, 0, 0, img.getWidth(), img.getHeight());
    }

    /** The crop [x, x+w) x [y, y+h) of an image. */
    static RgbImage crop(RgbImage src, int x, int y, int w, int h) {
        byte[] out = new byte[w * h * 3];
        for (int r = 0; r < h; r++) {
            System.arraycopy(src.pixels(), ((y + r) * src.width() + x) * 3, out, r * w * 3, w * 3);
        }
        return new RgbImage(w, h, out);
    }

    private static RgbImage toRgb(BufferedImage img, int x0, int y0, int w, int h) {
        byte[] px = new byte[w * h * 3];
        int[] row = new int[w];
        for (int y = 0; y < h; y++) {
            img.getRGB(x0, y0 + y, w, 1, row, 0, w);
            for (int x = 0; x < w; x++) {
                int argb = row[x];
                int o = (y * w + x) * 3;
                px[o] = (byte) (argb >> 16);
                px[o + 1] = (byte) (argb >> 8);
                px[o + 2] = (byte) argb;
            }
        }
        return new RgbImage(w, h, px);
    }
}
