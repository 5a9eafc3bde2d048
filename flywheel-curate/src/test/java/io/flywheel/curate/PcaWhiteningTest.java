package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.commons.math3.linear.MatrixUtils;
import org.apache.commons.math3.linear.QRDecomposition;
import org.apache.commons.math3.linear.RealMatrix;
import org.junit.jupiter.api.Test;

/**
 * PCA whitening (Jégou and Chum, ECCV 2012) on generated data with known truth: the transform by
 * hand on four points, the whitened pool covariance, the rank-deficient case n &lt; D, and a pool
 * where whitening turns same-scene neighbours into same-attribute neighbours.
 */
class PcaWhiteningTest {
    private static final double EPS = 1e-3;

    @Test
    void fourPointsByHand() {
        // (+-2, 0) and (0, +-1): mean 0, population covariance diag(4*2/4, 1*2/4) = diag(2, 0.5)
        float[][] pool = {{2, 0}, {-2, 0}, {0, 1}, {0, -1}};
        PcaWhitening w = PcaWhitening.fit(pool, EPS);
        assertArrayEquals(new double[] {2, 0.5}, w.eigenvalues(), 1e-12);
        assertArrayEquals(new double[] {0, 0}, w.mean(), 0);
        assertEquals(4, w.fittedOn());
        // component 0 is the x axis scaled by 1/sqrt(2 + 0.001 * 2), component 1 the y axis by 1/sqrt(0.5 + 0.002)
        double[] y = w.project(new float[] {2, 0});
        assertEquals(2 / Math.sqrt(2.002), Math.abs(y[0]), 1e-12); // 1.41351...
        assertEquals(0, y[1], 1e-12);
        double[] z = w.project(new float[] {0, 1});
        assertEquals(0, z[0], 1e-12);
        assertEquals(1 / Math.sqrt(0.502), Math.abs(z[1]), 1e-12); // 1.41139...
        // (1, 1): x stretched by 1/sqrt(2.002), y by 1/sqrt(0.502): y dominates after re-normalisation
        float[] u = w.apply(new float[] {1, 1});
        double a = 1 / Math.sqrt(2.002);
        double b = 1 / Math.sqrt(0.502);
        assertEquals(a / Math.hypot(a, b), Math.abs(u[0]), 1e-6);
        assertEquals(b / Math.hypot(a, b), Math.abs(u[1]), 1e-6);
    }

