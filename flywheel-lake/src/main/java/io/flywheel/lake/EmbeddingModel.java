package io.flywheel.lake;

import java.util.Objects;

/**
 * An embedding model registered in a lake (the lake property {@value EmbeddingModels#PROPERTY}): its vectors live in
 * columns of their own, {@code episodes.<column>} fixed_size_list&lt;float32, D&gt;, {@code episodes.<column>_at_ns}
 * int64 and {@code frames.<column>} list&lt;fixed_size_list&lt;float32, D&gt;&gt;.
 *
 * @param id the model id enrich records ({@code mobilenet_v2_block10_gap}, a file name, ...)
 * @param dimension D, the length of every vector, &ge; 1
 * @param sha256 lower-case hex SHA-256 of the model file ("" when unknown)
 * @param column the episodes and frames column of its vectors, {@code emb_<key>} ({@link EmbeddingModels#columnFor})
 * @param registeredAtNs when the model's columns were added, int64 ns since the Unix epoch
 */
public record EmbeddingModel(String id, int dimension, String sha256, String column, long registeredAtNs) {
    public EmbeddingModel {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(column, "column");
        sha256 = sha256 == null ? "" : sha256;
        if (dimension < 1) {
            throw new IllegalArgumentException("embedding model '" + id + "': dimension must be >= 1, got " + dimension);
        }
    }

    /** @return the episodes column marking when the model embedded an episode: {@code <column>_at_ns} */
    public String embeddedAtColumn() {
        return column + TableSchemas.EMBEDDED_AT_SUFFIX;
    }

    /** @return the name of the model's vector index on {@code episodes.<column>}: {@code <column>_ivf_pq} */
    public String indexName() {
        return column + "_ivf_pq";
    }
}
