package io.flywheel.align;

import java.util.Objects;

/**
 * How one stream is aligned to the master clock: method, tolerance, per-device clock offset and what to do on a miss.
 *
 * <p><b>Clock offset sign convention.</b> {@code clockOffsetNs} is how far the device's clock runs <em>ahead</em> of
 * the master clock. The corrected time of a message is {@code stamp - clockOffsetNs}, and only corrected times are
 * matched. Example: an unsynced camera whose clock runs 12 ms ahead (an exposure at true time 1.000 s is stamped
 * 1.012 s) has {@code clockOffsetNs = +12_000_000}; its frame
 * stamped 1.012 s is matched as 1.000 s.
 *
 * <p><b>Tolerance</b> (ns, &ge; 0): for {@link AlignMethod#NEAREST} the largest accepted {@code |dt|}; for
 * {@link AlignMethod#ASOF} the largest accepted age {@code frame - t}; for {@link AlignMethod#INTERPOLATE} the largest
 * accepted gap between the two neighbours. {@link Long#MAX_VALUE} means unbounded.
 *
 * @param method         nearest, asof or interpolate
 * @param toleranceNs    tolerance in ns, &ge; 0
 * @param clockOffsetNs  device clock offset in ns (positive: the device stamps ahead of the master clock)
 * @param onMiss         flag the frame (value null) or drop it
 */
public record StreamPolicy(AlignMethod method, long toleranceNs, long clockOffsetNs, MissPolicy onMiss) {

    /** Default tolerance of {@link Builder}: 50 ms. */
    public static final long DEFAULT_TOLERANCE_NS = 50_000_000L;

    /** @throws IllegalArgumentException when a field is null or the tolerance is negative */
    public StreamPolicy {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(onMiss, "onMiss");
        if (toleranceNs < 0) {
            throw new IllegalArgumentException("tolerance must be >= 0 ns, got " + toleranceNs);
        }
    }

    /** Shorthand: {@code method} with {@code toleranceNs}, no clock offset, {@link MissPolicy#FLAG}. */
    public static StreamPolicy of(AlignMethod method, long toleranceNs) {
        return new StreamPolicy(method, toleranceNs, 0L, MissPolicy.FLAG);
    }

    /** A builder starting from nearest, 50 ms tolerance, no offset, flag on miss. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this policy's values. */
    public Builder toBuilder() {
        return new Builder().method(method).toleranceNs(toleranceNs).clockOffsetNs(clockOffsetNs).onMiss(onMiss);
    }

    /** Builder for {@link StreamPolicy}. */
    public static final class Builder {
        private AlignMethod method = AlignMethod.NEAREST;
        private long toleranceNs = DEFAULT_TOLERANCE_NS;
        private long clockOffsetNs;
        private MissPolicy onMiss = MissPolicy.FLAG;

        public Builder method(AlignMethod method) { this.method = method; return this; }
        public Builder toleranceNs(long toleranceNs) { this.toleranceNs = toleranceNs; return this; }
        /** Tolerance in milliseconds (converted to ns). */
        public Builder toleranceMs(double toleranceMs) { this.toleranceNs = Math.round(toleranceMs * 1e6); return this; }
        /** Clock offset in ns; positive when the device stamps ahead of the master clock. */
        public Builder clockOffsetNs(long clockOffsetNs) { this.clockOffsetNs = clockOffsetNs; return this; }
        public Builder onMiss(MissPolicy onMiss) { this.onMiss = onMiss; return this; }
        /** Shorthand for {@code onMiss(drop ? DROP_FRAME : FLAG)}. */
        public Builder dropFrameOnMiss(boolean drop) { this.onMiss = drop ? MissPolicy.DROP_FRAME : MissPolicy.FLAG; return this; }

        /** @throws IllegalArgumentException when the tolerance is negative or a field is null */
        public StreamPolicy build() {
            return new StreamPolicy(method, toleranceNs, clockOffsetNs, onMiss);
        }
    }
}