    @Test
    void whitenedPoolCovarianceIsIdentityOnTheTopComponents() {
        int n = 400;
        int d = 12;
        Random rnd = new Random(7);
        // x = mu + sum_i s_i g_i q_i: an orthonormal basis q (random rotation), standard deviations s_i from 1 down to 0.01
        RealMatrix q = rotation(d, rnd);
        double[] sd = new double[d];
        for (int i = 0; i < d; i++) {
            sd[i] = Math.pow(0.01, i / (double) (d - 1));
        }
        float[][] pool = new float[n][d];
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < d; i++) {
                double g = sd[i] * rnd.nextGaussian();
                for (int j = 0; j < d; j++) {
                    pool[r][j] += (float) (g * q.getEntry(j, i));
                }
            }
            pool[r][0] += 3f; // an offset the centring removes
        }
        PcaWhitening w = PcaWhitening.fit(pool, EPS);
        double[] lambda = w.eigenvalues();
        double[][] y = new double[n][];
        for (int r = 0; r < n; r++) {
            y[r] = w.project(pool[r]);
        }
        double[][] cov = covariance(y);
        for (int i = 0; i < d; i++) {
            double want = lambda[i] / (lambda[i] + EPS * lambda[0]);
            assertEquals(want, cov[i][i], 1e-6, "component " + i);
            for (int j = 0; j < d; j++) {
                if (j != i) {
                    assertEquals(0, cov[i][j], 1e-6, "components " + i + ", " + j);
                }
            }
        }
        // the top components (lambda_i >= lambda_max / 10: epsilon * lambda_max / lambda_i <= 0.01): variance ~1
        int top = 0;
        for (int i = 0; i < d && lambda[i] >= lambda[0] / 10; i++) {
            assertEquals(1, cov[i][i], 0.01, "component " + i);
            top++;
        }
        assertTrue(top >= 3, "top components: " + top);
        // the eigenvalues sum to the trace of the input's covariance (a rotation keeps the trace)
        double[][] in = new double[n][d];
        for (int r = 0; r < n; r++) {
            for (int j = 0; j < d; j++) {
                in[r][j] = pool[r][j];
            }
        }
        double[][] cin = covariance(in);
        double trace = 0;
        double sum = 0;
        for (int i = 0; i < d; i++) {
            trace += cin[i][i];
            sum += lambda[i];
        }
        assertEquals(trace, sum, 1e-9 * trace);
        // the smallest: sd 0.01, lambda ~1e-4 against epsilon * lambda_max ~1e-3: shrunk to ~0.09
        assertTrue(cov[d - 1][d - 1] < 0.2, "smallest component " + cov[d - 1][d - 1]);
    }

    @Test
    void fewerVectorsThanDimensionsIsRegularised() {
        int n = 5;
        int d = 20;
        Random rnd = new Random(3);
        float[][] pool = new float[n][d];
        for (float[] x : pool) {
            for (int j = 0; j < d; j++) {
                x[j] = (float) rnd.nextGaussian();
            }
        }
        PcaWhitening w = PcaWhitening.fit(pool, EPS);
        double[] lambda = w.eigenvalues();
        // n centred vectors span n - 1 dimensions: 4 non-zero eigenvalues, 16 (numerically) zero
        for (int i = 0; i < 4; i++) {
            assertTrue(lambda[i] > 0.1, "eigenvalue " + i + " = " + lambda[i]);
        }
        for (int i = 4; i < d; i++) {
            assertEquals(0, lambda[i], 1e-9 * lambda[0], "eigenvalue " + i);
        }
        double[][] cov = covariance(projectAll(w, pool));
        for (int i = 0; i < 4; i++) {
            assertEquals(lambda[i] / (lambda[i] + EPS * lambda[0]), cov[i][i], 1e-6);
        }
        // a direction outside the pool's span is scaled by 1 / sqrt(epsilon * lambda_max), finite
        float[] off = new float[d];
        double[] mean = w.mean();
        for (int j = 0; j < d; j++) {
            off[j] = (float) mean[j];
        }
        off[0] += 1e-3f;
        double[] y = w.project(off);
        double norm = 0;
        for (double v : y) {
            assertTrue(Double.isFinite(v));
            norm += v * v;
        }
        assertTrue(Math.sqrt(norm) <= 1e-3 / Math.sqrt(EPS * lambda[0]) * 1.001, "norm " + Math.sqrt(norm));
        float[] unit = w.apply(off);
        assertEquals(1, Math.sqrt(dot(unit, unit)), 1e-5);
    }

    /**
     * Pool: 2 scenes x 20 episodes; 4 of each scene's are "hard" (the rare attribute, p = 0.2). Raw
     * vector (before a random rotation of R^10): A = 1 on coordinate 0 or 1 (the scene), B = 0.2 on
     * coordinate 2 when hard, C = 1 on coordinate 3 (shared), noise sd 0.001 on coordinates 4..9.
     * Queries: 3 more hard scene-0 episodes. k = 8.
     *
     * <p>Cosine without whitening, from a hard scene-0 query: hard scene-0 ~0, plain scene-0
     * 1 - 2 / (sqrt(2.04) sqrt(2)) = 0.0099, hard scene-1 1 - 1.04 / 2.04 = 0.49: the 8 neighbours are
     * the 4 hard and 4 plain scene-0 episodes, precision 4/8 = 0.5, all same-scene.
     *
     * <p>Whitened (scene variance 0.5 is lambda_max, hard variance 0.04 * 0.16 = 0.0064, epsilon *
     * lambda_max = 0.0005): scene coordinate +-0.9995, hard coordinate 1.926 (hard) or -0.481 (plain);
     * from a hard scene-0 query: hard scene-0 ~0, hard scene-1 1 - (3.71 - 1) / (3.71 + 1) = 0.425,
     * plain scene-0 0.97: the 8 neighbours are the 8 hard episodes, precision 1.0, 4 from each scene.
     */
    @Test
    void whiteningFindsTheRareAttributeInsteadOfTheScene() {
        Random rnd = new Random(11);
        int d = 10;
        RealMatrix rot = rotation(d, rnd);
        List<float[]> pool = new ArrayList<>();
        List<int[]> labels = new ArrayList<>(); // {scene, hard}
        for (int scene = 0; scene < 2; scene++) {
            for (int i = 0; i < 20; i++) {
                boolean hard = i < 4;
                pool.add(episode(scene, hard, rot, rnd));
                labels.add(new int[] {scene, hard ? 1 : 0});
            }
        }
        float[][] queries = new float[3][];
        for (int i = 0; i < 3; i++) {
            queries[i] = episode(0, true, rot, rnd);
        }
        float[][] p = pool.toArray(new float[0][]);
        ExactSearch raw = ExactSearch.of(normalise(p));
        PcaWhitening w = PcaWhitening.fit(p, EPS);
        assertEquals(0.5, w.eigenvalues()[0], 0.02); // the scene direction
        assertEquals(0.0064, w.eigenvalues()[1], 0.0005); // the hard direction
        ExactSearch white = ExactSearch.of(w.apply(p));
        for (float[] q : queries) {
            int[] before = count(raw.knn(normalise(new float[][] {q})[0], 8), labels);
            assertEquals(8, before[0], "without whitening: all 8 neighbours share the query's scene");
            assertEquals(4, before[1], "without whitening: precision 4/8 (the 4 hard same-scene episodes)");
            int[] after = count(white.knn(w.apply(q), 8), labels);
            assertEquals(8, after[1], "with whitening: precision 8/8");
            assertEquals(4, after[0], "with whitening: 4 of the 8 from the query's scene, 4 from the other");
        }
    }

    @Test
    void badInputIsNamed() {
        IllegalArgumentException one = assertThrows(IllegalArgumentException.class,
                () -> PcaWhitening.fit(new float[][] {{1, 2}}, EPS));
        assertTrue(one.getMessage().contains("at least 2"), one.getMessage());
        IllegalArgumentException same = assertThrows(IllegalArgumentException.class,
                () -> PcaWhitening.fit(new float[][] {{1, 2}, {1, 2}}, EPS));
        assertTrue(same.getMessage().contains("all 2 are the same"), same.getMessage());
        IllegalArgumentException ragged = assertThrows(IllegalArgumentException.class,
                () -> PcaWhitening.fit(new float[][] {{1, 2}, {1}}, EPS));
        assertTrue(ragged.getMessage().contains("pool vector 1 has dimension 1"), ragged.getMessage());
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
                () -> PcaWhitening.fit(new float[][] {{1, 2}, {1, Float.NaN}}, EPS));
        assertTrue(nan.getMessage().contains("pool vector 1 holds NaN at position 1"), nan.getMessage());
        IllegalArgumentException eps = assertThrows(IllegalArgumentException.class,
                () -> PcaWhitening.fit(new float[][] {{1, 2}, {2, 1}}, 0));
        assertTrue(eps.getMessage().contains("epsilon must be a positive number, got 0.0"), eps.getMessage());
        PcaWhitening w = PcaWhitening.fit(new float[][] {{1, 2}, {2, 1}}, EPS);
        IllegalArgumentException dim = assertThrows(IllegalArgumentException.class, () -> w.apply(new float[3]));
        assertTrue(dim.getMessage().contains("dimension 3") && dim.getMessage().contains("dimension 2"), dim.getMessage());
    }

    private static float[] episode(int scene, boolean hard, RealMatrix rot, Random rnd) {
        int d = rot.getRowDimension();
        double[] x = new double[d];
        x[scene] = 1;
        x[2] = hard ? 0.2 : 0;
        x[3] = 1;
        for (int j = 4; j < d; j++) {
            x[j] = 0.001 * rnd.nextGaussian();
        }
        double[] r = rot.operate(x);
        float[] out = new float[d];
        for (int j = 0; j < d; j++) {
            out[j] = (float) r[j];
        }
        return out;
    }

    /** @return {same scene as scene 0, hard} counts of the neighbours */
    private static int[] count(List<Neighbour> hits, List<int[]> labels) {
        int[] c = new int[2];
        for (Neighbour h : hits) {
            c[0] += labels.get(h.row())[0] == 0 ? 1 : 0;
            c[1] += labels.get(h.row())[1];
        }
        return c;
    }

    private static RealMatrix rotation(int d, Random rnd) {
        double[][] g = new double[d][d];
        for (double[] row : g) {
            for (int j = 0; j < d; j++) {
                row[j] = rnd.nextGaussian();
            }
        }
        return new QRDecomposition(MatrixUtils.createRealMatrix(g)).getQ();
    }

    private static double[][] projectAll(PcaWhitening w, float[][] xs) {
        double[][] y = new double[xs.length][];
        for (int i = 0; i < xs.length; i++) {
            y[i] = w.project(xs[i]);
        }
        return y;
    }

    /** Population covariance of rows. */
    private static double[][] covariance(double[][] y) {
        int n = y.length;
        int d = y[0].length;
        double[] m = new double[d];
        for (double[] r : y) {
            for (int j = 0; j < d; j++) {
                m[j] += r[j] / n;
            }
        }
        double[][] c = new double[d][d];
        for (double[] r : y) {
            for (int a = 0; a < d; a++) {
                for (int b = 0; b < d; b++) {
                    c[a][b] += (r[a] - m[a]) * (r[b] - m[b]) / n;
                }
            }
        }
        return c;
    }

    private static float[][] normalise(float[][] xs) {
        float[][] out = new float[xs.length][];
        for (int i = 0; i < xs.length; i++) {
            double n = Math.sqrt(dot(xs[i], xs[i]));
            out[i] = new float[xs[i].length];
            for (int j = 0; j < xs[i].length; j++) {
                out[i][j] = (float) (xs[i][j] / n);
            }
        }
        return out;
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
