package io.flywheel.serve.export;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.enrich.RgbImage;

/**
 * Statistics of one LeRobot feature, as {@code meta/stats.json} and the {@code stats/...} columns
 * of {@code meta/episodes} hold them: per dimension min, max, mean, std (population, numpy's
 * {@code np.std}), count (frames), and the quantiles q01, q10, q50, q90, q99 (numpy's default
 * linear interpolation between order statistics, computed exactly here where LeRobot estimates
 * them from a 5,000-bin histogram).
 *
 * <p>Vector features (state, action, and the scalar index columns as dimension 1) keep their
 * values to compute the quantiles. Image features are per channel (R, G, B) over every pixel of
 * every frame, values divided by 255 as LeRobot does (its {@code compute_episode_stats} reduces
 * over batch, height and width and keeps shape [3, 1, 1]); a 256-bin histogram per channel gives
 * exact results in constant memory. LeRobot samples at most ~100 frames per episode and
 * downsamples frames over 300 px for image statistics; this uses all of them, so count is the
 * frame count.
 */
final class FeatureStats {
    static final double[] QUANTILES = {0.01, 0.10, 0.50, 0.90, 0.99};
    static final List<String> QUANTILE_KEYS = List.of("q01", "q10", "q50", "q90", "q99");

    private final int dims;
    private final boolean image;
    private final boolean integer;
    private double[][] values;
    private int n;
    private final long[][] hist;

    private FeatureStats(int dims, boolean image, boolean integer) {
        this.dims = dims;
        this.image = image;
        this.integer = integer;
        this.values = image ? null : new double[dims][64];
        this.hist = image ? new long[3][256] : null;
    }

    /** @return stats of a float vector feature with {@code dims} dimensions */
    static FeatureStats vector(int dims) {
        return new FeatureStats(dims, false, false);
    }

    /** @return stats of an int64 scalar feature (min/max stay integers, as numpy keeps them) */
    static FeatureStats integer() {
        return new FeatureStats(1, false, true);
    }

    /** @return stats of an RGB image feature */
    static FeatureStats image() {
        return new FeatureStats(3, true, false);
    }

    /** Adds one frame's vector (as float32 values widened, the values stored in the data file). */
    void add(double... v) {
        if (v.length != dims) {
            throw new IllegalArgumentException("expected " + dims + " values, got " + v.length);
        }
        if (n == values[0].length) {
            for (int d = 0; d < dims; d++) {
                values[d] = Arrays.copyOf(values[d], n * 2);
            }
        }
        for (int d = 0; d < dims; d++) {
            values[d][n] = v[d];
        }
        n++;
    }

    /** Adds one image frame. */
    void add(RgbImage img) {
        byte[] p = img.pixels();
        long[] r = hist[0];
        long[] g = hist[1];
        long[] b = hist[2];
        for (int i = 0; i < p.length; i += 3) {
            r[p[i] & 0xFF]++;
            g[p[i + 1] & 0xFF]++;
            b[p[i + 2] & 0xFF]++;
        }
        n++;
    }

    /** @return frames added */
    int count() {
        return n;
    }

    /**
     * @return the statistics by name ({@code min, max, mean, std, count, q01 ... q99}); values are
     *     {@code double[dims]} (or {@code long[1]} for integer min/max and count), image statistics
     *     {@code double[3][1][1]}
     * @throws IllegalStateException when nothing was added
     */
    Map<String, Object> result() {
        if (n == 0) {
            throw new IllegalStateException("no values");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        double[] min = new double[dims];
        double[] max = new double[dims];
        double[] mean = new double[dims];
        double[] std = new double[dims];
        double[][] q = new double[QUANTILES.length][dims];
        for (int d = 0; d < dims; d++) {
            if (image) {
                imageChannel(hist[d], d, min, max, mean, std, q);
            } else {
                double[] v = Arrays.copyOf(values[d], n);
                double sum = 0;
                for (double x : v) {
                    sum += x;
                }
                double m = sum / n;
                double ss = 0;
                for (double x : v) {
                    ss += (x - m) * (x - m);
                }
                Arrays.sort(v);
                min[d] = v[0];
                max[d] = v[n - 1];
                mean[d] = m;
                std[d] = Math.sqrt(ss / n);
                for (int k = 0; k < QUANTILES.length; k++) {
                    double pos = QUANTILES[k] * (n - 1);
                    int lo = (int) Math.floor(pos);
                    int hi = Math.min(lo + 1, n - 1);
                    q[k][d] = v[lo] + (v[hi] - v[lo]) * (pos - lo);
                }
            }
        }
        if (integer) {
            out.put("min", new long[] {(long) min[0]});
            out.put("max", new long[] {(long) max[0]});
        } else {
            out.put("min", shape(min));
            out.put("max", shape(max));
        }
        out.put("mean", shape(mean));
        out.put("std", shape(std));
        out.put("count", new long[] {n});
        for (int k = 0; k < QUANTILES.length; k++) {
            out.put(QUANTILE_KEYS.get(k), shape(q[k]));
        }
        return out;
    }

    private Object shape(double[] v) {
        if (!image) {
            return v;
        }
        double[][][] s = new double[v.length][1][1];
        for (int c = 0; c < v.length; c++) {
            s[c][0][0] = v[c];
        }
        return s;
    }

    private static void imageChannel(long[] h, int c, double[] min, double[] max, double[] mean, double[] std, double[][] q) {
        long total = 0;
        double sum = 0;
        int lo = -1;
        int hi = -1;
        for (int v = 0; v < 256; v++) {
            if (h[v] > 0) {
                if (lo < 0) {
                    lo = v;
                }
                hi = v;
                total += h[v];
                sum += (double) v * h[v];
            }
        }
        double m = sum / total;
        double ss = 0;
        for (int v = lo; v <= hi; v++) {
            ss += h[v] * (v - m) * (v - m);
        }
        min[c] = lo / 255.0;
        max[c] = hi / 255.0;
        mean[c] = m / 255.0;
        std[c] = Math.sqrt(ss / total) / 255.0;
        for (int k = 0; k < QUANTILES.length; k++) {
            double pos = QUANTILES[k] * (total - 1);
            long a = (long) Math.floor(pos);
            long b = Math.min(a + 1, total - 1);
            int va = orderStatistic(h, a);
            int vb = orderStatistic(h, b);
            q[k][c] = (va + (vb - va) * (pos - a)) / 255.0;
        }
    }

    /** @return the value of the k-th smallest (0-based) element of a histogram */
    private static int orderStatistic(long[] h, long k) {
        long seen = 0;
        for (int v = 0; v < h.length; v++) {
            seen += h[v];
            if (k < seen) {
                return v;
            }
        }
        throw new IllegalStateException("order statistic " + k + " beyond " + seen);
    }
}
