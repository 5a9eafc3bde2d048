package io.flywheel.lake;

import java.util.Objects;

/**
 * Rows of another table, at one version, taken by row offset, as the rows of an overwrite
 * ({@link LakeTransaction#overwrite(String, RowCopy)}): the rows of a training set's samples, copied from
 * {@code frames} inside the lake. The rows come in groups (a set's episodes); each written row is
 * {@code positionColumn} (int64, its 0-based position among all written rows), {@code groupColumn} (int32, the
 * 0-based index of its group), then every column of the source row as the source version holds it.
 *
 * <p>The copy is staged with the transaction's other changes, before the commit lock: the source is read by Lance
 * {@code take} in chunks of {@link #ROWS_PER_TAKE} rows and the taken columns move into the written batches whole
 * (no per-value copy), so the work grows with the rows copied, not with the source table's size.
 *
 * @param sourceTable the table the rows are taken from, e.g. {@code frames}
 * @param sourceVersion its version (the one a reader of the source saw, e.g. {@link LakeTable#version()})
 * @param groups per group, in group order, the row offsets (0-based, in the source version's table order) of its
 *     rows, in row order; the written rows follow this order
 * @param positionColumn name of the leading int64 position column, e.g. {@link CurationTables#SAMPLE_INDEX}
 * @param groupColumn name of the int32 group column after it, e.g. {@link CurationTables#EPISODE_INDEX}
 * @param progress told after each chunk how many groups are written, of how many
 */
public record RowCopy(String sourceTable, long sourceVersion, long[][] groups, String positionColumn,
                      String groupColumn, Progress progress) {
    /** Rows per Lance {@code take}: what one chunk of the copy holds in memory (at most, plus one written batch). */
    public static final int ROWS_PER_TAKE = 8_192;

    /** Receives the copy's progress: groups whose rows are all written, and all groups. */
    @FunctionalInterface
    public interface Progress {
        void update(long groupsDone, long groupsTotal);

        Progress NONE = (d, t) -> {};
    }

    public RowCopy {
        Objects.requireNonNull(sourceTable, "sourceTable");
        Objects.requireNonNull(groups, "groups");
        Objects.requireNonNull(positionColumn, "positionColumn");
        Objects.requireNonNull(groupColumn, "groupColumn");
        progress = progress == null ? Progress.NONE : progress;
        if (sourceVersion < 1) {
            throw new IllegalArgumentException("copy from " + sourceTable + ": version " + sourceVersion
                    + " is not a version");
        }
        if (positionColumn.equals(groupColumn)) {
            throw new IllegalArgumentException("copy from " + sourceTable + ": the position and group columns are"
                    + " both '" + positionColumn + "'");
        }
        for (long[] g : groups) {
            Objects.requireNonNull(g, "a group's offsets");
        }
    }

    /** @return the number of rows copied, over all groups */
    public long rowCount() {
        long n = 0;
        for (long[] g : groups) {
            n += g.length;
        }
        return n;
    }

    /**
     * @param sourceTable the table to copy from
     * @param sourceVersion its version
     * @return a builder; set the groups and the two column names
     */
    public static Builder from(String sourceTable, long sourceVersion) {
        return new Builder(sourceTable, sourceVersion);
    }

    /** Builder of {@link RowCopy}. */
    public static final class Builder {
        private final String sourceTable;
        private final long sourceVersion;
        private long[][] groups = new long[0][];
        private String positionColumn;
        private String groupColumn;
        private Progress progress = Progress.NONE;

        private Builder(String sourceTable, long sourceVersion) {
            this.sourceTable = sourceTable;
            this.sourceVersion = sourceVersion;
        }

        /** @param offsetsPerGroup per group, the source row offsets of its rows, in the order they are written */
        public Builder groups(long[][] offsetsPerGroup) {
            this.groups = offsetsPerGroup;
            return this;
        }

        /** @param name the int64 column numbering the written rows from 0 */
        public Builder positionColumn(String name) {
            this.positionColumn = name;
            return this;
        }

        /** @param name the int32 column holding each row's group index */
        public Builder groupColumn(String name) {
            this.groupColumn = name;
            return this;
        }

        public Builder progress(Progress p) {
            this.progress = p;
            return this;
        }

        public RowCopy build() {
            return new RowCopy(sourceTable, sourceVersion, groups, positionColumn, groupColumn, progress);
        }
    }
}
