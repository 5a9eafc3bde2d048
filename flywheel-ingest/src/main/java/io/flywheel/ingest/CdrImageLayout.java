package io.flywheel.ingest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.flywheel.decode.DecodeException;

/**
 * Finds where the image payload ({@code data}) starts inside a CDR-serialized
 * {@code sensor_msgs/msg/CompressedImage} or {@code sensor_msgs/msg/Image}, so that a locator can point at
 * the image bytes themselves. Follows OMG XCDR1 alignment (each primitive aligned to its size, measured
 * from the end of the 4-byte encapsulation header), as ROS 2 (rmw_fastrtps / rosbag2) writes it.
 */
final class CdrImageLayout {
    private CdrImageLayout() {}

    /**
     * @param message the whole CDR message (encapsulation header included), from position to limit
     * @param raw true for {@code Image}, false for {@code CompressedImage}
     * @return offset of the first payload byte from the message's first byte, and the payload length in
     *     the high/low words: {@code (offset << 32) | length}
     * @throws DecodeException when the message ends before the payload does
     */
    static long locate(ByteBuffer message, boolean raw) throws DecodeException {
        ByteBuffer b = message.duplicate();
        int start = b.position();
        int end = b.limit();
        String type = raw ? "sensor_msgs/msg/Image" : "sensor_msgs/msg/CompressedImage";
        if (end - start < 4) throw new DecodeException("CDR " + type + ": message shorter than its 4-byte header");
        int rep = b.get(start + 1) & 0xFF;
        b.order((rep & 1) == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
        int origin = start + 4;
        int[] p = {origin + 8}; // after header.stamp (int32 sec, uint32 nanosec)
        need(b, p[0], end, type, "header.stamp", origin);
        skipString(b, p, end, origin, type, "header.frame_id");
        if (raw) {
            p[0] += 8; // height, width (aligned: after a string, align 4)
            need(b, p[0], end, type, "height/width", origin);
            skipString(b, p, end, origin, type, "encoding");
            p[0] += 1; // is_bigendian
            align(p, origin, 4);
            p[0] += 4; // step
            need(b, p[0], end, type, "step", origin);
        } else {
            skipString(b, p, end, origin, type, "format");
        }
        align(p, origin, 4);
        need(b, p[0] + 4, end, type, "data length", origin);
        long len = b.getInt(p[0]) & 0xFFFF_FFFFL;
        p[0] += 4;
        if (len > end - p[0]) {
            throw new DecodeException("CDR " + type + ": data declares " + len + " bytes but only " + (end - p[0])
                    + " remain (offset " + (p[0] - start) + ")");
        }
        return ((long) (p[0] - start) << 32) | len;
    }

    /**
     * Where a CDR {@code foxglove_msgs/msg/CompressedVideo} keeps its access unit, with its timestamp and format.
     *
     * @param stampNs the {@code timestamp} field (builtin_interfaces/Time) in ns
     * @param offset offset of the first {@code data} byte from the message's first byte
     * @param length {@code data} bytes (one access unit)
     * @param format the {@code format} field without its NUL terminator, e.g. {@code "h264"}
     */
    record Video(long stampNs, int offset, int length, String format) {}

    /**
     * Lays out a CDR {@code foxglove_msgs/msg/CompressedVideo} (fields in order: {@code builtin_interfaces/Time
     * timestamp}, {@code string frame_id}, {@code uint8[] data}, {@code string format}; Foxglove schemas), with
     * the same XCDR1 alignment as {@link #locate}.
     *
     * @param message the whole CDR message (encapsulation header included), from position to limit
     * @return the timestamp, the place of {@code data} and the format
     * @throws DecodeException when the message ends before a field does
     */
    static Video video(ByteBuffer message) throws DecodeException {
        ByteBuffer b = message.duplicate();
        int start = b.position();
        int end = b.limit();
        String type = "foxglove_msgs/msg/CompressedVideo";
        if (end - start < 4) throw new DecodeException("CDR " + type + ": message shorter than its 4-byte header");
        int rep = b.get(start + 1) & 0xFF;
        b.order((rep & 1) == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
        int origin = start + 4;
        need(b, origin + 8, end, type, "timestamp", origin);
        long stamp = b.getInt(origin) * 1_000_000_000L + (b.getInt(origin + 4) & 0xFFFF_FFFFL);
        int[] p = {origin + 8};
        skipString(b, p, end, origin, type, "frame_id");
        align(p, origin, 4);
        need(b, p[0] + 4, end, type, "data length", origin);
        long len = b.getInt(p[0]) & 0xFFFF_FFFFL;
        p[0] += 4;
        if (len > end - p[0]) {
            throw new DecodeException("CDR " + type + ": data declares " + len + " bytes but only " + (end - p[0])
                    + " remain (offset " + (p[0] - start) + ")");
        }
        int dataAt = p[0];
        p[0] += (int) len;
        int formatAt = p[0];
        skipString(b, p, end, origin, type, "format");
        int fs = formatAt + (4 - (formatAt - origin) % 4) % 4 + 4;
        int fe = p[0];
        while (fe > fs && b.get(fe - 1) == 0) fe--;
        byte[] f = new byte[fe - fs];
        b.get(fs, f);
        return new Video(stamp, dataAt - start, (int) len, new String(f, java.nio.charset.StandardCharsets.UTF_8));
    }

    private static void skipString(ByteBuffer b, int[] p, int end, int origin, String type, String field)
            throws DecodeException {
        align(p, origin, 4);
        need(b, p[0] + 4, end, type, field, origin);
        long n = b.getInt(p[0]) & 0xFFFF_FFFFL;
        p[0] += 4;
        if (n > end - p[0]) {
            throw new DecodeException("CDR " + type + ": " + field + " declares " + n + " bytes but only "
                    + (end - p[0]) + " remain");
        }
        p[0] += (int) n;
    }

    private static void align(int[] p, int origin, int a) {
        int rel = p[0] - origin;
        p[0] += (a - rel % a) % a;
    }

    private static void need(ByteBuffer b, int upTo, int end, String type, String field, int origin)
            throws DecodeException {
        if (upTo > end) {
            throw new DecodeException("CDR " + type + ": message ends inside " + field + " (offset " + (end - origin + 4) + ")");
        }
    }
}
