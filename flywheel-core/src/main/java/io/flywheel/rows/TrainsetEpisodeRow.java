package io.flywheel.rows;

import java.util.List;
import java.util.Objects;

/**
 * One row of {@code trainset_episodes}: an episode of a training set and why it is in (see
 * {@code io.flywheel.lake.CurationTables}). Each set is its own table version.
 *
 * @param episodeIndex 0-based position in the set (its samples come in this order)
 * @param episodeId the episode, not null
 * @param robotId robot id ("" when unknown), nullable
 * @param task task text, nullable
 * @param scene scene, nullable
 * @param object manipulated object (the episode metadata's {@code object}), nullable
 * @param outcome success / failure / ..., nullable
 * @param inBase whether the uniform base sample took it
 * @param minedBy the mining queries whose neighbour it is (empty when only in the base), not null
 * @param firstSample {@code sample_index} of its first sample
 * @param sampleCount number of its samples
 */
public record TrainsetEpisodeRow(int episodeIndex, String episodeId, String robotId, String task, String scene,
        String object, String outcome, boolean inBase, List<MinedBy> minedBy, long firstSample, long sampleCount) {
    public TrainsetEpisodeRow {
        Objects.requireNonNull(episodeId, "episodeId");
        minedBy = List.copyOf(minedBy);
    }

    /**
     * One entry of {@code mined_by}: a query this episode is a mined neighbour of.
     *
     * @param queryEpisodeId the query episode (a failure, or a new recording), not null
     * @param distance cosine distance between the two episode embeddings, in [0, 2]
     * @param rank 1-based rank among the query's neighbours
     */
    public record MinedBy(String queryEpisodeId, double distance, int rank) {
        public MinedBy {
            Objects.requireNonNull(queryEpisodeId, "queryEpisodeId");
        }
    }
}
