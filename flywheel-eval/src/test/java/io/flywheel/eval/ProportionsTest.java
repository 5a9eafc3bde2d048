package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Wilson intervals, the two-proportion z-test, Fisher's exact test and Benjamini-Hochberg against values computed with
 * SciPy 1.17.1 (Debian python3-scipy: {@code binomtest(k, n).proportion_ci(method='wilson')},
 * {@code fisher_exact}, {@code 2 * norm.sf(|z|)}, {@code false_discovery_control}) and by hand.
 */
class ProportionsTest {
    @Test
    void wilsonIntervalsEqualScipy() {
        assertInterval(0.39677814746114526, 0.892208732593699, Proportions.wilson(7, 10, Proportions.Z95));
        assertInterval(0.0, 0.2775327998628892, Proportions.wilson(0, 10, Proportions.Z95));
        assertInterval(0.7224672001371107, 1.0, Proportions.wilson(10, 10, Proportions.Z95));
        assertInterval(0.7863976856252035, 0.9565242350681096, Proportions.wilson(45, 50, Proportions.Z95));
        assertInterval(0.06149194472039615, 0.7923403991979523, Proportions.wilson(1, 3, Proportions.Z95));
    }

    private static void assertInterval(double lo, double hi, Proportions.Interval i) {
        assertEquals(lo, i.low(), 1e-12);
        assertEquals(hi, i.high(), 1e-12);
    }

    @Test
    void zTestEqualsScipyNormal() {
        // by hand: 45/50 vs 30/50, pooled 0.75, se = sqrt(0.75 * 0.25 * 0.04) = 0.0866, z = 0.3 / 0.0866 = 3.4641
        assertEquals(3.4641016151377553, Proportions.zStatistic(45, 50, 30, 50), 1e-12);
        assertRel(0.0005320055051392477, Proportions.twoProportionZTest(45, 50, 30, 50));
        assertRel(0.1024704348597491, Proportions.twoProportionZTest(80, 100, 70, 100));
        assertRel(0.025160759200408778, Proportions.twoProportionZTest(12, 20, 5, 20));
        assertRel(0.37099767373660797, Proportions.twoProportionZTest(500, 1000, 480, 1000));
        assertEquals(1.0, Proportions.twoProportionZTest(10, 10, 20, 20)); // pooled rate 1: nothing to see
    }

    @Test
    void fisherExactEqualsScipy() {
        assertEquals(0.15343480049362404, Proportions.fisherExact(3, 8, 7, 9), 1e-12);
        assertEquals(0.0033730974907445503, Proportions.fisherExact(1, 9, 8, 9), 1e-12);
        // by hand: 0/5 vs 5/5 is one of two extreme tables of C(10,5) = 252: 2/252
        assertEquals(2.0 / 252, Proportions.fisherExact(0, 5, 5, 5), 1e-14);
        assertEquals(0.05355099259437413, Proportions.fisherExact(12, 20, 5, 20), 1e-12);
        assertEquals(0.0009668432030628979, Proportions.fisherExact(45, 50, 30, 50), 1e-12);
        assertEquals(1.0, Proportions.fisherExact(2, 4, 2, 4), 1e-12);
    }

    @Test
    void benjaminiHochbergEqualsScipy() {
        double[] p = {0.01, 0.04, 0.03, 0.005, 0.2, 0.5};
        assertArrayEquals(new double[] {0.03, 0.06, 0.06, 0.03, 0.24, 0.5}, FalseDiscovery.adjusted(p), 1e-12);
        // at q = 0.05: i q / m = 0.0083, 0.0167, 0.025, 0.033, ...: only 0.005 and 0.01 pass (0.03 > 0.025, 0.04 > 0.033)
        assertArrayEquals(new boolean[] {true, false, false, true, false, false},
                FalseDiscovery.benjaminiHochberg(p, 0.05));
        // step-up: a p-value above its own bound is still rejected when a larger one passes (0.04 <= 4 * 0.05 / 4)
        assertArrayEquals(new boolean[] {true, true, true, true},
                FalseDiscovery.benjaminiHochberg(new double[] {0.02, 0.03, 0.035, 0.04}, 0.05));
    }

    private static void assertRel(double expected, double actual) {
        assertEquals(expected, actual, expected * 1e-6);
    }
}
