package io.flywheel.mcap;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Test helper: builds MCAP records and files byte by byte, following the spec's field layouts. */
final class McapBytes {
    static final byte[] MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    McapBytes u8(int v) { out.write(v); return this; }

    McapBytes u16(int v) { return le(v, 2); }

    McapBytes u32(long v) { return le(v, 4); }

    McapBytes u64(long v) { return le(v, 8); }

    McapBytes str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        u32(b.length);
        out.writeBytes(b);
        return this;
    }

    McapBytes raw(byte[] b) { out.writeBytes(b); return this; }

    byte[] bytes() { return out.toByteArray(); }

    private McapBytes le(long v, int n) {
        for (int i = 0; i < n; i++) {
            out.write((int) (v >>> (8 * i)) & 0xFF);
        }
        return this;
    }

    /** @return opcode, uint64 length, body */
    static byte[] record(int opcode, byte[] body) {
        return new McapBytes().u8(opcode).u64(body.length).raw(body).bytes();
    }

    static byte[] header(String profile, String library) {
        return record(Record.OP_HEADER, new McapBytes().str(profile).str(library).bytes());
    }

    static byte[] chunk(String compression, byte[] records, long uncompressedSize) {
        return record(Record.OP_CHUNK, new McapBytes().u64(0).u64(0).u64(uncompressedSize).u32(0)
                .str(compression).u64(records.length).raw(records).bytes());
    }

    static byte[] message(int channel, long seq, long time, byte[] data) {
        return record(Record.OP_MESSAGE, new McapBytes().u16(channel).u32(seq).u64(time).u64(time).raw(data).bytes());
    }

    static byte[] dataEnd() {
        return record(Record.OP_DATA_END, new McapBytes().u32(0).bytes());
    }

    static byte[] footer() {
        return record(Record.OP_FOOTER, new McapBytes().u64(0).u64(0).u32(0).bytes());
    }

    /** @return magic, the records, magic */
    static byte[] file(byte[]... records) {
        McapBytes b = new McapBytes().raw(MAGIC);
        for (byte[] r : records) {
            b.raw(r);
        }
        return b.raw(MAGIC).bytes();
    }

    static long le64(byte[] b, int at) {
        return ByteBuffer.wrap(b, at, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    static void putLe64(byte[] b, int at, long v) {
        ByteBuffer.wrap(b, at, 8).order(ByteOrder.LITTLE_ENDIAN).putLong(v);
    }

    static void putLe32(byte[] b, int at, int v) {
        ByteBuffer.wrap(b, at, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(v);
    }
}
