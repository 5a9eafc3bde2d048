package io.flywheel.quality;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Quality metrics of one episode: the input of {@link RuleSet#evaluate}.
 *
 * @param episodeId            episode id (for messages), may be null
 * @param durationNs           episode duration, ns
 * @param streams              per-stream metrics
 * @param missingRoles         expected roles (from the robot profile) with no stream, e.g. {@code [camera]}
 * @param jointSamples         joint position values checked against limits (messages x joints with a limit)
 * @param jointLimitViolations of those, values outside {@code [lower, upper]}
 */
public record EpisodeMetrics(String episodeId, long durationNs, List<StreamMetrics> streams, List<String> missingRoles,
                             long jointSamples, long jointLimitViolations) {

    public EpisodeMetrics {
        streams = List.copyOf(streams);
        missingRoles = List.copyOf(missingRoles);
        if (durationNs < 0) throw new IllegalArgumentException("episode duration must be >= 0 ns, got " + durationNs);
        if (jointLimitViolations > jointSamples || jointLimitViolations < 0) {
            throw new IllegalArgumentException(jointLimitViolations + " joint limit violations in " + jointSamples + " samples");
        }
    }

    /** Episode metrics without joint-limit checks. */
    public EpisodeMetrics(String episodeId, long durationNs, List<StreamMetrics> streams, List<String> missingRoles) {
        this(episodeId, durationNs, streams, missingRoles, 0, 0);
    }

    /** A copy with joint-limit counts (e.g. from {@link JointLimits#check}). */
    public EpisodeMetrics withJointLimits(JointLimits.Result r) {
        return new EpisodeMetrics(episodeId, durationNs, streams, missingRoles, r.samples(), r.violations());
    }

    /** The expected roles for which no stream has that role, in the order given. */
    public static List<String> missingRoles(Collection<String> expectedRoles, Collection<StreamMetrics> streams) {
        List<String> out = new ArrayList<>();
        for (String role : expectedRoles) {
            boolean found = false;
            for (StreamMetrics s : streams) found |= Objects.equals(role, s.role());
            if (!found) out.add(role);
        }
        return out;
    }
}
