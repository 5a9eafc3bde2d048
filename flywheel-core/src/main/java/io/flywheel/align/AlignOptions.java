package io.flywheel.align;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Immutable alignment options: the master clock, a policy per stream (by stream name), the policy for streams not
 * named, and the forward clock-jump threshold.
 *
 * <pre>{@code
 * AlignOptions opts = AlignOptions.builder()
 *     .master(MasterClock.stream("/camera0/image/compressed"))
 *     .policy("/joint_states", StreamPolicy.builder().method(AlignMethod.ASOF).toleranceMs(20).build())
 *     .policy("/camera1/image/compressed", StreamPolicy.builder().toleranceMs(20).clockOffsetNs(12_000_000).build())
 *     .build();
 * }</pre>
 *
 * @param master               the master clock
 * @param policies             policy per stream name (unmodifiable, insertion order)
 * @param defaultPolicy        policy of streams absent from {@code policies}
 * @param clockJumpThresholdNs a step between consecutive messages of one stream larger than this is reported as a
 *                             forward clock jump ({@link ClockJump}); {@code Long.MAX_VALUE} turns the check off
 */
public record AlignOptions(MasterClock master, Map<String, StreamPolicy> policies, StreamPolicy defaultPolicy,
                           long clockJumpThresholdNs) {

    /** Default forward clock-jump threshold: 1 s. */
    public static final long DEFAULT_CLOCK_JUMP_THRESHOLD_NS = 1_000_000_000L;

    public AlignOptions {
        Objects.requireNonNull(master, "master");
        Objects.requireNonNull(defaultPolicy, "defaultPolicy");
        policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
        if (clockJumpThresholdNs <= 0) {
            throw new IllegalArgumentException("clock jump threshold must be > 0 ns, got " + clockJumpThresholdNs);
        }
    }

    /** The policy for stream {@code name}: its own, else the default. */
    public StreamPolicy policyFor(String name) {
        StreamPolicy p = policies.get(name);
        return p != null ? p : defaultPolicy;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builder; defaults: no master (required), default policy {@link StreamPolicy#builder()}'s, jumps over 1 s. */
    public static final class Builder {
        private MasterClock master;
        private final Map<String, StreamPolicy> policies = new LinkedHashMap<>();
        private StreamPolicy defaultPolicy = StreamPolicy.builder().build();
        private long clockJumpThresholdNs = DEFAULT_CLOCK_JUMP_THRESHOLD_NS;

        public Builder master(MasterClock master) { this.master = master; return this; }
        /** Shorthand for {@code master(MasterClock.stream(name))}. */
        public Builder masterStream(String name) { this.master = MasterClock.stream(name); return this; }
        /** Shorthand for {@code master(MasterClock.fixedRate(hz))}. */
        public Builder masterRate(double hz) { this.master = MasterClock.fixedRate(hz); return this; }
        public Builder policy(String stream, StreamPolicy policy) { policies.put(stream, Objects.requireNonNull(policy)); return this; }
        public Builder defaultPolicy(StreamPolicy policy) { this.defaultPolicy = policy; return this; }
        public Builder clockJumpThresholdNs(long ns) { this.clockJumpThresholdNs = ns; return this; }

        /** @throws IllegalArgumentException when no master clock was set */
        public AlignOptions build() {
            if (master == null) throw new IllegalArgumentException("alignment options: no master clock set");
            return new AlignOptions(master, policies, defaultPolicy, clockJumpThresholdNs);
        }
    }
}
