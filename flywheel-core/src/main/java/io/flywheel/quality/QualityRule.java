package io.flywheel.quality;

import java.util.Objects;

/**
 * One quality rule: fires (fails) when {@code metric OP value} holds. Written in YAML as
 * {@code {id: low_fps, metric: frame_rate_ratio, role: camera, op: "<", value: 0.9, severity: error}}.
 *
 * @param id       unique id within the rule set; a failed rule's id becomes an episode flag
 * @param metric   the metric tested
 * @param role     stream metrics only: streams with this role (null: any)
 * @param stream   stream metrics only: the stream with this name (null: any)
 * @param op       comparison
 * @param value    threshold, in the metric's unit ({@link Metric#unit()})
 * @param severity info, warning or error
 * @param message  optional human text shown when the rule fires (null: generated)
 * @param line     1-based line of the rule in its file, 0 when built in code
 */
public record QualityRule(String id, Metric metric, String role, String stream, Op op, double value, Severity severity,
                          String message, int line) {

    /** @throws IllegalArgumentException when a selector is given for an episode metric, or a field is missing */
    public QualityRule {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(metric, "metric");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(severity, "severity");
        if (metric.scope() == Metric.Scope.EPISODE && (role != null || stream != null)) {
            throw new IllegalArgumentException("rule '" + id + "': " + metric.label()
                    + " is an episode metric, it takes no role or stream selector");
        }
    }

    /** A rule built in code, with no selector and no message. */
    public static QualityRule of(String id, Metric metric, Op op, double value, Severity severity) {
        return new QualityRule(id, metric, null, null, op, value, severity, null, 0);
    }

    /** True when this (stream) rule applies to {@code s}. */
    boolean selects(StreamMetrics s) {
        return (role == null || role.equals(s.role())) && (stream == null || stream.equals(s.stream()));
    }

    /** The condition as text, e.g. {@code frame_rate_ratio[role=camera] < 0.9}. */
    public String condition() {
        StringBuilder b = new StringBuilder(metric.label());
        if (role != null || stream != null) {
            b.append('[');
            if (role != null) b.append("role=").append(role);
            if (role != null && stream != null) b.append(',');
            if (stream != null) b.append("stream=").append(stream);
            b.append(']');
        }
        return b.append(' ').append(op.symbol()).append(' ').append(fmt(value)).toString();
    }

    static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }
}
