package io.flywheel.lake;

import java.util.List;

/**
 * What to read from a table: columns (null = all), a SQL filter (Lance/DataFusion syntax, e.g.
 * {@code "episode_id = 'e1' AND frame_index < 10"}), an order, limit, offset and batch size. Build with
 * {@link #builder()}; {@link #all()} reads everything.
 *
 * @param columns column names to project, or null for all
 * @param filter SQL predicate, or null
 * @param limit max rows, or null
 * @param offset rows to skip, or null
 * @param batchSize rows per Arrow batch, or null for Lance's default
 * @param order sort keys, first the most significant (Lance sorts, top-k with a limit); empty for table order
 */
public record ScanRequest(List<String> columns, String filter, Long limit, Long offset, Long batchSize,
                          List<SortKey> order) {
    /**
     * One sort key.
     *
     * @param column column name
     * @param ascending ascending (else descending)
     * @param nullsFirst nulls before other values (else after)
     */
    public record SortKey(String column, boolean ascending, boolean nullsFirst) {
        /** @return ascending, nulls last */
        public static SortKey asc(String column) {
            return new SortKey(column, true, false);
        }

        /** @return descending, nulls last */
        public static SortKey desc(String column) {
            return new SortKey(column, false, false);
        }
    }

    public ScanRequest {
        columns = columns == null ? null : List.copyOf(columns);
        order = order == null ? List.of() : List.copyOf(order);
        if (limit != null && limit < 0 || offset != null && offset < 0 || batchSize != null && batchSize < 1) {
            throw new IllegalArgumentException("scan limit/offset must be >= 0 and batch size >= 1, got limit="
                    + limit + " offset=" + offset + " batchSize=" + batchSize);
        }
    }

    /** @return a request for every column of every row */
    public static ScanRequest all() {
        return new ScanRequest(null, null, null, null, null, List.of());
    }

    /** @return a new builder */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link ScanRequest}. */
    public static final class Builder {
        private List<String> columns;
        private String filter;
        private Long limit;
        private Long offset;
        private Long batchSize;
        private final java.util.ArrayList<SortKey> order = new java.util.ArrayList<>();

        private Builder() {}

        /** Adds a sort key after those added before. */
        public Builder orderBy(SortKey key) {
            this.order.add(key);
            return this;
        }

        public Builder columns(List<String> columns) {
            this.columns = columns;
            return this;
        }

        public Builder columns(String... columns) {
            this.columns = List.of(columns);
            return this;
        }

        public Builder filter(String sqlFilter) {
            this.filter = sqlFilter;
            return this;
        }

        public Builder limit(long limit) {
            this.limit = limit;
            return this;
        }

        public Builder offset(long offset) {
            this.offset = offset;
            return this;
        }

        public Builder batchSize(long batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        public ScanRequest build() {
            return new ScanRequest(columns, filter, limit, offset, batchSize, order);
        }
    }
}
