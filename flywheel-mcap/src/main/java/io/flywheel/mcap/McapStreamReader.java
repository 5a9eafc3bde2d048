package io.flywheel.mcap;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import java.util.zip.CRC32;

/**
 * Reads an MCAP file front to back, record by record, without using its summary section (the
 * MCAP specification, https://mcap.dev/spec, "File Structure" and "Records"). Works on files of any
 * size (offsets are {@code long}; a single record may be up to 2 GiB) and on non-seekable streams.
 *
 * <p>What it yields, in file order: every record except Chunk and MessageIndex; the Schema, Channel
 * and Message records inside each chunk are yielded in place of the chunk (after decompression, see
 * {@link ChunkDecompressor}). With {@link Options.Builder#emitChunks(boolean)} the Chunk and
 * MessageIndex records are yielded raw instead and chunks are not opened. Records with an opcode
 * outside 0x01-0x0F are skipped, as the spec says, unless {@link Options.Builder#emitUnknown(boolean)}
 * asks for them as {@link Record.Unknown}. Bytes after a record's known fields are ignored.
 *
 * <p>What it checks: the magic {@code 0x89 "MCAP0\r\n"} at the start and after the Footer; that the
 * first record is a Header; that no record runs past the end of the input; with
 * {@link Options.Builder#validateCrcs(boolean)} (default on), every non-zero CRC: DataEnd's
 * {@code data_section_crc} (CRC-32 of every byte from the start of the file up to the DataEnd
 * record), the Footer's {@code summary_crc} (bytes from {@code summary_start}, or from the Footer
 * itself when that is 0, through the Footer's {@code summary_offset_start} field), each chunk's
 * {@code uncompressed_crc} and each attachment's {@code crc} (its fields before the crc). All CRCs
 * are CRC-32 (IEEE 802.3, zlib's), not CRC-32C.
 *
 * <p>Errors: in strict mode (default) the first problem throws {@link McapFormatException} from
 * {@link #next()}, naming the file, the byte offset and what was expected; every record before it has
 * been yielded. In lenient mode ({@link Options.Builder#lenient(boolean)}) the problem is added to
 * {@link #problems()} and reading goes on where it can: a bad CRC or an unparsable record is
 * skipped (a chunk whose data fails its CRC or does not decompress is skipped whole, so corrupt
 * messages are never yielded), while a truncated file or a bad start magic end the stream.
 * A bad start magic throws even in lenient mode: the input is not MCAP.
 *
 * <p>Byte fields of the yielded records are read-only views of buffers this reader never reuses, so
 * they stay valid after further calls to {@link #next()} and after {@link #close()}.
 *
 * <p>Not thread-safe. Usage:
 * <pre>{@code
 * try (McapStreamReader r = McapStreamReader.open(path)) {
 *     Record rec;
 *     while ((rec = r.next()) != null) {
 *         if (rec instanceof Record.Message m) { ... }
 *     }
 * }
 * }</pre>
 */
public final class McapStreamReader implements Closeable, Iterable<Record> {
    /** The 8 magic bytes at the start and end of every MCAP file: 0x89 "MCAP0\r\n". */
    private static final byte[] MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
    private static final int BUFFER = 1 << 20;
    /** Largest record body held in memory. */
    static final long MAX_RECORD = Integer.MAX_VALUE - 64;

    /** A problem met in lenient mode: absolute byte offset (-1 if unknown) and what was wrong. */
    public record Problem(long offset, String message) {
        @Override
        public String toString() {
            return "byte " + offset + ": " + message;
        }
    }

    /**
     * Reader options; immutable. Defaults: validate CRCs, strict, chunks opened, unknown records
     * skipped.
     */
    public static final class Options {
        private static final Options DEFAULTS = builder().build();
        private final boolean validateCrcs;
        private final boolean lenient;
        private final boolean emitChunks;
        private final boolean emitUnknown;

        private Options(Builder b) {
            validateCrcs = b.validateCrcs;
            lenient = b.lenient;
            emitChunks = b.emitChunks;
            emitUnknown = b.emitUnknown;
        }

        /** @return the default options */
        public static Options defaults() {
            return DEFAULTS;
        }

        /** @return a builder starting from the defaults */
        public static Builder builder() {
            return new Builder();
        }

        public boolean validateCrcs() { return validateCrcs; }
        public boolean lenient() { return lenient; }
        public boolean emitChunks() { return emitChunks; }
        public boolean emitUnknown() { return emitUnknown; }

