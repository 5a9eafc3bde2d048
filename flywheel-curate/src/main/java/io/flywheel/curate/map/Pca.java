package io.flywheel.curate.map;

import java.util.Arrays;

/**
 * Principal component analysis by power iteration with deflation, for projecting embeddings to a
 * few dimensions (Hotelling 1933; the power method and Hotelling deflation as in Golub and Van Loan,
 * "Matrix Computations", 4th ed., sections 7.3.1 and 8.2).
 *
 * <p>The vectors are centred on their mean; the covariance {@code C = Xc^T Xc / n} (population
 * covariance) is never formed: each iteration computes {@code C v = Xc^T (Xc v) / n} in
 * {@code O(n * d)}. Component {@code j} is found by power iteration on {@code C} with the earlier
 * components projected out of the iterate at every step (equivalent to deflating
 * {@code C - sum lambda_i v_i v_i^T}). The start vector is fixed, and each component's sign is
 * chosen so that its largest-magnitude entry is positive, so the same input always gives the same
 * output.
 */
public final class Pca {
    /** Iteration stops when the iterate moves less than this (L2 distance of unit vectors). */
    static final double TOLERANCE = 1e-10;
    /** Most power iterations per component. */
    static final int MAX_ITERATIONS = 1000;

    private Pca() {}

    /**
     * The result of {@link #fit}.
     *
     * @param mean the mean vector, {@code double[d]}
     * @param components the principal axes, {@code double[k][d]}, unit length, orthogonal, by
     *     decreasing variance; an all-zero row when the data has no variance left in that direction
     * @param variances the variance along each axis ({@code lambda_j}, the eigenvalue of the
     *     population covariance), {@code double[k]}
     * @param totalVariance the trace of the covariance: the sum of the variances of all d coordinates
     * @param coordinates each input vector's projection, {@code double[n][k]}: {@code (x - mean) . v_j}
     */
    public record Projection(double[] mean, double[][] components, double[] variances, double totalVariance,
                             double[][] coordinates) {
        /** @return the share of the total variance along axis {@code j}, in [0, 1]; 0 when there is none */
        public double explained(int j) {
            return totalVariance <= 0 ? 0 : variances[j] / totalVariance;
        }
    }

    /**
     * @param vectors n vectors of one dimension d (float32, e.g. L2-normalised embeddings); n may be 0
     * @param k number of components, 1 &le; k
     * @return the projection; with k &gt; d the extra components are zero
     * @throws IllegalArgumentException when k &lt; 1, or the vectors differ in length (naming the first
     *     that does), or a value is not finite (naming the vector and position)
     */
    public static Projection fit(float[][] vectors, int k) {
        if (k < 1) {
            throw new IllegalArgumentException("PCA needs at least 1 component, got " + k);
        }
        int n = vectors.length;
        int d = n == 0 ? 0 : vectors[0].length;
        double[] mean = new double[d];
        for (int i = 0; i < n; i++) {
            float[] x = vectors[i];
            if (x.length != d) {
                throw new IllegalArgumentException("vector " + i + " has dimension " + x.length + ", expected " + d
                        + " like vector 0");
            }
            for (int j = 0; j < d; j++) {
                if (!Float.isFinite(x[j])) {
                    throw new IllegalArgumentException("vector " + i + " has a non-finite value at position " + j);
                }
                mean[j] += x[j];
            }
        }
        for (int j = 0; j < d; j++) {
            mean[j] /= Math.max(1, n);
        }
        // centred copy, row-major, in double
        double[] xc = new double[n * d];
        double total = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < d; j++) {
                double v = vectors[i][j] - mean[j];
                xc[i * d + j] = v;
                total += v * v;
            }
        }
        total = n == 0 ? 0 : total / n;
        double[][] comps = new double[k][d];
        double[] vars = new double[k];
        double[] proj = new double[n];
        for (int c = 0; c < k && c < d; c++) {
            double[] v = start(d, c);
            orthogonalise(v, comps, c);
            if (normalise(v) == 0) {
                break;
            }
            double lambda = 0;
            for (int it = 0; it < MAX_ITERATIONS; it++) {
                double[] w = covTimes(xc, n, d, v, proj);
                orthogonalise(w, comps, c);
                lambda = dot(w, v);
                double norm = normalise(w);
                if (norm == 0) {
                    lambda = 0;
                    v = null;
                    break;
                }
                double diff = 0;
                for (int j = 0; j < d; j++) {
                    diff += (w[j] - v[j]) * (w[j] - v[j]);
                }
                v = w;
                if (diff < TOLERANCE * TOLERANCE) {
                    break;
                }
            }
            if (v == null || lambda <= total * 1e-15) {
                break; // no variance left: the remaining components stay zero
            }
            fixSign(v);
            comps[c] = v;
            double[] cv = covTimes(xc, n, d, v, proj);
            vars[c] = dot(cv, v);
        }
        double[][] coords = new double[n][k];
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < k; c++) {
                double s = 0;
                for (int j = 0; j < d; j++) {
                    s += xc[i * d + j] * comps[c][j];
                }
                coords[i][c] = s;
            }
        }
        return new Projection(mean, comps, vars, total, coords);
    }

    /** A fixed, non-degenerate start vector: not orthogonal to any axis-aligned direction. */
    private static double[] start(int d, int c) {
        double[] v = new double[d];
        for (int j = 0; j < d; j++) {
            v[j] = 1.0 + ((j * 7919L + c * 104729L) % 1000) / 1000.0;
        }
        return v;
    }

    /** @return {@code C v = Xc^T (Xc v) / n} */
    private static double[] covTimes(double[] xc, int n, int d, double[] v, double[] tmp) {
        for (int i = 0; i < n; i++) {
            double s = 0;
            int o = i * d;
            for (int j = 0; j < d; j++) {
                s += xc[o + j] * v[j];
            }
            tmp[i] = s;
        }
        double[] out = new double[d];
        for (int i = 0; i < n; i++) {
            double s = tmp[i];
            int o = i * d;
            for (int j = 0; j < d; j++) {
                out[j] += xc[o + j] * s;
            }
        }
        for (int j = 0; j < d; j++) {
            out[j] /= n;
        }
        return out;
    }

    private static void orthogonalise(double[] v, double[][] comps, int count) {
        for (int c = 0; c < count; c++) {
            double p = dot(v, comps[c]);
            for (int j = 0; j < v.length; j++) {
                v[j] -= p * comps[c][j];
            }
        }
    }

    private static double normalise(double[] v) {
        double n = Math.sqrt(dot(v, v));
        if (n < 1e-300) {
            Arrays.fill(v, 0);
            return 0;
        }
        for (int j = 0; j < v.length; j++) {
            v[j] /= n;
        }
        return n;
    }

    private static void fixSign(double[] v) {
        int arg = 0;
        for (int j = 1; j < v.length; j++) {
            if (Math.abs(v[j]) > Math.abs(v[arg]) + 1e-12) {
                arg = j;
            }
        }
        if (v[arg] < 0) {
            for (int j = 0; j < v.length; j++) {
                v[j] = -v[j];
            }
        }
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += a[j] * b[j];
        }
        return s;
    }
}
