package io.flywheel.lake;

/**
 * How an embedding column is indexed ({@link IndexChoice#choose}, {@link VectorPool#buildIndex},
 * {@link LakeTransaction#indexVectors}). Defaults: a flat (no index,
 * exact scan) search below 50,000 rows; above, IVF-PQ with {@code round(sqrt(rows))} IVF
 * partitions and {@code D / 4} PQ sub-vectors of 8 bits (4 dimensions per sub-vector; for a D
 * not divisible by 4, the largest divisor of D not above D / 4), cosine distance; k-means
 * training on {@code sampleRate} rows per centroid (IVF: {@code partitions * sampleRate} rows, PQ:
 * {@code 256 * sampleRate} rows), 50 iterations for the IVF centroids and 10 for the PQ codebooks.
 * No scalar indexes unless asked for ({@link Builder#bitmap}, {@link Builder#btree}).
 * Build with {@link #builder()}.
 *
 * <p>Why 10 PQ iterations: Lance 7.0 runs every PQ k-means iteration it is given (no early stop
 * seen), and PQ training dominated the build: 50 iterations took 135 s of PQ training for 100k x 96
 * on the loaded 2-core bench VM against 11-27 s for 10, with recall@10 within 0.01 after re-ranking
 * by the refine factor. Why 4 dimensions per sub-vector: at 1M x 96 in 1,000 clusters, 12 sub-vectors
 * of 8 dimensions capped recall@10 at 0.81 (refine factor 10) and 0.94 (20) whatever nprobes, because
 * PQ could not rank the ~1,000 near-equidistant members of a cluster; 24 sub-vectors of 4 reached
 * 0.99 at refine factor 20 (BENCHMARKS.md, "Vector search").
 *
 * @param column embedding column, {@code FixedSizeList<float32>[D]}
 * @param flatBelowRows pools with fewer rows are searched flat (exact), not indexed
 * @param partitions IVF partitions, 0 = {@code round(sqrt(rows))}
 * @param subVectors PQ sub-vectors, 0 = automatic (see above); must divide D
 * @param maxIterations k-means iterations (at most) for the IVF centroids
 * @param pqMaxIterations k-means iterations for each PQ codebook
 * @param sampleRate training rows per centroid (Lance's {@code sample_rate}), at least 1
 * @param replace replace an existing index on the column (and existing scalar indexes of the same name)
 * @param scalarIndexes scalar indexes built after the vector index, flat or not, for the columns
 *     a prefilter tests ({@link ScalarIndex}); default none; at most one per column
 */
public record VectorIndexOptions(String column, long flatBelowRows, int partitions, int subVectors, int maxIterations,
        int pqMaxIterations, int sampleRate, boolean replace, java.util.List<ScalarIndex> scalarIndexes) {
    /** Default pool size below which search is flat. */
    public static final long DEFAULT_FLAT_BELOW_ROWS = 50_000;

    public VectorIndexOptions {
        if (column == null || column.isBlank()) {
            throw new IllegalArgumentException("embedding column name is empty");
        }
        if (flatBelowRows < 0 || partitions < 0 || subVectors < 0 || maxIterations < 1 || pqMaxIterations < 1
                || sampleRate < 1) {
            throw new IllegalArgumentException("index options: flatBelowRows " + flatBelowRows + ", partitions "
                    + partitions + ", subVectors " + subVectors + " must be >= 0; maxIterations " + maxIterations
                    + ", pqMaxIterations " + pqMaxIterations + ", sampleRate " + sampleRate + " must be >= 1");
        }
        scalarIndexes = java.util.List.copyOf(scalarIndexes);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (ScalarIndex si : scalarIndexes) {
            if (si.column().equals(column)) {
                throw new IllegalArgumentException("scalar index on the embedding column '" + column + "'");
            }
            if (!seen.add(si.column())) {
                throw new IllegalArgumentException("two scalar indexes on column '" + si.column() + "'");
            }
        }
    }

    /** Options without scalar indexes (the form before scalar indexes existed). */
    public VectorIndexOptions(String column, long flatBelowRows, int partitions, int subVectors, int maxIterations,
            int pqMaxIterations, int sampleRate, boolean replace) {
        this(column, flatBelowRows, partitions, subVectors, maxIterations, pqMaxIterations, sampleRate, replace,
                java.util.List.of());
    }

    /** @return these options for another embedding column */
    public VectorIndexOptions withColumn(String c) {
        return new VectorIndexOptions(c, flatBelowRows, partitions, subVectors, maxIterations, pqMaxIterations,
                sampleRate, replace, scalarIndexes);
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private String column = VectorPool.EMBEDDING;
        private long flatBelowRows = DEFAULT_FLAT_BELOW_ROWS;
        private int partitions;
        private int subVectors;
        private int maxIterations = 50;
        private int pqMaxIterations = 10;
        private int sampleRate = 256;
        private boolean replace = true;
        private final java.util.List<ScalarIndex> scalarIndexes = new java.util.ArrayList<>();

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

        public Builder pqMaxIterations(int i) {
            this.pqMaxIterations = i;
            return this;
        }

        public Builder sampleRate(int rowsPerCentroid) {
            this.sampleRate = rowsPerCentroid;
            return this;
        }

        public Builder replace(boolean r) {
            this.replace = r;
            return this;
        }

        /** Adds a scalar index (see {@link ScalarIndex}). */
        public Builder scalarIndex(ScalarIndex index) {
            this.scalarIndexes.add(index);
            return this;
        }

        /** Adds a {@link ScalarIndex.Kind#BITMAP} index on each of {@code columns}. */
        public Builder bitmap(String... columns) {
            for (String c : columns) {
                scalarIndexes.add(ScalarIndex.bitmap(c));
            }
            return this;
        }

        /** Adds a {@link ScalarIndex.Kind#BTREE} index on each of {@code columns}. */
        public Builder btree(String... columns) {
            for (String c : columns) {
                scalarIndexes.add(ScalarIndex.btree(c));
            }
            return this;
        }

        /**
         * @throws IllegalArgumentException when a count is out of range, or a column has two scalar
         *     indexes or is the embedding column
         */
        public VectorIndexOptions build() {
            return new VectorIndexOptions(column, flatBelowRows, partitions, subVectors, maxIterations, pqMaxIterations,
                    sampleRate, replace, scalarIndexes);
        }
    }
}
