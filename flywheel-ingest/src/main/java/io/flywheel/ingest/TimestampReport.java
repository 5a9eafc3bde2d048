package io.flywheel.ingest;

import io.flywheel.align.ResolvedTimes;
import io.flywheel.align.TimestampRule;
import java.util.ArrayList;
import java.util.List;

/**
 * What the timestamp rule ({@link TimestampRule}, flywheel-core) found in one stream's times: a read-only view of its
 * {@link ResolvedTimes} under the names ingest callers use. Positions are message indexes in the stream (0-based, in
 * the order read); counts and position lists are complete.
 *
 * @param topic the stream's topic
 * @param resolved the rule's output for the stream (chosen time, source and findings per message)
 * @param requested the timeline asked for the stream (a profile's {@code timelines}, the run's option), or
 *     {@code AUTO} when none was
 */
public record TimestampReport(String topic, ResolvedTimes resolved, io.flywheel.align.StreamTimeline requested) {
    public TimestampReport {
        java.util.Objects.requireNonNull(requested, "requested");
    }

    /** A report of a stream resolved on the default ({@code AUTO}) timeline. */
    public TimestampReport(String topic, ResolvedTimes resolved) {
        this(topic, resolved, io.flywheel.align.StreamTimeline.AUTO);
    }

    /** At most this many positions are written per kind of finding by {@link #summary()}. */
    public static final int SUMMARY_POSITIONS = 10;

    /**
     * One clock jump in the chosen times.
     *
     * @param position index of the message after the jump
     * @param deltaNs chosen time[position] - chosen time of the previous message with a usable time, ns; negative
     *     for a backwards jump
     * @param backwards true when time went backwards (a non-monotonic stamp)
     */
    public record Jump(int position, long deltaNs, boolean backwards) {}

    /** @return number of messages */
    public int messages() { return resolved.timeNs().length; }

    /** @return messages whose chosen time is the header stamp */
    public int fromHeaderStamp() { return resolved.fromHeader(); }

    /** @return messages whose chosen time is the log time (no header, zero or out-of-window stamp) */
    public int fromLogTime() { return resolved.fromLog(); }

    /** @return messages with a header whose stamp is 0 */
    public int zeroStamps() { return resolved.zeroStampPositions().length; }

    /** @return messages whose non-zero stamp is 10 s or more from a present log time (log time used) */
    public int insaneStamps() { return resolved.stampOutOfWindow().length; }

    /** @return messages whose log time is 0 in a recording whose log clock is a wall clock (0 = absent) */
    public int logTimeZero() { return resolved.zeroLogTimePositions().length; }

    /** @return messages with no usable time (their {@link StreamData#timeNs()} entry is 0) */
    public int unresolved() { return resolved.unresolvedPositions().length; }

    /** @return positions whose chosen time is smaller than the previous usable message's (backward clock jumps) */
    public List<Integer> nonMonotonicStamps() { return list(resolved.nonMonotonicPositions()); }

    /** @return how many non-monotonic positions */
    public int nonMonotonicStampCount() { return resolved.nonMonotonicPositions().length; }

    /** @return median of the positive steps between consecutive usable chosen times, ns; 0 with fewer than 2 */
    public long medianPeriodNs() { return resolved.medianPeriodNs(); }

    /** @return every clock jump in position order: backward steps and forward steps over the rule's jump threshold */
    public List<Jump> jumps() {
        long[] t = resolved.timeNs();
        int[] back = resolved.nonMonotonicPositions();
        int[] fwd = resolved.clockJumpPositions();
        List<Jump> out = new ArrayList<>(back.length + fwd.length);
        int b = 0, f = 0;
        while (b < back.length || f < fwd.length) {
            boolean takeBack = f == fwd.length || b < back.length && back[b] < fwd[f];
            int p = takeBack ? back[b++] : fwd[f++];
            out.add(new Jump(p, t[p] - t[previousUsable(p)], takeBack));
        }
        return List.copyOf(out);
    }

    /** @return how many clock jumps, backward and forward */
    public int jumpCount() { return resolved.nonMonotonicPositions().length + resolved.clockJumpPositions().length; }

    /**
     * @return the timeline the stream's times follow: {@code STAMPS} or {@code LOG_TIME} (also when it has no
     *     header stamps)
     */
    public io.flywheel.align.StreamTimeline timeline() { return resolved.timeline(); }

    /** @return where the header stamps step backwards or leap ahead of the log times, in position order */
    public List<io.flywheel.align.StampDiscontinuity> discontinuities() { return resolved.discontinuities(); }

    /** @return true when nothing odd was found ({@link ResolvedTimes#clean()}) */
    public boolean clean() { return resolved.clean(); }

    /** Names of the kinds of finding, as used by {@link #findings()} and {@link #summary()}. */
    public static final String ZERO_STAMPS = "zero stamps", STAMPS_OFF = "stamps >10 s off log time",
            LOG_TIME_ZERO = "log time 0", NO_USABLE_TIME = "no usable time", NON_MONOTONIC = "non-monotonic stamps",
            FORWARD_JUMPS = "forward clock jumps", STAMP_DISCONTINUITIES = "stamp discontinuities";

