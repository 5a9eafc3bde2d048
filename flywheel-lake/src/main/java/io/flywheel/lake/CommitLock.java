package io.flywheel.lake;

import java.time.Duration;

/**
 * Serialises the short publish step of the lake's commit protocol (roll back orphan table versions, commit the staged
 * table operations, write the commit point) among writers of one lake. Data files are written before the lock is
 * taken, so writers overlap in everything but this step; the commit point's put-if-absent, not the lock, is what
 * makes two commits of the same sequence number impossible.
 */
interface CommitLock {
    /**
     * @param timeout how long to wait for another writer's publish step
     * @return the held lock; close it to release
     * @throws io.flywheel.error.ConflictException when another writer held it for longer than the timeout, naming it
     * @throws io.flywheel.error.StorageUnavailableException when the lock cannot be read or written
     */
    Held acquire(Duration timeout);

    /** A held lock. */
    interface Held extends AutoCloseable {
        /** Releases the lock; idempotent. */
        @Override
        void close();
    }
}
