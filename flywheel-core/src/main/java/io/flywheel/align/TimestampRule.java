package io.flywheel.align;

import java.util.Arrays;

/**
 * The timestamp rule of ingest: which time each message of a stream gets, and what is wrong with the stamps.
 *
 * <p><b>Rule</b>, per message {@code i} (all times int64 ns):
 * <ol>
 *   <li>A header stamp of 0 means "absent" (no header, or an unset {@code std_msgs/Header.stamp}).</li>
 *   <li>A log time of 0 means "absent" when the log clock is a wall clock, i.e. the largest log time (of the stream,
 *       or of the whole recording when the caller decides, {@link #resolve(long[], long[], long[], boolean)}) is at
 *       least {@link Builder#wallClockThresholdNs} (default 1e17 ns, March 1973); on a relative clock that starts at 0
 *       (rosbag2 test bags, RLDS with epoch 0) 0 is a valid time.</li>
 *   <li>The header stamp is used when present and sane: log time absent, or {@code |stamp - log| < window}
 *       (default 10 s). A present stamp outside the window is counted in {@link ResolvedTimes#stampOutOfWindow()}
 *       and the log time is used.</li>
 *   <li>Otherwise the log time, when present; otherwise the publish time when given and non-zero.</li>
 *   <li>Otherwise the message has no usable time: {@link ResolvedTimes#SOURCE_NONE}, time {@link Long#MIN_VALUE};
 *       it is left out of alignment ({@link ResolvedTimes#usable()}) and counted, never given an invented time.</li>
 * </ol>
 * Rules 3 and 4 are the {@link StreamTimeline#STAMPS} timeline. On the {@link StreamTimeline#LOG_TIME} timeline a
 * message gets its log time when present, else its non-zero header stamp, else its publish time, else none (rule 5).
 * The timeline is chosen per stream ({@link #resolve(long[], long[], long[], boolean, StreamTimeline)}; default
 * {@link Builder#timeline}: {@link StreamTimeline#AUTO}): with {@code AUTO}, log times when the stream has a
 * backward stamp discontinuity, stamps otherwise.
 *
 * <p><b>Stamp discontinuities</b> ({@link StampDiscontinuity}) are found between consecutive messages that both have
 * a log time and a sane header stamp (non-zero, within the window): the stamp steps backwards, or it steps more than
 * {@link Builder#clockJumpThresholdNs} (1 s) further than the log time does (the stamp clock leapt ahead). A camera
 * whose stamps restart 2 s earlier mid-recording has one backward discontinuity of -2 s against its log times; sorted
 * by stamps, its frames would interleave with those recorded 2 s before, so {@code AUTO} keeps the log-time order.
 * Any backward step counts, however small: stamps that jitter out of order are no capture clock to sort by either
 * (the log times then carry the transport latency into the residuals; force {@code STAMPS} to keep them).
 *
 * <p>Then, over the resolved times of usable messages in input order: a time smaller than its predecessor's is a
 * non-monotonic stamp (a backward clock jump; the aligner's stable sort puts it in place); a forward step larger than
 * {@code max(clockJumpThresholdNs, clockJumpPeriods x median period)} is a forward clock jump (defaults 1 s and 10
 * periods, so a 0.2 Hz topic is not a jump at every message, and a 1 kHz dropout under 1 s is not a clock jump). The
 * median period is the median (the upper one for an even count) of the positive steps between consecutive usable
 * times. Both are reported with positions.
 *
 * <p>A message without a usable time is skipped by these checks: it has no time, so it makes no step (a stream whose
 * first message has log time 0 on a wall clock reports that message as zero log time and unresolved, not as a jump).
 */
public final class TimestampRule {
    private final long windowNs;
    private final long clockJumpThresholdNs;
    private final long wallClockThresholdNs;
    private final int clockJumpPeriods;
    private final StreamTimeline timeline;

    private TimestampRule(Builder b) {
        this.windowNs = b.windowNs;
        this.clockJumpThresholdNs = b.clockJumpThresholdNs;
        this.wallClockThresholdNs = b.wallClockThresholdNs;
        this.clockJumpPeriods = b.clockJumpPeriods;
        this.timeline = b.timeline;
    }

    /** The timeline of streams resolved without one of their own; default {@link StreamTimeline#AUTO}. */
    public StreamTimeline timeline() { return timeline; }

