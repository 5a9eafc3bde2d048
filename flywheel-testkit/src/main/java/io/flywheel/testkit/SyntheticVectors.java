package io.flywheel.testkit;

import java.util.SplittableRandom;

/**
 * Synthetic clustered unit vectors with known structure, for tests and benchmarks of vector
 * search: {@code clusters} centres drawn uniformly on the unit sphere of dimension D, and each
 * vector = normalise(centre + noise), noise per coordinate Gaussian with standard deviation
 * {@code spread / sqrt(D)} (so the noise vector has norm about {@code spread}). Vector i belongs to
 * cluster {@code i % clusters}. Deterministic for a seed.
 */
public final class SyntheticVectors {
    private SyntheticVectors() {}

    /**
     * @return {@code n * dim} floats, row-major, every row L2-normalised
     * @throws IllegalArgumentException when a size is not positive or spread is negative
     */
    public static float[] clustered(int n, int dim, int clusters, double spread, long seed) {
        if (n < 0 || dim < 1 || clusters < 1 || spread < 0 || (long) n * dim > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("n=" + n + ", dim=" + dim + ", clusters=" + clusters + ", spread=" + spread
                    + ": expected n >= 0, dim >= 1, clusters >= 1, spread >= 0, n * dim < 2^31");
        }
        SplittableRandom r = new SplittableRandom(seed);
        float[] centres = new float[clusters * dim];
        for (int c = 0; c < clusters; c++) {
            unitInto(gaussian(dim, 1.0, r), centres, c * dim);
        }
        float[] out = new float[n * dim];
        double sigma = spread / Math.sqrt(dim);
        float[] x = new float[dim];
        for (int i = 0; i < n; i++) {
            int c = i % clusters;
            for (int d = 0; d < dim; d++) {
                x[d] = (float) (centres[c * dim + d] + sigma * gaussian(r));
            }
            unitInto(x, out, i * dim);
        }
        return out;
    }

    private static float[] gaussian(int dim, double sigma, SplittableRandom r) {
        float[] x = new float[dim];
        for (int d = 0; d < dim; d++) {
            x[d] = (float) (sigma * gaussian(r));
        }
        return x;
    }

    /** Box-Muller. */
    private static double gaussian(SplittableRandom r) {
        double u = 1.0 - r.nextDouble();
        double v = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    private static void unitInto(float[] x, float[] out, int at) {
        double s = 0;
        for (float f : x) {
            s += (double) f * f;
        }
        float inv = (float) (1 / Math.sqrt(s));
        for (int d = 0; d < x.length; d++) {
            out[at + d] = x[d] * inv;
        }
    }
}
