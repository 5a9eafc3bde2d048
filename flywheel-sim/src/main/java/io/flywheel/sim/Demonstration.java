package io.flywheel.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The pick-and-place demonstration of one episode: where the object and the bin are, the
 * end-effector waypoints of the active arm through the phases approach, grasp, lift, place and
 * retreat (minimum-jerk interpolation between waypoints, Flash and Hogan 1985:
 * {@code s(u) = 10u^3 - 15u^4 + 6u^5}), the gripper opening, and the joint angles of both arms.
 *
 * <p>Coordinates: metres in the robot base frame, x forward, y left, z up, table top at z = 0.
 * Time {@code tau} is <em>motion time</em> in seconds since the episode start, which stands still
 * during static stretches (see {@link EpisodeGenerator}).
 */
final class Demonstration {
    static final int JOINTS_PER_ARM = 7;
    /** Joint names in JointState order: left_joint_1..7, left_gripper, right_joint_1..7, right_gripper. */
    static final List<String> JOINT_NAMES;
    static final double GRIPPER_OPEN = 0.085;
    static final String[] PHASES = {"approach", "grasp", "lift", "place", "retreat"};

    static {
        List<String> n = new ArrayList<>();
        for (String side : new String[] {"left", "right"}) {
            for (int j = 1; j <= JOINTS_PER_ARM; j++) {
                n.add(side + "_joint_" + j);
            }
            n.add(side + "_gripper");
        }
        JOINT_NAMES = List.copyOf(n);
    }

    private static final double L1 = 0.42;
    private static final double L2 = 0.40;
    private static final double WRIST = 0.12;

    final boolean leftActive;
    final double[] object = new double[3];
    final double[] bin = new double[3];
    final double motionSeconds;
    /** Phase boundaries in motion time, seconds: [approach start, grasp, lift, place, retreat, end]. */
    final double[] phaseStart = new double[6];
    final Catalog.ObjectKind kind;
    final String failureCause;
    private final double[][] waypoints;
    private final double[] waypointTimes;
    private final double tremorAmp;
    private final double tremorPhase;
    private final double tremorFreq;
    private final double[] idleHome;
    private final double closedOpening;

    /**
     * @param spec the episode
     * @param motionSeconds motion time available (episode duration minus static stretches)
     * @param noise the episode's own random source, for the small differences between near-duplicates
     */
    Demonstration(EpisodeSpec spec, double motionSeconds, SplittableRandom noise) {
        SplittableRandom demo = new SplittableRandom(spec.demoSeed());
        this.kind = spec.object();
        this.failureCause = spec.failureCause();
        this.motionSeconds = motionSeconds;
        double oy = (0.08 + demo.nextDouble() * 0.17) * (demo.nextBoolean() ? 1 : -1);
        leftActive = oy > 0;
        object[0] = 0.45 + demo.nextDouble() * 0.2;
        object[1] = oy;
        object[2] = kind.height() / 2;
        bin[0] = 0.32 + demo.nextDouble() * 0.1;
        bin[1] = Math.signum(oy) * (0.36 + demo.nextDouble() * 0.06);
        bin[2] = 0;
        double[] w = {0.30, 0.12, 0.15, 0.28, 0.15};
        double sum = 0;
        for (int i = 0; i < w.length; i++) {
            w[i] *= 0.85 + 0.3 * demo.nextDouble();
            sum += w[i];
        }
        phaseStart[0] = 0;
        for (int i = 0; i < w.length; i++) {
            phaseStart[i + 1] = phaseStart[i] + motionSeconds * w[i] / sum;
        }
        double side = leftActive ? 1 : -1;
        double[] home = {0.28, side * 0.25, 0.32};
        double graspZ = Math.max(0.02, kind.height() * 0.5);
        double missX = 0;
        if ("gripper_closed_on_nothing".equals(failureCause)) {
            // The operator misjudges the depth of the glass: the fingers close short of it.
            missX = -(0.06 + demo.nextDouble() * 0.02);
        }
        double[][] wp = {
                home,
                {object[0] - 0.04 + missX, object[1], graspZ + 0.12},
                {object[0] + missX, object[1], graspZ},
                {object[0] + missX, object[1], graspZ},
                {object[0] + missX, object[1], graspZ + 0.18},
                {bin[0], bin[1], 0.22},
                {bin[0], bin[1], 0.12},
                {bin[0], bin[1], 0.12},
                {home[0], home[1], home[2]},
        };
        double[] t = {
                phaseStart[0],
                phaseStart[0] + 0.65 * (phaseStart[1] - phaseStart[0]),
                phaseStart[1],
                phaseStart[2],
                phaseStart[3],
                phaseStart[3] + 0.6 * (phaseStart[4] - phaseStart[3]),
                phaseStart[3] + 0.85 * (phaseStart[4] - phaseStart[3]),
                phaseStart[4],
                phaseStart[5],
        };
        // Near-duplicates: the same demonstration with a few millimetres of difference.
        for (int i = 1; i < wp.length - 1; i++) {
            for (int k = 0; k < 3; k++) {
                wp[i][k] += noise.nextGaussian() * 0.002;
            }
        }
        waypoints = wp;
        waypointTimes = t;
        tremorAmp = 0.0015 + noise.nextDouble() * 0.001;
        tremorPhase = noise.nextDouble() * 2 * Math.PI;
        tremorFreq = 1.5 + noise.nextDouble();
        idleHome = new double[] {0.25, -side * 0.28, 0.30};
        closedOpening = "gripper_closed_on_nothing".equals(failureCause) ? 0.0 : Math.min(GRIPPER_OPEN - 0.005, kind.width());
    }

