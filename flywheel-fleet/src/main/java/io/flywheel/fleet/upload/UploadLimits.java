package io.flywheel.fleet.upload;

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
 * @param maxObservationBytes the largest message of a live episode ({@code Observation.data}), bytes (default 4 MiB,
 *     at most {@code maxMessageBytes} less 1 KiB of framing); a larger one is refused with RESOURCE_EXHAUSTED
 */
public record UploadLimits(long maxFileBytes, long robotQuotaBytes, int maxMessageBytes, int maxObservationBytes) {
    public static final long DEFAULT_MAX_FILE_BYTES = 64L << 30;
    public static final long DEFAULT_ROBOT_QUOTA_BYTES = 256L << 30;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = (4 << 20) + (64 << 10);
    public static final int DEFAULT_MAX_OBSERVATION_BYTES = 4 << 20;

    /** @throws IllegalArgumentException when a limit is not positive (a message limit below 64 KiB) */
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

        /** @param bytes the largest message of a live episode */
        public Builder maxObservationBytes(int bytes) {
            maxObservationBytes = bytes;
            return this;
        }

        /** @throws IllegalArgumentException when a limit is out of range */
        public UploadLimits build() {
            return new UploadLimits(maxFileBytes, robotQuotaBytes, maxMessageBytes, maxObservationBytes != null
                    ? maxObservationBytes : Math.min(DEFAULT_MAX_OBSERVATION_BYTES, maxMessageBytes - 1024));
        }
    }
}
