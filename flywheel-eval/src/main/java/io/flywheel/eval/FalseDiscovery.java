package io.flywheel.eval;

import java.util.Arrays;
import java.util.Comparator;

/**
 * The Benjamini-Hochberg step-up procedure (Y. Benjamini, Y. Hochberg, "Controlling the false discovery rate", JRSS B
 * 57, 1995): with m p-values sorted ascending, reject the k smallest, k the largest i with {@code p(i) <= i q / m}.
 * Controls the expected share of false rejections among rejections at q for independent (or positively dependent)
 * tests.
 */
public final class FalseDiscovery {
    private FalseDiscovery() {}

    /**
     * @param p the p-values, each in [0, 1]
     * @param q the false-discovery rate, in (0, 1)
     * @return per p-value, in the given order, whether it is rejected
     */
    public static boolean[] benjaminiHochberg(double[] p, double q) {
        int m = p.length;
        Integer[] order = order(p);
        int k = 0;
        for (int i = m; i >= 1; i--) {
            if (p[order[i - 1]] <= (double) i * q / m) {
                k = i;
                break;
            }
        }
        boolean[] out = new boolean[m];
        for (int i = 0; i < k; i++) {
            out[order[i]] = true;
        }
        return out;
    }

    /**
     * @return the BH-adjusted p-values ("q-values"), in the given order: {@code min over j >= i of m p(j) / j}, at
     *     most 1; a p-value is rejected at q exactly when its adjusted value is &le; q
     */
    public static double[] adjusted(double[] p) {
        int m = p.length;
        Integer[] order = order(p);
        double[] out = new double[m];
        double min = 1;
        for (int i = m; i >= 1; i--) {
            min = Math.min(min, p[order[i - 1]] * m / i);
            out[order[i - 1]] = min;
        }
        return out;
    }

    private static Integer[] order(double[] p) {
        Integer[] order = new Integer[p.length];
        for (int i = 0; i < p.length; i++) {
            if (!(p[i] >= 0 && p[i] <= 1)) {
                throw new IllegalArgumentException("p-value " + i + " is " + p[i] + ", not in [0, 1]");
            }
            order[i] = i;
        }
        Arrays.sort(order, Comparator.comparingDouble(i -> p[i]));
        return order;
    }
}
