package io.flywheel.align;

/**
 * A clock jump in one stream.
 *
 * <p>Rule: a <b>backward</b> jump is a message whose timestamp is smaller than its predecessor's in input order
 * ({@code position} is the input position; the stream was sorted, or rejected). A <b>forward</b> jump is a step
 * {@code t[i] - t[i-1]} larger than {@link AlignOptions#clockJumpThresholdNs()} in sorted order ({@code position} is
 * the sorted position {@code i}). Jumps are reported, never silently fixed: frames in a forward gap simply find no
 * message within tolerance and are flagged.
 *
 * @param stream   stream name
 * @param kind     backward or forward
 * @param position message position (input order for backward, sorted order for forward)
 * @param fromNs   timestamp of the previous message (ns)
 * @param toNs     timestamp of the message at {@code position} (ns)
 */
public record ClockJump(String stream, Kind kind, int position, long fromNs, long toNs) {
    /** Direction of the jump. */
    public enum Kind { BACKWARD, FORWARD }

    /** {@code toNs - fromNs}: negative for backward jumps. */
    public long stepNs() {
        return toNs - fromNs;
    }
}
