package io.flywheel.eval;

/**
 * Statistics of success rates: the Wilson score interval of one proportion, and the two tests of a difference of two
 * proportions that {@code eval compare} uses per cell. Plain doubles, no state.
 */
public final class Proportions {
    private Proportions() {}

    /** The standard normal quantile of 0.975: a 95% two-sided interval. */
    public static final double Z95 = 1.959963984540054;

    /** A closed interval of a proportion, both ends in [0, 1]. */
    public record Interval(double low, double high) {
        /** @return whether {@code p} lies inside, ends included */
        public boolean covers(double p) {
            return p >= low && p <= high;
        }
    }

    /**
     * The Wilson score interval (E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
     * JASA 22, 1927): centre {@code (p + z²/2n) / (1 + z²/n)}, half-width
     * {@code z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)}, with {@code p = successes / n}.
     *
     * @param successes k, 0 &le; k &le; n
     * @param n trials, &ge; 1
     * @param z the normal quantile ({@link #Z95} for 95%)
     * @return the interval; {@code [0, 1]} for n = 0
     * @throws IllegalArgumentException when k is outside [0, n]
     */
    public static Interval wilson(long successes, long n, double z) {
        if (successes < 0 || successes > n) {
            throw new IllegalArgumentException("successes " + successes + " outside [0, " + n + "]");
        }
        if (n == 0) {
            return new Interval(0, 1);
        }
        double p = (double) successes / n;
        double z2 = z * z;
        double denom = 1 + z2 / n;
        double centre = (p + z2 / (2.0 * n)) / denom;
        double half = z / denom * Math.sqrt(p * (1 - p) / n + z2 / (4.0 * n * n));
        return new Interval(Math.max(0, centre - half), Math.min(1, centre + half));
    }

    /**
     * The two-sided two-proportion z-test with the pooled variance: {@code z = (p1 - p2) / sqrt(p(1-p)(1/n1 + 1/n2))},
     * {@code p = (k1 + k2) / (n1 + n2)}, p-value {@code 2 (1 - Φ(|z|))}.
     *
     * @return the p-value; 1 when the pooled proportion is 0 or 1 (no difference can be seen)
     */
    public static double twoProportionZTest(long k1, long n1, long k2, long n2) {
        check(k1, n1);
        check(k2, n2);
        double pooled = (double) (k1 + k2) / (n1 + n2);
        double se = Math.sqrt(pooled * (1 - pooled) * (1.0 / n1 + 1.0 / n2));
        if (se == 0) {
            return 1;
        }
        double z = ((double) k1 / n1 - (double) k2 / n2) / se;
        return Math.min(1, erfc(Math.abs(z) / Math.sqrt(2)));
    }

    /** @return the z statistic of {@link #twoProportionZTest} (0 when its standard error is 0) */
    public static double zStatistic(long k1, long n1, long k2, long n2) {
        double pooled = (double) (k1 + k2) / (n1 + n2);
        double se = Math.sqrt(pooled * (1 - pooled) * (1.0 / n1 + 1.0 / n2));
        return se == 0 ? 0 : ((double) k1 / n1 - (double) k2 / n2) / se;
    }

    /**
     * Fisher's exact test of the 2x2 table {@code [[k1, n1-k1], [k2, n2-k2]]}, two-sided: the sum of the
     * hypergeometric probabilities (margins fixed) of every table no more probable than the one observed (with a
     * relative tolerance of 1e-7, as R's {@code fisher.test} and SciPy's {@code fisher_exact} do).
     *
     * @return the p-value, in (0, 1]
     */
    public static double fisherExact(long k1, long n1, long k2, long n2) {
        check(k1, n1);
        check(k2, n2);
        long successes = k1 + k2;
        long n = n1 + n2;
        long lo = Math.max(0, successes - n2);
        long hi = Math.min(successes, n1);
        double observed = logHypergeometric(k1, n1, n2, successes);
        double sum = 0;
        double maxLog = observed;
        for (long x = lo; x <= hi; x++) {
            maxLog = Math.max(maxLog, logHypergeometric(x, n1, n2, successes));
        }
        double threshold = observed + Math.log1p(1e-7);
        for (long x = lo; x <= hi; x++) {
            double lp = logHypergeometric(x, n1, n2, successes);
            if (lp <= threshold) {
                sum += Math.exp(lp - maxLog);
            }
        }
        return Math.min(1, sum * Math.exp(maxLog));
    }

    /** log P(X = x) for X ~ Hypergeometric: x successes in the first row of n1, n2 rows, {@code successes} in all. */
    private static double logHypergeometric(long x, long n1, long n2, long successes) {
        return logChoose(n1, x) + logChoose(n2, successes - x) - logChoose(n1 + n2, successes);
    }

    private static double logChoose(long n, long k) {
        return logGamma(n + 1.0) - logGamma(k + 1.0) - logGamma(n - k + 1.0);
    }

    private static final double[] LANCZOS = {0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7};

    /** ln Γ(x) for x &ge; 0.5 by the Lanczos approximation (g = 7, 9 terms; relative error about 1e-15). */
    static double logGamma(double x) {
        double xm = x - 1;
        double a = LANCZOS[0];
        double t = xm + 7.5;
        for (int i = 1; i < 9; i++) {
            a += LANCZOS[i] / (xm + i);
        }
        return 0.5 * Math.log(2 * Math.PI) + (xm + 0.5) * Math.log(t) - t + Math.log(a);
    }

    /**
     * The complementary error function, by the Chebyshev fit of Numerical Recipes ({@code erfcc}; fractional error
     * below 1.2e-7 everywhere).
     */
    static double erfc(double x) {
        double z = Math.abs(x);
        double t = 1 / (1 + 0.5 * z);
        double ans = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
                + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223
                + t * 0.17087277)))))))));
        return x >= 0 ? ans : 2 - ans;
    }

    private static void check(long k, long n) {
        if (n < 1 || k < 0 || k > n) {
            throw new IllegalArgumentException("a proportion needs 0 <= successes <= n and n >= 1, got " + k + "/" + n);
        }
    }
}
