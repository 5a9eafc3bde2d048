package io.flywheel.lake;

import io.flywheel.error.ConflictException;

/**
 * A transaction could not commit because a concurrent commit does not commute with it. Nothing of the failed
 * transaction is visible; running the work again applies it on top of the other commit.
 */
public final class CommitConflictException extends ConflictException {
    private static final long serialVersionUID = 1L;
    private final String table;
    private final long baseVersion;
    private final long conflictingVersion;
    private final long conflictingCommit;

    /**
     * @param message what conflicted, naming the table and both versions
     * @param table the table, or the tag's name for a tag that exists already
     * @param baseVersion the table's version this transaction was based on (-1 for a tag)
     * @param conflictingVersion the table version the other commit wrote (-1 for a tag)
     * @param conflictingCommit the other commit's lake sequence number
     */
    public CommitConflictException(String message, String table, long baseVersion, long conflictingVersion,
            long conflictingCommit) {
        super(message);
        this.table = table;
        this.baseVersion = baseVersion;
        this.conflictingVersion = conflictingVersion;
        this.conflictingCommit = conflictingCommit;
    }

    /** @return the table (or tag) that conflicted */
    public String table() {
        return table;
    }

    /** @return the table version this transaction was based on, -1 for a tag */
    public long baseVersion() {
        return baseVersion;
    }

    /** @return the table version the conflicting commit wrote, -1 for a tag */
    public long conflictingVersion() {
        return conflictingVersion;
    }

    /** @return the conflicting commit's lake sequence number */
    public long conflictingCommit() {
        return conflictingCommit;
    }
}