    /**
     * @return the kinds of finding present, in a fixed order: {@link #ZERO_STAMPS}, {@link #STAMPS_OFF},
     *     {@link #LOG_TIME_ZERO}, {@link #NO_USABLE_TIME}, {@link #NON_MONOTONIC}, {@link #FORWARD_JUMPS},
     *     {@link #STAMP_DISCONTINUITIES}; empty when {@link #clean()}
     */
    public List<String> findings() {
        List<String> out = new ArrayList<>();
        if (resolved.zeroStampPositions().length > 0) out.add(ZERO_STAMPS);
        if (resolved.stampOutOfWindow().length > 0) out.add(STAMPS_OFF);
        if (resolved.zeroLogTimePositions().length > 0) out.add(LOG_TIME_ZERO);
        if (resolved.unresolvedPositions().length > 0) out.add(NO_USABLE_TIME);
        if (resolved.nonMonotonicPositions().length > 0) out.add(NON_MONOTONIC);
        if (resolved.clockJumpPositions().length > 0) out.add(FORWARD_JUMPS);
        if (!resolved.discontinuities().isEmpty()) out.add(STAMP_DISCONTINUITIES);
        return List.copyOf(out);
    }

    /**
     * @return a one-line summary without the topic (callers name it): counts by time source, then per kind of
     *     finding its count and at most {@link #SUMMARY_POSITIONS} positions, e.g.
     *     {@code "5 msgs, header 0, log 4, log time 0: 1 at [0], no usable time: 1 at [0]"}; forward jumps also give
     *     their size, e.g. {@code "forward clock jumps: 2 at [7 (+1.500 s), 9 (+2.000 s)]"}; stamp discontinuities
     *     give the message and the jump of the stamps against the log times, then the timeline the times follow,
     *     e.g. {@code "stamp discontinuities: 1 at [40 (stamps -2.000 s)], timeline: log times"} (their log times
     *     are in {@link #discontinuities()})
     */
    public String summary() {
        StringBuilder sb = new StringBuilder().append(messages()).append(" msgs, header ")
                .append(fromHeaderStamp()).append(", log ").append(fromLogTime());
        if (resolved.fromPublish() > 0) sb.append(", publish ").append(resolved.fromPublish());
        positions(sb, ZERO_STAMPS, resolved.zeroStampPositions());
        positions(sb, STAMPS_OFF, resolved.stampOutOfWindow());
        positions(sb, LOG_TIME_ZERO, resolved.zeroLogTimePositions());
        positions(sb, NO_USABLE_TIME, resolved.unresolvedPositions());
        positions(sb, NON_MONOTONIC, resolved.nonMonotonicPositions());
        int[] fwd = resolved.clockJumpPositions();
        if (fwd.length > 0) {
            sb.append(", ").append(FORWARD_JUMPS).append(": ").append(fwd.length).append(" at [");
            long[] t = resolved.timeNs();
            for (int i = 0; i < Math.min(fwd.length, SUMMARY_POSITIONS); i++) {
                int p = fwd[i];
                sb.append(i == 0 ? "" : ", ").append(p).append(String.format(java.util.Locale.ROOT, " (+%.3f s)",
                        (t[p] - t[previousUsable(p)]) / 1e9));
            }
            sb.append(fwd.length > SUMMARY_POSITIONS ? ", ...]" : "]");
        }
        List<io.flywheel.align.StampDiscontinuity> ds = resolved.discontinuities();
        if (!ds.isEmpty()) {
            sb.append(", ").append(STAMP_DISCONTINUITIES).append(": ").append(ds.size()).append(" at [");
            for (int i = 0; i < Math.min(ds.size(), SUMMARY_POSITIONS); i++) {
                io.flywheel.align.StampDiscontinuity d = ds.get(i);
                sb.append(i == 0 ? "" : ", ").append(d.position()).append(String.format(java.util.Locale.ROOT,
                        " (stamps %+.3f s)", d.jumpNs() / 1e9));
            }
            sb.append(ds.size() > SUMMARY_POSITIONS ? ", ...]" : "]");
            sb.append(", timeline: ").append(resolved.timeline() == io.flywheel.align.StreamTimeline.LOG_TIME
                    ? "log times" : "stamps");
        }
        return sb.toString();
    }

    private int previousUsable(int p) {
        byte[] src = resolved.source();
        int q = p - 1;
        while (src[q] == ResolvedTimes.SOURCE_NONE) q--;
        return q;
    }

    private static void positions(StringBuilder sb, String what, int[] pos) {
        if (pos.length == 0) return;
        sb.append(", ").append(what).append(": ").append(pos.length).append(" at [");
        for (int i = 0; i < Math.min(pos.length, SUMMARY_POSITIONS); i++) sb.append(i == 0 ? "" : ", ").append(pos[i]);
        sb.append(pos.length > SUMMARY_POSITIONS ? ", ...]" : "]");
    }

    private static List<Integer> list(int[] a) {
        List<Integer> out = new ArrayList<>(a.length);
        for (int x : a) out.add(x);
        return List.copyOf(out);
    }
}
