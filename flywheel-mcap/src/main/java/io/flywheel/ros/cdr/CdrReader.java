package io.flywheel.ros.cdr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import io.flywheel.decode.DecodeException;

/**
 * Bounds-checked cursor over one CDR-encoded message (OMG DDS-XTypes 1.3, section 7.4.1 "Extended
 * CDR representation", encoding version 1, i.e. plain CDR as ROS 2 rmw implementations write it).
 *
 * <p>The message starts with a 4-byte encapsulation header: two bytes representation identifier
 * ({@code 00 00} CDR_BE, {@code 00 01} CDR_LE) and two bytes options (ignored). Every primitive is
 * aligned to its own size (at most 8) relative to the first byte after the header. Offsets in
 * errors count from the start of the message, header included.
 *
 * <p>Reads use absolute indices into the caller's buffer: nothing is copied except what a decoded
 * value must own (strings, arrays). Not thread-safe; one reader per message.
 */
final class CdrReader {
    /** Encapsulation header size in bytes. */
    static final int HEADER_SIZE = 4;

    final ByteBuffer buf;
    /** index of the first byte of the message (the encapsulation header) */
    final int start;
    /** index of the first payload byte, the alignment origin */
    final int origin;
    /** index one past the last byte */
    final int end;
    int pos;

    private CdrReader(ByteBuffer buf, int start, int end) {
        this.buf = buf;
        this.start = start;
        this.origin = start + HEADER_SIZE;
        this.end = end;
        this.pos = origin;
    }

    /**
     * Opens a message: checks the encapsulation header and sets the byte order. The caller's buffer
     * position is not changed.
     *
     * @param data the message bytes, from position to limit
     * @param typeName the type, for error messages
     * @return a reader positioned at the first payload byte
     * @throws DecodeException when the header is missing or names an unsupported representation
     */
    static CdrReader open(ByteBuffer data, String typeName) throws DecodeException {
        ByteBuffer b = data.duplicate();
        int start = b.position();
        int end = b.limit();
        if (end - start < HEADER_SIZE) {
            throw new DecodeException("CDR " + typeName + ": message is " + (end - start)
                    + " bytes, shorter than the 4-byte encapsulation header (offset 0)");
        }
        int rep = ((b.get(start) & 0xFF) << 8) | (b.get(start + 1) & 0xFF);
        switch (rep) {
            case 0x0000 -> b.order(ByteOrder.BIG_ENDIAN);
            case 0x0001 -> b.order(ByteOrder.LITTLE_ENDIAN);
            case 0x0002, 0x0003 -> throw new DecodeException("CDR " + typeName + ": encapsulation "
                    + (rep == 2 ? "PL_CDR_BE" : "PL_CDR_LE")
                    + " (parameter list, mutable types) is not supported; ROS 2 messages use CDR_LE/CDR_BE (offset 0)");
            case 0x0006, 0x0007, 0x0008, 0x0009, 0x000a, 0x000b -> throw new DecodeException("CDR " + typeName
                    + ": encapsulation 0x" + String.format("%04x", rep)
                    + " is XCDR2, not supported; expected XCDR1 CDR_BE (00 00) or CDR_LE (00 01) (offset 0)");
            default -> throw new DecodeException("CDR " + typeName + ": unknown encapsulation identifier 0x"
                    + String.format("%04x", rep) + "; expected CDR_BE (00 00) or CDR_LE (00 01) (offset 0)");
        }
        return new CdrReader(b, start, end);
    }

    /** @return the current offset from the start of the message (header included) */
    int offset() {
        return pos - start;
    }

    /** @return bytes left */
    int remaining() {
        return end - pos;
    }

    CdrError error(String problem) {
        return new CdrError(pos - start, problem);
    }

    /** Skips padding so that the next read is aligned to {@code n} (a power of two) from the origin. */
    void align(int n) {
        int pad = (-(pos - origin)) & (n - 1);
        if (pad > end - pos) {
            throw error("needs " + pad + " padding bytes, only " + (end - pos) + " left");
        }
        pos += pad;
    }

    private void need(int n, String what) {
        if (n > end - pos) {
            throw error("needs " + n + " bytes for " + what + ", only " + (end - pos) + " left");
        }
    }

    byte int8() {
        need(1, "an 8-bit value");
        return buf.get(pos++);
    }

    short int16() {
        align(2);
        need(2, "a 16-bit value");
        short v = buf.getShort(pos);
        pos += 2;
        return v;
    }

    int int32() {
        align(4);
        need(4, "a 32-bit value");
        int v = buf.getInt(pos);
        pos += 4;
        return v;
    }

    long int64() {
        align(8);
        need(8, "a 64-bit value");
        long v = buf.getLong(pos);
        pos += 8;
        return v;
    }

    float float32() {
        align(4);
        need(4, "a float32");
        float v = buf.getFloat(pos);
        pos += 4;
        return v;
    }

    double float64() {
        align(8);
        need(8, "a float64");
        double v = buf.getDouble(pos);
        pos += 8;
        return v;
    }

    /**
     * Reads a sequence count and checks that {@code count} elements of at least
     * {@code minElementSize} bytes fit in what is left, so a corrupt count never allocates.
     */
    int count(int minElementSize, int bound) {
        align(4);
        int at = offset();
        long c = int32() & 0xFFFF_FFFFL;
        if (bound >= 0 && c > bound) {
            throw new CdrError(at, "sequence count " + c + " exceeds its bound " + bound);
        }
        checkFits(c, minElementSize, at);
        return (int) c;
    }

