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
 * values to compute the quantiles. Image features are per channel (R, G, B), values divided by 255, over the frames
 * LeRobot samples for them ({@link #imageSampleRows}: {@code sample_indices} of its compute_stats, about
 * {@code n^0.75} evenly spaced frames, at least 100 or all), each taken every k-th pixel when its larger side is 300 px
 * or more ({@link #downsample}: {@code auto_downsample_height_width}, k = larger side / 150), so count is the sampled
 * frame count as in LeRobot's own stats; shape [3, 1, 1]. A 256-bin histogram per channel gives exact quantiles in
 * constant memory (LeRobot estimates them from 5,000 bins).
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

    /**
     * The rows of an episode of {@code n} frames whose images go into the image statistics, as LeRobot's
     * {@code sample_indices}: {@code round(linspace(0, n - 1, m))} (round half to even, as numpy), with
     * {@code m = max(min(100, n), min(floor(n^0.75), 10000))}.
     *
     * @return per row, whether it is sampled
     */
    static boolean[] imageSampleRows(int n) {
        boolean[] out = new boolean[n];
        if (n == 0) {
            return out;
        }
        int m = Math.max(Math.min(100, n), Math.min((int) Math.pow(n, 0.75), 10_000));
        for (int i = 0; i < m; i++) {
            double x = m == 1 ? 0 : (double) i * (n - 1) / (m - 1);
            out[(int) Math.rint(x)] = true;
        }
        return out;
    }

    /** @return every k-th pixel of every k-th row (k = larger side / 150) when the larger side is 300 px or more */
    static RgbImage downsample(RgbImage img) {
        int w = img.width();
        int h = img.height();
        if (Math.max(w, h) < 300) {
            return img;
        }
        int k = w > h ? w / 150 : h / 150;
        int dw = (w + k - 1) / k;
        int dh = (h + k - 1) / k;
        byte[] src = img.pixels();
        byte[] dst = new byte[dw * dh * 3];
        for (int y = 0; y < dh; y++) {
            for (int x = 0; x < dw; x++) {
                System.arraycopy(src, ((y * k) * w + x * k) * 3, dst, (y * dw + x) * 3, 3);
            }
        }
        return new RgbImage(dw, dh, dst);
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
