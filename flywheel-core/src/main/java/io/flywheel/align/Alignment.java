package io.flywheel.align;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of {@link Aligner#align}: the frames (master clock ticks that were kept) and, per stream, a columnar
 * {@link StreamAlignment}. Arrays are shared, do not modify them.
 */
public final class Alignment {
    private final long[] frameTimesNs;
    private final int[] masterFrame;
    private final int masterFrames;
    private final String masterStream;
    private final Map<String, StreamAlignment> streams;
    private final List<ClockJump> clockJumps;

    Alignment(long[] frameTimesNs, int[] masterFrame, int masterFrames, String masterStream,
              List<StreamAlignment> streams, List<ClockJump> clockJumps) {
        this.frameTimesNs = frameTimesNs;
        this.masterFrame = masterFrame;
        this.masterFrames = masterFrames;
        this.masterStream = masterStream;
        Map<String, StreamAlignment> m = new LinkedHashMap<>();
        for (StreamAlignment s : streams) m.put(s.stream(), s);
        this.streams = Collections.unmodifiableMap(m);
        this.clockJumps = List.copyOf(clockJumps);
    }

    /** Frame times in ns on the master clock (corrected master timestamps, or fixed-rate ticks), kept frames only. */
    public long[] frameTimesNs() { return frameTimesNs; }

    /** Number of frames kept. */
    public int frames() { return frameTimesNs.length; }

    /**
     * For each kept frame, its position in the full master sequence before drops; when the master is a stream this is
     * the master message's index in that stream (sorted order).
     */
    public int[] masterFrame() { return masterFrame; }

    /** Number of master ticks before any frame was dropped. */
    public int masterFrames() { return masterFrames; }

    /** Frames dropped by {@link MissPolicy#DROP_FRAME} streams. */
    public int droppedFrames() { return masterFrames - frameTimesNs.length; }

    /** Name of the master stream, or null for a fixed-rate or explicit clock. */
    public String masterStream() { return masterStream; }

    /** Per stream alignment, in the order the streams were given. */
    public Map<String, StreamAlignment> streams() { return streams; }

    /**
     * The alignment of stream {@code name}.
     *
     * @throws IllegalArgumentException when no stream has that name
     */
    public StreamAlignment stream(String name) {
        StreamAlignment s = streams.get(name);
        if (s == null) throw new IllegalArgumentException("no aligned stream named '" + name + "'; streams: " + streams.keySet());
        return s;
    }

    /** Backward (input order) and forward (step over the threshold) clock jumps of all streams. */
    public List<ClockJump> clockJumps() { return clockJumps; }

    /** Residual statistics per stream, in stream order. */
    public List<ResidualStats> stats() {
        List<ResidualStats> out = new ArrayList<>(streams.size());
        for (StreamAlignment s : streams.values()) out.add(s.stats());
        return out;
    }
}
