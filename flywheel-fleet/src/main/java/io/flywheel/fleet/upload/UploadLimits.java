package io.flywheel.fleet.upload;

import java.time.Duration;

/**
 * Limits of the upload service and of live episodes; immutable, built with {@link #builder()}.
 *
 * @param maxFileBytes the largest file accepted, bytes (default 64 GiB); a larger BEGIN is refused with
 *     RESOURCE_EXHAUSTED, and so is the message that would make a live episode's journal larger
 * @param robotQuotaBytes the most bytes one robot may have staged at once, bytes (default 256 GiB): the sum of the
 *     declared sizes of its unfinished uploads and the sizes of its live episodes' journals; a BEGIN or a live message
 *     past it is refused with RESOURCE_EXHAUSTED
 * @param maxMessageBytes the largest gRPC message accepted, bytes (default 4 MiB + 64 KiB: a 4 MiB chunk and its
 *     framing); a larger CHUNK is refused by gRPC with RESOURCE_EXHAUSTED
 * @param streamWindowBytes the HTTP/2 flow-control window of each stream, bytes (default 1 MiB, gRPC's): with the
 *     gateway's one-message-at-a-time reading, at most about this plus one message is in memory per upload stream, so
 *     it bounds the gateway's memory at (robots uploading) x (window + message size); 64 KiB to 16 MiB
 * @param stagingBytesPerSecond the most bytes per second written to staging by all uploads and live episodes'
 *     journals together (0, the default: no limit); to keep a shared disk usable for the rest of the machine. They slow
 *     down together (their senders are throttled through HTTP/2 flow control), none is refused for it
 * @param stagedExpiry how long a staged upload may go without new bytes before the gateway removes it (default 7
 *     days; {@link Duration#ZERO}: never): a robot that never comes back (wiped, renamed, the file deleted) does not
 *     hold its quota and the disk for ever. Checked at start and then every {@code min(1 h, expiry / 4)}; the robot
 *     that resumes later starts again at offset 0
 * @param maxObservationBytes the largest message of a live episode ({@code Observation.data}), bytes (default 4 MiB,
 *     or {@code maxMessageBytes} less 1 KiB of framing when that is less; at most that); a larger one is refused with
 *     RESOURCE_EXHAUSTED
 */
public record UploadLimits(long maxFileBytes, long robotQuotaBytes, int maxMessageBytes, int streamWindowBytes,
        long stagingBytesPerSecond, Duration stagedExpiry, int maxObservationBytes) {
    public static final long DEFAULT_MAX_FILE_BYTES = 64L << 30;
    public static final long DEFAULT_ROBOT_QUOTA_BYTES = 256L << 30;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = (4 << 20) + (64 << 10);
    public static final int DEFAULT_STREAM_WINDOW_BYTES = 1 << 20;
    public static final Duration DEFAULT_STAGED_EXPIRY = Duration.ofDays(7);
    public static final int DEFAULT_MAX_OBSERVATION_BYTES = 4 << 20;

    /**
     * @throws IllegalArgumentException when a limit is not positive (a message limit below 64 KiB, a window outside
     *     64 KiB..16 MiB, a negative staging rate or expiry)
     */
    public UploadLimits {
        if (maxFileBytes <= 0) {
            throw new IllegalArgumentException("the maximum file size must be > 0 bytes, got " + maxFileBytes);
        }
        if (robotQuotaBytes <= 0) {
            throw new IllegalArgumentException("the per-robot quota must be > 0 bytes, got " + robotQuotaBytes);
        }
        if (maxMessageBytes < 64 << 10) {
            throw new IllegalArgumentException("the maximum message size must be >= 64 KiB, got " + maxMessageBytes);
        }
        if (streamWindowBytes < 64 << 10 || streamWindowBytes > 16 << 20) {
            throw new IllegalArgumentException("the stream window must be 64 KiB..16 MiB, got " + streamWindowBytes);
        }
        if (stagingBytesPerSecond < 0) {
            throw new IllegalArgumentException("the staging rate must be >= 0 bytes/s (0: no limit), got "
                    + stagingBytesPerSecond);
        }
        if (stagedExpiry == null || stagedExpiry.isNegative()) {
            throw new IllegalArgumentException("the staged-upload expiry must be >= 0 (0: never), got " + stagedExpiry);
        }
        if (maxObservationBytes < 1 || maxObservationBytes > maxMessageBytes - 1024) {
            throw new IllegalArgumentException("the maximum live message size must be 1.." + (maxMessageBytes - 1024)
                    + " bytes (the gRPC message limit less 1 KiB), got " + maxObservationBytes);
        }
    }

    /** @return the defaults */
    public static UploadLimits defaults() {
        return builder().build();
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link UploadLimits}. */
    public static final class Builder {
        private long maxFileBytes = DEFAULT_MAX_FILE_BYTES;
        private long robotQuotaBytes = DEFAULT_ROBOT_QUOTA_BYTES;
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private int streamWindowBytes = DEFAULT_STREAM_WINDOW_BYTES;
        private long stagingBytesPerSecond;
        private Duration stagedExpiry = DEFAULT_STAGED_EXPIRY;
        private Integer maxObservationBytes;

        private Builder() {}

        /** @param bytes the largest file accepted */
        public Builder maxFileBytes(long bytes) {
            maxFileBytes = bytes;
            return this;
        }

        /** @param bytes the most bytes one robot may have staged at once */
        public Builder robotQuotaBytes(long bytes) {
            robotQuotaBytes = bytes;
            return this;
        }

        /** @param bytes the largest gRPC message accepted */
        public Builder maxMessageBytes(int bytes) {
            maxMessageBytes = bytes;
            return this;
        }

        /** @param bytes the HTTP/2 flow-control window of each stream */
        public Builder streamWindowBytes(int bytes) {
            streamWindowBytes = bytes;
            return this;
        }

        /** @param bytes the most bytes per second written to staging, all uploads together; 0 for no limit */
        public Builder stagingBytesPerSecond(long bytes) {
            stagingBytesPerSecond = bytes;
            return this;
        }

        /** @param d how long a staged upload may go without new bytes before it is removed; 0 for never */
        public Builder stagedExpiry(Duration d) {
            stagedExpiry = d;
            return this;
        }

        /** @param bytes the largest message of a live episode */
        public Builder maxObservationBytes(int bytes) {
            maxObservationBytes = bytes;
            return this;
        }

        /** @throws IllegalArgumentException when a limit is out of range */
        public UploadLimits build() {
            return new UploadLimits(maxFileBytes, robotQuotaBytes, maxMessageBytes, streamWindowBytes,
                    stagingBytesPerSecond, stagedExpiry, maxObservationBytes != null ? maxObservationBytes
                    : Math.min(DEFAULT_MAX_OBSERVATION_BYTES, maxMessageBytes - 1024));
        }
    }
}