    /** The rule with default settings (10 s window, 1 s / 10 periods jump threshold, wall clock from 1e17 ns). */
    public static TimestampRule defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Header-stamp sanity window in ns. */
    public long windowNs() { return windowNs; }

    /** Smallest forward step that can be a clock jump, ns. */
    public long clockJumpThresholdNs() { return clockJumpThresholdNs; }

    /** A forward step must also exceed this many median periods to be a clock jump (0: the ns threshold alone). */
    public int clockJumpPeriods() { return clockJumpPeriods; }

    /**
     * @param logTimeNs the largest log time of a recording (or stream), ns
     * @return whether that log clock is a wall clock, on which a log time of 0 means "absent"
     */
    public boolean isWallClock(long logTimeNs) { return logTimeNs >= wallClockThresholdNs; }

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
        long maxLog = Long.MIN_VALUE;
        for (long l : logTimeNs) maxLog = Math.max(maxLog, l);
        return resolve(headerStampNs, logTimeNs, publishTimeNs, logTimeNs.length > 0 && isWallClock(maxLog));
    }

    /**
     * As {@link #resolve(long[], long[], long[])}, with the kind of log clock decided by the caller. A recording has one
     * log clock: decide it over all its streams ({@link #isWallClock}), so that a single latched message at log time 0
     * (e.g. {@code /robot_description}) in an epoch-stamped recording counts as absent.
     *
     * @param headerStampNs header stamp per message (0 = absent), or null when the messages have no header
     * @param logTimeNs     log time per message (required)
     * @param publishTimeNs publish time per message (0 = absent), or null
     * @param wallClock     whether the log times are on a wall clock (then log time 0 is absent)
     * @return the chosen time and its source per message, and the counts and positions of problems
     * @throws IllegalArgumentException when the arrays' lengths differ
     */
    public ResolvedTimes resolve(long[] headerStampNs, long[] logTimeNs, long[] publishTimeNs, boolean wallClock) {
        return resolve(headerStampNs, logTimeNs, publishTimeNs, wallClock, timeline);
    }

    /**
     * As {@link #resolve(long[], long[], long[], boolean)}, on the timeline given for this stream.
     *
     * @param headerStampNs header stamp per message (0 = absent), or null when the messages have no header
     * @param logTimeNs     log time per message (required)
     * @param publishTimeNs publish time per message (0 = absent), or null
     * @param wallClock     whether the log times are on a wall clock (then log time 0 is absent)
     * @param streamTimeline stamps, log times, or {@code AUTO} (log times when the stamps step backwards)
     * @return the chosen time and its source per message, the timeline followed, and the problems found
     * @throws IllegalArgumentException when the arrays' lengths differ
     */
    public ResolvedTimes resolve(long[] headerStampNs, long[] logTimeNs, long[] publishTimeNs, boolean wallClock,
                                 StreamTimeline streamTimeline) {
        int n = logTimeNs.length;
        java.util.Objects.requireNonNull(streamTimeline, "streamTimeline");
        if (headerStampNs != null && headerStampNs.length != n) {
            throw new IllegalArgumentException(headerStampNs.length + " header stamps for " + n + " log times");
        }
        if (publishTimeNs != null && publishTimeNs.length != n) {
            throw new IllegalArgumentException(publishTimeNs.length + " publish times for " + n + " log times");
        }

        java.util.List<StampDiscontinuity> discontinuities = discontinuities(headerStampNs, logTimeNs, wallClock);
        boolean logTimeline = headerStampNs == null || streamTimeline == StreamTimeline.LOG_TIME
                || streamTimeline == StreamTimeline.AUTO && discontinuities.stream().anyMatch(StampDiscontinuity::backward);
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
            if (h != 0 && logOk && Math.abs(h - l) >= windowNs) outOfWindow.add(i);
            // stamps timeline: the header stamp when it lies within the window of the log time (or there is no log
            // time); log-time timeline: the log time, the stamp only when there is none
            boolean useHeader = h != 0 && (logTimeline ? !logOk : !logOk || Math.abs(h - l) < windowNs);
            if (useHeader) {
                time[i] = h;
                source[i] = ResolvedTimes.SOURCE_HEADER;
                header++;
            } else if (logOk) {
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
        long median = medianPeriod(time, source);
        long jumpNs = Math.max(clockJumpThresholdNs,
                median > Long.MAX_VALUE / Math.max(1, clockJumpPeriods) ? Long.MAX_VALUE : median * clockJumpPeriods);
        IntList nonMono = new IntList();
        IntList jumps = new IntList();
        long prev = 0;
        boolean havePrev = false;
        for (int i = 0; i < n; i++) {
            if (source[i] == ResolvedTimes.SOURCE_NONE) continue;
            if (havePrev) {
                if (time[i] < prev) nonMono.add(i);
                else if (time[i] - prev > jumpNs) jumps.add(i);
            }
            prev = time[i];
            havePrev = true;
        }
        return new ResolvedTimes(time, source, header, log, pub, zeroStamps.toArray(), zeroLog.toArray(),
                outOfWindow.toArray(), none.toArray(), nonMono.toArray(), jumps.toArray(), median, wallClock,
                logTimeline || header == 0 ? StreamTimeline.LOG_TIME : StreamTimeline.STAMPS, discontinuities);
    }

    /**
     * The stamp discontinuities (see the class comment) between consecutive messages with a log time and a sane stamp.
     */
    private java.util.List<StampDiscontinuity> discontinuities(long[] stamp, long[] log, boolean wallClock) {
        java.util.List<StampDiscontinuity> out = new java.util.ArrayList<>();
        if (stamp == null) return out;
        int prev = -1;
        for (int i = 0; i < log.length; i++) {
            long h = stamp[i];
            long l = log[i];
            if (h == 0 || wallClock && l == 0 || Math.abs(h - l) >= windowNs) continue;
            if (prev >= 0) {
                long step = h - stamp[prev];
                long logStep = l - log[prev];
                if (step < 0 || step - logStep > clockJumpThresholdNs) {
                    out.add(new StampDiscontinuity(i, l, h, stamp[prev], step, logStep));
                }
            }
            prev = i;
        }
        return out;
    }

    /** Median of the positive steps between consecutive usable times, ns; 0 when there is none. */
    private static long medianPeriod(long[] time, byte[] source) {
        long[] d = new long[time.length];
        int k = 0;
        long prev = 0;
        boolean havePrev = false;
        for (int i = 0; i < time.length; i++) {
            if (source[i] == ResolvedTimes.SOURCE_NONE) continue;
            if (havePrev && time[i] > prev) d[k++] = time[i] - prev;
            prev = time[i];
            havePrev = true;
        }
        if (k == 0) return 0;
        Arrays.sort(d, 0, k);
        return d[k / 2];
    }

    /** Builder for {@link TimestampRule}. */
    public static final class Builder {
        private long windowNs = 10_000_000_000L;
        private long clockJumpThresholdNs = AlignOptions.DEFAULT_CLOCK_JUMP_THRESHOLD_NS;
        private long wallClockThresholdNs = 100_000_000_000_000_000L;
        private int clockJumpPeriods = 10;
        private StreamTimeline timeline = StreamTimeline.AUTO;

        /** Largest accepted |header stamp - log time| (exclusive), ns; default 10 s. */
        public Builder windowNs(long ns) { this.windowNs = ns; return this; }
        /** A forward step must be larger than this to be a clock jump, ns; default 1 s. */
        public Builder clockJumpThresholdNs(long ns) { this.clockJumpThresholdNs = ns; return this; }
        /** A forward step must also be larger than this many median periods to be a clock jump; default 10, 0: off. */
        public Builder clockJumpPeriods(int periods) { this.clockJumpPeriods = periods; return this; }
        /** Log times at or above this mark a wall clock (then log time 0 is absent), ns; default 1e17. */
        public Builder wallClockThresholdNs(long ns) { this.wallClockThresholdNs = ns; return this; }

        /** The timeline of every stream not resolved with its own; default {@link StreamTimeline#AUTO}. */
        public Builder timeline(StreamTimeline t) { this.timeline = java.util.Objects.requireNonNull(t, "timeline"); return this; }

        /** @throws IllegalArgumentException when a ns setting is not positive or the period count is negative */
        public TimestampRule build() {
            if (windowNs <= 0 || clockJumpThresholdNs <= 0 || wallClockThresholdNs <= 0 || clockJumpPeriods < 0) {
                throw new IllegalArgumentException("timestamp rule settings must be > 0: window " + windowNs
                        + " ns, jump threshold " + clockJumpThresholdNs + " ns, wall clock " + wallClockThresholdNs
                        + " ns; jump periods must be >= 0: " + clockJumpPeriods);
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
