package io.flywheel.enrich.motion;

import java.util.Locale;

/** The gripper's state at one frame ({@link MotionLabeler} says how it is derived). */
public enum GripperState {
    OPEN, CLOSING, CLOSED, OPENING;

    /** @return the lower-case name stored in {@code frames.gripper_state} */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
