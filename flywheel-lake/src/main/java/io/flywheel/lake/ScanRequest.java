package io.flywheel.lake;

import java.util.List;

/**
 * What to read from a table: columns (null = all), a SQL filter (Lance/DataFusion syntax, e.g.
 * {@code "episode_id = 'e1' AND frame_index < 10"}), limit, offset and batch size. Build with
 * {@link #builder()}; {@link #all()} reads everything.
 *
 * @param columns column names to project, or null for all
 * @param filter SQL predicate, or null
 * @param limit max rows, or null
 * @param offset rows to skip, or null
 * @param batchSize rows per Arrow batch, or null for Lance's default
 */
public record ScanRequest(List<String> columns, String filter, Long limit, Long offset, Long batchSize) {
    public ScanRequest {
        columns = columns == null ? null : List.copyOf(columns);
        if (limit != null && limit < 0 || offset != null && offset < 0 || batchSize != null && batchSize < 1) {
            throw new IllegalArgumentException("scan limit/offset must be >= 0 and batch size >= 1, got limit="
                    + limit + " offset=" + offset + " batchSize=" + batchSize);
        }
    }

    /** @return a request for every column of every row */
    public static ScanRequest all() {
        return new ScanRequest(null, null, null, null, null);
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

        private Builder() {}

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
            return new ScanRequest(columns, filter, limit, offset, batchSize);
        }
    }
}
