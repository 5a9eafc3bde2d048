package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code episode_groups}: an episode with an embedding and the representative of its near-duplicate group
 * (see {@code io.flywheel.lake.CurationTables}; each dedup run overwrites the table as a new version).
 *
 * @param episodeId the episode, not null
 * @param representativeId its group's representative (its own id for a representative), not null
 * @param distance cosine distance to the representative, in [0, 2]
 * @param groupSize episodes in the group, &ge; 1
 * @param threshold the dedup's cosine threshold, in [0, 2]
 * @param embeddingModel the model whose episode embeddings were compared, not null
 */
public record EpisodeGroupRow(String episodeId, String representativeId, double distance, int groupSize,
        double threshold, String embeddingModel) {
    public EpisodeGroupRow {
        Objects.requireNonNull(episodeId, "episodeId");
        Objects.requireNonNull(representativeId, "representativeId");
        Objects.requireNonNull(embeddingModel, "embeddingModel");
    }
}
