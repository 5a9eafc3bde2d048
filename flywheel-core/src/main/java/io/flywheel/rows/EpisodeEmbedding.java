package io.flywheel.rows;

import java.util.Arrays;

/**
 * One embedding model's result for one episode (the {@code episodes.emb_<key>} and {@code emb_<key>_at_ns} columns,
 * see {@code io.flywheel.lake.TableSchemas}).
 *
 * @param vector float32[D], L2-normalised: the normalised mean of the master camera's keyframe embeddings; null when
 *     the episode has no master-camera image that could be embedded
 * @param embeddedAtNs when enrich committed this model's embedding of the episode, int64 ns since the Unix epoch; its
 *     presence marks the episode done for the model (also when {@code vector} is null)
 */
public record EpisodeEmbedding(float[] vector, long embeddedAtNs) {
    public EpisodeEmbedding {
        vector = vector == null ? null : vector.clone();
    }

    @Override
    public float[] vector() {
        return vector == null ? null : vector.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EpisodeEmbedding e && embeddedAtNs == e.embeddedAtNs && Arrays.equals(vector, e.vector);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(vector) + Long.hashCode(embeddedAtNs);
    }

    @Override
    public String toString() {
        return "EpisodeEmbedding[" + (vector == null ? "no vector" : "float[" + vector.length + "]") + " at "
                + embeddedAtNs + "]";
    }
}
