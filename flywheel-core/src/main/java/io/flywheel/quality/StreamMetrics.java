package io.flywheel.quality;

import java.util.Objects;

/**
 * Quality metrics of one stream of an episode.
 *
 * @param stream                 stream name (topic)
 * @param role                   role from the robot profile (camera, state, action, gripper, task, outcome), or null
 * @param messageCount           messages in the episode
 * @param nominalRateHz          nominal rate in Hz from the profile / camera info, or null when unknown
 * @param measuredRateHz         measured rate in Hz: {@code (n - 1) / (last - first)} over sorted stamps; 0 for n &lt; 2
 * @param largestGapNs           largest time without a message, ns, counting the stretch from the episode start to the
 *                               first message and from the last message to the episode end
 * @param dropRatio              {@code max(0, 1 - n / expected)} with {@code expected = floor(duration * nominal) + 1};
 *                               null without a nominal rate
 * @param residualP99Ns          alignment residual |dt| 99th percentile, ns (see
 *                               {@link io.flywheel.align.ResidualStats}); null for the master or unaligned streams
 * @param monotonicityViolations backward steps of the stamps in arrival order
 * @param staticShare            share of frames marked static by enrichment, in [0, 1], or null when not computed
 * @param skippedFrames          frames the robot skipped on purpose (a live stream's frame filter: nearly identical to
 *                               the last frame sent), recorded in the recording's frame-skip channel; rate, gap and
 *                               drop ratio count them as received, {@code messageCount} does not
 * @param residualLimitNs        the residual the stream's alignment method allows by itself, ns
 *                               ({@link #residualLimitNs(io.flywheel.align.AlignMethod, long)}); null for the master
 *                               or unaligned streams
 */
