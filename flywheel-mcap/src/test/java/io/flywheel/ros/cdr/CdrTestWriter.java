package io.flywheel.ros.cdr;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Test-only XCDR1 writer: encapsulation header CDR_LE (00 01) or CDR_BE (00 00), each primitive
 * aligned to its size from the first byte after the header, strings with length incl. NUL.
 */
final class CdrTestWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteOrder order;

    CdrTestWriter(boolean bigEndian) {
        order = bigEndian ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        out.write(0);
        out.write(bigEndian ? 0 : 1);
        out.write(0);
        out.write(0);
    }

    private void align(int n) {
        while ((out.size() - 4) % n != 0) {
            out.write(0);
        }
    }

    private CdrTestWriter put(int size, ByteBuffer b) {
        align(size);
        out.write(b.array(), 0, size);
        return this;
    }

    private ByteBuffer buf(int n) {
        return ByteBuffer.allocate(n).order(order);
    }

    CdrTestWriter u8(int v) {
        out.write(v);
        return this;
    }

    CdrTestWriter bool(boolean v) {
        return u8(v ? 1 : 0);
    }

    CdrTestWriter i16(int v) {
        return put(2, buf(2).putShort((short) v));
    }

    CdrTestWriter i32(int v) {
        return put(4, buf(4).putInt(v));
    }

    CdrTestWriter u32(long v) {
        return i32((int) v);
    }

    CdrTestWriter i64(long v) {
        return put(8, buf(8).putLong(v));
    }

    CdrTestWriter f32(float v) {
        return put(4, buf(4).putFloat(v));
    }

    CdrTestWriter f64(double v) {
        return put(8, buf(8).putDouble(v));
    }

    CdrTestWriter string(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        u32(b.length + 1L);
        out.write(b, 0, b.length);
        out.write(0);
        return this;
    }

    CdrTestWriter raw(byte... b) {
        out.write(b, 0, b.length);
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }
}
