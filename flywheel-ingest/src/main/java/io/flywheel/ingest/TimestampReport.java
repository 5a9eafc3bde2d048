package io.flywheel.ingest;

import java.util.List;

/**
 * What {@link Timestamps#choose} found in one stream's times. Positions are message indexes in the
 * stream (0-based, in the order read); the lists keep at most {@link Timestamps#MAX_POSITIONS}
 * entries each, while the counts are complete.
 *
 * @param topic the stream's topic
 * @param messages number of messages
 * @param fromHeaderStamp messages whose chosen time is the header stamp
 * @param fromLogTime messages whose chosen time is the log time (no header, zero or insane stamp)
 * @param zeroStamps messages with a header whose stamp is 0
 * @param insaneStamps messages with a non-zero stamp more than 10 s from a non-zero log time (log time used)
 * @param logTimeZero messages whose log time is 0
 * @param unresolved messages whose chosen time is 0 (stamp and log time both 0 or missing)
 * @param nonMonotonicStamps positions i where header stamp[i] &lt; header stamp[i-1] (among messages with a
 *     non-zero stamp)
 * @param nonMonotonicStampCount how many such positions
 * @param medianPeriodNs median of the positive differences between consecutive chosen times, 0 when fewer
 *     than 2 messages
 * @param jumps clock jumps on the chosen times: backwards steps, and forward gaps &gt; 10x the median period
 * @param jumpCount how many jumps in all
 */
public record TimestampReport(String topic, int messages, int fromHeaderStamp, int fromLogTime, int zeroStamps,
                              int insaneStamps, int logTimeZero, int unresolved, List<Integer> nonMonotonicStamps,
                              int nonMonotonicStampCount, long medianPeriodNs, List<Jump> jumps, int jumpCount) {
    public TimestampReport {
        nonMonotonicStamps = List.copyOf(nonMonotonicStamps);
        jumps = List.copyOf(jumps);
    }

    /**
     * One clock jump in the chosen times.
     *
     * @param position index of the message after the jump
     * @param deltaNs chosen time[position] - chosen time[position - 1]; negative for a backwards jump
     * @param backwards true when time went backwards
     */
    public record Jump(int position, long deltaNs, boolean backwards) {}

    /** @return true when nothing odd was found */
    public boolean clean() {
        return zeroStamps == 0 && insaneStamps == 0 && logTimeZero == 0 && unresolved == 0
                && nonMonotonicStampCount == 0 && jumpCount == 0;
    }

    /** @return a one-line summary, e.g. {@code "/tf: 5 msgs, header 3, log 2, zero stamps 2, log time 0: 2"} */
    public String summary() {
        StringBuilder sb = new StringBuilder(topic).append(": ").append(messages).append(" msgs, header ")
                .append(fromHeaderStamp).append(", log ").append(fromLogTime);
        if (zeroStamps > 0) sb.append(", zero stamps ").append(zeroStamps);
        if (insaneStamps > 0) sb.append(", stamps >10 s off log time ").append(insaneStamps);
        if (logTimeZero > 0) sb.append(", log time 0: ").append(logTimeZero);
        if (unresolved > 0) sb.append(", no usable time: ").append(unresolved);
        if (nonMonotonicStampCount > 0) sb.append(", non-monotonic stamps at ").append(nonMonotonicStamps);
        if (jumpCount > 0) sb.append(", clock jumps ").append(jumpCount).append(" at ").append(jumps);
        return sb.toString();
    }
}
