package io.flywheel.enrich.motion;

import java.util.Arrays;

/**
 * Labels each frame of an episode with a {@link GripperState} and a {@link Phase}, from the aligned gripper value
 * and state vector of the {@code frames} table. A documented rule, not a learned model.
 *
 * <h2>Gripper state</h2>
 * The gripper value is taken as larger = more open (the frames convention: 0 closed .. 1 open, or an opening
 * width in metres). Over the episode's non-null values, {@code lo = min}, {@code hi = max}:
 * <ul>
 *   <li>if {@code hi - lo < minGripperRange} (the gripper never moves) every frame is {@code open} when the value
 *       is &ge; 0.5, else {@code closed};</li>
 *   <li>else with the normalised opening {@code o = (g - lo) / (hi - lo)} and its rate
 *       {@code r(t) = (o(t) - o(t-1)) / dt} (backward difference; the first frame uses the forward one), in
 *       range per second: {@code closing} when {@code r < -gripperRate}, {@code opening} when
 *       {@code r > gripperRate}, else {@code closed} when {@code o < 0.5} and {@code open} otherwise.</li>
 * </ul>
 * A frame without a gripper value gets no state (null).
 *
 * <h2>Arm speed</h2>
 * The Euclidean norm of the state vector's backward difference divided by dt, per second in the state's units
 * (the whole vector: joint radians or pose metres, as the robot profile says). The arm is <em>moving</em> at a
 * frame when its speed exceeds {@code idleFraction} times the episode's 95th-percentile speed (so the rule is
 * unit-free); an episode whose 95th percentile is 0 never moves.
 *
 * <h2>Phase</h2>
 * Frame by frame, in order:
 * <ul>
 *   <li>{@code closing}: grasp;</li>
 *   <li>{@code closed}: grasp while the arm is still and the previous frame was grasp (settling), else lift
 *       (holding: lift and carry);</li>
 *   <li>{@code opening}: place;</li>
 *   <li>{@code open} after a place: retreat when moving, else idle;</li>
 *   <li>{@code open} before any place (since the last grasp): approach when moving, else idle.</li>
 * </ul>
 * A frame without a gripper state gets no phase (null).
 */
public final class MotionLabeler {
    /**
     * Thresholds.
     *
     * @param gripperRate normalised opening per second above which the gripper is closing / opening (default 0.5)
     * @param minGripperRange smallest gripper range that counts as motion (default 1e-3)
     * @param idleFraction arm speed below this fraction of the episode's 95th-percentile speed is idle (default 0.1)
     */
    public record Options(double gripperRate, double minGripperRange, double idleFraction) {
        public Options {
            if (!(gripperRate > 0) || !(minGripperRange >= 0) || !(idleFraction >= 0 && idleFraction < 1)) {
                throw new IllegalArgumentException("gripper rate must be > 0, range >= 0 and idle fraction in [0, 1), got "
                        + gripperRate + ", " + minGripperRange + ", " + idleFraction);
            }
        }

        /** @return the defaults above */
        public static Options defaults() {
            return new Options(0.5, 1e-3, 0.1);
        }
    }

    /**
     * The labels of an episode's frames.
     *
     * @param gripper state per frame (null entries where unknown)
     * @param phase phase per frame (null entries where unknown)
     * @param armSpeed arm speed per frame, state units per second (NaN where unknown)
     * @param moving whether the arm moves at each frame
     */
    public record Labels(GripperState[] gripper, Phase[] phase, double[] armSpeed, boolean[] moving) {}

    private MotionLabeler() {}

    /**
     * @param timesNs frame times, int64 ns, increasing
     * @param gripper gripper value per frame, null entries where unmatched
     * @param state state vector per frame, null entries where unmatched
     * @param o thresholds
     * @return the labels
     * @throws IllegalArgumentException when the arrays differ in length
     */
    public static Labels label(long[] timesNs, Double[] gripper, double[][] state, Options o) {
        int n = timesNs.length;
        if (gripper.length != n || state.length != n) {
            throw new IllegalArgumentException("motion labels need one gripper value and state per frame: " + n
                    + " times, " + gripper.length + " gripper values, " + state.length + " states");
        }
        double[] speed = new double[n];
        Arrays.fill(speed, Double.NaN);
        for (int t = 0; t < n; t++) {
            int a = t == 0 ? 0 : t - 1;
            int b = t == 0 ? Math.min(1, n - 1) : t;
            if (a != b && state[a] != null && state[b] != null && state[a].length == state[b].length
                    && timesNs[b] > timesNs[a]) {
                double s = 0;
                for (int k = 0; k < state[a].length; k++) {
                    double d = state[b][k] - state[a][k];
                    s += d * d;
                }
                speed[t] = Math.sqrt(s) / ((timesNs[b] - timesNs[a]) / 1e9);
            }
        }
        double[] finite = Arrays.stream(speed).filter(Double::isFinite).sorted().toArray();
        double p95 = finite.length == 0 ? 0 : finite[(int) Math.floor(0.95 * (finite.length - 1))];
        boolean[] moving = new boolean[n];
        for (int t = 0; t < n; t++) {
            moving[t] = p95 > 0 && Double.isFinite(speed[t]) && speed[t] > o.idleFraction() * p95;
        }

        GripperState[] gs = new GripperState[n];
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (Double g : gripper) {
            if (g != null && Double.isFinite(g)) {
                lo = Math.min(lo, g);
                hi = Math.max(hi, g);
            }
        }
        boolean flat = !(hi - lo >= o.minGripperRange()) || hi - lo == 0;
        for (int t = 0; t < n; t++) {
            Double g = gripper[t];
            if (g == null || !Double.isFinite(g)) {
                continue;
            }
            if (flat) {
                gs[t] = g >= 0.5 ? GripperState.OPEN : GripperState.CLOSED;
                continue;
            }
            double on = (g - lo) / (hi - lo);
            int a = t == 0 ? 0 : t - 1;
            int b = t == 0 ? Math.min(1, n - 1) : t;
            double rate = 0;
            if (a != b && gripper[a] != null && gripper[b] != null && timesNs[b] > timesNs[a]) {
                rate = ((gripper[b] - gripper[a]) / (hi - lo)) / ((timesNs[b] - timesNs[a]) / 1e9);
            }
            if (rate < -o.gripperRate()) {
                gs[t] = GripperState.CLOSING;
            } else if (rate > o.gripperRate()) {
                gs[t] = GripperState.OPENING;
            } else {
                gs[t] = on < 0.5 ? GripperState.CLOSED : GripperState.OPEN;
            }
        }

        Phase[] ph = new Phase[n];
        boolean placed = false;
        Phase prev = null;
        for (int t = 0; t < n; t++) {
            if (gs[t] == null) {
                prev = null;
                continue;
            }
            Phase p = switch (gs[t]) {
                case CLOSING -> Phase.GRASP;
                case CLOSED -> prev == Phase.GRASP && !moving[t] ? Phase.GRASP : Phase.LIFT;
                case OPENING -> Phase.PLACE;
                case OPEN -> placed ? (moving[t] ? Phase.RETREAT : Phase.IDLE) : (moving[t] ? Phase.APPROACH : Phase.IDLE);
            };
            if (p == Phase.PLACE) {
                placed = true;
            } else if (p == Phase.GRASP) {
                placed = false;
            }
            ph[t] = p;
            prev = p;
        }
        return new Labels(gs, ph, speed, moving);
    }
}
