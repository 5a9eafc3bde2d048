package io.flywheel.curate.trainset;

import java.util.List;

/**
 * One episode of a training set and why it is in.
 *
 * @param episodeIndex 0-based position in the set (samples are in this order)
 * @param info the episode's descriptive fields (quality status and duplicate_of are not stored
 *     with the set: "" and null)
 * @param inBase taken by the uniform base sample
 * @param minedBy the queries whose neighbours it is, with distances (empty when only base)
 * @param firstSample sample_index of its first sample
 * @param sampleCount number of its samples
 */
public record TrainsetEpisode(int episodeIndex, EpisodeInfo info, boolean inBase, List<MinedEpisode> minedBy,
                              long firstSample, long sampleCount) {
    public TrainsetEpisode {
        minedBy = List.copyOf(minedBy);
    }
}
