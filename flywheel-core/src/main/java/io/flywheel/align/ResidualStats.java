package io.flywheel.align;

import java.util.Arrays;

/**
 * Residual statistics of one stream, for {@code flywheel align report}: counts over the frames kept in the output,
 * and the distribution of {@code |dt|} over the matched ones. Percentiles use the nearest-rank method
 * ({@code p}-th percentile = the {@code ceil(p/100 * n)}-th smallest value); all are -1 when nothing matched.
 *
 * @param stream        stream name
 * @param method        alignment method
 * @param frames        frames kept in the output
 * @param matched       kept frames with a value for this stream
 * @param flagged       kept frames flagged for this stream (value null)
 * @param droppedFrames frames removed because this stream missed (see {@link StreamAlignment#droppedFrames()})
 * @param p50AbsNs      median |dt|, ns
 * @param p90AbsNs      90th percentile |dt|, ns
 * @param p99AbsNs      99th percentile |dt|, ns
 * @param maxAbsNs      largest |dt|, ns
 * @param meanAbsNs     mean |dt|, ns
 */
public record ResidualStats(String stream, AlignMethod method, int frames, int matched, int flagged, int droppedFrames,
                            long p50AbsNs, long p90AbsNs, long p99AbsNs, long maxAbsNs, double meanAbsNs) {

    /** Computes the statistics of {@code a} (sorts a copy of the matched |dt|: O(frames log frames)). */
    public static ResidualStats of(StreamAlignment a) {
        int n = a.frames();
        long[] abs = new long[n];
        int m = 0;
        int[] idx = a.index();
        long[] res = a.residualNs();
        double sum = 0;
        for (int f = 0; f < n; f++) {
            if (idx[f] >= 0) {
                long v = Math.abs(res[f]);
                abs[m++] = v;
                sum += v;
            }
        }
        if (m == 0) {
            return new ResidualStats(a.stream(), a.policy().method(), n, 0, n, a.droppedFrames(), -1, -1, -1, -1, -1);
        }
        Arrays.sort(abs, 0, m);
        return new ResidualStats(a.stream(), a.policy().method(), n, m, n - m, a.droppedFrames(),
                percentile(abs, m, 50), percentile(abs, m, 90), percentile(abs, m, 99), abs[m - 1], sum / m);
    }

    /** Nearest-rank percentile of the first {@code m} values of sorted {@code v}. */
    static long percentile(long[] v, int m, double p) {
        int rank = (int) Math.ceil(p / 100.0 * m);
        return v[Math.max(0, Math.min(m, rank) - 1)];
    }
}
