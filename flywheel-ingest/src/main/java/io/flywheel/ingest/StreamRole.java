package io.flywheel.ingest;

/**
 * What a topic's messages mean to the data loop. Assigned by a {@link RobotProfile} or, without
 * one, guessed from message types and topic names ({@link RobotProfile#detect}).
 */
public enum StreamRole {
    /**
     * Camera frames ({@code sensor_msgs/CompressedImage}, {@code sensor_msgs/Image}, RLDS images, and
     * {@code foxglove.CompressedVideo} access units).
     */
    CAMERA,
    /** Robot state vector ({@code sensor_msgs/JointState.position}, RLDS {@code observation/state}). */
    STATE,
    /** Commanded action vector ({@code *MultiArray.data}, {@code Twist}, RLDS {@code action}). */
    ACTION,
    /** Gripper opening or command, one scalar per message. */
    GRIPPER,
    /** Task text (language instruction). */
    TASK,
    /** Episode outcome text (success / failure / intervention). */
    OUTCOME,
    /** Anything else: kept with its times only (and numeric values where cheap). */
    OTHER;

    /**
     * @param s a role name, any case ({@code "camera"}, {@code "state"}, ...)
     * @return the role
     * @throws IllegalArgumentException when {@code s} names no role (the message lists them)
     */
    public static StreamRole parse(String s) {
        for (StreamRole r : values()) {
            if (r.name().equalsIgnoreCase(s.trim())) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown role '" + s + "'; expected one of camera, state, action, gripper,"
                + " task, outcome, other");
    }
}
