package io.flywheel.enrich.motion;

import java.util.Locale;

/** The manipulation phase of one frame ({@link MotionLabeler} says how it is derived). */
public enum Phase {
    IDLE, APPROACH, GRASP, LIFT, PLACE, RETREAT;

    /** @return the lower-case name stored in {@code frames.phase} */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
