package io.flywheel.rows;

import java.util.List;
import java.util.Objects;

/**
 * One row of {@code frames}: one master-clock tick of an episode (see {@code io.flywheel.lake.TableSchemas}).
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
 * @param enrichment per camera, in the order of {@code images}: what enrich computed (entries may be null); an
 *     empty list before enrich
 * @param gripperState open / closing / closed / opening (enrich), nullable
 * @param phase idle / approach / grasp / lift / place / retreat (enrich), nullable
 */
public record FrameRow(String episodeId, int frameIndex, long timestampNs, double[] state, double[] action,
        Double gripper, List<ImageLocator> images, List<StreamMatch> streams, List<String> flags,
        List<ImageEnrichment> enrichment, String gripperState, String phase) {
    /** A frame before enrichment. */
    public FrameRow(String episodeId, int frameIndex, long timestampNs, double[] state, double[] action,
            Double gripper, List<ImageLocator> images, List<StreamMatch> streams, List<String> flags) {
        this(episodeId, frameIndex, timestampNs, state, action, gripper, images, streams, flags, null, null, null);
    }

    public FrameRow {
        Objects.requireNonNull(episodeId, "episodeId");
        if (frameIndex < 0) {
            throw new IllegalArgumentException("frame of episode " + episodeId + ": frameIndex must be >= 0, got "
                    + frameIndex);
        }
        images = images == null ? List.of() : List.copyOf(images);
        streams = streams == null ? List.of() : List.copyOf(streams);
        flags = flags == null ? List.of() : List.copyOf(flags);
        enrichment = enrichment == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(enrichment));
        if (!enrichment.isEmpty() && enrichment.size() != images.size()) {
            throw new IllegalArgumentException("frame " + episodeId + "#" + frameIndex + ": " + enrichment.size()
                    + " enrichment entries for " + images.size() + " images");
        }
        state = state == null ? null : state.clone();
        action = action == null ? null : action.clone();
    }

    /**
     * @return this frame with enrichment: the images (with their decoded sizes), one entry per image, and the
     *     frame labels
     */
    public FrameRow withEnrichment(List<ImageLocator> newImages, List<ImageEnrichment> perImage, String newGripperState,
            String newPhase) {
        return new FrameRow(episodeId, frameIndex, timestampNs, state, action, gripper, newImages, streams, flags,
                perImage, newGripperState, newPhase);
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
                && images.equals(f.images) && streams.equals(f.streams) && flags.equals(f.flags)
                && enrichment.equals(f.enrichment) && Objects.equals(gripperState, f.gripperState)
                && Objects.equals(phase, f.phase);
    }

    @Override
    public int hashCode() {
        return Objects.hash(episodeId, frameIndex, timestampNs, java.util.Arrays.hashCode(state),
                java.util.Arrays.hashCode(action), gripper, images, streams, flags, enrichment, gripperState, phase);
    }

    @Override
    public String toString() {
        return "FrameRow[" + episodeId + "#" + frameIndex + " t=" + timestampNs + " state="
                + java.util.Arrays.toString(state) + " action=" + java.util.Arrays.toString(action)
                + " gripper=" + gripper + " images=" + images + " streams=" + streams + " flags=" + flags
                + (enrichment.isEmpty() ? "" : " enrichment=" + enrichment + " gripper_state=" + gripperState
                        + " phase=" + phase) + "]";
    }
}
