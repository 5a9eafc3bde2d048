package io.flywheel.lake;

import java.util.Arrays;

/**
 * A k-nearest-neighbour query for {@link LakeTable#nearest} and {@link VectorPool#nearest}, by cosine distance. Build
 * with {@link #builder(float[])}.
 *
 * @param vector query embedding float32[D], L2-normalised (cosine distance)
 * @param k neighbours wanted (default 10)
 * @param column embedding column, fixed_size_list&lt;float32, D&gt; (default {@code embedding}, a pool's; a lake
 *     table's is its model column {@code emb_<key>}, {@link EmbeddingModel#column()})
 * @param idColumn column returned as the hit id (default {@code id}, a pool's; {@code episode_id} for episodes; utf8 or
 *     an integer type)
 * @param filter SQL prefilter applied before the search (e.g.
 *     {@code quality_status != 'fail' AND robot_type = 'x'}), or null
 * @param nprobes IVF partitions probed (default 20; ignored by a flat search)
 * @param refineFactor re-rank {@code k * refineFactor} PQ candidates by exact distance (default
 *     10; 0 = none, distances then are PQ approximations)
 * @param exact force an exact flat scan even when an index exists
 */
public record VectorQuery(float[] vector, int k, String column, String idColumn, String filter, int nprobes,
        int refineFactor, boolean exact) {
    public VectorQuery {
        if (vector == null || vector.length == 0) {
            throw new IllegalArgumentException("query vector is empty");
        }
        vector = vector.clone();
        if (k < 1 || nprobes < 1 || refineFactor < 0) {
            throw new IllegalArgumentException("k = " + k + ", nprobes = " + nprobes + ", refineFactor = " + refineFactor
                    + ": expected k >= 1, nprobes >= 1, refineFactor >= 0");
        }
    }

    @Override
    public float[] vector() {
        return vector.clone();
    }

    /** @return a builder for a query with this vector (copied) */
    public static Builder builder(float[] vector) {
        return new Builder(vector);
    }

    @Override
    public String toString() {
        return "VectorQuery[dim=" + vector.length + ", k=" + k + ", column=" + column + ", filter=" + filter + ", nprobes="
                + nprobes + ", refineFactor=" + refineFactor + ", exact=" + exact + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VectorQuery q && Arrays.equals(vector, q.vector) && k == q.k && column.equals(q.column)
                && idColumn.equals(q.idColumn) && java.util.Objects.equals(filter, q.filter) && nprobes == q.nprobes
                && refineFactor == q.refineFactor && exact == q.exact;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(Arrays.hashCode(vector), k, column, idColumn, filter, nprobes, refineFactor, exact);
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private final float[] vector;
        private int k = 10;
        private String column = VectorPool.EMBEDDING;
        private String idColumn = VectorPool.ID;
        private String filter;
        private int nprobes = 20;
        private int refineFactor = 10;
        private boolean exact;

        private Builder(float[] vector) {
            this.vector = vector;
        }

        public Builder k(int k) {
            this.k = k;
            return this;
        }

        public Builder column(String c) {
            this.column = c;
            return this;
        }

        public Builder idColumn(String c) {
            this.idColumn = c;
            return this;
        }

        public Builder filter(String sql) {
            this.filter = sql;
            return this;
        }

        public Builder nprobes(int n) {
            this.nprobes = n;
            return this;
        }

        public Builder refineFactor(int r) {
            this.refineFactor = r;
            return this;
        }

        public Builder exact(boolean e) {
            this.exact = e;
            return this;
        }

        public VectorQuery build() {
            return new VectorQuery(vector, k, column, idColumn, filter, nprobes, refineFactor, exact);
        }
    }
}