public record StreamMetrics(String stream, String role, long messageCount, Double nominalRateHz, double measuredRateHz,
                            long largestGapNs, Double dropRatio, Long residualP99Ns, int monotonicityViolations,
                            Double staticShare, long skippedFrames, Long residualLimitNs) {

    /** The floor of {@link #residualLimitNs(io.flywheel.align.AlignMethod, long)}: 20 ms. */
    public static final long RESIDUAL_FLOOR_NS = 20_000_000L;

    /**
     * The alignment residual a method gives by itself on a stream of nominal period {@code periodNs}: as-of takes the
     * latest message at or before the frame, so up to one period of lag is the method itself; nearest and
     * interpolation are at most half a period from a message. Limit: {@code max(20 ms, period)} for as-of,
     * {@code max(20 ms, period / 2)} otherwise.
     *
     * @param method   the stream's alignment method
     * @param periodNs the stream's nominal period, ns (1e9 / nominal rate; the median period when no rate is
     *                 declared); 0 or less when unknown (the 20 ms floor alone)
     * @return the limit, ns
     */
    public static long residualLimitNs(io.flywheel.align.AlignMethod method, long periodNs) {
        long p = Math.max(0, periodNs);
        return Math.max(RESIDUAL_FLOOR_NS, method == io.flywheel.align.AlignMethod.ASOF ? p : p / 2);
    }

    public StreamMetrics {
        Objects.requireNonNull(stream, "stream");
    }

    /**
     * Measures a stream from its timestamps.
     *
     * @param stream          stream name
     * @param role            role or null
     * @param timestampsNs    stamps in arrival order, ns (need not be sorted: backward steps are counted)
     * @param nominalRateHz   nominal rate or null
     * @param episodeStartNs  episode start, ns
     * @param episodeEndNs    episode end, ns ({@code >= start})
     * @return metrics with no residual and no static share (add them with {@link #withResidualP99Ns},
     *         {@link #withStaticShare})
     * @throws IllegalArgumentException when end &lt; start or the nominal rate is not positive
     */
    public static StreamMetrics measure(String stream, String role, long[] timestampsNs, Double nominalRateHz,
                                        long episodeStartNs, long episodeEndNs) {
        return measure(stream, role, timestampsNs, nominalRateHz, episodeStartNs, episodeEndNs, new long[0]);
    }

    /**
     * Measures a stream from its timestamps and the times of the frames the robot skipped on purpose: the skipped
     * frames count as received for the measured rate, the largest gap and the drop ratio (a skip is a frame the
     * robot had and chose not to send, not a loss), and as nothing else ({@code messageCount},
     * {@code monotonicityViolations} are the messages'). A real gap between two frames that were neither sent nor
     * skipped still shows.
     *
     * @param skippedNs times of the skipped frames, ns, in the stream's time base; any order
     * @see #measure(String, String, long[], Double, long, long)
     */
    public static StreamMetrics measure(String stream, String role, long[] timestampsNs, Double nominalRateHz,
                                        long episodeStartNs, long episodeEndNs, long[] skippedNs) {
        if (episodeEndNs < episodeStartNs) {
            throw new IllegalArgumentException("stream '" + stream + "': episode end " + episodeEndNs
                    + " ns is before its start " + episodeStartNs + " ns");
        }
        if (nominalRateHz != null && !(nominalRateHz > 0)) {
            throw new IllegalArgumentException("stream '" + stream + "': nominal rate must be > 0 Hz, got " + nominalRateHz);
        }
        int n = timestampsNs.length;
        int back = 0;
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            if (i > 0 && timestampsNs[i] < timestampsNs[i - 1]) back++;
            min = Math.min(min, timestampsNs[i]);
            max = Math.max(max, timestampsNs[i]);
        }
        long[] sorted = timestampsNs;
        if (skippedNs.length > 0) {
            sorted = java.util.Arrays.copyOf(timestampsNs, n + skippedNs.length);
            System.arraycopy(skippedNs, 0, sorted, n, skippedNs.length);
            for (long t : skippedNs) {
                min = Math.min(min, t);
                max = Math.max(max, t);
            }
            java.util.Arrays.sort(sorted);
            n = sorted.length;
        } else if (back > 0) {
            sorted = timestampsNs.clone();
            java.util.Arrays.sort(sorted);
        }
        long gap;
        double rate = 0;
        if (n == 0) {
            gap = episodeEndNs - episodeStartNs;
        } else {
            gap = Math.max(0, Math.max(sorted[0] - episodeStartNs, episodeEndNs - sorted[n - 1]));
            for (int i = 1; i < n; i++) gap = Math.max(gap, sorted[i] - sorted[i - 1]);
            if (n >= 2 && max > min) rate = (n - 1) / ((max - min) / 1e9);
        }
        Double drop = null;
        if (nominalRateHz != null) {
            double expected = Math.floor((episodeEndNs - episodeStartNs) / 1e9 * nominalRateHz + 1e-6) + 1;
            drop = Math.max(0.0, 1.0 - n / expected);
        }
        return new StreamMetrics(stream, role, timestampsNs.length, nominalRateHz, rate, gap, drop, null, back, null,
                skippedNs.length, null);
    }

    /** Measured / nominal rate, or null without a nominal rate. */
    public Double frameRateRatio() {
        return nominalRateHz == null ? null : measuredRateHz / nominalRateHz;
    }

    /** A copy with the alignment residual p99 (ns, or null); the residual limit is kept. */
    public StreamMetrics withResidualP99Ns(Long p99Ns) {
        return withResidual(p99Ns, residualLimitNs);
    }

    /** A copy with the alignment residual p99 and the method's residual limit (both ns, or null). */
    public StreamMetrics withResidual(Long p99Ns, Long limitNs) {
        return new StreamMetrics(stream, role, messageCount, nominalRateHz, measuredRateHz, largestGapNs, dropRatio,
                p99Ns, monotonicityViolations, staticShare, skippedFrames, limitNs);
    }

    /** Residual p99 / residual limit, or null when either is unknown: above 1, more than the method explains. */
    public Double residualP99LimitRatio() {
        return residualP99Ns == null || residualLimitNs == null || residualLimitNs <= 0 ? null
                : (double) residualP99Ns / residualLimitNs;
    }

    /**
     * A copy with another count of backward steps: a stream timed by its log times whose header stamps went back still
     * counts those ({@link io.flywheel.align.ResolvedTimes#monotonicityViolations()}).
     */
    public StreamMetrics withMonotonicityViolations(int violations) {
        return new StreamMetrics(stream, role, messageCount, nominalRateHz, measuredRateHz, largestGapNs, dropRatio,
                residualP99Ns, violations, staticShare, skippedFrames, residualLimitNs);
    }

    /** A copy with the static-frame share (in [0, 1], or null). */
    public StreamMetrics withStaticShare(Double share) {
        return new StreamMetrics(stream, role, messageCount, nominalRateHz, measuredRateHz, largestGapNs, dropRatio,
                residualP99Ns, monotonicityViolations, share, skippedFrames, residualLimitNs);
    }
}
