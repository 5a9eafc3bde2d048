package io.flywheel.fleet.upload;

/**
 * Counts of an upload service since it started (the staged ones: as found in the staging folder).
 *
 * @param receiving uploads receiving bytes on a stream now
 * @param staged uploads staged and unfinished (receiving or waiting for their robot to resume)
 * @param landed files landed in the raw layer since start
 * @param refused uploads refused since start (any error status sent: bad chunk, hash mismatch, quota, ...)
 * @param bytesReceived chunk bytes written to staging since start
 * @param ingestWaiting landed files waiting for ingest
 * @param ingesting 1 while a file is being ingested, else 0
 * @param ingested files ingested since start
 * @param ingestFailed landed files whose ingest failed, since start
 * @param expired staged uploads removed since start after {@link UploadLimits#stagedExpiry()} without new bytes
 */
public record UploadStats(int receiving, int staged, long landed, long refused, long bytesReceived, int ingestWaiting,
        int ingesting, long ingested, long ingestFailed, long expired) {}
