package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code trainset_samples}: a training sample, the frames row it was copied from with its place in the
 * set (see {@code io.flywheel.lake.CurationTables}).
 *
 * @param sampleIndex 0-based index in the set (= row position in the set's version)
 * @param episodeIndex 0-based index of its episode in the set ({@code trainset_episodes.episode_index})
 * @param frame the frames row, every column as the frames version in the set's lineage holds it, not null
 */
public record TrainsetSampleRow(long sampleIndex, int episodeIndex, FrameRow frame) {
    public TrainsetSampleRow {
        Objects.requireNonNull(frame, "frame");
    }
}
