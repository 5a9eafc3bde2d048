package io.flywheel.enrich;

import java.util.ArrayList;
import java.util.List;

/**
 * A real, tiny embedding for tests: the image reduced to 4 x 4 cells by averaging, the 48 cell means (R, G, B per
 * cell, row-major) centred on their own mean and L2-normalised. Two images with the same layout of colours point
 * the same way; distances can be checked by hand. Records every batch size it was called with.
 */
final class PixelEmbedder implements Embedder {
    final List<Integer> batches = new ArrayList<>();

    @Override
    public String modelId() {
        return "test_pixels_4x4";
    }

    @Override
    public String sha256() {
        return "0".repeat(64);
    }

    @Override
    public int dimension() {
        return 48;
    }

    @Override
    public float[][] embed(List<RgbImage> images) {
        batches.add(images.size());
        float[][] out = new float[images.size()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = of(images.get(i));
        }
        return out;
    }

    static float[] of(RgbImage img) {
        double[] v = new double[48];
        int[] n = new int[16];
        for (int y = 0; y < img.height(); y++) {
            for (int x = 0; x < img.width(); x++) {
                int cell = (y * 4 / img.height()) * 4 + x * 4 / img.width();
                n[cell]++;
                for (int c = 0; c < 3; c++) {
                    v[cell * 3 + c] += img.at(x, y, c);
                }
            }
        }
        double mean = 0;
        for (int k = 0; k < 48; k++) {
            v[k] /= n[k / 3];
            mean += v[k] / 48;
        }
        double s = 0;
        for (int k = 0; k < 48; k++) {
            v[k] -= mean;
            s += v[k] * v[k];
        }
        float[] f = new float[48];
        for (int k = 0; k < 48; k++) {
            f[k] = (float) (v[k] / Math.sqrt(s));
        }
        return f;
    }

    @Override
    public void close() {}
}
