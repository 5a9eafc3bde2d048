package io.flywheel.lake;

import java.util.List;

/**
 * What a compaction ({@link Lake#compact}, or the routine after a commit) did.
 *
 * @param policy the policy it applied
 * @param tables one entry per table it looked at, in the order asked
 * @param compactCommit the sequence number of the lake commit of the rewrites ({@code compact}), or 0 when nothing was
 *     rewritten
 * @param indexCommit the sequence number of the lake commit of the index refresh ({@code index}), or 0 when no index
 *     needed one
 * @param failure for the routine only: why it stopped (the commit that ran it is committed all the same), or null
 */
public record CompactionResult(CompactionPolicy policy, List<TableCompaction> tables, long compactCommit,
        long indexCommit, String failure) {
    public CompactionResult {
        tables = List.copyOf(tables);
    }

    /** @return whether any table was rewritten or had its indexes refreshed */
    public boolean changedAnything() {
        return compactCommit > 0 || indexCommit > 0;
    }

    /** @return the entry of {@code table}, or null when it was not looked at */
    public TableCompaction table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst().orElse(null);
    }

    /**
     * One table's compaction.
     *
     * @param table table name
     * @param reason why the policy compacted it (one line), or null when it did not
     * @param fromVersion the table's version before
     * @param toVersion its version after (the same when nothing was done)
     * @param before its layout before
     * @param after its layout after
     * @param fragmentsRemoved fragments the rewrite replaced (Lance's metrics)
     * @param fragmentsAdded fragments it wrote
     * @param filesRemoved data files it replaced
     * @param filesAdded data files it wrote
     * @param indexesRefreshed the indexes that got their unindexed rows indexed
     */
    public record TableCompaction(String table, String reason, long fromVersion, long toVersion, TableLayout before,
            TableLayout after, long fragmentsRemoved, long fragmentsAdded, long filesRemoved, long filesAdded,
            List<String> indexesRefreshed) {
        public TableCompaction {
            indexesRefreshed = List.copyOf(indexesRefreshed);
        }

        /** @return whether its fragments were rewritten */
        public boolean compacted() {
            return fragmentsRemoved > 0;
        }
    }
}
