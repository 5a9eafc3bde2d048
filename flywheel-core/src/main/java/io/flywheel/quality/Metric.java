package io.flywheel.quality;

import java.util.Locale;

/**
 * The metrics a rule can test, by the name used in rule files. Episode metrics have one value per episode; stream
 * metrics one value per stream, and a rule over them may select streams by {@code role} and/or {@code stream}.
 * A metric that is unknown for an episode or stream (null: no nominal rate, enrichment not run) makes the rule
 * {@link RuleResult.Outcome#SKIPPED} for it.
 */
public enum Metric {
    /** Episode duration, seconds. */
    DURATION_S(Scope.EPISODE, "s"),
    /** Number of expected roles with no stream in the episode. */
    MISSING_STREAMS(Scope.EPISODE, "count"),
    /** Joint position samples outside their limits. */
    JOINT_LIMIT_VIOLATIONS(Scope.EPISODE, "count"),
    /** Joint position samples outside their limits / samples checked (null when none checked). */
    JOINT_LIMIT_VIOLATION_RATIO(Scope.EPISODE, "ratio"),
    /** Messages in the stream. */
    MESSAGE_COUNT(Scope.STREAM, "count"),
    /** Measured rate, Hz: (messages - 1) / (last - first). */
    FRAME_RATE_HZ(Scope.STREAM, "Hz"),
    /** Measured rate / nominal rate (null without a nominal rate). */
    FRAME_RATE_RATIO(Scope.STREAM, "ratio"),
    /** Largest gap in the stream including from the episode start and to the episode end, milliseconds. */
    LARGEST_GAP_MS(Scope.STREAM, "ms"),
    /** Share of the messages expected at the nominal rate that are missing (null without a nominal rate). */
    DROP_RATIO(Scope.STREAM, "ratio"),
    /** 99th percentile of the alignment residual |dt|, milliseconds (null for the master or unaligned streams). */
    RESIDUAL_P99_MS(Scope.STREAM, "ms"),
    /**
     * Residual p99 / the residual the stream's method allows by itself ({@code max(20 ms, period)} for as-of,
     * {@code max(20 ms, period / 2)} for nearest and interpolation; see {@link StreamMetrics#residualLimitNs}); null
     * for the master, unaligned streams and metrics stored before the limit was.
     */
    RESIDUAL_P99_LIMIT_RATIO(Scope.STREAM, "ratio"),
    /** Backward steps of the stream's stamps in arrival order. */
    MONOTONICITY_VIOLATIONS(Scope.STREAM, "count"),
    /** Share of frames marked static by enrichment (null until enrichment ran). */
    STATIC_SHARE(Scope.STREAM, "ratio"),
    /** Frames the robot skipped on purpose (a live stream's frame filter), counted as received by the rate metrics. */
    SKIPPED_FRAMES(Scope.STREAM, "count");

    /** Whether a metric has one value per episode or per stream. */
    public enum Scope { EPISODE, STREAM }

    private final Scope scope;
    private final String unit;

    Metric(Scope scope, String unit) {
        this.scope = scope;
        this.unit = unit;
    }

    public Scope scope() { return scope; }

    /** Unit of the value (s, ms, Hz, ratio, count). */
    public String unit() { return unit; }

    /** The name used in rule files, e.g. {@code frame_rate_ratio}. */
    public String label() { return name().toLowerCase(Locale.ROOT); }

    /** The metric named {@code s} in a rule file, or null. */
    static Metric parse(String s) {
        for (Metric m : values()) if (m.label().equals(s.trim().toLowerCase(Locale.ROOT))) return m;
        return null;
    }

    /** The value of this stream metric for {@code s}, or null when unknown. */
    Double of(StreamMetrics s) {
        switch (this) {
            case MESSAGE_COUNT: return (double) s.messageCount();
            case FRAME_RATE_HZ: return s.measuredRateHz();
            case FRAME_RATE_RATIO: return s.frameRateRatio();
            case LARGEST_GAP_MS: return s.largestGapNs() / 1e6;
            case DROP_RATIO: return s.dropRatio();
            case RESIDUAL_P99_MS: return s.residualP99Ns() == null ? null : s.residualP99Ns() / 1e6;
            case RESIDUAL_P99_LIMIT_RATIO: return s.residualP99LimitRatio();
            case MONOTONICITY_VIOLATIONS: return (double) s.monotonicityViolations();
            case STATIC_SHARE: return s.staticShare();
            case SKIPPED_FRAMES: return (double) s.skippedFrames();
            default: throw new IllegalStateException(label() + " is an episode metric");
        }
    }

    /** The value of this episode metric for {@code e}, or null when unknown. */
    Double of(EpisodeMetrics e) {
        switch (this) {
            case DURATION_S: return e.durationNs() / 1e9;
            case MISSING_STREAMS: return (double) e.missingRoles().size();
            case JOINT_LIMIT_VIOLATIONS: return (double) e.jointLimitViolations();
            case JOINT_LIMIT_VIOLATION_RATIO:
                return e.jointSamples() == 0 ? null : (double) e.jointLimitViolations() / e.jointSamples();
            default: throw new IllegalStateException(label() + " is a stream metric");
        }
    }
}
