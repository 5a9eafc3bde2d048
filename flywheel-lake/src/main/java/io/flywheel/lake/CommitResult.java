package io.flywheel.lake;

import java.util.List;

/**
 * What one {@link LakeTransaction#commit()} did.
 *
 * @param snapshot the lake snapshot it committed (the base snapshot when the transaction was empty)
 * @param tables one entry per table written, in the transaction's order
 * @param attempts how many times the commit was staged (1 unless a concurrent commit made it stage again)
 * @param maintenance what the {@link MaintenanceRoutine} did after this commit (a compaction of tables that had more
 *     than N commits since their last one), or null when it was not due
 */
public record CommitResult(LakeSnapshot snapshot, List<TableCommit> tables, int attempts,
        CompactionResult maintenance) {
    public CommitResult {
        tables = List.copyOf(tables);
    }

    /** A commit the maintenance routine did not follow. */
    public CommitResult(LakeSnapshot snapshot, List<TableCommit> tables, int attempts) {
        this(snapshot, tables, attempts, null);
    }

    /** @return this commit, followed by the routine's compaction */
    CommitResult withMaintenance(CompactionResult m) {
        return new CommitResult(snapshot, tables, attempts, m);
    }

    /**
     * One table's commit.
     *
     * @param table table name
     * @param fromVersion the version before this transaction (0 when it created the table)
     * @param toVersion the version after it
     * @param rowsWritten rows appended or updated
     * @param rowsReplaced rows deleted because their key was written again, or overwritten
     */
    public record TableCommit(String table, long fromVersion, long toVersion, long rowsWritten, long rowsReplaced) {}

    /** @return the commit of {@code table}, or null when the transaction did not touch it */
    public TableCommit table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst().orElse(null);
    }
}
