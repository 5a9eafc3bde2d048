package io.flywheel.enrich.motion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** A pick and place written out frame by frame, with the labels the documented rule gives. */
class MotionLabelerTest {
    private static final long DT = 100_000_000L; // 10 Hz

    @Test
    void pickAndPlaceGetsEveryPhaseInOrder() {
        // gripper: 1 open, closes over frames 4-5, closed 6-10, opens over 11-12, open after
        Double[] g = {1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0};
        // arm x position: still, moves (approach), still while grasping (4-6), moves (lift 7-10), still (place), moves away, still
        double[] x = {0, 0, 0.1, 0.2, 0.2, 0.2, 0.2, 0.3, 0.4, 0.5, 0.6, 0.6, 0.6, 0.7, 0.8, 0.8};
        int n = g.length;
        long[] t = new long[n];
        double[][] s = new double[n][];
        for (int i = 0; i < n; i++) {
            t[i] = 1_000_000_000L + i * DT;
            s[i] = new double[] {x[i], 0.5};
        }
        MotionLabeler.Labels l = MotionLabeler.label(t, g, s, MotionLabeler.Options.defaults());
        // rates: closing frames 4,5 have r = -0.5/0.1 s = -5 /s; arm speed 1 m/s when moving, else 0
        assertArrayEquals(new GripperState[] {GripperState.OPEN, GripperState.OPEN, GripperState.OPEN, GripperState.OPEN,
            GripperState.CLOSING, GripperState.CLOSING, GripperState.CLOSED, GripperState.CLOSED, GripperState.CLOSED,
            GripperState.CLOSED, GripperState.CLOSED, GripperState.OPENING, GripperState.OPENING, GripperState.OPEN,
            GripperState.OPEN, GripperState.OPEN}, l.gripper());
        assertArrayEquals(new Phase[] {Phase.IDLE, Phase.IDLE, Phase.APPROACH, Phase.APPROACH, Phase.GRASP, Phase.GRASP,
            Phase.GRASP, Phase.LIFT, Phase.LIFT, Phase.LIFT, Phase.LIFT, Phase.PLACE, Phase.PLACE, Phase.RETREAT,
            Phase.RETREAT, Phase.IDLE}, l.phase());
        assertEquals(1.0, l.armSpeed()[3], 1e-9);
        assertEquals(0.0, l.armSpeed()[5], 1e-9);
    }

    @Test
    void aGripperThatNeverMovesUsesTheZeroToOneConventionAndMissingValuesStayNull() {
        long[] t = {0, DT, 2 * DT};
        double[][] s = {{0}, {0}, {0}};
        MotionLabeler.Labels l = MotionLabeler.label(t, new Double[] {0.2, null, 0.2}, s, MotionLabeler.Options.defaults());
        assertEquals(GripperState.CLOSED, l.gripper()[0]);
        assertNull(l.gripper()[1]);
        assertNull(l.phase()[1]);
        assertEquals(Phase.LIFT, l.phase()[0], "closed with no grasp seen: holding");
        l = MotionLabeler.label(t, new Double[] {0.9, 0.9, 0.9}, s, MotionLabeler.Options.defaults());
        assertArrayEquals(new Phase[] {Phase.IDLE, Phase.IDLE, Phase.IDLE}, l.phase(), "still arm, open gripper");
    }
}