    private static double minJerk(double u) {
        u = Math.max(0, Math.min(1, u));
        return u * u * u * (10 - 15 * u + 6 * u * u);
    }

    /** @return the phase name at motion time {@code tau} */
    String phase(double tau) {
        for (int i = PHASES.length - 1; i >= 0; i--) {
            if (tau >= phaseStart[i]) {
                return PHASES[i];
            }
        }
        return PHASES[0];
    }

    /** Active end-effector position at motion time tau, into {@code out[0..2]}. */
    void activeEffector(double tau, double[] out) {
        int i = 0;
        while (i < waypointTimes.length - 2 && tau >= waypointTimes[i + 1]) {
            i++;
        }
        double t0 = waypointTimes[i];
        double t1 = waypointTimes[i + 1];
        double s = t1 > t0 ? minJerk((tau - t0) / (t1 - t0)) : 1;
        for (int k = 0; k < 3; k++) {
            out[k] = waypoints[i][k] + s * (waypoints[i + 1][k] - waypoints[i][k]);
        }
        double tr = tremorAmp * Math.sin(2 * Math.PI * tremorFreq * tau + tremorPhase);
        out[0] += tr;
        out[1] += 0.6 * tr;
    }

    /** Idle arm end-effector position (a slow small sway), into out. */
    void idleEffector(double tau, double[] out) {
        out[0] = idleHome[0] + 0.01 * Math.sin(0.7 * tau);
        out[1] = idleHome[1];
        out[2] = idleHome[2] + 0.008 * Math.sin(0.5 * tau + 1);
    }

    /** @return the time in the lift phase at which a slipping object falls (motion time, s) */
    double slipTime() {
        return phaseStart[2] + 0.4 * (phaseStart[3] - phaseStart[2]);
    }

    /** @return active gripper opening in metres at motion time tau (0 closed, 0.085 open) */
    double activeGripper(double tau) {
        double close0 = phaseStart[1];
        double close1 = phaseStart[1] + 0.6 * (phaseStart[2] - phaseStart[1]);
        double open0 = phaseStart[3] + 0.85 * (phaseStart[4] - phaseStart[3]);
        double open1 = phaseStart[4];
        if (tau < close0 || tau >= open1) {
            return GRIPPER_OPEN;
        }
        if (tau < close1) {
            return GRIPPER_OPEN + minJerk((tau - close0) / (close1 - close0)) * (closedOpening - GRIPPER_OPEN);
        }
        double closed = closedOpening;
        if ("object_slipped".equals(failureCause) && tau >= slipTime()) {
            double u = Math.min(1, (tau - slipTime()) / 0.15);
            closed = closedOpening * (1 - u);
        }
        if (tau < open0) {
            return closed;
        }
        return closed + minJerk((tau - open0) / (open1 - open0)) * (GRIPPER_OPEN - closed);
    }

