package io.flywheel.fleet.client;

import java.nio.file.Path;

import io.flywheel.fleet.v1.UploadStatus;

/**
 * How an upload ended.
 *
 * @param file the file uploaded
 * @param sha256 its SHA-256, lower-case hex
 * @param sizeBytes its size in bytes
 * @param status the gateway's final answer (state LANDED, INGESTING or INGESTED; landed path; already_in_lake)
 * @param resumedFrom the offset the gateway named at the BEGIN of the attempt that finished: the bytes staged by the
 *     earlier attempts (a cut stream) or by an earlier run; 0 when the last attempt sent the whole file
 * @param bytesSent chunk bytes sent, over all attempts
 * @param attempts streams opened (1 without a retry)
 * @param seconds wall time, hashing included
 */
public record UploadResult(Path file, String sha256, long sizeBytes, UploadStatus status, long resumedFrom,
        long bytesSent, int attempts, double seconds) {}
