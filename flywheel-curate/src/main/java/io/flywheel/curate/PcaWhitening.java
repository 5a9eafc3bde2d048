package io.flywheel.curate;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.EigenDecomposition;
import org.apache.commons.math3.linear.RealVector;

/**
 * PCA whitening of embedding vectors before a nearest-neighbour search, as in Jégou and Chum,
 * "Negative evidences and co-occurrences in image retrieval: the benefit of PCA and whitening",
 * ECCV 2012: directions that vary a lot across the pool (in mining: the scene, which every camera
 * view of one scene shares) are shrunk and rare, low-variance directions (the object) are
 * stretched, so that the cosine distance counts what is rare.
 *
 * <p>Fitted on n pool vectors of dimension D: the mean {@code m}, the population covariance
 * {@code C = (1/n) sum (x - m)(x - m)^T} (D x D), and its symmetric eigendecomposition
 * {@code C = V diag(lambda) V^T} (Apache Commons Math {@link EigenDecomposition}), eigenvalues
 * sorted in decreasing order, rounding-negative ones clamped to 0. A vector is transformed to
 * {@code y_i = v_i . (x - m) / sqrt(lambda_i + epsilon * lambda_max)} for every i in 0..D-1
 * ({@link #project}), then re-normalised to unit length ({@link #apply}). The regulariser
 * {@code epsilon * lambda_max} keeps the transform finite when n &le; D (rank-deficient C: a
 * pool of a few hundred episodes with D up to 768 is normal) and stops directions of near-zero
 * variance (noise) from being blown up. On the pool itself the covariance of the projected vectors
 * is exactly {@code diag(lambda_i / (lambda_i + epsilon * lambda_max))}: about 1 on the top components.
 *
 * <p>Immutable; accessors return copies.
 */
public final class PcaWhitening {
    /** The default regulariser epsilon (Jégou and Chum regularise the same way). */
    public static final double DEFAULT_EPSILON = 1e-3;

    private final double[] mean;
    private final double[] eigenvalues;
    /** Row i: eigenvector i divided by sqrt(lambda_i + epsilon * lambda_max). */
    private final double[][] projection;
    private final double epsilon;
    private final int fittedOn;

    private PcaWhitening(double[] mean, double[] eigenvalues, double[][] projection, double epsilon, int fittedOn) {
        this.mean = mean;
        this.eigenvalues = eigenvalues;
        this.projection = projection;
        this.epsilon = epsilon;
        this.fittedOn = fittedOn;
    }

