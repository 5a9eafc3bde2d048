package io.flywheel.curate.map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PCA by power iteration on data whose principal axes are known, and the map drawn from it. */
class EmbeddingMapTest {
    /** Two orthonormal directions in 4-D, not aligned with the axes: u = (1,1,1,1)/2, w = (1,-1,1,-1)/2. */
    private static final float[] U = {0.5f, 0.5f, 0.5f, 0.5f};
    private static final float[] W = {0.5f, -0.5f, 0.5f, -0.5f};
    private static final float[] C = {1f, 2f, 3f, 4f}; // an offset the centring must remove

    private static float[] at(double a, double b) {
        float[] v = new float[4];
        for (int j = 0; j < 4; j++) {
            v[j] = (float) (C[j] + a * U[j] + b * W[j]);
        }
        return v;
    }

    @Test
    void fourPointsOnTwoAxesGiveTheHandComputedProjection() {
        // points c +-3u and c +-1w: covariance = (2*9 uu' + 2*1 ww') / 4, eigenvalues 4.5 and 0.5, trace 5
        float[][] v = {at(3, 0), at(-3, 0), at(0, 1), at(0, -1)};
        Pca.Projection p = Pca.fit(v, 2);
        assertArrayEquals(new double[] {1, 2, 3, 4}, p.mean(), 1e-6);
        assertEquals(4.5, p.variances()[0], 1e-6);
        assertEquals(0.5, p.variances()[1], 1e-6);
        assertEquals(5.0, p.totalVariance(), 1e-6);
        assertEquals(0.9, p.explained(0), 1e-6);
        // sign rule: the largest-magnitude entry is positive; u's entries tie, so compare up to sign
        assertEquals(1.0, Math.abs(dot(p.components()[0], U)), 1e-6);
        assertEquals(1.0, Math.abs(dot(p.components()[1], W)), 1e-6);
        assertEquals(3.0, Math.abs(p.coordinates()[0][0]), 1e-5);
        assertEquals(0.0, p.coordinates()[0][1], 1e-5);
        assertEquals(-p.coordinates()[0][0], p.coordinates()[1][0], 1e-5);
        assertEquals(0.0, p.coordinates()[2][0], 1e-5);
        assertEquals(1.0, Math.abs(p.coordinates()[2][1]), 1e-5);
    }

    @Test
    void componentsAreEigenvectorsOfTheCovarianceAndTheResultIsDeterministic() {
        Random r = new Random(7);
        float[][] v = new float[300][16];
        for (float[] x : v) {
            double a = r.nextGaussian() * 3;
            double b = r.nextGaussian() * 1.5;
            for (int j = 0; j < 16; j++) {
                x[j] = (float) (a * Math.sin(j + 1) + b * Math.cos(2 * j) + 0.1 * r.nextGaussian());
            }
        }
        Pca.Projection p = Pca.fit(v, 2);
        double[][] cov = covariance(v, p.mean());
        for (int c = 0; c < 2; c++) {
            double[] cv = times(cov, p.components()[c]);
            for (int j = 0; j < 16; j++) {
                assertEquals(p.variances()[c] * p.components()[c][j], cv[j], 1e-6, "C v = lambda v, component " + c);
            }
        }
        assertEquals(0.0, dot(p.components()[0], p.components()[1]), 1e-9);
        assertTrue(p.variances()[0] >= p.variances()[1]);
        Pca.Projection again = Pca.fit(v, 2);
        assertArrayEquals(p.components()[0], again.components()[0]);
        assertArrayEquals(p.coordinates()[42], again.coordinates()[42]);
    }

    @Test
    void degenerateInputs() {
        assertEquals(0, Pca.fit(new float[0][], 2).coordinates().length);
        Pca.Projection one = Pca.fit(new float[][] {{1, 2, 3}}, 2);
        assertArrayEquals(new double[] {0, 0}, one.coordinates()[0]);
        assertEquals(0, one.explained(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Pca.fit(new float[][] {{1, 2}, {1, Float.NaN}}, 2));
        assertEquals("vector 1 has a non-finite value at position 1", e.getMessage());
    }

    @Test
    void mapMarksFailuresAndMinedAndNamesABadEpisode(@TempDir Path tmp) throws Exception {
        List<EmbeddingMap.Input> in = new ArrayList<>(List.of(
                new EmbeddingMap.Input("a", "kitchen", "success", at(3, 0)),
                new EmbeddingMap.Input("b", "kitchen", "failure:dropped", at(-3, 0)),
                new EmbeddingMap.Input("c", "lab", "success", at(0, 1)),
                new EmbeddingMap.Input("d", "lab", "unknown", at(0, -1))));
        EmbeddingMap m = EmbeddingMap.of(in, Set.of("c"), "pixels-8x8");
        assertEquals(4, m.points().size());
        assertEquals(List.of(false, true, false, false), m.points().stream().map(EmbeddingMap.Point::failure).toList());
        assertEquals(List.of(false, false, true, false), m.points().stream().map(EmbeddingMap.Point::mined).toList());
        assertEquals(0.9, m.explainedPc1(), 1e-6);
        assertEquals(4, m.dimension());
        assertEquals("#4e79a7", m.sceneColour("kitchen"));
        assertEquals("#f28e2b", m.sceneColour("lab"));

        Path png = tmp.resolve("out/map.png");
        m.writePng(png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(960, img.getWidth());
        EmbeddingMap.Frame f = m.frame();
        EmbeddingMap.Point b = m.points().get(1);
        // the failure's cross runs through its centre: red there, not the scene colour
        assertEquals(EmbeddingMap.FAILURE.getRGB(), img.getRGB(f.px(b.x()), f.py(b.y())) | 0xff000000, 0x303030,
                "centre pixel of the failure is red");
        EmbeddingMap.Point a = m.points().get(0);
        assertEquals(new Color(0x4e79a7).getRGB(), img.getRGB(f.px(a.x()), f.py(a.y())));

        in.add(new EmbeddingMap.Input("e", "lab", "success", new float[] {1, 2}));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EmbeddingMap.of(in, Set.of(), null));
        assertTrue(e.getMessage().startsWith("episode e has a 2-d embedding"), e.getMessage());
        assertFalse(EmbeddingMap.of(List.of(), Set.of(), null).enriched());
    }

    private static double dot(double[] a, float[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += a[j] * b[j];
        }
        return s;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int j = 0; j < a.length; j++) {
            s += a[j] * b[j];
        }
        return s;
    }

    private static double[][] covariance(float[][] v, double[] mean) {
        int d = mean.length;
        double[][] c = new double[d][d];
        for (float[] x : v) {
            for (int i = 0; i < d; i++) {
                for (int j = 0; j < d; j++) {
                    c[i][j] += (x[i] - mean[i]) * (x[j] - mean[j]) / v.length;
                }
            }
        }
        return c;
    }

    private static double[] times(double[][] m, double[] v) {
        double[] out = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = dot(m[i], v);
        }
        return out;
    }
}