    /** @return whether the active gripper holds the object at motion time tau */
    boolean holding(double tau) {
        if ("gripper_closed_on_nothing".equals(failureCause)) {
            return false;
        }
        double grasped = phaseStart[1] + 0.6 * (phaseStart[2] - phaseStart[1]);
        double released = phaseStart[3] + 0.85 * (phaseStart[4] - phaseStart[3]);
        double end = "object_slipped".equals(failureCause) ? slipTime() : released;
        return tau >= grasped && tau < end;
    }

    /**
     * Object centre at motion time tau, into out.
     *
     * @param ee the active end-effector position at tau
     */
    void objectPosition(double tau, double[] ee, double[] out) {
        double released = phaseStart[3] + 0.85 * (phaseStart[4] - phaseStart[3]);
        if (holding(tau)) {
            out[0] = ee[0];
            out[1] = ee[1];
            out[2] = ee[2];
        } else if (failureCause == null && tau >= released) {
            out[0] = bin[0];
            out[1] = bin[1];
            out[2] = kind.height() / 2;
        } else if ("object_slipped".equals(failureCause) && tau >= slipTime()) {
            double[] at = new double[3];
            activeEffector(slipTime(), at);
            out[0] = at[0];
            out[1] = at[1];
            out[2] = kind.height() / 2;
        } else {
            out[0] = object[0];
            out[1] = object[1];
            out[2] = object[2];
        }
    }

    /**
     * Joint angles (rad) of one arm for an end-effector position: a shoulder yaw, a two-link
     * shoulder/elbow solution for reach and height (elbow up), and wrist angles that keep the
     * gripper pointing down; the redundant joints follow smooth functions of the yaw.
     *
     * @param left which arm (its base is at y = +-0.22 m, z = 0.25 m)
     * @param ee end-effector position
     * @param out 7 angles written from {@code off}
     */
    static void inverseKinematics(boolean left, double[] ee, double[] out, int off) {
        double dx = ee[0];
        double dy = ee[1] - (left ? 0.22 : -0.22);
        double dz = ee[2] + WRIST - 0.25;
        double j1 = Math.atan2(dy, dx);
        double r = Math.hypot(dx, dy);
        double d = Math.min(L1 + L2 - 1e-3, Math.max(0.05, Math.hypot(r, dz)));
        double c4 = (d * d - L1 * L1 - L2 * L2) / (2 * L1 * L2);
        double j4 = Math.acos(Math.max(-1, Math.min(1, c4)));
        double j2 = Math.atan2(dz, r) + Math.atan2(L2 * Math.sin(j4), L1 + L2 * Math.cos(j4));
        double j3 = 0.15 * Math.sin(j1);
        double j5 = -0.5 * j3;
        double j6 = -(j2 - j4) - Math.PI / 2;
        double j7 = -j1;
        out[off] = j1;
        out[off + 1] = j2;
        out[off + 2] = j3;
        out[off + 3] = -j4;
        out[off + 4] = j5;
        out[off + 5] = j6;
        out[off + 6] = j7;
    }

    /**
     * All 16 positions in {@link #JOINT_NAMES} order at motion time tau: 14 joint angles (rad) and
     * 2 gripper openings (m).
     */
    void positions(double tau, double[] out) {
        double[] a = new double[3];
        double[] idle = new double[3];
        activeEffector(tau, a);
        idleEffector(tau, idle);
        double g = activeGripper(tau);
        inverseKinematics(true, leftActive ? a : idle, out, 0);
        out[7] = leftActive ? g : GRIPPER_OPEN;
        inverseKinematics(false, leftActive ? idle : a, out, 8);
        out[15] = leftActive ? GRIPPER_OPEN : g;
    }
}
