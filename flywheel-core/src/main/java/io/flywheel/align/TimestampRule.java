package io.flywheel.align;

import java.util.Arrays;

/**
 * The timestamp rule of ingest: which time each message of a stream gets, and what is wrong with the stamps.
 *
 * <p><b>Rule</b>, per message {@code i} (all times int64 ns):
 * <ol>
 *   <li>A header stamp of 0 means "absent" (no header, or an unset {@code std_msgs/Header.stamp}).</li>
 *   <li>A log time of 0 means "absent" when the stream runs on a wall clock, i.e. its largest log time is at least
 *       {@link Builder#wallClockThresholdNs} (default 1e17 ns, March 1973); on a relative clock that starts at 0
 *       (rosbag2 test bags) 0 is a valid time.</li>
 *   <li>The header stamp is used when present and sane: log time absent, or {@code |stamp - log| < window}
 *       (default 10 s). A present stamp outside the window is counted in {@link ResolvedTimes#stampOutOfWindow()}
 *       and the log time is used.</li>
 *   <li>Otherwise the log time, when present; otherwise the publish time when given and non-zero.</li>
 *   <li>Otherwise the message has no usable time: {@link ResolvedTimes#SOURCE_NONE}, time {@link Long#MIN_VALUE};
 *       it is left out of alignment ({@link ResolvedTimes#usable()}) and counted, never given an invented time.</li>
 * </ol>
 * Then, over the resolved times of usable messages in input order: a time smaller than its predecessor's is a
 * non-monotonic stamp (a backward clock jump; the aligner's stable sort puts it in place); a step larger than the
 * clock-jump threshold (default 1 s) is a forward jump. Both are reported with positions.
 */
public final class TimestampRule {
    private final long windowNs;
    private final long clockJumpThresholdNs;
    private final long wallClockThresholdNs;

    private TimestampRule(Builder b) {
        this.windowNs = b.windowNs;
        this.clockJumpThresholdNs = b.clockJumpThresholdNs;
        this.wallClockThresholdNs = b.wallClockThresholdNs;
    }

    /** The rule with default settings (10 s window, 1 s jump threshold, wall clock from 1e17 ns). */
    public static TimestampRule defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Header-stamp sanity window in ns. */
    public long windowNs() { return windowNs; }

    /** Forward clock-jump threshold in ns. */
    public long clockJumpThresholdNs() { return clockJumpThresholdNs; }

    /**
     * Resolves one stream's message times.
     *
     * @param headerStampNs header stamp per message (0 = absent), or null when the messages have no header
     * @param logTimeNs     log time per message (required)
     * @param publishTimeNs publish time per message (0 = absent), or null
     * @return the chosen time and its source per message, and the counts and positions of problems
     * @throws IllegalArgumentException when the arrays' lengths differ
     */
    public ResolvedTimes resolve(long[] headerStampNs, long[] logTimeNs, long[] publishTimeNs) {
        int n = logTimeNs.length;
        if (headerStampNs != null && headerStampNs.length != n) {
            throw new IllegalArgumentException(headerStampNs.length + " header stamps for " + n + " log times");
        }
        if (publishTimeNs != null && publishTimeNs.length != n) {
            throw new IllegalArgumentException(publishTimeNs.length + " publish times for " + n + " log times");
        }
        long maxLog = Long.MIN_VALUE;
        for (long l : logTimeNs) maxLog = Math.max(maxLog, l);
        boolean wallClock = n > 0 && maxLog >= wallClockThresholdNs;

        long[] time = new long[n];
        byte[] source = new byte[n];
        IntList zeroStamps = new IntList();
        IntList zeroLog = new IntList();
        IntList outOfWindow = new IntList();
        IntList none = new IntList();
        int header = 0, log = 0, pub = 0;
        for (int i = 0; i < n; i++) {
            long l = logTimeNs[i];
            boolean logOk = !(wallClock && l == 0);
            if (!logOk) zeroLog.add(i);
            long h = headerStampNs == null ? 0 : headerStampNs[i];
            if (headerStampNs != null && h == 0) zeroStamps.add(i);
            if (h != 0) {
                if (!logOk || Math.abs(h - l) < windowNs) {
                    time[i] = h;
                    source[i] = ResolvedTimes.SOURCE_HEADER;
                    header++;
                    continue;
                }
                outOfWindow.add(i);
            }
            if (logOk) {
                time[i] = l;
                source[i] = ResolvedTimes.SOURCE_LOG;
                log++;
            } else if (publishTimeNs != null && publishTimeNs[i] != 0) {
                time[i] = publishTimeNs[i];
                source[i] = ResolvedTimes.SOURCE_PUBLISH;
                pub++;
            } else {
                time[i] = Long.MIN_VALUE;
                source[i] = ResolvedTimes.SOURCE_NONE;
                none.add(i);
            }
        }
        IntList nonMono = new IntList();
        IntList jumps = new IntList();
        long prev = Long.MIN_VALUE;
        boolean havePrev = false;
        for (int i = 0; i < n; i++) {
            if (source[i] == ResolvedTimes.SOURCE_NONE) continue;
            if (havePrev) {
                if (time[i] < prev) nonMono.add(i);
                else if (time[i] - prev > clockJumpThresholdNs) jumps.add(i);
            }
            prev = time[i];
            havePrev = true;
        }
        return new ResolvedTimes(time, source, header, log, pub, zeroStamps.toArray(), zeroLog.toArray(),
                outOfWindow.toArray(), none.toArray(), nonMono.toArray(), jumps.toArray(), wallClock);
    }

    /** Builder for {@link TimestampRule}. */
    public static final class Builder {
        private long windowNs = 10_000_000_000L;
        private long clockJumpThresholdNs = AlignOptions.DEFAULT_CLOCK_JUMP_THRESHOLD_NS;
        private long wallClockThresholdNs = 100_000_000_000_000_000L;

        /** Largest accepted |header stamp - log time| (exclusive), ns; default 10 s. */
        public Builder windowNs(long ns) { this.windowNs = ns; return this; }
        /** A forward step larger than this is a clock jump, ns; default 1 s. */
        public Builder clockJumpThresholdNs(long ns) { this.clockJumpThresholdNs = ns; return this; }
        /** Log times at or above this mark a wall clock (then log time 0 is absent), ns; default 1e17. */
        public Builder wallClockThresholdNs(long ns) { this.wallClockThresholdNs = ns; return this; }

        /** @throws IllegalArgumentException when a setting is not positive */
        public TimestampRule build() {
            if (windowNs <= 0 || clockJumpThresholdNs <= 0 || wallClockThresholdNs <= 0) {
                throw new IllegalArgumentException("timestamp rule settings must be > 0: window " + windowNs
                        + " ns, jump threshold " + clockJumpThresholdNs + " ns, wall clock " + wallClockThresholdNs + " ns");
            }
            return new TimestampRule(this);
        }
    }

    static final class IntList {
        private int[] a = new int[4];
        private int n;

        void add(int v) {
            if (n == a.length) a = Arrays.copyOf(a, n * 2);
            a[n++] = v;
        }

        int[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
