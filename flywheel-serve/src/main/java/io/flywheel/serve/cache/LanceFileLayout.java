package io.flywheel.serve.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the bytes of each column lie in a Lance data file of file format v2 (2.0, 2.1, 2.2), read
 * from the file's own metadata as the Lance file format spec lays it out ({@code file2.proto} and
 * the v2 file layout):
 *
 * <pre>
 * data pages | column buffers | global buffers | column metadata | CMO table | GBO table | footer (40 bytes)
 * footer = column_meta_start u64, column_meta_offsets_start u64, global_buff_offsets_start u64,
 *          num_global_buffers u32, num_columns u32, major u16, minor u16, "LANC"  (little-endian)
 * CMO / GBO table = (position u64, size u64) per column / per global buffer
 * ColumnMetadata  = { 1: encoding, 2: repeated Page { 1: repeated u64 buffer_offsets, 2: repeated u64
 *                     buffer_sizes, 3: u64 length, 4: encoding, 5: u64 priority }, 3: repeated u64
 *                     buffer_offsets, 4: repeated u64 buffer_sizes }
 * </pre>
 *
 * The protobuf messages are decoded here with the protobuf wire format (varints, length-delimited
 * and packed fields); unknown fields are skipped.
 *
 * @param fileSize file size in bytes
 * @param major file format major version (2)
 * @param minor file format minor version
 * @param columns per column: its page and column buffers
 * @param metadata {@code [column_meta_start, fileSize)}: column metadata, offset tables and footer,
 *     read by every reader when it opens the file
 * @param globalBuffers the global buffers (buffer 0 holds the file's schema, also read on open)
 */
public record LanceFileLayout(long fileSize, int major, int minor, List<Column> columns, ByteRange metadata,
        List<ByteRange> globalBuffers) {
    /** Footer size in bytes. */
    public static final int FOOTER = 40;

    /**
     * The buffers of one column.
     *
     * @param pages per page, its buffers (absolute byte ranges, empty buffers left out)
     * @param buffers the column's own buffers (e.g. a dictionary shared by pages)
     * @param metadata where the column's ColumnMetadata message lies
     */
    public record Column(List<List<ByteRange>> pages, List<ByteRange> buffers, ByteRange metadata) {
        /** @return every data byte range of the column (pages and column buffers) */
        public List<ByteRange> dataRanges() {
            List<ByteRange> out = new ArrayList<>(buffers);
            pages.forEach(out::addAll);
            return out;
        }
    }

    /**
     * Reads the layout of a file.
     *
     * @param origin where the file is
     * @param key its key
     * @param size its size in bytes
     * @return the layout
     * @throws IOException naming the key and position when the file is not a Lance v2 file or its
     *     metadata points outside it
     */
    public static LanceFileLayout read(Origin origin, String key, long size) throws IOException {
        if (size < FOOTER) {
            throw new IOException(key + ": " + size + " bytes is too short for a Lance file (footer is 40 bytes)");
        }
        ByteBuffer f = ByteBuffer.wrap(origin.read(key, new ByteRange(size - FOOTER, size))).order(ByteOrder.LITTLE_ENDIAN);
        String magic = new String(f.array(), FOOTER - 4, 4, StandardCharsets.US_ASCII);
        if (!magic.equals("LANC")) {
            throw new IOException(key + " at byte " + (size - 4) + ": expected the Lance magic 'LANC', found '" + magic + "'");
        }
        long cmStart = f.getLong(0);
        long cmoStart = f.getLong(8);
        long gboStart = f.getLong(16);
        int numGlobal = f.getInt(24);
        int numColumns = f.getInt(28);
        int major = f.getShort(32) & 0xFFFF;
        int minor = f.getShort(34) & 0xFFFF;
        if (major < 2) {
            throw new IOException(key + ": Lance file format " + major + "." + minor + "; only v2 files are mapped");
        }
        if (cmStart < 0 || cmStart > cmoStart || cmoStart + 16L * numColumns > size || gboStart + 16L * numGlobal > size
                || numColumns < 0 || numGlobal < 0) {
            throw new IOException(key + " at byte " + (size - FOOTER) + ": footer offsets (" + cmStart + ", " + cmoStart
                    + ", " + gboStart + ") do not fit a file of " + size + " bytes");
        }
        ByteBuffer meta = ByteBuffer.wrap(origin.read(key, new ByteRange(cmStart, size))).order(ByteOrder.LITTLE_ENDIAN);
        List<ByteRange> globals = new ArrayList<>();
        for (int i = 0; i < numGlobal; i++) {
            int at = Math.toIntExact(gboStart - cmStart + 16L * i);
            globals.add(range(meta.getLong(at), meta.getLong(at + 8), size, key, gboStart + 16L * i));
        }
        List<Column> cols = new ArrayList<>();
        for (int c = 0; c < numColumns; c++) {
            int at = Math.toIntExact(cmoStart - cmStart + 16L * c);
            ByteRange cm = range(meta.getLong(at), meta.getLong(at + 8), size, key, cmoStart + 16L * c);
            if (cm.start() < cmStart) {
                throw new IOException(key + " at byte " + (cmoStart + 16L * c) + ": column " + c
                        + " metadata starts before the metadata region at " + cmStart);
            }
            ByteBuffer msg = ByteBuffer.wrap(meta.array(), Math.toIntExact(cm.start() - cmStart),
                    Math.toIntExact(cm.length()));
            cols.add(column(msg, cm, size, key));
        }
        return new LanceFileLayout(size, major, minor, List.copyOf(cols), new ByteRange(cmStart, size), List.copyOf(globals));
    }

    private static Column column(ByteBuffer b, ByteRange where, long size, String key) throws IOException {
        List<List<ByteRange>> pages = new ArrayList<>();
        List<Long> offs = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        while (b.hasRemaining()) {
            long tag = varint(b, key, where);
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (field == 2 && wire == 2) {
                int len = Math.toIntExact(varint(b, key, where));
                ByteBuffer p = b.slice(b.position(), len);
                b.position(b.position() + len);
                pages.add(page(p, size, key, where));
            } else if ((field == 3 || field == 4) && (wire == 2 || wire == 0)) {
                uint64s(b, wire, field == 3 ? offs : sizes, key, where);
            } else {
                skip(b, wire, key, where);
            }
        }
        return new Column(List.copyOf(pages), buffers(offs, sizes, size, key, where), where);
    }

    private static List<ByteRange> page(ByteBuffer b, long size, String key, ByteRange where) throws IOException {
        List<Long> offs = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        while (b.hasRemaining()) {
            long tag = varint(b, key, where);
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if ((field == 1 || field == 2) && (wire == 2 || wire == 0)) {
                uint64s(b, wire, field == 1 ? offs : sizes, key, where);
            } else {
                skip(b, wire, key, where);
            }
        }
        return buffers(offs, sizes, size, key, where);
    }

    private static List<ByteRange> buffers(List<Long> offs, List<Long> sizes, long size, String key, ByteRange where)
            throws IOException {
        if (offs.size() != sizes.size()) {
            throw new IOException(key + " at byte " + where.start() + ": " + offs.size() + " buffer offsets but "
                    + sizes.size() + " buffer sizes");
        }
        List<ByteRange> out = new ArrayList<>();
        for (int i = 0; i < offs.size(); i++) {
            if (sizes.get(i) > 0) {
                out.add(range(offs.get(i), sizes.get(i), size, key, where.start()));
            }
        }
        return List.copyOf(out);
    }

    private static ByteRange range(long pos, long len, long size, String key, long at) throws IOException {
        if (pos < 0 || len < 0 || pos + len > size) {
            throw new IOException(key + " at byte " + at + ": buffer [" + pos + ", +" + len + ") lies outside the file of "
                    + size + " bytes");
        }
        return new ByteRange(pos, pos + len);
    }

    private static void uint64s(ByteBuffer b, int wire, List<Long> out, String key, ByteRange where) throws IOException {
        if (wire == 0) {
            out.add(varint(b, key, where));
            return;
        }
        int len = Math.toIntExact(varint(b, key, where));
        int end = b.position() + len;
        if (end > b.limit()) {
            throw new IOException(key + " at byte " + where.start() + ": packed field runs past its message");
        }
        while (b.position() < end) {
            out.add(varint(b, key, where));
        }
    }

    private static void skip(ByteBuffer b, int wire, String key, ByteRange where) throws IOException {
        switch (wire) {
            case 0 -> varint(b, key, where);
            case 1 -> b.position(b.position() + 8);
            case 2 -> {
                int len = Math.toIntExact(varint(b, key, where));
                if (len > b.remaining()) {
                    throw new IOException(key + " at byte " + where.start() + ": field of " + len
                            + " bytes runs past its message");
                }
                b.position(b.position() + len);
            }
            case 5 -> b.position(b.position() + 4);
            default -> throw new IOException(key + " at byte " + where.start() + ": unknown protobuf wire type " + wire);
        }
    }

    private static long varint(ByteBuffer b, String key, ByteRange where) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!b.hasRemaining()) {
                throw new IOException(key + " at byte " + where.start() + ": protobuf varint runs past its message");
            }
            byte x = b.get();
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException(key + " at byte " + where.start() + ": protobuf varint longer than 10 bytes");
    }
}
