package io.flywheel.quality;

/**
 * The outcome of one rule on one episode (episode metrics) or one stream (stream metrics).
 *
 * @param ruleId    rule id
 * @param severity  rule severity
 * @param metric    metric name
 * @param stream    the stream tested (stream metrics), null for episode metrics
 * @param outcome   pass, fail (the rule fired) or skipped (metric unknown, or no stream selected)
 * @param observed  observed value in the metric's unit, null when skipped
 * @param op        operator symbol
 * @param threshold threshold value
 * @param message   what was found, e.g. {@code low_fps: /cam0 frame_rate_ratio = 0.5 < 0.9}
 */
public record RuleResult(String ruleId, Severity severity, String metric, String stream, Outcome outcome,
                         Double observed, String op, double threshold, String message) {

    /** Result of a rule. */
    public enum Outcome { PASS, FAIL, SKIPPED }

    /** False only when the rule fired. */
    public boolean passed() {
        return outcome != Outcome.FAIL;
    }
}
