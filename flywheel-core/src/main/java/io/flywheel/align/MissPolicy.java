package io.flywheel.align;

/** What happens to a frame when a stream has no message within tolerance for it. */
public enum MissPolicy {
    /** Keep the frame; the stream's value is null (index -1) and the frame is flagged for that stream. */
    FLAG,
    /** Drop the frame from the output (it is counted in {@link ResidualStats#droppedFrames()}). */
    DROP_FRAME
}
