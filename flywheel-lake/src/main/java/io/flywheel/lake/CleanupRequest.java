package io.flywheel.lake;

import java.time.Duration;

/**
 * What {@link Lake#cleanup} removes: table versions older than {@code olderThan} that nothing keeps, and the files
 * only they referenced.
 *
 * @param olderThan a version committed longer ago than this may be removed; &ge; 0
 * @param dryRun report what would be removed, remove nothing
 */
public record CleanupRequest(Duration olderThan, boolean dryRun) {
    public CleanupRequest {
        if (olderThan == null || olderThan.isNegative()) {
            throw new IllegalArgumentException("--older-than must be a duration >= 0, got " + olderThan);
        }
    }

    /** @return a request removing versions older than {@code olderThan} */
    public static CleanupRequest olderThan(Duration olderThan) {
        return new CleanupRequest(olderThan, false);
    }

    /** @return the same request, as a dry run */
    public CleanupRequest asDryRun() {
        return new CleanupRequest(olderThan, true);
    }
}
