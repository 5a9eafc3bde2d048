package io.flywheel.lake;

import java.util.List;

/**
 * What one {@link LakeTransaction#commit()} did, table by table in commit order.
 *
 * @param tables one entry per table written
 */
public record CommitResult(List<TableCommit> tables) {
    public CommitResult {
        tables = List.copyOf(tables);
    }

    /**
     * One table's commit.
     *
     * @param table table name
     * @param fromVersion the version before this transaction
     * @param toVersion the version after it
     * @param rowsWritten rows appended, upserted or updated
     * @param rowsReplaced rows deleted because their key was written again (re-ingest repair)
     */
    public record TableCommit(String table, long fromVersion, long toVersion, long rowsWritten, long rowsReplaced) {}

    /** @return the commit of {@code table}, or null when the transaction did not touch it */
    public TableCommit table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst().orElse(null);
    }
}