    /**
     * Fits the transform on pool vectors.
     *
     * @param vectors n &ge; 2 vectors of one dimension D &ge; 1 (float32, e.g. L2-normalised embeddings)
     * @param epsilon regulariser, &gt; 0 (e.g. {@link #DEFAULT_EPSILON}): each eigenvalue gets
     *     {@code epsilon * lambda_max} added before the square root
     * @return the transform
     * @throws IllegalArgumentException when n &lt; 2, epsilon is not a positive finite number, the
     *     vectors differ in length or hold a non-finite value (naming the vector and position), or
     *     every vector is the same (no variance to whiten)
     */
    public static PcaWhitening fit(float[][] vectors, double epsilon) {
        if (!(epsilon > 0) || Double.isInfinite(epsilon)) {
            throw new IllegalArgumentException("whitening epsilon must be a positive number, got " + epsilon);
        }
        int n = vectors.length;
        if (n < 2) {
            throw new IllegalArgumentException("whitening needs at least 2 pool vectors, got " + n);
        }
        int d = vectors[0].length;
        if (d < 1) {
            throw new IllegalArgumentException("whitening needs vectors of dimension >= 1, got 0");
        }
        double[] mean = new double[d];
        for (int r = 0; r < n; r++) {
            float[] x = vectors[r];
            if (x.length != d) {
                throw new IllegalArgumentException("pool vector " + r + " has dimension " + x.length + ", vector 0 has " + d);
            }
            for (int j = 0; j < d; j++) {
                if (!Float.isFinite(x[j])) {
                    throw new IllegalArgumentException("pool vector " + r + " holds " + x[j] + " at position " + j
                            + "; expected a finite number");
                }
                mean[j] += x[j];
            }
        }
        for (int j = 0; j < d; j++) {
            mean[j] /= n;
        }
        double[][] cov = new double[d][d];
        double[] c = new double[d];
        for (float[] x : vectors) {
            for (int j = 0; j < d; j++) {
                c[j] = x[j] - mean[j];
            }
            for (int a = 0; a < d; a++) {
                double ca = c[a];
                if (ca == 0) {
                    continue;
                }
                double[] row = cov[a];
                for (int b = a; b < d; b++) {
                    row[b] += ca * c[b];
                }
            }
        }
        for (int a = 0; a < d; a++) {
            for (int b = a; b < d; b++) {
                cov[a][b] /= n;
                cov[b][a] = cov[a][b]; // exactly symmetric: Commons Math then takes its symmetric (tridiagonal QL) path
            }
        }
        EigenDecomposition eig = new EigenDecomposition(new Array2DRowRealMatrix(cov, false));
        double[] raw = eig.getRealEigenvalues();
        Integer[] order = IntStream.range(0, d).boxed().toArray(Integer[]::new);
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> raw[i]).reversed());
        double[] lambda = new double[d];
        for (int i = 0; i < d; i++) {
            lambda[i] = Math.max(0, raw[order[i]]);
        }
        double max = lambda[0];
        if (!(max > 0)) {
            throw new IllegalArgumentException("whitening needs pool vectors that differ: all " + n + " are the same");
        }
        double[][] proj = new double[d][];
        for (int i = 0; i < d; i++) {
            RealVector v = eig.getEigenvector(order[i]);
            double s = 1 / Math.sqrt(lambda[i] + epsilon * max);
            double[] row = v.toArray();
            for (int j = 0; j < d; j++) {
                row[j] *= s;
            }
            proj[i] = row;
        }
        return new PcaWhitening(mean, lambda, proj, epsilon, n);
    }

    /** @return D, the dimension of input and output vectors */
    public int dimension() {
        return mean.length;
    }

    /** @return the regulariser epsilon the transform was fitted with */
    public double epsilon() {
        return epsilon;
    }

    /** @return n, the number of pool vectors the transform was fitted on */
    public int fittedOn() {
        return fittedOn;
    }

    /** @return the pool mean, double[D] (a copy) */
    public double[] mean() {
        return mean.clone();
    }

    /** @return the eigenvalues lambda_i of the pool's population covariance, double[D], decreasing, &ge; 0 (a copy) */
    public double[] eigenvalues() {
        return eigenvalues.clone();
    }

    /**
     * @param x a vector of dimension D
     * @return the whitened vector before re-normalisation, double[D]: component i is
     *     {@code v_i . (x - m) / sqrt(lambda_i + epsilon * lambda_max)}, by decreasing lambda_i
     * @throws IllegalArgumentException when x is not of dimension D
     */
    public double[] project(float[] x) {
        int d = mean.length;
        if (x.length != d) {
            throw new IllegalArgumentException("cannot whiten a vector of dimension " + x.length + " with a transform fitted"
                    + " on dimension " + d);
        }
        double[] c = new double[d];
        for (int j = 0; j < d; j++) {
            c[j] = x[j] - mean[j];
        }
        double[] y = new double[d];
        for (int i = 0; i < d; i++) {
            double[] row = projection[i];
            double s = 0;
            for (int j = 0; j < d; j++) {
                s += row[j] * c[j];
            }
            y[i] = s;
        }
        return y;
    }

    /**
     * @param x a vector of dimension D
     * @return the whitened vector re-normalised to unit L2 length, float32[D]; all zeros when x
     *     is the pool mean
     * @throws IllegalArgumentException when x is not of dimension D
     */
    public float[] apply(float[] x) {
        double[] y = project(x);
        double norm = 0;
        for (double v : y) {
            norm += v * v;
        }
        norm = Math.sqrt(norm);
        float[] out = new float[y.length];
        if (norm > 0) {
            for (int i = 0; i < y.length; i++) {
                out[i] = (float) (y[i] / norm);
            }
        }
        return out;
    }

    /**
     * @param xs vectors of dimension D
     * @return {@link #apply} of each, float32[n][D]
     */
    public float[][] apply(float[][] xs) {
        float[][] out = new float[xs.length][];
        for (int i = 0; i < xs.length; i++) {
            out[i] = apply(xs[i]);
        }
        return out;
    }
}
