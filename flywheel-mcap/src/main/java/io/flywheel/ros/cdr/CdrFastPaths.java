package io.flywheel.ros.cdr;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import io.flywheel.decode.DecodeException;

/**
 * Reads the hot ROS 2 message types straight from CDR bytes, without building the generic tree:
 * header stamps for alignment, camera frames and joint states. Same format, checks and error
 * messages as {@link CdrDecoder}; little- and big-endian encapsulations both work.
 *
 * <p>The caller must have checked the schema name: these methods assume the standard layouts of
 * {@code std_msgs/msg/Header}, {@code sensor_msgs/msg/CompressedImage}, {@code sensor_msgs/msg/Image}
 * and {@code sensor_msgs/msg/JointState} (ROS 2 Humble and later) and cannot tell another type
 * apart. Stamps are {@code sec * 1_000_000_000 + nanosec}: int64 nanoseconds in the recorder's
 * clock (ROS time, normally since the Unix epoch). Byte payloads are read-only views into the
 * caller's buffer (no copy): copy them if they must outlive it.
 */
public final class CdrFastPaths {
    private CdrFastPaths() {}

    /**
     * {@code std_msgs/msg/Header}.
     *
     * @param stampNs header.stamp in nanoseconds
     * @param frameId header.frame_id
     */
    public record Header(long stampNs, String frameId) {}

    /**
     * {@code sensor_msgs/msg/CompressedImage}.
     *
     * @param stampNs header.stamp in nanoseconds
     * @param frameId header.frame_id
     * @param format e.g. {@code "jpeg"}, {@code "png"}, {@code "rgb8; jpeg compressed bgr8"}
     * @param data the compressed image bytes, a read-only view into the message buffer
     */
    public record CompressedImage(long stampNs, String frameId, String format, ByteBuffer data) {}

    /**
     * {@code sensor_msgs/msg/Image}.
     *
     * @param stampNs header.stamp in nanoseconds
     * @param frameId header.frame_id
     * @param height rows
     * @param width columns
     * @param encoding pixel encoding, e.g. {@code "rgb8"}, {@code "mono16"}, {@code "32FC1"}
     * @param isBigendian whether multi-byte pixel values are big-endian
     * @param step bytes per row
     * @param data the pixel bytes (normally {@code step * height}), a read-only view into the buffer
     */
    public record Image(long stampNs, String frameId, int height, int width, String encoding, boolean isBigendian,
                        int step, ByteBuffer data) {}

    /**
     * {@code sensor_msgs/msg/JointState}. Arrays are as recorded: {@code position},
     * {@code velocity} and {@code effort} may each be empty or as long as {@code names}. Being
     * arrays, they make {@code equals} an identity comparison.
     *
     * @param stampNs header.stamp in nanoseconds
     * @param frameId header.frame_id
     * @param names joint names (immutable)
     * @param position rad or m
     * @param velocity rad/s or m/s
     * @param effort N·m or N
     */
    public record JointState(long stampNs, String frameId, List<String> names, double[] position, double[] velocity,
                             double[] effort) {}

    /**
     * The stamp of a message that starts with a {@code std_msgs/msg/Header} (most sensor types).
     *
     * @param message one CDR message including the encapsulation header
     * @return header.stamp in nanoseconds
     * @throws DecodeException when the message is shorter than header + stamp or its
     *     encapsulation is not CDR_LE/CDR_BE
     */
    public static long headerStamp(ByteBuffer message) throws DecodeException {
        CdrReader r = CdrReader.open(message, "std_msgs/msg/Header");
        try {
            return stamp(r);
        } catch (CdrError e) {
            throw CdrDecoder.failure("std_msgs/msg/Header", r, e.push("stamp"));
        }
    }

    /**
     * @param message a CDR message that starts with a {@code std_msgs/msg/Header}
     * @return its header
     * @throws DecodeException when the bytes end early or are not CDR_LE/CDR_BE
     */
    public static Header header(ByteBuffer message) throws DecodeException {
        final String type = "std_msgs/msg/Header";
        CdrReader r = CdrReader.open(message, type);
        String field = "stamp";
        try {
            long stamp = stamp(r);
            field = "frame_id";
            return new Header(stamp, r.string(-1));
        } catch (CdrError e) {
            throw CdrDecoder.failure(type, r, e.push(field));
        }
    }

    /**
     * @param message a {@code sensor_msgs/msg/CompressedImage} in CDR
     * @return its fields; {@code data} is a view into {@code message}
     * @throws DecodeException when the bytes end early or hold an impossible length
     */
    public static CompressedImage compressedImage(ByteBuffer message) throws DecodeException {
        final String type = "sensor_msgs/msg/CompressedImage";
        CdrReader r = CdrReader.open(message, type);
        String field = "header.stamp";
        try {
            long stamp = stamp(r);
            field = "header.frame_id";
            String frameId = r.string(-1);
            field = "format";
            String format = r.string(-1);
            field = "data";
            ByteBuffer data = r.slice(r.count(1, -1));
            return new CompressedImage(stamp, frameId, format, data);
        } catch (CdrError e) {
            throw CdrDecoder.failure(type, r, e.push(field));
        }
    }

