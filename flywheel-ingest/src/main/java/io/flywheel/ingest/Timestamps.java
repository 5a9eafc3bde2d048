package io.flywheel.ingest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The timestamp rule of ingest, and the checks reported with it.
 *
 * <p><b>Rule.</b> For each message, the chosen time ({@code timeNs}, int64 ns since the Unix epoch) is
 * its header stamp when the message has a header and the stamp is <em>sane</em>: non-zero, and within
 * {@link #MAX_STAMP_SKEW_NS} (10 s) of the log time, unless the log time is 0 (then any non-zero stamp is
 * taken). Otherwise it is the log time. A message with neither (stamp and log time 0) keeps 0 and is
 * counted as {@code unresolved}: nothing is guessed.
 *
 * <p><b>Checks</b> (counted in a {@link TimestampReport}, never silently fixed): zero stamps, stamps more
 * than 10 s off the log time, log time 0, header stamps that go backwards (non-monotonic), and clock
 * jumps on the chosen times: any backwards step, and any forward gap larger than 10x the stream's median
 * period.
 */
public final class Timestamps {
    /** Largest |stamp - log time| for a stamp to be trusted: 10 s. */
    public static final long MAX_STAMP_SKEW_NS = 10_000_000_000L;
    /** A forward gap larger than this many median periods is a clock jump. */
    public static final int JUMP_FACTOR = 10;
    /** At most this many positions are listed per kind of finding. */
    public static final int MAX_POSITIONS = 100;

    private Timestamps() {}

    /**
     * Applies the rule to one message.
     *
     * @param logTimeNs log time, ns
     * @param headerStampNs header stamp, ns; 0 when the message has no header or the stamp is 0
     * @return the chosen time, ns
     */
    public static long choose(long logTimeNs, long headerStampNs) {
        return sane(logTimeNs, headerStampNs) ? headerStampNs : logTimeNs;
    }

    /** @return true when the stamp passes the rule's sanity test */
    public static boolean sane(long logTimeNs, long headerStampNs) {
        if (headerStampNs == 0) {
            return false;
        }
        if (logTimeNs == 0) {
            return true;
        }
        long d = headerStampNs - logTimeNs;
        return d < MAX_STAMP_SKEW_NS && d > -MAX_STAMP_SKEW_NS;
    }

    /**
     * Applies the rule to a stream and reports on it.
     *
     * @param topic topic, for the report
     * @param logTimeNs log time per message
     * @param headerStampNs header stamp per message, 0 when absent or zero
     * @param hasHeader whether messages of this stream carry a header at all (then a 0 stamp counts as a zero
     *     stamp)
     * @param chosenOut receives the chosen time per message; same length as {@code logTimeNs}
     * @return the report
     */
    public static TimestampReport choose(String topic, long[] logTimeNs, long[] headerStampNs, boolean hasHeader,
                                         long[] chosenOut) {
        int n = logTimeNs.length;
        int fromHeader = 0, zeroStamps = 0, insane = 0, logZero = 0, unresolved = 0;
        for (int i = 0; i < n; i++) {
            long log = logTimeNs[i];
            long st = headerStampNs[i];
            if (log == 0) logZero++;
            if (hasHeader && st == 0) zeroStamps++;
            if (sane(log, st)) {
                chosenOut[i] = st;
                fromHeader++;
            } else {
                if (st != 0) insane++;
                chosenOut[i] = log;
            }
            if (chosenOut[i] == 0) unresolved++;
        }
        List<Integer> nonMono = new ArrayList<>();
        int nonMonoCount = 0;
        long prevStamp = 0;
        boolean havePrev = false;
        for (int i = 0; i < n; i++) {
            long st = headerStampNs[i];
            if (st == 0) continue;
            if (havePrev && st < prevStamp) {
                nonMonoCount++;
                if (nonMono.size() < MAX_POSITIONS) nonMono.add(i);
            }
            prevStamp = st;
            havePrev = true;
        }
        long median = medianPeriod(chosenOut);
        List<TimestampReport.Jump> jumps = new ArrayList<>();
        int jumpCount = 0;
        for (int i = 1; i < n; i++) {
            long d = chosenOut[i] - chosenOut[i - 1];
            boolean back = d < 0;
            boolean gap = median > 0 && d > median * JUMP_FACTOR;
            if (back || gap) {
                jumpCount++;
                if (jumps.size() < MAX_POSITIONS) jumps.add(new TimestampReport.Jump(i, d, back));
            }
        }
        return new TimestampReport(topic, n, fromHeader, n - fromHeader, zeroStamps, insane, logZero, unresolved,
                nonMono, nonMonoCount, median, jumps, jumpCount);
    }

    /**
     * @param t times, ns
     * @return the median of the positive consecutive differences, 0 when there are none
     */
    public static long medianPeriod(long[] t) {
        long[] d = new long[Math.max(0, t.length - 1)];
        int k = 0;
        for (int i = 1; i < t.length; i++) {
            long x = t[i] - t[i - 1];
            if (x > 0) d[k++] = x;
        }
        if (k == 0) return 0;
        Arrays.sort(d, 0, k);
        return d[k / 2];
    }
}
