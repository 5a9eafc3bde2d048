package io.flywheel.curate;

/**
 * How {@link VectorSearch#buildIndex} indexes an embedding column. Defaults: a flat (no index,
 * exact scan) search below 50,000 rows; above, IVF-PQ with {@code round(sqrt(rows))} IVF
 * partitions and {@code D / 8} PQ sub-vectors of 8 bits (8 dimensions per sub-vector; for a D
 * not divisible by 8, the largest divisor of D not above D / 8), cosine distance. Build with
 * {@link #builder()}.
 *
 * @param column embedding column, {@code FixedSizeList<float32>[D]}
 * @param flatBelowRows pools with fewer rows are searched flat (exact), not indexed
 * @param partitions IVF partitions, 0 = {@code round(sqrt(rows))}
 * @param subVectors PQ sub-vectors, 0 = automatic (see above); must divide D
 * @param maxIterations k-means iterations for IVF and PQ training
 * @param replace replace an existing index on the column
 */
public record VectorIndexOptions(String column, long flatBelowRows, int partitions, int subVectors, int maxIterations,
        boolean replace) {
    /** Default pool size below which search is flat. */
    public static final long DEFAULT_FLAT_BELOW_ROWS = 50_000;

    public VectorIndexOptions {
        if (column == null || column.isBlank()) {
            throw new IllegalArgumentException("embedding column name is empty");
        }
        if (flatBelowRows < 0 || partitions < 0 || subVectors < 0 || maxIterations < 1) {
            throw new IllegalArgumentException("index options must not be negative (maxIterations >= 1): " + flatBelowRows
                    + ", " + partitions + ", " + subVectors + ", " + maxIterations);
        }
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private String column = VectorTable.EMBEDDING;
        private long flatBelowRows = DEFAULT_FLAT_BELOW_ROWS;
        private int partitions;
        private int subVectors;
        private int maxIterations = 50;
        private boolean replace = true;

        public Builder column(String c) {
            this.column = c;
            return this;
        }

        public Builder flatBelowRows(long rows) {
            this.flatBelowRows = rows;
            return this;
        }

        public Builder partitions(int p) {
            this.partitions = p;
            return this;
        }

        public Builder subVectors(int s) {
            this.subVectors = s;
            return this;
        }

        public Builder maxIterations(int i) {
            this.maxIterations = i;
            return this;
        }

        public Builder replace(boolean r) {
            this.replace = r;
            return this;
        }

        public VectorIndexOptions build() {
            return new VectorIndexOptions(column, flatBelowRows, partitions, subVectors, maxIterations, replace);
        }
    }
}