    /** Checks that {@code count} elements of {@code minElementSize} bytes can fit in the bytes left. */
    void checkFits(long count, int minElementSize, int at) {
        long need = count * (long) Math.max(1, minElementSize);
        if (need > end - pos) {
            throw new CdrError(at, "sequence of " + count + " elements needs at least " + need + " bytes, only "
                    + (end - pos) + " left");
        }
    }

    /** Reads a CDR string: uint32 length including the NUL terminator, then the bytes (UTF-8). */
    String string(int bound) {
        align(4);
        int at = offset();
        long len = int32() & 0xFFFF_FFFFL;
        if (len == 0) {
            return ""; // some writers emit an empty string without the terminator
        }
        if (len > end - pos) {
            throw new CdrError(at, "string length " + len + " exceeds the " + (end - pos) + " bytes left");
        }
        int n = (int) len;
        int textLen = buf.get(pos + n - 1) == 0 ? n - 1 : n;
        if (bound >= 0 && textLen > bound) {
            throw new CdrError(at, "string of " + textLen + " bytes exceeds its bound " + bound);
        }
        String s;
        if (textLen <= CACHED_MAX) {
            s = cachedString(pos, textLen);
        } else if (buf.hasArray()) {
            s = new String(buf.array(), buf.arrayOffset() + pos, textLen, StandardCharsets.UTF_8);
        } else {
            byte[] tmp = new byte[textLen];
            buf.get(pos, tmp);
            s = new String(tmp, StandardCharsets.UTF_8);
        }
        pos += n;
        return s;
    }

    /** Strings up to this many bytes go through {@link #STRINGS}. */
    private static final int CACHED_MAX = 64;
    private static final int CACHE_SLOTS = 4096;

    /**
     * A decoded short string and its bytes, as little-endian 64-bit words plus the last
     * {@code len % 8} bytes packed into {@code tail}; immutable, so safely shared between threads.
     */
    private record CachedString(long[] words, long tail, int len, String value) {}

    /** Reads 8 bytes as a little-endian long whatever the buffer's own byte order. */
    private static final java.lang.invoke.VarHandle LE_WORD =
            java.lang.invoke.MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * Short strings recur in almost every message of a topic (frame ids, joint names, encodings,
     * formats); this direct-mapped cache hands back the same {@link String} for the same bytes
     * instead of copying and decoding them each time. Racy by design: slots are replaced whole and
     * their entries are immutable, so a reader sees either an entry or null, never a torn one.
     */
    private static final CachedString[] STRINGS = new CachedString[CACHE_SLOTS];

    private String cachedString(int p, int len) {
        ByteBuffer b = buf;
        int nw = len >>> 3;
        long h = len;
        for (int i = 0; i < nw; i++) {
            h = (h ^ (long) LE_WORD.get(b, p + 8 * i)) * 0x9E3779B97F4A7C15L;
        }
        long tail = 0;
        for (int i = nw << 3; i < len; i++) {
            tail = tail << 8 | (b.get(p + i) & 0xFF);
        }
        h = (h ^ tail) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 33; // fold the high bits down (MurmurHash3's fmix64): the multiplications only carry upwards
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        int slot = (int) h & (CACHE_SLOTS - 1);
        CachedString e = STRINGS[slot];
        if (e != null && e.len == len && e.tail == tail) {
            long[] w = e.words;
            int i = 0;
            while (i < nw && w[i] == (long) LE_WORD.get(b, p + 8 * i)) {
                i++;
            }
            if (i == nw) {
                return e.value;
            }
        }
        byte[] u = new byte[len];
        b.get(p, u);
        long[] w = new long[nw];
        for (int i = 0; i < nw; i++) {
            w[i] = (long) LE_WORD.get(b, p + 8 * i);
        }
        String s = new String(u, StandardCharsets.UTF_8);
        STRINGS[slot] = new CachedString(w, tail, len, s);
        return s;
    }

    /**
     * Reads a wstring as Fast-CDR (the ROS 2 default rmw) writes it: uint32 count of characters, then
     * each character as a 4-byte code point, no terminator.
     */
    String wstring(int bound) {
        align(4);
        int at = offset();
        long len = int32() & 0xFFFF_FFFFL;
        if (bound >= 0 && len > bound) {
            throw new CdrError(at, "wstring of " + len + " characters exceeds its bound " + bound);
        }
        checkFits(len, 4, at);
        StringBuilder sb = new StringBuilder((int) len);
        for (int i = 0; i < len; i++) {
            int cp = buf.getInt(pos);
            pos += 4;
            if (!Character.isValidCodePoint(cp)) {
                throw new CdrError(pos - 4 - start, "wstring character " + i + " is not a valid code point: " + cp);
            }
            sb.appendCodePoint(cp);
        }
        return sb.toString();
    }

    /** Copies {@code n} bytes (no alignment). */
    byte[] bytes(int n) {
        need(n, n + " bytes of array");
        byte[] out = new byte[n];
        buf.get(pos, out);
        pos += n;
        return out;
    }

    /** A read-only view of the next {@code n} bytes, without copy (no alignment). */
    ByteBuffer slice(int n) {
        need(n, n + " bytes of array");
        ByteBuffer s = buf.isReadOnly() ? buf.slice(pos, n) : buf.slice(pos, n).asReadOnlyBuffer();
        pos += n;
        return s;
    }
}
