package io.flywheel.serve.loader;

/**
 * Options of a {@link TrainsetLoader}. Build with {@link #builder()}.
 *
 * @param batchSize samples per batch, &ge; 1
 * @param seed seed of the epoch shuffles
 * @param images what to read of the cameras
 * @param threads worker threads reading batches, &ge; 1
 * @param prefetch batches read ahead of the consumer, &ge; 1 (memory is bounded by
 *     {@code prefetch * batchSize} samples)
 * @param dropLast drop the last, short batch of an epoch
 * @param rawImages read each image from the raw recording, at the camera's own resolution, even where enrich wrote a
 *     hot copy (video access units, which do not decode alone, still come from the hot copy)
 */
public record LoaderOptions(int batchSize, long seed, Images images, int threads, int prefetch, boolean dropLast,
                            boolean rawImages) {
    /** What the loader reads of the camera images. */
    public enum Images {
        /** no images: state, action and ids only */
        NONE,
        /** encoded bytes: the hot copy when the set was enriched, else the raw payload */
        BYTES,
        /** bytes and the decoded RGB image */
        DECODED
    }

    public LoaderOptions {
        if (batchSize < 1 || threads < 1 || prefetch < 1) {
            throw new IllegalArgumentException("batch size, threads and prefetch must be >= 1 (got " + batchSize + ", "
                    + threads + ", " + prefetch + ")");
        }
    }

    /** @return a builder: batch 64, seed 0, image bytes, 2 threads, prefetch 4, keep the last batch */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link LoaderOptions}. */
    public static final class Builder {
        private int batchSize = 64;
        private long seed;
        private Images images = Images.BYTES;
        private int threads = 2;
        private int prefetch = 4;
        private boolean dropLast;
        private boolean rawImages;

        public Builder batchSize(int n) {
            batchSize = n;
            return this;
        }

        public Builder seed(long s) {
            seed = s;
            return this;
        }

        public Builder images(Images i) {
            images = i;
            return this;
        }

        public Builder threads(int n) {
            threads = n;
            return this;
        }

        public Builder prefetch(int n) {
            prefetch = n;
            return this;
        }

        public Builder dropLast(boolean d) {
            dropLast = d;
            return this;
        }

        public Builder rawImages(boolean r) {
            rawImages = r;
            return this;
        }

        public LoaderOptions build() {
            return new LoaderOptions(batchSize, seed, images, threads, prefetch, dropLast, rawImages);
        }
    }
}
