package io.flywheel.align;

import java.util.Objects;

/**
 * The clock that defines the frames: one frame per master tick.
 *
 * <ul>
 *   <li>{@link #stream(String)}: the (corrected) timestamps of one of the aligned streams, usually one camera, or the
 *       state stream of a recording without cameras. That stream is matched to itself exactly (residual 0).</li>
 *   <li>{@link #fixedRate(double)}: ticks {@code start + round(k * 1e9 / hz)} ns, {@code k = 0, 1, ...} while
 *       {@code <= end}, where start/end are the earliest first and the latest last corrected timestamp over all
 *       non-empty streams; {@link #fixedRate(double, long, long)} gives them explicitly. Ticks are computed from
 *       {@code k}, so a non-integer period (30 Hz) does not drift.</li>
 *   <li>{@link #timestamps(long[])}: explicit frame times (ns, non-decreasing).</li>
 * </ul>
 */
public sealed interface MasterClock {

    /** Frames at the corrected timestamps of the stream named {@code name} (which must be among the aligned streams). */
    static MasterClock stream(String name) {
        return new StreamClock(name);
    }

    /** Frames at {@code hz} from the earliest to the latest corrected timestamp of the recording. */
    static MasterClock fixedRate(double hz) {
        return new FixedRate(hz, null, null);
    }

    /** Frames at {@code hz} from {@code startNs} to {@code endNs} inclusive. */
    static MasterClock fixedRate(double hz, long startNs, long endNs) {
        return new FixedRate(hz, startNs, endNs);
    }

    /** Frames at the given times (ns, non-decreasing; not copied, do not modify). */
    static MasterClock timestamps(long[] frameTimesNs) {
        return new Explicit(frameTimesNs);
    }

    /** The master is a stream. */
    record StreamClock(String name) implements MasterClock {
        public StreamClock {
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * A fixed rate.
     *
     * @param hz      frames per second, &gt; 0 and finite
     * @param startNs first tick (null: earliest corrected timestamp of the streams)
     * @param endNs   last tick bound, inclusive (null: latest corrected timestamp of the streams)
     */
    record FixedRate(double hz, Long startNs, Long endNs) implements MasterClock {
        public FixedRate {
            if (!(hz > 0) || Double.isInfinite(hz)) {
                throw new IllegalArgumentException("fixed master rate must be a positive finite number of Hz, got " + hz);
            }
            if (startNs != null && endNs != null && endNs < startNs) {
                throw new IllegalArgumentException("fixed master rate: end " + endNs + " ns is before start " + startNs + " ns");
            }
        }
    }

    /** Explicit frame times. */
    record Explicit(long[] frameTimesNs) implements MasterClock {
        public Explicit {
            Objects.requireNonNull(frameTimesNs, "frameTimesNs");
            for (int i = 1; i < frameTimesNs.length; i++) {
                if (frameTimesNs[i] < frameTimesNs[i - 1]) {
                    throw new IllegalArgumentException("master frame times not sorted at position " + i + ": "
                            + frameTimesNs[i] + " ns < " + frameTimesNs[i - 1] + " ns");
                }
            }
        }
    }
}
