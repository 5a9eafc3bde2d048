package io.flywheel.lake;

/**
 * A scalar index on one column of a vector table, built by {@link VectorPool#buildIndex} and {@link LakeTransaction#indexVectors} after
 * the vector index (or alone by {@link VectorPool#buildScalarIndexes}), so that a SQL prefilter
 * on that column ({@link VectorQuery#filter()}) is answered from the index instead of by reading and
 * evaluating the column over every row on every query. The search result does not change: a
 * scalar index is exact.
 *
 * <p>Lance documents the filters a bitmap or btree index answers as comparisons of the column with
 * literals ({@code =}, {@code <}, {@code >}, {@code IN (...)}, {@code BETWEEN}, {@code IS NULL}) combined
 * with {@code AND}/{@code OR}/{@code NOT}; other expressions are evaluated over the rows. Measured at
 * 1,000,000 rows (BENCHMARKS.md, "Vector search"): {@code quality_status != 'fail'} and
 * {@code quality_status IN ('pass', 'warn')} both get faster with a bitmap index, the {@code !=} form
 * most; SQL null semantics are kept (a null passes neither; tested).
 *
 * @param column the column, a scalar (not list, not embedding) column of the table
 * @param kind {@link Kind#BITMAP} for low-cardinality columns (a few to ~1,000 distinct values:
 *     quality status, outcome, robot id, task), {@link Kind#BTREE} for mostly distinct values
 */
public record ScalarIndex(String column, Kind kind) {
    /** The index structure. */
    public enum Kind {
        /** One compressed bitmap of row ids per distinct value. */
        BITMAP,
        /** The column sorted, with a btree over blocks of 4,096 values. */
        BTREE
    }

    public ScalarIndex {
        if (column == null || column.isBlank()) {
            throw new IllegalArgumentException("scalar index column name is empty");
        }
        if (kind == null) {
            throw new IllegalArgumentException("scalar index on '" + column + "': kind is null");
        }
    }

    /** @return a bitmap index on {@code column} */
    public static ScalarIndex bitmap(String column) {
        return new ScalarIndex(column, Kind.BITMAP);
    }

    /** @return a btree index on {@code column} */
    public static ScalarIndex btree(String column) {
        return new ScalarIndex(column, Kind.BTREE);
    }

    /** @return the index name used in the dataset: {@code <column>_bitmap} or {@code <column>_btree} */
    public String indexName() {
        return column + "_" + kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