    /**
     * @param message a {@code sensor_msgs/msg/Image} in CDR
     * @return its fields; {@code data} is a view into {@code message}
     * @throws DecodeException when the bytes end early, hold an impossible length, or height,
     *     width or step is 2^31 or more
     */
    public static Image image(ByteBuffer message) throws DecodeException {
        final String type = "sensor_msgs/msg/Image";
        CdrReader r = CdrReader.open(message, type);
        String field = "header.stamp";
        try {
            long stamp = stamp(r);
            field = "header.frame_id";
            String frameId = r.string(-1);
            field = "height";
            int height = nonNegative(r, r.int32());
            field = "width";
            int width = nonNegative(r, r.int32());
            field = "encoding";
            String encoding = r.string(-1);
            field = "is_bigendian";
            boolean bigEndian = r.int8() != 0;
            field = "step";
            int step = nonNegative(r, r.int32());
            field = "data";
            ByteBuffer data = r.slice(r.count(1, -1));
            return new Image(stamp, frameId, height, width, encoding, bigEndian, step, data);
        } catch (CdrError e) {
            throw CdrDecoder.failure(type, r, e.push(field));
        }
    }

    /**
     * @param message a {@code sensor_msgs/msg/JointState} in CDR
     * @return its fields
     * @throws DecodeException when the bytes end early or hold an impossible count
     */
    public static JointState jointState(ByteBuffer message) throws DecodeException {
        final String type = "sensor_msgs/msg/JointState";
        CdrReader r = CdrReader.open(message, type);
        String field = "header.stamp";
        try {
            long stamp = stamp(r);
            field = "header.frame_id";
            String frameId = r.string(-1);
            field = "name";
            List<String> names = names(r);
            field = "position";
            double[] position = doubles(r);
            field = "velocity";
            double[] velocity = doubles(r);
            field = "effort";
            double[] effort = doubles(r);
            return new JointState(stamp, frameId, names, position, velocity, effort);
        } catch (CdrError e) {
            throw CdrDecoder.failure(type, r, e.push(field));
        }
    }

    /**
     * The CDR bytes of the last {@code name} sequence decoded (count, lengths, text, padding; in
     * {@code bigEndian} order) and its list. A robot publishes the same joint names in every
     * message, so the next message's bytes are compared with these in one pass and the list is
     * shared instead of decoding 16-odd strings again. Replaced whole, immutable: safe to race on.
     */
    private record NameSequence(byte[] cdr, boolean bigEndian, List<String> names) {}

    private static NameSequence lastNames;

    /** Reads a {@code string[]} (JointState.name), through {@link #lastNames}. */
    private static List<String> names(CdrReader r) {
        r.align(4);
        int start = r.pos;
        ByteBuffer b = r.buf;
        boolean bigEndian = b.order() == java.nio.ByteOrder.BIG_ENDIAN;
        NameSequence last = lastNames;
        if (last != null && last.bigEndian == bigEndian && last.cdr.length <= r.end - start
                && b.slice(start, last.cdr.length).mismatch(ByteBuffer.wrap(last.cdr)) == -1) {
            r.pos = start + last.cdr.length; // the same bytes decode to the same names
            return last.names;
        }
        int n = r.count(4, -1);
        String[] names = new String[n];
        int i = 0;
        try {
            for (; i < n; i++) {
                names[i] = r.string(-1);
            }
        } catch (CdrError e) {
            throw e.push("[" + i + "]");
        }
        List<String> list = Collections.unmodifiableList(Arrays.asList(names));
        if (r.pos - start <= 4096) {
            byte[] cdr = new byte[r.pos - start];
            b.get(start, cdr);
            lastNames = new NameSequence(cdr, bigEndian, list);
        }
        return list;
    }

    private static long stamp(CdrReader r) {
        long sec = r.int32();
        long nanosec = r.int32() & 0xFFFF_FFFFL;
        return sec * 1_000_000_000L + nanosec;
    }

    private static int nonNegative(CdrReader r, int v) {
        if (v < 0) {
            throw new CdrError(r.offset() - 4, "value " + (v & 0xFFFF_FFFFL) + " is 2^31 or more");
        }
        return v;
    }

    private static double[] doubles(CdrReader r) {
        int n = r.count(8, -1);
        if (n == 0) {
            return new double[0];
        }
        int at = r.offset();
        r.align(8);
        r.checkFits(n, 8, at);
        double[] out = new double[n];
        ByteBuffer b = r.buf;
        int p = r.pos;
        for (int i = 0; i < n; i++, p += 8) {
            out[i] = b.getDouble(p);
        }
        r.pos = p;
        return out;
    }
}
