package io.flywheel.ros.cdr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Serializes ROS 2 messages as little-endian plain CDR (OMG XCDR version 1, encapsulation kind
 * CDR_LE, as rmw_fastrtps and rosbag2 write it): a 4-byte encapsulation header {@code 00 01 00 00},
 * then each primitive aligned to its own size relative to the first byte after the header; strings
 * as a uint32 length that counts the terminating NUL, then the bytes and the NUL; sequences as a
 * uint32 element count, then the elements; fixed arrays without a count.
 *
 * <p>Reusable: {@link #reset()} starts the next message in the same buffer. Not thread-safe.
 */
public final class CdrWriter {
    private static final int HEADER = 4;
    private byte[] buf;
    private ByteBuffer bb;
    private int pos;

    /** @param initialCapacity initial buffer size in bytes; grows as needed */
    public CdrWriter(int initialCapacity) {
        buf = new byte[Math.max(64, initialCapacity)];
        bb = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
        reset();
    }

    /** Starts a new message: writes the CDR_LE encapsulation header. @return this */
    public CdrWriter reset() {
        buf[0] = 0;
        buf[1] = 1;
        buf[2] = 0;
        buf[3] = 0;
        pos = HEADER;
        return this;
    }

    /** @return the number of bytes written, header included */
    public int size() {
        return pos;
    }

    /** @return the backing array; bytes [0, {@link #size()}) are the message */
    public byte[] array() {
        return buf;
    }

    /** @return a copy of the message bytes */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, pos);
    }

    private void ensure(int n) {
        if (pos + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
            bb = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    private void align(int size) {
        int rel = pos - HEADER;
        int pad = (size - (rel % size)) % size;
        ensure(pad + size);
        for (int i = 0; i < pad; i++) {
            buf[pos++] = 0;
        }
    }

    public CdrWriter bool(boolean v) {
        return uint8(v ? 1 : 0);
    }

    /** Writes int8, uint8, byte or char (low 8 bits of {@code v}). */
    public CdrWriter uint8(int v) {
        ensure(1);
        buf[pos++] = (byte) v;
        return this;
    }

    /** Writes int16 or uint16 (low 16 bits of {@code v}). */
    public CdrWriter int16(int v) {
        align(2);
        bb.putShort(pos, (short) v);
        pos += 2;
        return this;
    }

    /** Writes int32 or uint32 (low 32 bits of {@code v}). */
    public CdrWriter int32(long v) {
        align(4);
        bb.putInt(pos, (int) v);
        pos += 4;
        return this;
    }

    /** Writes int64 or uint64 (the bits of {@code v}). */
    public CdrWriter int64(long v) {
        align(8);
        bb.putLong(pos, v);
        pos += 8;
        return this;
    }

    public CdrWriter float32(float v) {
        align(4);
        bb.putFloat(pos, v);
        pos += 4;
        return this;
    }

    public CdrWriter float64(double v) {
        align(8);
        bb.putDouble(pos, v);
        pos += 8;
        return this;
    }

    /** Writes a UTF-8 string: uint32 length including the NUL, bytes, NUL. */
    public CdrWriter string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int32(b.length + 1L);
        ensure(b.length + 1);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
        buf[pos++] = 0;
        return this;
    }

    /** Writes builtin_interfaces/Time from nanoseconds since the epoch: int32 sec, uint32 nanosec. */
    public CdrWriter time(long nanos) {
        int32(Math.floorDiv(nanos, 1_000_000_000L));
        return int32(Math.floorMod(nanos, 1_000_000_000L));
    }

    /** Writes std_msgs/Header: stamp (from nanoseconds) and frame_id. */
    public CdrWriter header(long stampNanos, String frameId) {
        return time(stampNanos).string(frameId);
    }

    /** Writes a uint8[] sequence: uint32 count, then the bytes. */
    public CdrWriter byteSequence(byte[] data, int offset, int length) {
        int32(length);
        ensure(length);
        System.arraycopy(data, offset, buf, pos, length);
        pos += length;
        return this;
    }

    /** Writes a float64[] sequence: uint32 count, then the values, aligned to 8. */
    public CdrWriter float64Sequence(double[] values) {
        int32(values.length);
        if (values.length > 0) {
            align(8);
            ensure(values.length * 8);
            for (double v : values) {
                bb.putDouble(pos, v);
                pos += 8;
            }
        }
        return this;
    }

    /** Writes a string[] sequence: uint32 count, then each string. */
    public CdrWriter stringSequence(List<String> values) {
        int32(values.size());
        for (String s : values) {
            string(s);
        }
        return this;
    }
}
