package io.flywheel.ros.bag;

import java.nio.ByteBuffer;

/**
 * One message data record (op 0x02) of a ROS 1 bag.
 *
 * @param connection the connection the message was recorded on (topic, type, definition)
 * @param logTime the record's {@code time} field (the time the recorder received it): int64
 *     nanoseconds since the Unix epoch, {@code sec * 1e9 + nsec}
 * @param data the serialized ROS 1 message, a read-only buffer from position to limit
 */
public record BagMessage(Connection connection, long logTime, ByteBuffer data) {
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
