package io.flywheel.align;

/**
 * Output of {@link TimestampRule#resolve}: the chosen time per message and the problems found. Positions are input
 * positions (message index in the order given). Arrays are not copied by the accessors; do not modify them.
 *
 * @param timeNs               chosen time per message, ns; {@link Long#MIN_VALUE} for {@link #SOURCE_NONE}
 * @param source               per message: {@link #SOURCE_HEADER}, {@link #SOURCE_LOG}, {@link #SOURCE_PUBLISH},
 *                             {@link #SOURCE_NONE}
 * @param fromHeader           messages timed by their header stamp
 * @param fromLog              messages timed by their log time
 * @param fromPublish          messages timed by their publish time
 * @param zeroStampPositions   messages whose header stamp is 0 (only when header stamps were given)
 * @param zeroLogTimePositions messages whose log time is 0 on a wall-clock stream
 * @param stampOutOfWindow     messages whose non-zero header stamp is too far from the log time (log time used)
 * @param unresolvedPositions  messages with no usable time (left out of alignment)
 * @param nonMonotonicPositions messages whose chosen time is smaller than the previous usable message's
 * @param clockJumpPositions   messages whose chosen time is more than the jump threshold after the previous usable one
 * @param medianPeriodNs       median of the positive steps between consecutive usable times, ns; 0 when none
 * @param wallClock            whether the stream's log times are on a wall clock (see {@link TimestampRule})
 * @param timeline             the timeline the chosen times follow: {@link StreamTimeline#STAMPS} or
 *                             {@link StreamTimeline#LOG_TIME} (never {@code AUTO}); {@code LOG_TIME} also when no
 *                             header stamp was used
 * @param discontinuities      where the sane header stamps step backwards or leap ahead of the log times, in input
 *                             order, whichever timeline was chosen
 */
public record ResolvedTimes(long[] timeNs, byte[] source, int fromHeader, int fromLog, int fromPublish,
                            int[] zeroStampPositions, int[] zeroLogTimePositions, int[] stampOutOfWindow,
                            int[] unresolvedPositions, int[] nonMonotonicPositions, int[] clockJumpPositions,
                            long medianPeriodNs, boolean wallClock, StreamTimeline timeline,
                            java.util.List<StampDiscontinuity> discontinuities) {
    public ResolvedTimes {
        java.util.Objects.requireNonNull(timeline, "timeline");
        if (timeline == StreamTimeline.AUTO) {
            throw new IllegalArgumentException("a resolved stream follows stamps or log times, not AUTO");
        }
        discontinuities = java.util.List.copyOf(discontinuities);
    }

    public static final byte SOURCE_HEADER = 0;
    public static final byte SOURCE_LOG = 1;
    public static final byte SOURCE_PUBLISH = 2;
    public static final byte SOURCE_NONE = 3;

    /** Input positions of the messages that have a usable time, in input order. */
    public int[] usable() {
        int[] out = new int[timeNs.length - unresolvedPositions.length];
        for (int i = 0, k = 0; i < timeNs.length; i++) if (source[i] != SOURCE_NONE) out[k++] = i;
        return out;
    }

    /** The usable times in input order (same length as {@link #usable()}). */
    public long[] usableTimesNs() {
        int[] u = usable();
        long[] t = new long[u.length];
        for (int i = 0; i < u.length; i++) t[i] = timeNs[u[i]];
        return t;
    }

    /**
     * A stream of the usable messages, sorted by a stable sort when needed (non-monotonic stamps are put in place, and
     * reported again by {@link TopicStream#backwardJumps()}); the payload of each message is its input position.
     */
    public TopicStream toStream(String name) {
        return TopicStream.builder(name).timestamps(usableTimesNs()).payload(usable()).sortIfNeeded(true).build();
    }

    /**
     * True when nothing was wrong: no zero stamps or log times, nothing out of window, unresolved, backward or jumping,
     * no stamp discontinuity.
     */
    public boolean clean() {
        return zeroStampPositions.length == 0 && zeroLogTimePositions.length == 0 && stampOutOfWindow.length == 0
                && unresolvedPositions.length == 0 && nonMonotonicPositions.length == 0 && clockJumpPositions.length == 0
                && discontinuities.isEmpty();
    }

    /** @return how many discontinuities step backwards */
    public int backwardDiscontinuities() {
        int n = 0;
        for (StampDiscontinuity d : discontinuities) if (d.backward()) n++;
        return n;
    }

    /**
     * Backward steps of the stream's time as recorded, for the quality rule on monotonicity: on the stamps timeline the
     * backward steps of the chosen times; on the log-time timeline those of the log times (the chosen times) plus
     * the backward stamp discontinuities (the stamps went back even though the log times give the order).
     *
     * @return the count
     */
    public int monotonicityViolations() {
        return nonMonotonicPositions.length + (timeline == StreamTimeline.LOG_TIME ? backwardDiscontinuities() : 0);
    }

    /** @return the same with no zero-stamp finding (a zero stamp that means "no capture time", e.g. a latched calibration) */
    public ResolvedTimes withoutZeroStampFindings() {
        return new ResolvedTimes(timeNs, source, fromHeader, fromLog, fromPublish, new int[0], zeroLogTimePositions,
                stampOutOfWindow, unresolvedPositions, nonMonotonicPositions, clockJumpPositions, medianPeriodNs,
                wallClock, timeline, discontinuities);
    }
}
