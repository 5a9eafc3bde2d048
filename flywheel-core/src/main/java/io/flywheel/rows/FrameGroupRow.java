package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code frame_groups}: a master-camera frame that is a near-duplicate of another frame, its group's
 * representative (representatives are not listed; see {@code io.flywheel.lake.CurationTables}).
 *
 * @param episodeId the frame's episode, not null
 * @param frameIndex the frame's position in its episode
 * @param representativeEpisodeId the representative frame's episode, not null
 * @param representativeFrameIndex the representative frame's position in its episode
 * @param hamming Hamming distance of the two pHashes, bits in [0, 64]
 * @param threshold the dedup's Hamming threshold, bits
 */
public record FrameGroupRow(String episodeId, int frameIndex, String representativeEpisodeId,
        int representativeFrameIndex, int hamming, int threshold) {
    public FrameGroupRow {
        Objects.requireNonNull(episodeId, "episodeId");
        Objects.requireNonNull(representativeEpisodeId, "representativeEpisodeId");
    }
}
