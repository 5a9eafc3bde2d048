package io.flywheel.quality;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Position limits per joint name (radians for revolute joints, metres for prismatic ones; as in the URDF
 * {@code <limit lower upper>}), and a check of recorded positions against them.
 */
public final class JointLimits {
    private final Map<String, double[]> limits;

    private JointLimits(Map<String, double[]> limits) {
        this.limits = limits;
    }

    /** Empty limits; add with {@link #with}. */
    public static JointLimits none() {
        return new JointLimits(Map.of());
    }

    /**
     * A copy with the limit {@code [lower, upper]} for {@code joint}.
     *
     * @throws IllegalArgumentException when lower &gt; upper or either is NaN
     */
    public JointLimits with(String joint, double lower, double upper) {
        if (!(lower <= upper)) {
            throw new IllegalArgumentException("joint '" + joint + "': lower limit " + lower + " is not <= upper " + upper);
        }
        Map<String, double[]> m = new LinkedHashMap<>(limits);
        m.put(joint, new double[] {lower, upper});
        return new JointLimits(Collections.unmodifiableMap(m));
    }

    /** Number of joints with a limit. */
    public int size() {
        return limits.size();
    }

    /**
     * Counts joint position values outside their limits. Joints without a limit are not checked; NaN positions count
     * as violations.
     *
     * @param jointNames    names of the columns of {@code positions} (JointState.name)
     * @param positions     flat {@code double[messages * jointNames.length]}, row-major (message, joint)
     * @return samples checked, violations, violations per joint
     * @throws IllegalArgumentException when the positions are not a whole number of rows
     */
    public Result check(String[] jointNames, double[] positions) {
        int d = jointNames.length;
        if (d == 0 || positions.length % d != 0) {
            throw new IllegalArgumentException(positions.length + " joint positions are not rows of " + d + " joints");
        }
        double[][] lim = new double[d][];
        for (int c = 0; c < d; c++) lim[c] = limits.get(jointNames[c]);
        long samples = 0;
        long violations = 0;
        long[] per = new long[d];
        for (int i = 0; i < positions.length; i += d) {
            for (int c = 0; c < d; c++) {
                if (lim[c] == null) continue;
                samples++;
                double p = positions[i + c];
                if (!(p >= lim[c][0] && p <= lim[c][1])) {
                    violations++;
                    per[c]++;
                }
            }
        }
        Map<String, Long> perJoint = new LinkedHashMap<>();
        for (int c = 0; c < d; c++) if (per[c] > 0) perJoint.put(jointNames[c], per[c]);
        return new Result(samples, violations, Collections.unmodifiableMap(perJoint));
    }

    /**
     * Outcome of {@link #check}.
     *
     * @param samples    values checked
     * @param violations values outside the limits
     * @param perJoint   violations per joint name (joints with none are absent)
     */
    public record Result(long samples, long violations, Map<String, Long> perJoint) {
    }
}
