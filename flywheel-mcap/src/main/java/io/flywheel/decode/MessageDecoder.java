package io.flywheel.decode;

import java.nio.ByteBuffer;

/**
 * Turns one serialized message into the generic decoded-message tree.
 *
 * <p>The tree, the same for every encoding (ROS 2 CDR, ROS 1, JSON, protobuf):
 * <ul>
 *   <li>a message is a {@code java.util.LinkedHashMap<String, Object>} in field-definition order
 *       (constants are not fields and are not included);</li>
 *   <li>bool: {@code Boolean}; int8, uint8, int16, uint16, int32 (and byte, char in ROS): {@code Integer};
 *       uint32, int64: {@code Long}; uint64: {@code Long} when below 2^63, else
 *       {@code java.math.BigInteger}; float32: {@code Float}; float64: {@code Double};
 *       string and wstring: {@code String}; ROS time/duration: a map {@code {sec, nanosec}}
 *       (ROS 1: {@code {sec, nsec}});</li>
 *   <li>arrays (fixed, bounded, unbounded): {@code byte[]} for uint8/int8/byte/char elements,
 *       otherwise a {@code java.util.List} of the element values above.</li>
 * </ul>
 * Implementations are immutable and thread-safe once built for a schema.
 */
@FunctionalInterface
public interface MessageDecoder {
    /**
     * @param data the serialized message, from its position to its limit; the position is not
     *     changed
     * @return the decoded tree, a {@code Map<String, Object>} for message types
     * @throws DecodeException when the bytes do not match the schema (names the field and offset)
     */
    Object decode(ByteBuffer data) throws DecodeException;
}
