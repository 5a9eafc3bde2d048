package io.flywheel.ros.bag;

import java.nio.ByteBuffer;

/**
 * One message data record (op 0x02) of a ROS 1 bag.
 *
 * @param connection the connection the message was recorded on (topic, type, definition)
 * @param logTime the record's {@code time} field (the time the recorder received it): int64
 *     nanoseconds since the Unix epoch, {@code sec * 1e9 + nsec}
 * @param data the serialized ROS 1 message, a read-only buffer from position to limit
 * @param chunkPosition absolute file offset of the chunk record (op 0x05) holding the message, or -1 when the
 *     message data record is outside any chunk (or the position is not known)
 * @param compression that chunk's compression, {@code none}, {@code bz2} or {@code lz4}; {@code ""} without a chunk
 * @param offsetInChunk offset of the data's first byte within the chunk's uncompressed bytes, or -1 without a chunk
 * @param fileOffset absolute file offset of the data's first byte when the bytes lie uncompressed in the file (no
 *     chunk, or a chunk with compression {@code none}), else -1
 */
public record BagMessage(Connection connection, long logTime, ByteBuffer data, long chunkPosition, String compression,
                         long offsetInChunk, long fileOffset) {
    /** A message whose position in the file is not known. */
    public BagMessage(Connection connection, long logTime, ByteBuffer data) {
        this(connection, logTime, data, -1, "", -1, -1);
    }

    /** @return the topic, {@code connection().topic()} */
    public String topic() {
        return connection.topic();
    }

    /** @return the whole seconds of {@link #logTime()} */
    public long sec() {
        return Math.floorDiv(logTime, 1_000_000_000L);
    }

    /** @return the nanoseconds within the second of {@link #logTime()} */
    public long nsec() {
        return Math.floorMod(logTime, 1_000_000_000L);
    }
}
