package io.flywheel.align;

/**
 * How a stream is attached to the master clock. Times compared are corrected times
 * ({@code stamp - clockOffsetNs}, see {@link StreamPolicy#clockOffsetNs()}).
 */
public enum AlignMethod {
    /**
     * The message closest in time to the frame. A tie between a message before and one after the frame goes to the
     * earlier one; among messages with identical timestamps the last one in stream order is taken on the "at or
     * before" side and the first one on the "after" side. Accepted when {@code |dt| <= tolerance}.
     */
    NEAREST,
    /**
     * As-of (backward) join: the latest message at or before the frame time, never a later one, so no future
     * information leaks into a training sample. Among identical timestamps the last one in stream order is taken.
     * Accepted when {@code frame - t <= tolerance}.
     */
    ASOF,
    /**
     * Linear interpolation between the two neighbours (the latest message at or before the frame and the first one
     * after it), spherical linear interpolation (slerp) for the stream's quaternion groups. Never across a gap: the
     * neighbours must be at most {@code tolerance} apart. An exact hit (a message at the frame time) is taken as is,
     * without interpolation. A frame before the first or after the last message has no two neighbours and is
     * unmatched.
     */
    INTERPOLATE;

    /**
     * Parses a method name as written in a robot profile: {@code nearest}, {@code asof} (also {@code as-of},
     * {@code as_of}), {@code interpolate}; case-insensitive.
     *
     * @throws IllegalArgumentException naming the accepted values when {@code name} is none of them
     */
    public static AlignMethod parse(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(java.util.Locale.ROOT).replace("-", "").replace("_", "");
        switch (n) {
            case "nearest": return NEAREST;
            case "asof": return ASOF;
            case "interpolate": case "interp": case "linear": return INTERPOLATE;
            default:
                throw new IllegalArgumentException("unknown alignment method '" + name
                        + "': expected nearest, asof or interpolate");
        }
    }
}
