package io.flywheel.quality;

import java.util.List;

/**
 * Quality of one episode: every rule result, the flags (ids of the rules that fired, each once, in rule order) and
 * the overall status: {@link Status#FAIL} when an error rule fired, {@link Status#WARN} when a warning rule fired,
 * else {@link Status#PASS} (a fired info rule is flagged but does not change the status).
 *
 * @param episodeId episode id, may be null
 * @param results   one result per rule per selected stream (episode rules: one per rule), in rule order
 * @param flags     ids of fired rules
 * @param status    overall status
 */
public record QualityReport(String episodeId, List<RuleResult> results, List<String> flags, Status status) {

    /** Overall status of an episode. */
    public enum Status { PASS, WARN, FAIL }

    public QualityReport {
        results = List.copyOf(results);
        flags = List.copyOf(flags);
    }

    /** The results of rules that fired. */
    public List<RuleResult> failures() {
        return results.stream().filter(r -> !r.passed()).toList();
    }
}
