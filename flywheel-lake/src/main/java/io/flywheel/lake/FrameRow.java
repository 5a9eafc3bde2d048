package io.flywheel.lake;

import java.util.List;
import java.util.Objects;

/**
 * One row of {@code frames}: one master-clock tick of an episode (see {@link TableSchemas}).
 *
 * @param episodeId episode id, not null
 * @param frameIndex 0-based position in the episode, &ge; 0
 * @param timestampNs master clock time, ns since epoch
 * @param state aligned state vector, nullable
 * @param action aligned action vector, nullable
 * @param gripper aligned gripper value, nullable
 * @param images one locator per camera (empty list when the recording has no camera)
 * @param streams per-stream match results (may be empty)
 * @param flags frame flags (may be empty)
 */
public record FrameRow(String episodeId, int frameIndex, long timestampNs, double[] state, double[] action,
        Double gripper, List<ImageLocator> images, List<StreamMatch> streams, List<String> flags) {
    public FrameRow {
        Objects.requireNonNull(episodeId, "episodeId");
        if (frameIndex < 0) {
            throw new IllegalArgumentException("frame of episode " + episodeId + ": frameIndex must be >= 0, got "
                    + frameIndex);
        }
        images = images == null ? List.of() : List.copyOf(images);
        streams = streams == null ? List.of() : List.copyOf(streams);
        flags = flags == null ? List.of() : List.copyOf(flags);
        state = state == null ? null : state.clone();
        action = action == null ? null : action.clone();
    }

    @Override
    public double[] state() {
        return state == null ? null : state.clone();
    }

    @Override
    public double[] action() {
        return action == null ? null : action.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FrameRow f && episodeId.equals(f.episodeId) && frameIndex == f.frameIndex
                && timestampNs == f.timestampNs && java.util.Arrays.equals(state, f.state)
                && java.util.Arrays.equals(action, f.action) && Objects.equals(gripper, f.gripper)
                && images.equals(f.images) && streams.equals(f.streams) && flags.equals(f.flags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(episodeId, frameIndex, timestampNs, java.util.Arrays.hashCode(state),
                java.util.Arrays.hashCode(action), gripper, images, streams, flags);
    }

    @Override
    public String toString() {
        return "FrameRow[" + episodeId + "#" + frameIndex + " t=" + timestampNs + " state="
                + java.util.Arrays.toString(state) + " action=" + java.util.Arrays.toString(action)
                + " gripper=" + gripper + " images=" + images + " streams=" + streams + " flags=" + flags + "]";
    }
}
