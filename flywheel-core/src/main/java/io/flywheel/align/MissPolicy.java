package io.flywheel.align;

/** What happens to a frame when a stream has no message within tolerance for it. */
public enum MissPolicy {
    /** Keep the frame; the stream's value is null (index -1) and the frame is flagged for that stream. */
    FLAG,
    /** Drop the frame from the output (it is counted in {@link ResidualStats#droppedFrames()}). */
    DROP_FRAME;

    /**
     * Parses a miss policy as written on the command line or in a robot profile: {@code flag}, or {@code drop}
     * (also {@code drop_frame}, {@code drop-frame}); case-insensitive.
     *
     * @throws IllegalArgumentException naming the accepted values when {@code name} is none of them
     */
    public static MissPolicy parse(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(java.util.Locale.ROOT).replace("-", "").replace("_", "");
        switch (n) {
            case "flag": return FLAG;
            case "drop": case "dropframe": return DROP_FRAME;
            default:
                throw new IllegalArgumentException("unknown miss policy '" + name + "': expected flag or drop");
        }
    }
}