        /** Builder for {@link Options}. */
        public static final class Builder {
            private boolean validateCrcs = true;
            private boolean lenient;
            private boolean emitChunks;
            private boolean emitUnknown;

            private Builder() {}

            /** @param v check every non-zero CRC (default true) */
            public Builder validateCrcs(boolean v) { validateCrcs = v; return this; }

            /** @param v record problems in {@link #problems()} and go on, instead of throwing (default false) */
            public Builder lenient(boolean v) { lenient = v; return this; }

            /** @param v yield Chunk and MessageIndex records raw instead of the chunks' contents (default false) */
            public Builder emitChunks(boolean v) { emitChunks = v; return this; }

            /** @param v yield records with unknown opcodes as {@link Record.Unknown} (default false) */
            public Builder emitUnknown(boolean v) { emitUnknown = v; return this; }

            public Options build() { return new Options(this); }
        }
    }

    private final ReadableByteChannel channel;
    private final FileChannel fileChannel; // null for streams
    private final long size; // -1 when unknown
    private final String name;
    private final Options options;
    private final List<Problem> problems = new ArrayList<>();

    // Read buffer: bytes [pos, lim) of buf are unconsumed; buf[0] is at absolute offset base.
    private byte[] buf = new byte[0];
    private int pos;
    private int lim;
    private long base;
    private boolean eof;

    private boolean started;
    private boolean done;
    private boolean sawHeader;
    private long lastGood;
    private long recordOffset;

    private final CRC32 dataCrc = new CRC32();
    private CRC32 summaryCrc; // non-null after DataEnd
    private long summaryCrcStart = -1;

    // The chunk being yielded from.
    private ByteBuffer chunk;
    private long chunkOffset;
    private long chunkEnd;

    private McapStreamReader(ReadableByteChannel channel, FileChannel fileChannel, long size, String name,
                             Options options) {
        this.channel = channel;
        this.fileChannel = fileChannel;
        this.size = size;
        this.name = name;
        this.options = options;
    }

    /** Opens a file with the default options. @see #open(Path, Options) */
    public static McapStreamReader open(Path path) throws IOException {
        return open(path, Options.defaults());
    }

    /**
     * @param path the MCAP file; its size is taken at open time
     * @param options reader options
     * @return a reader positioned before the first record; close it
     * @throws IOException when the file cannot be opened
     */
    public static McapStreamReader open(Path path, Options options) throws IOException {
        requireFile(path);
        FileChannel fc = FileChannel.open(path, StandardOpenOption.READ);
        try {
            return new McapStreamReader(fc, fc, fc.size(), path.toString(), options);
        } catch (IOException | RuntimeException e) {
            fc.close();
            throw e;
        }
    }

    /** Fails with a clear message when {@code path} is a folder rather than a file. */
    static void requireFile(Path path) throws McapFormatException {
        if (java.nio.file.Files.isDirectory(path)) {
            throw new McapFormatException(path.toString(), -1, "is a folder; expected an MCAP file, or a rosbag2 folder holding its metadata.yaml");
        }
    }

    /**
     * Reads from a stream (not seekable; its length is not known in advance, so buffers grow only as
     * bytes arrive).
     *
     * @param in the stream, positioned at the file's first byte; closed by {@link #close()}
     * @param name name used in error messages, may be null
     * @param options reader options
     * @return a reader positioned before the first record
     */
    public static McapStreamReader open(InputStream in, String name, Options options) {
        return new McapStreamReader(Channels.newChannel(in), null, -1, name, options);
    }

    /**
     * @return the next record in file order, or null at the end (after the Footer and the closing
     *     magic, or, in lenient mode, where the input broke off)
     * @throws McapFormatException (strict mode) at the first problem, naming the file and offset
     * @throws IOException when reading fails
     */
    public Record next() throws IOException {
        while (true) {
            if (chunk != null) {
                Record r = nextInChunk();
                if (r != null) {
                    return r;
                }
                continue;
            }
            if (done) {
                return null;
            }
            if (!started) {
                readStartMagic();
                continue;
            }
            Record r = nextTopLevel();
            if (r != null) {
                return r;
            }
        }
    }

    /** @return problems met so far in lenient mode, oldest first (always empty in strict mode) */
    public List<Problem> problems() {
        return Collections.unmodifiableList(problems);
    }

