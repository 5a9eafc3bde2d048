package io.flywheel.ingest;

import io.flywheel.align.ResolvedTimes;
import io.flywheel.align.TimestampRule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Collects one stream's messages column-wise while a source is read; not thread-safe. */
final class StreamBuilder {
    final String topic;
    final int channelId;
    final StreamRole role;
    final String messageType;
    private long[] log = new long[16];
    private long[] stamp = new long[16];
    private double[][] values;
    private RawLocator[] locators;
    private List<String> texts;
    private List<String> names = List.of();
    private boolean hasHeader;
    private int n;

    StreamBuilder(String topic, int channelId, StreamRole role, String messageType) {
        this.topic = topic;
        this.channelId = channelId;
        this.role = role;
        this.messageType = messageType;
    }

    /** Adds a message; returns its index. */
    int add(long logTimeNs, long headerStampNs) {
        if (n == log.length) {
            int cap = n * 2;
            log = Arrays.copyOf(log, cap);
            stamp = Arrays.copyOf(stamp, cap);
            if (values != null) values = Arrays.copyOf(values, cap);
            if (locators != null) locators = Arrays.copyOf(locators, cap);
        }
        log[n] = logTimeNs;
        stamp[n] = headerStampNs;
        return n++;
    }

    void hasHeader(boolean h) { hasHeader |= h; }

    void value(int i, double[] v) {
        if (values == null) values = new double[log.length][];
        values[i] = v;
    }

    void names(List<String> names) {
        if (this.names.isEmpty() && names != null) this.names = names;
    }

    void locator(int i, RawLocator l) {
        if (locators == null) locators = new RawLocator[log.length];
        locators[i] = l;
    }

    void text(int i, String s) {
        if (texts == null) texts = new ArrayList<>();
        while (texts.size() < i) texts.add(null);
        texts.add(s);
    }

    int size() { return n; }

    /** The largest log time added, ns; {@link Long#MIN_VALUE} when empty. */
    long maxLogTimeNs() {
        long m = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) m = Math.max(m, log[i]);
        return m;
    }

    /** The smallest log time added, ns; {@link Long#MAX_VALUE} when empty. */
    long minLogTimeNs() {
        long m = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) m = Math.min(m, log[i]);
        return m;
    }

    /** @return the log time of message {@code i}, ns */
    long logTime(int i) { return log[i]; }

    /** @return the value of message {@code i}, or null */
    double[] valueAt(int i) { return values == null ? null : values[i]; }

    /** @return the value names */
    List<String> names() { return names; }

    /** @return the locator of message {@code i}, or null */
    RawLocator locatorAt(int i) { return locators == null ? null : locators[i]; }

    /** @return whether {@code type} is a camera calibration message (ROS 1 or ROS 2 sensor_msgs CameraInfo) */
    static boolean isCameraInfo(String type) {
        return type != null && (type.equals("sensor_msgs/msg/CameraInfo") || type.equals("sensor_msgs/CameraInfo"));
    }

    /**
     * Applies the timestamp rule and builds the stream. A CameraInfo message whose header stamp is 0 gets its log time
     * and no "zero stamps" finding (calibration sent once or latched has no capture time). Messages with no usable time keep 0 in
     * {@link StreamData#timeNs()} (the rule's {@link Long#MIN_VALUE} is not handed on).
     *
     * @param rule the timestamp rule
     * @param wallClock whether the recording's log clock is a wall clock (decided over all its streams)
     */
    StreamData build(TimestampRule rule, boolean wallClock) {
        return build(rule, wallClock, rule.timeline());
    }

    /**
     * As {@link #build(TimestampRule, boolean)}, on a timeline of the stream's own (a profile's {@code timelines}).
     *
     * @param timeline stamps, log times, or auto (log times when the stamps go backwards)
     */
    StreamData build(TimestampRule rule, boolean wallClock, io.flywheel.align.StreamTimeline timeline) {
        long[] lt = Arrays.copyOf(log, n);
        long[] hs = Arrays.copyOf(stamp, n);
        boolean stamped = hasHeader;
        for (int i = 0; i < n && !stamped; i++) stamped = hs[i] != 0;
        ResolvedTimes rt = rule.resolve(stamped ? hs : null, lt, null, wallClock, timeline);
        if (isCameraInfo(messageType) && rt.zeroStampPositions().length > 0) {
            // a CameraInfo with stamp 0 is calibration published once or latched, not a timed frame: its log time
            // serves (as the rule already chose), and the zero stamp is not a finding
            rt = rt.withoutZeroStampFindings();
        }
        long[] chosen = rt.timeNs().clone();
        for (int p : rt.unresolvedPositions()) chosen[p] = 0;
        TimestampReport rep = new TimestampReport(topic, rt, timeline);
        double[][] v = values == null ? null : Arrays.copyOf(values, n);
        RawLocator[] loc = role == StreamRole.CAMERA ? (locators == null ? new RawLocator[n] : Arrays.copyOf(locators, n)) : null;
        List<String> tx = null;
        if (role == StreamRole.TASK || role == StreamRole.OUTCOME || texts != null) {
            tx = texts == null ? new ArrayList<>() : new ArrayList<>(texts);
            while (tx.size() < n) tx.add(null);
        }
        return new StreamData(topic, channelId, role, messageType, chosen, lt, hs, v, names, loc, tx, rep);
    }
}
