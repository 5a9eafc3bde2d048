package io.flywheel.curate.trainset;

import java.util.Objects;

/**
 * A neighbour found by mining: an episode of the pool near a query episode.
 *
 * @param episodeId the neighbour
 * @param queryEpisodeId the query (a failure episode, or a new recording) it was found for
 * @param distance cosine distance between the two episode embeddings, in [0, 2]
 * @param rank 1-based rank among the query's neighbours
 */
public record MinedEpisode(String episodeId, String queryEpisodeId, double distance, int rank) {
    public MinedEpisode {
        Objects.requireNonNull(episodeId, "episodeId");
        Objects.requireNonNull(queryEpisodeId, "queryEpisodeId");
        if (rank < 1) {
            throw new IllegalArgumentException("rank is 1-based, got " + rank);
        }
    }
}
