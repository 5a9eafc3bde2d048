package io.flywheel.fleet.client;

import java.nio.file.Path;
import java.time.Duration;

/** Told how an upload goes, on the thread that called {@link FleetClient#upload}. */
public interface UploadListener {
    /** Does nothing. */
    UploadListener NONE = new UploadListener() { };

    /**
     * The gateway acknowledged bytes.
     *
     * @param file the file
     * @param ackedBytes bytes of it staged at the gateway
     * @param totalBytes its size
     */
    default void progress(Path file, long ackedBytes, long totalBytes) {
    }

    /**
     * An attempt failed with a status worth retrying; the next starts after {@code backoff}.
     *
     * @param file the file
     * @param attempt the attempt that failed, from 1
     * @param status the gRPC status and message
     * @param backoff the wait before the next attempt
     */
    default void retrying(Path file, int attempt, String status, Duration backoff) {
    }
}
