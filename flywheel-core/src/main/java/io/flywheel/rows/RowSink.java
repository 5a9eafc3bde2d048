package io.flywheel.rows;

import java.util.OptionalLong;
import java.util.Set;

/**
 * Where the ingest stage puts the rows of its recordings: the lake on one machine, staging datasets in a Spark task.
 * The stage itself knows no storage.
 */
public interface RowSink {
    /** @return the lower-case hex SHA-256 of every raw file already committed (the idempotency check) */
    Set<String> committedRawFiles();

    /**
     * Commits one recording's rows in one transaction: every reader sees all of them or none.
     *
     * @param rows the recording's rows
     * @return the commit's number (the lake's commit sequence number), or empty when a concurrent writer committed
     *     the same raw files first (nothing is written then: the recording is in the lake once)
     * @throws io.flywheel.error.FlywheelException when the commit fails (nothing of the recording is visible)
     */
    OptionalLong commit(RecordingRows rows);
}
