package io.flywheel.ros.bag;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code name=value} field list that heads every bag record (and that forms a connection
 * record's data), per "Headers" in the bag format 2.0: each field is a uint32 little-endian length
 * followed by that many bytes {@code name=value}; values are raw bytes.
 */
final class RecordHeader {
    static final int OP_MESSAGE_DATA = 0x02;
    static final int OP_BAG_HEADER = 0x03;
    static final int OP_INDEX_DATA = 0x04;
    static final int OP_CHUNK = 0x05;
    static final int OP_CHUNK_INFO = 0x06;
    static final int OP_CONNECTION = 0x07;

    private final Map<String, byte[]> fields;
    private final String file;
    private final long offset;

    private RecordHeader(Map<String, byte[]> fields, String file, long offset) {
        this.fields = fields;
        this.file = file;
        this.offset = offset;
    }

    /**
     * @param b the header bytes, from position to limit (all of them are the header)
     * @param file file name for errors
     * @param offset absolute offset of the record, for errors
     */
    static RecordHeader parse(ByteBuffer b, String file, long offset) throws BagFormatException {
        ByteBuffer h = b.slice().order(ByteOrder.LITTLE_ENDIAN);
        Map<String, byte[]> fields = new LinkedHashMap<>();
        while (h.hasRemaining()) {
            int at = h.position();
            if (h.remaining() < 4) {
                throw new BagFormatException(file, offset, "header field at header byte " + at
                        + " needs a 4-byte length, only " + h.remaining() + " bytes left");
            }
            long len = Integer.toUnsignedLong(h.getInt());
            if (len > h.remaining()) {
                throw new BagFormatException(file, offset, "header field at header byte " + at + " claims "
                        + len + " bytes, only " + h.remaining() + " left in the header");
            }
            int start = h.position();
            int eq = -1;
            for (int i = 0; i < len; i++) {
                if (h.get(start + i) == '=') {
                    eq = i;
                    break;
                }
            }
            if (eq < 0) {
                throw new BagFormatException(file, offset, "header field at header byte " + at
                        + " has no '=' between name and value");
            }
            byte[] name = new byte[eq];
            h.get(name);
            h.get();
            byte[] value = new byte[(int) len - eq - 1];
            h.get(value);
            fields.put(new String(name, StandardCharsets.US_ASCII), value);
        }
        return new RecordHeader(fields, file, offset);
    }

    boolean has(String name) {
        return fields.containsKey(name);
    }

    /** @return the op code, unsigned byte */
    int op() throws BagFormatException {
        return Byte.toUnsignedInt(fixed("op", 1).get());
    }

    long u32(String name) throws BagFormatException {
        return Integer.toUnsignedLong(fixed(name, 4).getInt());
    }

    long u64(String name) throws BagFormatException {
        return fixed(name, 8).getLong();
    }

    /** ROS time (uint32 sec, uint32 nsec) as int64 nanoseconds. */
    long time(String name) throws BagFormatException {
        ByteBuffer v = fixed(name, 8);
        return Integer.toUnsignedLong(v.getInt()) * 1_000_000_000L + Integer.toUnsignedLong(v.getInt());
    }

    String str(String name) throws BagFormatException {
        return new String(require(name), StandardCharsets.UTF_8);
    }

    String strOr(String name, String dflt) {
        byte[] v = fields.get(name);
        return v == null ? dflt : new String(v, StandardCharsets.UTF_8);
    }

    private byte[] require(String name) throws BagFormatException {
        byte[] v = fields.get(name);
        if (v == null) {
            throw new BagFormatException(file, offset, "record header lacks the required field '" + name
                    + "' (fields present: " + fields.keySet() + ")");
        }
        return v;
    }

    private ByteBuffer fixed(String name, int size) throws BagFormatException {
        byte[] v = require(name);
        if (v.length != size) {
            throw new BagFormatException(file, offset, "header field '" + name + "' should hold " + size
                    + " bytes, holds " + v.length);
        }
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
    }
}
