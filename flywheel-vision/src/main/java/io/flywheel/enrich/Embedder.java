package io.flywheel.enrich;

import java.util.List;

/**
 * An image embedding model: maps each image to an L2-normalised float32 vector of a fixed
 * dimension. Implementations own native resources (ONNX Runtime sessions) and are closed after
 * use; one instance may be called from one thread at a time.
 */
public interface Embedder extends AutoCloseable {
    /** @return a stable, human-readable model id, e.g. {@code mobilenet_v2_block10_gap} */
    String modelId();

    /** @return lower-case hex SHA-256 of the model file's bytes, recorded with every embedding */
    String sha256();

    /** @return D, the length of every embedding */
    int dimension();

    /**
     * Embeds a batch of images (any sizes: the model resizes as its preprocessing says).
     *
     * @param images one or more images
     * @return one L2-normalised vector of length {@link #dimension()} per image, in order
     * @throws EmbeddingException when the model fails to run
     */
    float[][] embed(List<RgbImage> images);

    @Override
    void close();

    /** Thrown when the model cannot be loaded or run; the message names the model file. */
    final class EmbeddingException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public EmbeddingException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
