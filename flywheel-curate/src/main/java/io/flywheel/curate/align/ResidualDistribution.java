package io.flywheel.curate.align;

import java.util.Arrays;

/**
 * The distribution of |residual| over the frames a stream matched: nearest-rank percentiles (the {@code p}-th
 * percentile of n values is the {@code ceil(p/100 * n)}-th smallest), in milliseconds. What {@code align report}
 * prints per stream and the console shows per episode and per re-alignment.
 *
 * @param count values
 * @param p50Ms median |residual|, ms; null when there is none
 * @param p90Ms 90th percentile, ms; null when there is none
 * @param p99Ms 99th percentile, ms; null when there is none
 * @param maxMs largest, ms; null when there is none
 */
public record ResidualDistribution(int count, Double p50Ms, Double p90Ms, Double p99Ms, Double maxMs) {
    /**
     * @param absNs |residual| values, int64 ns, any order (not changed)
     * @return their distribution
     */
    public static ResidualDistribution of(long[] absNs) {
        long[] s = absNs.clone();
        Arrays.sort(s);
        return new ResidualDistribution(s.length, percentileMs(s, 50), percentileMs(s, 90), percentileMs(s, 99),
                s.length == 0 ? null : s[s.length - 1] / 1e6);
    }

    /**
     * @param sortedNs values in ascending order, int64 ns
     * @param p percentile, 0..100
     * @return the nearest-rank percentile in ms, or null when there are no values
     */
    public static Double percentileMs(long[] sortedNs, double p) {
        if (sortedNs.length == 0) {
            return null;
        }
        int i = (int) Math.ceil(p / 100.0 * sortedNs.length) - 1;
        return sortedNs[Math.max(0, Math.min(sortedNs.length - 1, i))] / 1e6;
    }
}
