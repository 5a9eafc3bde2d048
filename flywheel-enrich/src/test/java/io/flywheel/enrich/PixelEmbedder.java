package io.flywheel.enrich;

import java.util.ArrayList;
import java.util.List;

/**
 * A real, tiny embedding for tests: the image reduced to g x g cells by averaging (g = 4 unless given), the 3 g^2 cell
 * means (R, G, B per cell, row-major) centred on their own mean and L2-normalised. Two images with the same layout of
 * colours point the same way; distances can be checked by hand. Records every batch size it was called with.
 */
final class PixelEmbedder implements Embedder {
    final List<Integer> batches = new ArrayList<>();
    private final int grid;

    PixelEmbedder() {
        this(4);
    }

    /** @param grid cells per side; the model id is {@code test_pixels_<g>x<g>}, D = 3 g^2 */
    PixelEmbedder(int grid) {
        this.grid = grid;
    }

    @Override
    public String modelId() {
        return "test_pixels_" + grid + "x" + grid;
    }

    @Override
    public String sha256() {
        return Integer.toString(grid).repeat(64);
    }

    @Override
    public int dimension() {
        return 3 * grid * grid;
    }

    @Override
    public float[][] embed(List<RgbImage> images) {
        batches.add(images.size());
        float[][] out = new float[images.size()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = of(images.get(i), grid);
        }
        return out;
    }

    /** @return the 4 x 4 embedding of the image */
    static float[] of(RgbImage img) {
        return of(img, 4);
    }

    /** @return the g x g embedding of the image, float32[3 g^2] */
    static float[] of(RgbImage img, int g) {
        int d = 3 * g * g;
        double[] v = new double[d];
        int[] n = new int[g * g];
        for (int y = 0; y < img.height(); y++) {
            for (int x = 0; x < img.width(); x++) {
                int cell = (y * g / img.height()) * g + x * g / img.width();
                n[cell]++;
                for (int c = 0; c < 3; c++) {
                    v[cell * 3 + c] += img.at(x, y, c);
                }
            }
        }
        double mean = 0;
        for (int k = 0; k < d; k++) {
            v[k] /= n[k / 3];
            mean += v[k] / d;
        }
        double s = 0;
        for (int k = 0; k < d; k++) {
            v[k] -= mean;
            s += v[k] * v[k];
        }
        float[] f = new float[d];
        for (int k = 0; k < d; k++) {
            f[k] = (float) (v[k] / Math.sqrt(s));
        }
        return f;
    }

    @Override
    public void close() {}
}
