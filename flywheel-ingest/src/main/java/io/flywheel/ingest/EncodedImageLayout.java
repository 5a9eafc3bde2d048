package io.flywheel.ingest;

import java.nio.ByteBuffer;

import io.flywheel.decode.DecodeException;

/**
 * Finds where the image field lies inside a protobuf- or JSON-encoded message, so that a {@link RawLocator}
 * can address it without a copy. Results are {@code (offset << 32) | length}, offsets from the message's
 * first byte (the buffer's position).
 */
final class EncodedImageLayout {
    /** The field is absent. */
    static final long NOT_FOUND = -1;
    /** JSON only: the string is present but holds escapes, so its bytes are not the base64 text itself. */
    static final long ESCAPED = -2;

    private EncodedImageLayout() {}

    /**
     * The value of the last occurrence of top-level length-delimited field {@code field} (protobuf encoding guide,
     * "Message Structure": tag = field number &lt;&lt; 3 | wire type; wire types 0 varint, 1 i64, 2 LEN, 5 i32; for a
     * non-repeated field the last value wins).
     *
     * @return {@code (offset << 32) | length}, or {@link #NOT_FOUND}
     * @throws DecodeException when the wire format is broken (a varint or a length runs past the message, a group
     *     or an unknown wire type)
     */
    static long protobufField(ByteBuffer msg, int field) throws DecodeException {
        int start = msg.position();
        int end = msg.limit();
        int[] p = {start};
        long found = NOT_FOUND;
        while (p[0] < end) {
            long tag = varint(msg, p, end);
            int wt = (int) (tag & 7);
            long num = tag >>> 3;
            switch (wt) {
                case 0 -> varint(msg, p, end);
                case 1 -> skip(p, 8, end);
                case 5 -> skip(p, 4, end);
                case 2 -> {
                    long len = varint(msg, p, end);
                    if (len > end - p[0]) {
                        throw new DecodeException("protobuf field " + num + " declares " + len + " bytes but only "
                                + (end - p[0]) + " remain (offset " + (p[0] - start) + ")");
                    }
                    if (num == field) {
                        found = ((long) (p[0] - start) << 32) | len;
                    }
                    p[0] += (int) len;
                }
                default -> throw new DecodeException("protobuf wire type " + wt + " of field " + num + " at offset "
                        + (p[0] - start) + " is not supported here (groups are deprecated)");
            }
        }
        return found;
    }

    private static long varint(ByteBuffer b, int[] p, int end) throws DecodeException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p[0] >= end) throw new DecodeException("protobuf varint runs past the end of the message");
            int x = b.get(p[0]++) & 0xFF;
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) return v;
        }
        throw new DecodeException("protobuf varint longer than 10 bytes");
    }

    private static void skip(int[] p, int n, int end) throws DecodeException {
        if (end - p[0] < n) throw new DecodeException("protobuf fixed-width value runs past the end of the message");
        p[0] += n;
    }

    /**
     * The contents (between the quotes) of top-level string member {@code key} of a JSON object (RFC 8259).
     *
     * @return {@code (offset << 32) | length}, {@link #NOT_FOUND} when there is no such string member, or
     *     {@link #ESCAPED} when the string holds a backslash escape
     * @throws DecodeException when the text is not a JSON object up to that member
     */
    static long jsonString(ByteBuffer msg, String key) throws DecodeException {
        int start = msg.position();
        int end = msg.limit();
        int[] p = {start};
        ws(msg, p, end);
        expect(msg, p, end, '{');
        ws(msg, p, end);
        if (p[0] < end && msg.get(p[0]) == '}') return NOT_FOUND;
        while (true) {
            ws(msg, p, end);
            expect(msg, p, end, '"');
            int ks = p[0];
            boolean kEsc = string(msg, p, end);
            int ke = p[0] - 1;
            ws(msg, p, end);
            expect(msg, p, end, ':');
            ws(msg, p, end);
            boolean match = !kEsc && ke - ks == key.length() && matches(msg, ks, key);
            if (match && p[0] < end && msg.get(p[0]) == '"') {
                p[0]++;
                int vs = p[0];
                boolean esc = string(msg, p, end);
                return esc ? ESCAPED : ((long) (vs - start) << 32) | (p[0] - 1 - vs);
            }
            value(msg, p, end);
            ws(msg, p, end);
            if (p[0] >= end) throw new DecodeException("JSON object ends early");
            byte c = msg.get(p[0]++);
            if (c == '}') return NOT_FOUND;
            if (c != ',') throw new DecodeException("JSON: expected ',' or '}' at offset " + (p[0] - 1 - start));
        }
    }

    private static boolean matches(ByteBuffer b, int at, String key) {
        for (int i = 0; i < key.length(); i++) {
            if (b.get(at + i) != key.charAt(i)) return false;
        }
        return true;
    }

    /** Skips a string body after its opening quote, through the closing quote; true when it held an escape. */
    private static boolean string(ByteBuffer b, int[] p, int end) throws DecodeException {
        boolean esc = false;
        while (p[0] < end) {
            byte c = b.get(p[0]++);
            if (c == '"') return esc;
            if (c == '\\') {
                esc = true;
                p[0]++;
            }
        }
        throw new DecodeException("JSON string runs past the end of the message");
    }

    /** Skips one JSON value. */
    private static void value(ByteBuffer b, int[] p, int end) throws DecodeException {
        if (p[0] >= end) throw new DecodeException("JSON value missing at the end of the message");
        byte c = b.get(p[0]);
        if (c == '"') {
            p[0]++;
            string(b, p, end);
            return;
        }
        if (c == '{' || c == '[') {
            int depth = 0;
            while (p[0] < end) {
                byte x = b.get(p[0]++);
                if (x == '"') {
                    string(b, p, end);
                } else if (x == '{' || x == '[') {
                    depth++;
                } else if (x == '}' || x == ']') {
                    if (--depth == 0) return;
                }
            }
            throw new DecodeException("JSON object or array runs past the end of the message");
        }
        while (p[0] < end) { // number, true, false, null
            byte x = b.get(p[0]);
            if (x == ',' || x == '}' || x == ']' || x == ' ' || x == '\n' || x == '\r' || x == '\t') return;
            p[0]++;
        }
    }

    private static void ws(ByteBuffer b, int[] p, int end) {
        while (p[0] < end) {
            byte c = b.get(p[0]);
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
            p[0]++;
        }
    }

    private static void expect(ByteBuffer b, int[] p, int end, char ch) throws DecodeException {
        if (p[0] >= end || b.get(p[0]) != ch) {
            throw new DecodeException("JSON: expected '" + ch + "' at offset " + (p[0] - b.position()));
        }
        p[0]++;
    }
}