    /**
     * @return the absolute offset just past the last top-level record that was read whole and passed
     *     its checks (its messages, for a chunk, all yielded); 8 after the start magic; 0 before
     */
    public long lastGoodOffset() {
        return lastGood;
    }

    /**
     * @return the absolute offset of the opcode byte of the top-level record that {@link #next()}
     *     returned last; for a record read from inside a chunk, the offset of that Chunk record
     */
    public long recordOffset() {
        return recordOffset;
    }

    /** @return the absolute offset of the next top-level byte to read */
    public long position() {
        return base + pos;
    }

    /**
     * Iterates the remaining records. {@link IOException}s (including {@link McapFormatException})
     * are rethrown as {@link UncheckedIOException} with the original as cause.
     */
    @Override
    public Iterator<Record> iterator() {
        return new Iterator<>() {
            private Record next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = McapStreamReader.this.next();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return next != null;
            }

            @Override
            public Record next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Record r = next;
                next = null;
                return r;
            }
        };
    }

    /** @return the remaining records as a sequential stream; errors as in {@link #iterator()} */
    public Stream<Record> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(iterator(),
                Spliterator.ORDERED | Spliterator.NONNULL), false);
    }

    @Override
    public void close() throws IOException {
        done = true;
        chunk = null;
        channel.close();
    }

    // ---------------------------------------------------------------------------------------------

    private void readStartMagic() throws IOException {
        started = true;
        if (!ensure(8) || !magicAt(pos)) {
            done = true;
            throw McapFormatException.badMagic(name, java.util.Arrays.copyOfRange(buf, pos, pos + Math.min(8, lim - pos)));
        }
        if (options.validateCrcs) {
            dataCrc.update(buf, pos, 8);
        }
        pos += 8;
        lastGood = 8;
    }

    /** Reads one top-level record; returns it, or null when it is not yielded (or the input ended). */
    private Record nextTopLevel() throws IOException {
        long at = position();
        recordOffset = at;
        if (!ensure(9)) {
            int have = lim - pos;
            long end = at + have;
            if (have == 0) {
                fail(at, "the input ends at byte " + end + " after a complete record; expected another record"
                        + " or the Footer and the closing magic");
            } else {
                fail(at, "the input ends at byte " + end + " inside the 9-byte opcode and length of the record"
                        + " at byte " + at);
            }
            done = true;
            return null;
        }
        int op = buf[pos] & 0xFF;
        long len = le64(buf, pos + 1);
        String what = RecordParser.name(op) + " record (opcode " + String.format("0x%02X", op) + ") at byte " + at;
        long bodyAt = at + 9;
        if (len < 0 || (size >= 0 && len > size - bodyAt)) {
            fail(at, what + " declares length " + Long.toUnsignedString(len) + " but the "
                    + (size >= 0 ? "file ends at byte " + size : "input is shorter"));
            done = true;
            return null;
        }
        if (len > MAX_RECORD) {
            fail(at, what + " declares length " + len + ", more than the " + MAX_RECORD
                    + " bytes this reader holds in one record");
            done = true;
            return null;
        }
        if (!ensure(9 + (int) len)) {
            fail(at, what + " declares length " + len + " but the input ends at byte " + (base + lim));
            done = true;
            return null;
        }
        int bodyPos = pos + 9;
        ByteBuffer body = ByteBuffer.wrap(buf, bodyPos, (int) len).slice().order(ByteOrder.LITTLE_ENDIAN);
        if (options.validateCrcs && op != Record.OP_FOOTER && op != Record.OP_DATA_END) {
            (summaryCrc != null ? summaryCrc : dataCrc).update(buf, pos, 9 + (int) len);
        }
        int headerPos = pos;
        pos += 9 + (int) len;
        long end = position();

        if (!sawHeader && op != Record.OP_HEADER) {
            sawHeader = true; // report once
            if (problem(at, "expected a Header record (opcode 0x01) first, found " + what)) {
                return null;
            }
        }
        Record rec;
        try {
            rec = RecordParser.parse(op, body, name, at);
        } catch (McapFormatException e) {
            if (options.lenient) {
                problems.add(new Problem(at, e.problem()));
                return null;
            }
            done = true;
            throw e;
        }
        switch (op) {
            case Record.OP_HEADER -> sawHeader = true;
            case Record.OP_CHUNK -> {
                if (options.emitChunks) {
                    lastGood = end;
                    return rec;
                }
                try {
                    chunk = ChunkDecompressor.decompress((Record.Chunk) rec, name, at, options.validateCrcs);
                    chunkOffset = at;
                    chunkEnd = end;
                } catch (McapFormatException e) {
                    if (options.lenient) {
                        problems.add(new Problem(at, e.problem()));
                        return null;
                    }
                    done = true;
                    throw e;
                }
                return null;
            }
            case Record.OP_MESSAGE_INDEX -> {
                lastGood = end;
                return options.emitChunks ? rec : null;
            }
            case Record.OP_ATTACHMENT -> {
                if (options.validateCrcs && ((Record.Attachment) rec).crc() != 0
                        && !attachmentCrcOk((Record.Attachment) rec, body, at)) {
                    return null;
                }
            }
            case Record.OP_DATA_END -> {
                long want = ((Record.DataEnd) rec).dataSectionCrc();
                long got = dataCrc.getValue();
                summaryCrc = new CRC32();
                summaryCrcStart = end;
                if (options.validateCrcs && want != 0 && got != want) {
                    if (problem(at, String.format("DataEnd declares data_section_crc %d but the CRC-32 of bytes 0..%d"
                            + " is %d", want, at, got))) {
                        return null;
                    }
                }
            }
            case Record.OP_FOOTER -> {
                Record.Footer f = (Record.Footer) rec;
                if (options.validateCrcs && f.summaryCrc() != 0) {
                    checkSummaryCrc(f, at, headerPos);
                }
                lastGood = end;
                readEndMagic();
                return rec;
            }
            default -> {
                if (rec instanceof Record.Unknown && !options.emitUnknown) {
                    lastGood = end;
                    return null;
                }
            }
        }
        lastGood = end;
        return rec;
    }

    private Record nextInChunk() throws IOException {
        ByteBuffer c = chunk;
        while (c.hasRemaining()) {
            int at = c.position();
            if (c.remaining() < 9) {
                chunkProblem("the chunk's uncompressed records end inside the 9-byte opcode and length of the"
                        + " record at uncompressed offset " + at + " (" + c.remaining() + " bytes left)");
                return null;
            }
            int op = c.get(at) & 0xFF;
            long len = c.getLong(at + 1);
            if (len < 0 || len > c.remaining() - 9) {
                chunkProblem(RecordParser.name(op) + " record at uncompressed offset " + at + " declares length "
                        + Long.toUnsignedString(len) + " but the chunk's uncompressed records end at offset " + c.limit());
                return null;
            }
            ByteBuffer body = c.slice(at + 9, (int) len).order(ByteOrder.LITTLE_ENDIAN);
            c.position(at + 9 + (int) len);
            Record rec;
            try {
                rec = RecordParser.parse(op, body, name, chunkOffset);
            } catch (McapFormatException e) {
                chunkProblem("inside, at uncompressed offset " + at + ": " + e.getMessage());
                return null;
            }
            if (rec instanceof Record.Unknown && !options.emitUnknown) {
                continue;
            }
            recordOffset = chunkOffset;
            return rec;
        }
        chunk = null;
        lastGood = chunkEnd;
        return null;
    }

    private void chunkProblem(String msg) throws McapFormatException {
        chunk = null;
        if (options.lenient) {
            problems.add(new Problem(chunkOffset, "chunk at byte " + chunkOffset + ": " + msg));
            return;
        }
        done = true;
        throw new McapFormatException(name, chunkOffset, "chunk at byte " + chunkOffset + ": " + msg);
    }

    private boolean attachmentCrcOk(Record.Attachment a, ByteBuffer body, long at) throws McapFormatException {
        // Fields before crc: log_time 8, create_time 8, name (4+n), media_type (4+n), data (8+n).
        ByteBuffer b = body.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int p = 16;
        p += 4 + b.getInt(p);
        p += 4 + b.getInt(p);
        p += 8 + (int) b.getLong(p);
        CRC32 crc = new CRC32();
        crc.update(b.slice(0, p));
        if (crc.getValue() == a.crc()) {
            return true;
        }
        return !problem(at, String.format("Attachment \"%s\" declares crc %d but the CRC-32 of its %d bytes of fields"
                + " before the crc is %d", a.name(), a.crc(), p, crc.getValue()));
    }

    private void checkSummaryCrc(Record.Footer f, long at, int headerPos) throws IOException {
        long start = f.summaryStart();
        CRC32 crc;
        if (start == 0) {
            crc = new CRC32();
        } else if (start == summaryCrcStart) {
            crc = summaryCrc;
        } else if (fileChannel != null && start > 0 && start < at) {
            crc = new CRC32();
            ByteBuffer tmp = ByteBuffer.allocate((int) Math.min(BUFFER, at - start));
            for (long p = start; p < at; ) {
                tmp.clear().limit((int) Math.min(tmp.capacity(), at - p));
                int n = fileChannel.read(tmp, p);
                if (n <= 0) {
                    throw new McapFormatException(name, p, "cannot re-read the summary section for its CRC");
                }
                tmp.flip();
                crc.update(tmp);
                p += n;
            }
        } else {
            problem(at, "Footer summary_start " + Long.toUnsignedString(start) + " does not point at the start of"
                    + " the summary section (" + (summaryCrcStart < 0 ? "no DataEnd record was seen" : "byte "
                    + summaryCrcStart + ", after DataEnd") + "), so summary_crc cannot be checked");
            return;
        }
        crc.update(buf, headerPos, 9 + 16);
        if (crc.getValue() != f.summaryCrc()) {
            problem(at, String.format("Footer declares summary_crc %d but the CRC-32 of bytes %d..%d is %d",
                    f.summaryCrc(), start == 0 ? at : start, at + 25, crc.getValue()));
        }
    }

    private void readEndMagic() throws IOException {
        done = true;
        long at = position();
        if (!ensure(8)) {
            fail(at, "the input ends at byte " + (base + lim) + "; expected the closing magic (8 bytes) after the Footer");
            return;
        }
        if (!magicAt(pos)) {
            fail(at, "expected the closing MCAP magic 89 4D 43 41 50 30 0D 0A after the Footer, found " + hex(pos, 8));
            return;
        }
        pos += 8;
        lastGood = position();
    }

    /** Records a recoverable problem. @return true (lenient) when the caller should skip the record */
    private boolean problem(long at, String msg) throws McapFormatException {
        if (options.lenient) {
            problems.add(new Problem(at, msg));
            return true;
        }
        done = true;
        throw new McapFormatException(name, at, msg);
    }

    /** Records a problem after which reading cannot go on. */
    private void fail(long at, String msg) throws McapFormatException {
        done = true;
        if (options.lenient) {
            problems.add(new Problem(at, msg));
            return;
        }
        throw new McapFormatException(name, at, msg);
    }

    /**
     * Makes at least n unconsumed bytes available in buf[pos..lim). Never overwrites bytes already
     * handed out as views: when it needs room it moves the unconsumed tail to a new array. For
     * inputs of unknown size it grows that array only as bytes arrive.
     *
     * @return false at end of input with fewer than n bytes available
     */
    private boolean ensure(int n) throws IOException {
        if (lim - pos >= n) {
            return true;
        }
        while (lim - pos < n) {
            if (eof) {
                return false;
            }
            if (buf.length - pos < n || lim == buf.length) {
                int have = lim - pos;
                int cap;
                if (size >= 0) {
                    // Known length: at most what is left of the file, at least n.
                    long left = size - (base + lim) + have;
                    cap = (int) Math.max(n, Math.min(BUFFER, left));
                } else if (n <= BUFFER) {
                    cap = Math.max(n, Math.min(BUFFER, Math.max(1 << 16, 2 * buf.length)));
                } else {
                    // Unknown length: grow at most by doubling what has arrived, so a forged length
                    // in a short stream cannot make us allocate it.
                    cap = (int) Math.min(n, Math.max(BUFFER, 2L * Math.max(have, buf.length - pos)));
                }
                byte[] nb = new byte[cap];
                System.arraycopy(buf, pos, nb, 0, have);
                base += pos;
                buf = nb;
                pos = 0;
                lim = have;
            }
            int r = channel.read(ByteBuffer.wrap(buf, lim, buf.length - lim));
            if (r < 0) {
                eof = true;
            } else {
                lim += r;
            }
        }
        return true;
    }

    private boolean magicAt(int p) {
        for (int i = 0; i < 8; i++) {
            if (buf[p + i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    private String hex(int p, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : " ").append(String.format("%02X", buf[p + i] & 0xFF));
        }
        return sb.toString();
    }

    private static long le64(byte[] b, int i) {
        long v = 0;
        for (int k = 7; k >= 0; k--) {
            v = v << 8 | (b[i + k] & 0xFF);
        }
        return v;
    }
}
