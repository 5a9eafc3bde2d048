package io.flywheel.mcap;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * Reads an MCAP file through its summary section (https://mcap.dev/spec, "Summary Section",
 * "Chunk Index", "Message Index"): opens the Footer, reads and CRC-checks the summary, and then
 * reads only the chunks a query needs.
 *
 * <p>{@link #messages(ReadOptions)} yields messages in log-time order even when chunks overlap in
 * time: chunks wait in a heap keyed by their index's {@code message_start_time} and are
 * decompressed only when the heap reaches that time, so memory holds only the chunks that overlap
 * the current time. Messages with equal log time come in file order. Message Index records pick the
 * selected channels' messages when present; otherwise the chunk is scanned.
 *
 * <p>Files whose summary has no Chunk Index records (unchunked files, or chunked files written
 * without chunk indexes) are read by a scan of the data section's record headers at open; files
 * whose summary lacks Channel records get them from the data section and the chunks. A file with no
 * summary at all (summary_start 0, or truncated: no Footer and closing magic) is rejected with a
 * {@link McapFormatException}; read it with the streaming reader.
 *
 * <p>Thread-safe for reading once opened; each iterator is single-threaded. Files larger than
 * 2 GiB are fine; a single chunk or summary must stay below 2 GiB.
 */
public final class McapIndexedReader implements Closeable {

    /** Footer record length: opcode + uint64 length + 20-byte body. */
    private static final int FOOTER_RECORD = 1 + 8 + 20;
    private static final int MAGIC_LEN = 8;
    private static final int MAX_BYTES = ChunkCodec.MAX_CHUNK_BYTES;

    /**
     * Where a message record lies in the file (MCAP spec, "Chunk" and "Message" records), as
     * {@link MessageIterator#position()} reports it for the message last returned.
     *
     * @param chunkOffset absolute offset of the opcode byte of the Chunk record holding the message
     *     (its Chunk Index's {@code chunk_start_offset}), or -1 for a message outside any chunk
     * @param compression the chunk's compression ({@code ""}, {@code zstd}, {@code lz4}); {@code ""}
     *     outside chunks
     * @param recordOffset offset of the Message record's opcode byte: inside the chunk's
     *     decompressed records when {@code chunkOffset >= 0}, else absolute in the file; the
     *     message's {@code data} starts 31 bytes later (opcode, length, 22 bytes of fields)
     */
    public record Position(long chunkOffset, String compression, long recordOffset) {}

    /** Order in which {@link #messages(ReadOptions)} yields messages. */
    public enum Order {
        /** Ascending log time; equal log times in file order. */
        LOG_TIME,
        /** The order of the records in the file. */
        FILE
    }

    /**
     * Which messages to read: topics (empty = all), a log-time range [startTime, endTime) in uint64
     * nanoseconds, the order, and whether decompressed chunk buffers are recycled.
     *
     * @param topics topics to read; empty means every topic
     * @param startTime inclusive lower bound on log time (uint64 ns), default 0
     * @param endTime exclusive upper bound on log time (uint64 ns); {@link #NO_END} (-1, i.e.
     *     2^64-1 unsigned) means unbounded
     * @param order output order, default {@link Order#LOG_TIME}
     * @param reuseBuffers default false: every chunk is decompressed into a new array, and a
     *     message's {@code data} stays valid as long as it is referenced. True: the arrays are
     *     recycled once all of a chunk's selected messages have been yielded, so a message's
     *     {@code data} (and every view made from it) is valid only until the iterator's next call to
     *     {@code hasNext()} or {@code next()}; copy what must be kept. Saves allocating and zeroing
     *     a fresh array per chunk and keeps the working set in the CPU caches (faster scans).
     */
    public record ReadOptions(Set<String> topics, long startTime, long endTime, Order order, boolean reuseBuffers) {
        /** endTime meaning "no upper bound". */
        public static final long NO_END = -1L;

        public ReadOptions {
            topics = Collections.unmodifiableSet(new LinkedHashSet<>(topics));
            Objects.requireNonNull(order);
        }

        /** Options without buffer reuse (the default). */
        public ReadOptions(Set<String> topics, long startTime, long endTime, Order order) {
            this(topics, startTime, endTime, order, false);
        }

        /** @return options that read every message in log-time order */
        public static ReadOptions all() {
            return builder().build();
        }

        /** @return a builder: all topics, all times, log-time order */
        public static Builder builder() {
            return new Builder();
        }

        /** @return true when {@code logTime} lies in [startTime, endTime) */
        public boolean inRange(long logTime) {
            return Long.compareUnsigned(logTime, startTime) >= 0
                    && (endTime == NO_END || Long.compareUnsigned(logTime, endTime) < 0);
        }

        /** @return true when a chunk covering [start, end] may hold messages in range */
        boolean overlaps(long start, long end) {
            return Long.compareUnsigned(end, startTime) >= 0
                    && (endTime == NO_END || Long.compareUnsigned(start, endTime) < 0);
        }

        /** Builder for {@link ReadOptions}. */
        public static final class Builder {
            private final Set<String> topics = new LinkedHashSet<>();
            private long startTime = 0;
            private long endTime = NO_END;
            private Order order = Order.LOG_TIME;
            private boolean reuseBuffers;

            private Builder() {}

            /** Adds one topic to read (call again for more); none means all topics. */
            public Builder topic(String topic) { topics.add(Objects.requireNonNull(topic)); return this; }

            /** Adds topics to read; none means all topics. */
            public Builder topics(Collection<String> ts) { ts.forEach(this::topic); return this; }

            /** @param ns inclusive lower bound on log time, uint64 nanoseconds */
            public Builder startTime(long ns) { this.startTime = ns; return this; }

            /** @param ns exclusive upper bound on log time, uint64 nanoseconds */
            public Builder endTime(long ns) { this.endTime = ns; return this; }

            /** @param order {@link Order#LOG_TIME} (default) or {@link Order#FILE} */
            public Builder order(Order order) { this.order = Objects.requireNonNull(order); return this; }

            /**
             * @param on recycle decompressed chunk arrays (default false); when true a message's data
             *     is valid only until the next {@code hasNext()} / {@code next()} call
             */
            public Builder reuseBuffers(boolean on) { this.reuseBuffers = on; return this; }

            /** @return the options */
            public ReadOptions build() { return new ReadOptions(topics, startTime, endTime, order, reuseBuffers); }
        }
    }

    private final String name;
    private final FileChannel ch;
    private final long size;
    private final Record.Header header;
    private final Record.Footer footer;
    private final long dataEnd; // where the data section ends (summary start, else footer)
    private final TreeMap<Integer, Record.Schema> schemas = new TreeMap<>();
    private final TreeMap<Integer, Record.Channel> channels = new TreeMap<>();
    private Record.Statistics statistics;
    private final List<Record.ChunkIndex> chunkIndexes = new ArrayList<>();
    private final List<Record.AttachmentIndex> attachmentIndexes = new ArrayList<>();
    private final List<Record.MetadataIndex> metadataIndexes = new ArrayList<>();
    private final List<Record.SummaryOffset> summaryOffsets = new ArrayList<>();
    /** Chunks found by scanning when the summary has no chunk indexes. */
    private final List<Record.ChunkIndex> scannedChunks = new ArrayList<>();
    /** Messages outside chunks (found by scanning): log time, record offset, channel id. */
    private long[] looseTimes = new long[0];
    private long[] looseOffsets = new long[0];
    private int[] looseChannels = new int[0];
    private int looseCount;
    private final boolean scanned;

    private McapIndexedReader(Path path, FileChannel ch) throws IOException {
        this.name = path.toString();
        this.ch = ch;
        this.size = ch.size();
        long minSize = MAGIC_LEN + FOOTER_RECORD + MAGIC_LEN;
        if (size < minSize) {
            throw new McapFormatException(name, size, "file of " + size + " bytes is too short for an MCAP file "
                    + "with a footer (at least " + minSize + " bytes); it is truncated or not MCAP");
        }
        byte[] head = read(0, MAGIC_LEN);
        if (!Arrays.equals(head, McapWriter.MAGIC)) {
            throw McapFormatException.badMagic(name, head);
        }
        byte[] tail = read(size - MAGIC_LEN, MAGIC_LEN);
        if (!Arrays.equals(tail, McapWriter.MAGIC)) {
            throw new McapFormatException(name, size - MAGIC_LEN, "no closing magic: the file is truncated or was "
                    + "not finished, so it has no footer or summary; read it with the streaming reader");
        }
        long footerOffset = size - MAGIC_LEN - FOOTER_RECORD;
        byte[] fb = read(footerOffset, FOOTER_RECORD);
        ByteBuffer f = ByteBuffer.wrap(fb).order(ByteOrder.LITTLE_ENDIAN);
        if (fb[0] != Record.OP_FOOTER || f.getLong(1) != 20) {
            throw new McapFormatException(name, footerOffset, String.format(
                    "expected a Footer record (opcode 0x02, length 20) before the closing magic, found opcode 0x%02X "
                    + "length %s", fb[0] & 0xFF, Long.toUnsignedString(f.getLong(1))));
        }
        footer = (Record.Footer) RecordParser.parse(Record.OP_FOOTER, ByteBuffer.wrap(fb, 9, 20), name, footerOffset);
        header = readHeader();
        long ss = footer.summaryStart();
        long sos = footer.summaryOffsetStart();
        if (ss == 0) {
            throw new McapFormatException(name, footerOffset, "the footer's summary_start is 0: the file has no "
                    + "summary section, so it cannot be read by index; read it with the streaming reader");
        }
        if (ss < MAGIC_LEN || Long.compareUnsigned(ss, footerOffset) > 0) {
            throw new McapFormatException(name, footerOffset, "footer summary_start " + Long.toUnsignedString(ss)
                    + " points outside the file's records (expected " + MAGIC_LEN + " .. " + footerOffset + ")");
        }
        if (sos != 0 && (Long.compareUnsigned(sos, ss) < 0 || Long.compareUnsigned(sos, footerOffset) > 0)) {
            throw new McapFormatException(name, footerOffset, "footer summary_offset_start "
                    + Long.toUnsignedString(sos) + " is outside the summary (expected " + ss + " .. " + footerOffset + ")");
        }
        dataEnd = ss;
        readSummary(ss, sos == 0 ? footerOffset : sos, footerOffset, fb);

        boolean needScan = chunkIndexes.isEmpty();
        boolean channelsIncomplete = channelsIncomplete();
        if (needScan || channelsIncomplete) {
            scanDataSection(channelsIncomplete);
        }
        scanned = needScan;
    }

    /**
     * Opens a file and reads its footer and summary.
     *
     * @param path the MCAP file
     * @return the reader; close it to release the file
     * @throws McapFormatException when the magic is missing, the file has no footer or summary
     *     (truncated or written without one: use the streaming reader), the summary CRC does not
     *     match, or a summary record is malformed; the message names the file and byte offset
     * @throws IOException when the file cannot be read
     */
    public static McapIndexedReader open(Path path) throws IOException {
        McapStreamReader.requireFile(path);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
        try {
            return new McapIndexedReader(path, ch);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** @return the Header record (profile, library) */
    public Record.Header header() { return header; }

    /** @return the Footer record */
    public Record.Footer footer() { return footer; }

    /** @return the file size in bytes */
    public long fileSize() { return size; }

    /** @return schemas by id (ascending), from the summary (or the data section when the summary has none) */
    public Map<Integer, Record.Schema> schemas() { return Collections.unmodifiableMap(schemas); }

    /** @return channels by id (ascending), from the summary (or the data section when the summary has none) */
    public Map<Integer, Record.Channel> channels() { return Collections.unmodifiableMap(channels); }

    /** @return the Statistics record, when the summary has one */
    public Optional<Record.Statistics> statistics() { return Optional.ofNullable(statistics); }

    /** @return the summary's Chunk Index records, in file order of their chunks */
    public List<Record.ChunkIndex> chunkIndexes() { return Collections.unmodifiableList(chunkIndexes); }

    /** @return the summary's Attachment Index records */
    public List<Record.AttachmentIndex> attachmentIndexes() { return Collections.unmodifiableList(attachmentIndexes); }

    /** @return the summary's Metadata Index records */
    public List<Record.MetadataIndex> metadataIndexes() { return Collections.unmodifiableList(metadataIndexes); }

    /** @return the Summary Offset records */
    public List<Record.SummaryOffset> summaryOffsets() { return Collections.unmodifiableList(summaryOffsets); }

    /** @return true when the summary had no chunk indexes and messages were located by scanning the data section */
    public boolean scannedDataSection() { return scanned; }

    /**
     * Reads the attachment an index points at and checks its CRC32 (when non-zero).
     *
     * @param index one of {@link #attachmentIndexes()}
     * @return the attachment; its data is a view into a fresh array
     * @throws McapFormatException when the index points outside the data section or at another
     *     record, or the CRC does not match
     */
    public Record.Attachment readAttachment(Record.AttachmentIndex index) throws IOException {
        byte[] rec = readRecordAt(index.offset(), index.length(), Record.OP_ATTACHMENT, "AttachmentIndex");
        Record.Attachment a = (Record.Attachment) RecordParser.parse(Record.OP_ATTACHMENT,
                ByteBuffer.wrap(rec, 9, rec.length - 9), name, index.offset());
        if (a.crc() != 0) {
            int covered = 8 + 8 + 4 + utf8Len(a.name()) + 4 + utf8Len(a.mediaType()) + 8 + a.data().remaining();
            CRC32 crc = new CRC32();
            crc.update(rec, 9, covered);
            if (crc.getValue() != a.crc()) {
                throw new McapFormatException(name, index.offset(), "attachment \"" + a.name() + "\" CRC32 mismatch: "
                        + "record says " + a.crc() + ", data gives " + crc.getValue());
            }
        }
        return a;
    }

    /**
     * Reads the metadata record an index points at.
     *
     * @param index one of {@link #metadataIndexes()}
     * @return the metadata record
     * @throws McapFormatException when the index points outside the data section or at another record
     */
    public Record.Metadata readMetadata(Record.MetadataIndex index) throws IOException {
        byte[] rec = readRecordAt(index.offset(), index.length(), Record.OP_METADATA, "MetadataIndex");
        return (Record.Metadata) RecordParser.parse(Record.OP_METADATA, ByteBuffer.wrap(rec, 9, rec.length - 9),
                name, index.offset());
    }

    /** @return an iterator over every message in log-time order */
    public MessageIterator messages() {
        return messages(ReadOptions.all());
    }

    /**
     * Iterates the selected messages. Chunks are read and decompressed lazily as the iteration
     * reaches them; each chunk's CRC32 is checked when non-zero.
     *
     * @param options topics, log-time range and order
     * @return an iterator; errors in the file surface from its {@code hasNext()} / {@code next()}
     *     as {@link McapFormatException}
     */
    public MessageIterator messages(ReadOptions options) {
        BitSet selected = null;
        if (!options.topics().isEmpty()) {
            selected = new BitSet();
            for (Record.Channel c : channels.values()) {
                if (options.topics().contains(c.topic())) {
                    selected.set(c.id());
                }
            }
        }
        return new MessageIterator(options, selected);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        for (ChunkScratch s; (s = scratchPool.poll()) != null; ) {
            s.decompressor.close();
        }
        ch.close();
    }

    // ---------------------------------------------------------------- opening

    private Record.Header readHeader() throws IOException {
        byte[] h = read(MAGIC_LEN, 9);
        ByteBuffer b = ByteBuffer.wrap(h).order(ByteOrder.LITTLE_ENDIAN);
        long len = b.getLong(1);
        if (h[0] != Record.OP_HEADER) {
            throw new McapFormatException(name, MAGIC_LEN, String.format(
                    "expected a Header record (opcode 0x01) after the magic, found opcode 0x%02X", h[0] & 0xFF));
        }
        if (len < 8 || len > size - MAGIC_LEN - 9 || len > MAX_BYTES) {
            throw new McapFormatException(name, MAGIC_LEN, "Header record length " + Long.toUnsignedString(len)
                    + " does not fit in the file of " + size + " bytes");
        }
        return (Record.Header) RecordParser.parse(Record.OP_HEADER, ByteBuffer.wrap(read(MAGIC_LEN + 9, (int) len)),
                name, MAGIC_LEN);
    }

    private void readSummary(long start, long offsetsStart, long footerOffset, byte[] footerBytes) throws IOException {
        long len = footerOffset - start;
        if (len > MAX_BYTES) {
            throw new McapFormatException(name, start, "summary section of " + len + " bytes is larger than "
                    + MAX_BYTES + " bytes, which this reader supports");
        }
        byte[] s = read(start, (int) len);
        if (footer.summaryCrc() != 0) {
            CRC32 crc = new CRC32();
            crc.update(s);
            crc.update(footerBytes, 0, 1 + 8 + 8 + 8);
            if (crc.getValue() != footer.summaryCrc()) {
                throw new McapFormatException(name, start, "summary CRC32 mismatch: the footer says "
                        + footer.summaryCrc() + ", bytes " + start + " .. " + (footerOffset + 25) + " give " + crc.getValue());
            }
        }
        ByteBuffer b = ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN);
        int pos = 0;
        int end = (int) (offsetsStart - start);
        while (pos < s.length) {
            long recOffset = start + pos;
            if (s.length - pos < 9) {
                throw new McapFormatException(name, recOffset, "summary record header needs 9 bytes, only "
                        + (s.length - pos) + " left before the footer");
            }
            int op = s[pos] & 0xFF;
            long rlen = b.getLong(pos + 1);
            if (rlen < 0 || rlen > s.length - pos - 9) {
                throw new McapFormatException(name, recOffset, RecordParser.name(op) + " record length "
                        + Long.toUnsignedString(rlen) + " runs past the summary's end at " + footerOffset);
            }
            Record r = RecordParser.parse(op, ByteBuffer.wrap(s, pos + 9, (int) rlen), name, recOffset);
            if (pos >= end && !(r instanceof Record.SummaryOffset) && !(r instanceof Record.Unknown)) {
                throw new McapFormatException(name, recOffset, "expected only SummaryOffset records after "
                        + "summary_offset_start " + offsetsStart + ", found " + RecordParser.name(op));
            }
            if (r instanceof Record.Schema sc) {
                if (sc.id() != 0) {
                    schemas.putIfAbsent(sc.id(), sc);
                }
            } else if (r instanceof Record.Channel c) {
                channels.putIfAbsent(c.id(), c);
            } else if (r instanceof Record.Statistics st) {
                statistics = st;
            } else if (r instanceof Record.ChunkIndex ci) {
                chunkIndexes.add(ci);
            } else if (r instanceof Record.AttachmentIndex ai) {
                attachmentIndexes.add(ai);
            } else if (r instanceof Record.MetadataIndex mi) {
                metadataIndexes.add(mi);
            } else if (r instanceof Record.SummaryOffset so) {
                summaryOffsets.add(so);
            } // other records are skipped, as the spec says
            pos += 9 + (int) rlen;
        }
        for (Record.ChunkIndex ci : chunkIndexes) {
            checkChunkIndex(ci);
        }
        chunkIndexes.sort(Comparator.comparingLong(Record.ChunkIndex::chunkStartOffset));
    }

    private void checkChunkIndex(Record.ChunkIndex ci) throws McapFormatException {
        long off = ci.chunkStartOffset();
        long len = ci.chunkLength();
        if (off < MAGIC_LEN || len < 9 || Long.compareUnsigned(off, dataEnd) >= 0
                || Long.compareUnsigned(len, dataEnd - off) > 0) {
            throw new McapFormatException(name, off, "chunk index points at a chunk of " + Long.toUnsignedString(len)
                    + " bytes at offset " + Long.toUnsignedString(off) + ", outside the data section (8 .. " + dataEnd + ")");
        }
        if (len > MAX_BYTES) {
            throw new McapFormatException(name, off, "chunk of " + len + " bytes is larger than " + MAX_BYTES
                    + " bytes, which this reader supports");
        }
    }

    /** @return true when the summary lacks a Channel, or a Schema that a known channel needs */
    private boolean channelsIncomplete() {
        if (statistics != null && (statistics.channelCount() > channels.size()
                || statistics.schemaCount() > schemas.size())) {
            return true;
        }
        for (Record.Channel c : channels.values()) {
            if (c.schemaId() != 0 && !schemas.containsKey(c.schemaId())) {
                return true;
            }
        }
        for (Record.ChunkIndex ci : chunkIndexes) {
            for (Integer id : ci.messageIndexOffsets().keySet()) {
                if (!channels.containsKey(id)) {
                    return true;
                }
            }
        }
        if (statistics != null) {
            for (Integer id : statistics.channelMessageCounts().keySet()) {
                if (!channels.containsKey(id)) {
                    return true;
                }
            }
            return false;
        }
        return channels.isEmpty();
    }

    /**
     * Walks the data section's records (only their headers, except Schema and Channel records):
     * finds chunks and loose messages when the summary has no chunk indexes, and Schema/Channel
     * records when the summary lacks them (looking inside chunks too in that case).
     */
    private void scanDataSection(boolean lookInsideChunks) throws IOException {
        boolean collect = chunkIndexes.isEmpty();
        Window w = new Window();
        long pos = MAGIC_LEN;
        while (pos < dataEnd) {
            ByteBuffer h = w.at(pos, 9, dataEnd);
            if (h == null) {
                throw new McapFormatException(name, pos, "record header needs 9 bytes but the data section ends at "
                        + dataEnd);
            }
            int op = h.get() & 0xFF;
            long len = h.getLong();
            if (len < 0 || len > dataEnd - pos - 9) {
                throw new McapFormatException(name, pos, RecordParser.name(op) + " record length "
                        + Long.toUnsignedString(len) + " runs past the data section's end at " + dataEnd);
            }
            long body = pos + 9;
            switch (op) {
                case Record.OP_SCHEMA, Record.OP_CHANNEL -> {
                    if (len > MAX_BYTES) {
                        throw new McapFormatException(name, pos, RecordParser.name(op) + " record of " + len + " bytes is too large");
                    }
                    register(RecordParser.parse(op, ByteBuffer.wrap(read(body, (int) len)), name, pos));
                }
                case Record.OP_MESSAGE -> {
                    if (collect) {
                        ByteBuffer m = w.at(body, 22, body + len);
                        if (m == null) {
                            throw new McapFormatException(name, pos, "Message record of " + len
                                    + " bytes is shorter than its 22 bytes of fixed fields");
                        }
                        int channel = Short.toUnsignedInt(m.getShort());
                        m.getInt();
                        addLoose(m.getLong(), pos, channel);
                    }
                }
                case Record.OP_CHUNK -> {
                    if (collect || lookInsideChunks) {
                        Record.ChunkIndex ci = chunkHeader(w, pos, len);
                        if (collect) {
                            scannedChunks.add(ci);
                        }
                        if (lookInsideChunks) {
                            LoadedChunk lc = loadChunk(ci);
                            scanChunkDefinitions(lc);
                        }
                    }
                }
                default -> { /* attachments, metadata, indexes, unknown records: skipped */ }
            }
            if (op == Record.OP_DATA_END || op == Record.OP_FOOTER) {
                break;
            }
            pos = body + len;
        }
        if (collect) {
            chunkIndexes.clear();
        }
    }

    private Record.ChunkIndex chunkHeader(Window w, long pos, long len) throws IOException {
        ByteBuffer c = w.at(pos + 9, 36, pos + 9 + len);
        if (c == null) {
            throw new McapFormatException(name, pos, "Chunk record of " + len + " bytes is shorter than its fixed fields");
        }
        long start = c.getLong();
        long end = c.getLong();
        long usize = c.getLong();
        c.getInt();
        long clen = Integer.toUnsignedLong(c.getInt());
        if (clen > 256 || clen > len - 36 - 8) {
            throw new McapFormatException(name, pos, "Chunk compression string of " + clen + " bytes runs past the record");
        }
        ByteBuffer cs = w.at(pos + 9 + 36, (int) clen + 8, pos + 9 + len);
        byte[] comp = new byte[(int) clen];
        cs.get(comp);
        long recordsLen = cs.getLong();
        if (9 + len > MAX_BYTES) {
            throw new McapFormatException(name, pos, "chunk of " + (9 + len) + " bytes is larger than " + MAX_BYTES
                    + " bytes, which this reader supports");
        }
        return new Record.ChunkIndex(start, end, pos, 9 + len, Map.of(), 0,
                new String(comp, StandardCharsets.UTF_8), recordsLen, usize);
    }

    private void register(Record r) {
        if (r instanceof Record.Schema s && s.id() != 0) {
            schemas.putIfAbsent(s.id(), copy(s));
        } else if (r instanceof Record.Channel c) {
            channels.putIfAbsent(c.id(), c);
        }
    }

    private static Record.Schema copy(Record.Schema s) {
        ByteBuffer d = ByteBuffer.allocate(s.data().remaining());
        d.put(s.data().duplicate()).flip();
        return new Record.Schema(s.id(), s.name(), s.encoding(), d.asReadOnlyBuffer());
    }

    private void scanChunkDefinitions(LoadedChunk lc) throws McapFormatException {
        ByteBuffer b = ByteBuffer.wrap(lc.data).order(ByteOrder.LITTLE_ENDIAN);
        int pos = 0;
        while (pos < lc.size) {
            int at = lc.base + pos;
            long len = recordLength(lc, pos);
            int op = lc.data[at] & 0xFF;
            if (op == Record.OP_SCHEMA || op == Record.OP_CHANNEL) {
                register(RecordParser.parse(op, b.slice(at + 9, (int) len), name, lc.offset));
            }
            pos += 9 + (int) len;
        }
    }

    private void addLoose(long time, long offset, int channel) {
        if (looseCount == looseTimes.length) {
            int n = Math.max(64, looseCount * 2);
            looseTimes = Arrays.copyOf(looseTimes, n);
            looseOffsets = Arrays.copyOf(looseOffsets, n);
            looseChannels = Arrays.copyOf(looseChannels, n);
        }
        looseTimes[looseCount] = time;
        looseOffsets[looseCount] = offset;
        looseChannels[looseCount] = channel;
        looseCount++;
    }

    // ---------------------------------------------------------------- chunks

    /** A decompressed chunk: records at {@code data[base, base+size)}. */
    private static final class LoadedChunk {
        final long offset;
        final byte[] data;
        final int base;
        final int size;
        /** The chunk's compression ({@code ""} for records stored as they are). */
        final String compression;
        private ByteBuffer readOnly;

        LoadedChunk(long offset, byte[] data, int base, int size, String compression) {
            this.offset = offset;
            this.data = data;
            this.base = base;
            this.size = size;
            this.compression = compression;
        }

        /** @return a read-only buffer over all of {@code data}, for slicing message views from */
        ByteBuffer readOnly() {
            ByteBuffer r = readOnly;
            if (r == null) {
                r = readOnly = ByteBuffer.wrap(data).asReadOnlyBuffer();
            }
            return r;
        }
    }

    private LoadedChunk loadChunk(Record.ChunkIndex ci) throws IOException {
        return loadChunk(ci, null);
    }

    /**
     * Reads, checks and decompresses a chunk.
     *
     * @param pool where the decompressed array comes from; null: a new array
     */
    private LoadedChunk loadChunk(Record.ChunkIndex ci, ArrayPool pool) throws IOException {
        long off = ci.chunkStartOffset();
        int total = (int) ci.chunkLength();
        if (total > DIRECT_READ_LIMIT) {
            return loadChunk(ci, ByteBuffer.wrap(read(off, total)), null, null);
        }
        ChunkScratch s = borrowScratch();
        try {
            // One read of the whole record into a reused direct buffer: zstd decompresses straight
            // from it into the chunk's array, so the compressed bytes never land on the Java heap.
            ByteBuffer d = s.buffer(total);
            while (d.hasRemaining()) {
                int r = ch.read(d, off + d.position());
                if (r < 0) {
                    throw new McapFormatException(name, off + d.position(), "file ended while reading the "
                            + total + "-byte chunk at " + off);
                }
            }
            d.flip();
            return loadChunk(ci, d, s.decompressor, pool);
        } finally {
            releaseScratch(s);
        }
    }

    /** Checks and decompresses the chunk record {@code rec} (from position 0, little-endian or not). */
    private LoadedChunk loadChunk(Record.ChunkIndex ci, ByteBuffer rec, ChunkDecompressor dec, ArrayPool pool)
            throws IOException {
        long off = ci.chunkStartOffset();
        int total = rec.remaining();
        int op = rec.get(0) & 0xFF;
        long len = rec.order(ByteOrder.LITTLE_ENDIAN).getLong(1);
        if (op != Record.OP_CHUNK) {
            throw new McapFormatException(name, off, String.format("chunk index points at offset %d, where a Chunk "
                    + "record (opcode 0x06) was expected, but found opcode 0x%02X", off, op));
        }
        if (len != total - 9) {
            throw new McapFormatException(name, off, "Chunk record length " + Long.toUnsignedString(len)
                    + " does not match the chunk index's chunk_length " + total + " minus 9");
        }
        Record.Chunk c = (Record.Chunk) RecordParser.parse(Record.OP_CHUNK, rec.slice(9, total - 9), name, off);
        int recordsStart = 9 + 8 + 8 + 8 + 4 + 4 + utf8Len(c.compression()) + 8;
        int recordsLen = c.records().remaining();
        int usize = (int) c.uncompressedSize();
        if (!c.compression().isEmpty()) {
            ByteBuffer out = dec != null ? dec.decompressChunk(c, null, 0, name, off, true, pool == null ? null : pool::get)
                    : ChunkDecompressor.decompress(c, name, off, true);
            return new LoadedChunk(off, out.array(), out.arrayOffset() + out.position(), usize, c.compression());
        }
        if (c.uncompressedSize() != recordsLen) {
            throw new McapFormatException(name, off, "uncompressed chunk holds " + recordsLen
                    + " record bytes but declares uncompressed_size " + Long.toUnsignedString(c.uncompressedSize()));
        }
        byte[] data;
        int base;
        if (rec.hasArray()) {
            data = rec.array();
            base = rec.arrayOffset() + recordsStart;
        } else {
            // messages are views into the chunk, which must outlive the reused read buffer
            data = pool != null ? pool.get(usize) : new byte[usize];
            rec.get(recordsStart, data, 0, usize);
            base = 0;
        }
        if (c.uncompressedCrc() != 0) {
            CRC32 crc = new CRC32();
            crc.update(data, base, usize);
            if (crc.getValue() != c.uncompressedCrc()) {
                throw new McapFormatException(name, off, "chunk CRC32 mismatch: the chunk says " + c.uncompressedCrc()
                        + ", its " + usize + " decompressed bytes give " + crc.getValue());
            }
        }
        return new LoadedChunk(off, data, base, usize, c.compression());
    }

    /** Recycled arrays for decompressed chunks ({@link ReadOptions#reuseBuffers()}); one iterator's. */
    private static final class ArrayPool {
        private final List<byte[]> free = new ArrayList<>();

        /** @return a free array of at least {@code n} bytes, or a new one with some slack */
        byte[] get(int n) {
            for (int i = free.size() - 1; i >= 0; i--) {
                if (free.get(i).length >= n) {
                    return free.remove(i);
                }
            }
            if (!free.isEmpty()) {
                free.remove(0); // too small: let it go, so the pool does not grow without bound
            }
            return new byte[n > MAX_BYTES - (n >> 4) ? n : n + (n >> 4)];
        }

        void put(byte[] a) {
            free.add(a);
        }
    }

    /** Chunks up to this size are read through a reused direct buffer; larger ones onto the heap. */
    private static final int DIRECT_READ_LIMIT = 64 << 20;

    /** A reused direct read buffer and zstd context; one per concurrent chunk load. */
    private static final class ChunkScratch {
        final ChunkDecompressor decompressor = new ChunkDecompressor();
        private ByteBuffer buf = ByteBuffer.allocateDirect(0);

        /** @return the buffer, cleared, with exactly {@code n} bytes remaining */
        ByteBuffer buffer(int n) {
            if (buf.capacity() < n) {
                buf = ByteBuffer.allocateDirect((int) Math.min(DIRECT_READ_LIMIT, Math.max(n, n + (n >> 3))));
            }
            return buf.clear().limit(n);
        }
    }

    private final java.util.concurrent.ConcurrentLinkedQueue<ChunkScratch> scratchPool =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private ChunkScratch borrowScratch() {
        ChunkScratch s = scratchPool.poll();
        return s != null ? s : new ChunkScratch();
    }

    private void releaseScratch(ChunkScratch s) {
        if (closed) {
            s.decompressor.close();
            return;
        }
        scratchPool.offer(s);
        if (closed && scratchPool.remove(s)) { // closed concurrently
            s.decompressor.close();
        }
    }

    /** @return the body length of the record at {@code pos} inside the chunk, checked to fit */
    private long recordLength(LoadedChunk lc, int pos) throws McapFormatException {
        if (lc.size - pos < 9) {
            throw new McapFormatException(name, lc.offset, "record at offset " + pos + " inside the chunk needs a 9-byte "
                    + "header, but the chunk's " + lc.size + " bytes end first");
        }
        long len = (long) LE_LONG.get(lc.data, lc.base + pos + 1);
        if (len < 0 || len > lc.size - pos - 9) {
            throw new McapFormatException(name, lc.offset, RecordParser.name(lc.data[lc.base + pos] & 0xFF)
                    + " record at offset " + pos + " inside the chunk has length " + Long.toUnsignedString(len)
                    + ", past the chunk's end at " + lc.size);
        }
        return len;
    }

    private static final java.lang.invoke.VarHandle LE_LONG = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final java.lang.invoke.VarHandle LE_INT = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            int[].class, ByteOrder.LITTLE_ENDIAN);

    /** Reads the message index records of the selected channels: pairs (log time, offset in chunk). */
    private long[] readMessageIndexes(Record.ChunkIndex ci, BitSet selected, ReadOptions o, int[] countOut)
            throws IOException {
        long[] entries = new long[32];
        int n = 0;
        long indexStart = ci.chunkStartOffset() + ci.chunkLength();
        long indexEnd = indexStart + ci.messageIndexLength();
        if (ci.messageIndexLength() < 0 || Long.compareUnsigned(indexEnd, dataEnd) > 0) {
            throw new McapFormatException(name, ci.chunkStartOffset(), "chunk index message_index_length "
                    + Long.toUnsignedString(ci.messageIndexLength()) + " runs past the data section's end at " + dataEnd);
        }
        for (Map.Entry<Integer, Long> e : ci.messageIndexOffsets().entrySet()) {
            if (!selected.get(e.getKey())) {
                continue;
            }
            long at = e.getValue();
            if (Long.compareUnsigned(at, indexStart) < 0 || Long.compareUnsigned(at, indexEnd - 9) > 0) {
                throw new McapFormatException(name, at, "chunk index at chunk " + ci.chunkStartOffset()
                        + " points channel " + e.getKey() + "'s message index outside " + indexStart + " .. " + indexEnd);
            }
            byte[] h = read(at, 9);
            long len = (long) LE_LONG.get(h, 1);
            if (h[0] != Record.OP_MESSAGE_INDEX || len < 0 || len > indexEnd - at - 9) {
                throw new McapFormatException(name, at, String.format("expected a MessageIndex record (opcode 0x07) of "
                        + "at most %d bytes, found opcode 0x%02X length %s", indexEnd - at - 9, h[0] & 0xFF,
                        Long.toUnsignedString(len)));
            }
            Record.MessageIndex mi = (Record.MessageIndex) RecordParser.parse(Record.OP_MESSAGE_INDEX,
                    ByteBuffer.wrap(read(at + 9, (int) len)), name, at);
            if (mi.channelId() != e.getKey()) {
                throw new McapFormatException(name, at, "message index for channel " + mi.channelId()
                        + " where the chunk index says channel " + e.getKey());
            }
            for (Record.MessageIndex.Entry en : mi.records()) {
                if (!o.inRange(en.logTime())) {
                    continue;
                }
                if (2 * n + 2 > entries.length) {
                    entries = Arrays.copyOf(entries, entries.length * 2);
                }
                entries[2 * n] = en.logTime();
                entries[2 * n + 1] = en.offset();
                n++;
            }
        }
        countOut[0] = n;
        return entries;
    }

    // ---------------------------------------------------------------- iteration

    /**
     * Iterator over messages. {@code hasNext()} and {@code next()} read and decompress chunks as
     * needed and throw {@link McapFormatException} for malformed data (never a runtime exception).
     */
    public final class MessageIterator {
        private final ReadOptions opts;
        private final BitSet selected;
        private final PriorityQueue<Source> heap;
        private final Comparator<Source> cmp;
        /** The cursor last taken from the heap, kept out of it while it stays first (saves heap work per message). */
        private Cursor head;
        /** Per channel id: the channel and schema, looked up once ({@code null} until first use). */
        private ChannelInfo[] views = new ChannelInfo[0];
        private MessageView next;
        private Position nextPosition;
        private Position position;
        private int chunksRead;
        private int chunksHeld;
        private int maxChunksHeld;
        private final ArrayPool pool;

        private MessageIterator(ReadOptions opts, BitSet selected) {
            this.opts = opts;
            this.selected = selected;
            this.pool = opts.reuseBuffers() ? new ArrayPool() : null;
            cmp = opts.order() == Order.LOG_TIME
                    ? (a, b) -> {
                        int c = Long.compareUnsigned(a.time(), b.time());
                        if (c != 0) {
                            return c;
                        }
                        c = Long.compare(a.major(), b.major());
                        return c != 0 ? c : Long.compare(a.minor(), b.minor());
                    }
                    : (a, b) -> {
                        int c = Long.compare(a.major(), b.major());
                        return c != 0 ? c : Long.compare(a.minor(), b.minor());
                    };
            heap = new PriorityQueue<>(cmp);
            List<Record.ChunkIndex> chunks = scanned ? scannedChunks : chunkIndexes;
            for (Record.ChunkIndex ci : chunks) {
                if (!opts.overlaps(ci.messageStartTime(), ci.messageEndTime())) {
                    continue;
                }
                if (selected != null && !ci.messageIndexOffsets().isEmpty()) {
                    boolean any = false;
                    for (Integer id : ci.messageIndexOffsets().keySet()) {
                        any |= selected.get(id);
                    }
                    if (!any) {
                        continue;
                    }
                }
                heap.add(new PendingChunk(ci));
            }
            if (looseCount > 0) {
                LooseCursor lc = new LooseCursor();
                if (lc.valid()) {
                    heap.add(lc);
                }
            }
        }

        /**
         * @return true when another message is available
         * @throws McapFormatException when a chunk, index or message is malformed
         */
        public boolean hasNext() throws IOException {
            while (next == null && (head != null || !heap.isEmpty())) {
                Source s;
                if (head != null) {
                    Source top = heap.peek();
                    if (top == null || cmp.compare(head, top) <= 0) {
                        s = head;
                    } else {
                        heap.add(head);
                        s = heap.poll();
                    }
                    head = null;
                } else {
                    s = heap.poll();
                }
                if (s instanceof PendingChunk pc) {
                    ChunkCursor cc = openChunk(pc.ci);
                    chunksRead++;
                    if (cc.valid()) {
                        head = cc;
                        maxChunksHeld = Math.max(maxChunksHeld, ++chunksHeld);
                    } else if (pool != null) {
                        pool.put(cc.lc.data);
                    }
                } else {
                    Cursor c = (Cursor) s;
                    next = c.current();
                    nextPosition = c.position();
                    c.advance();
                    if (c.valid()) {
                        head = c;
                    } else if (c instanceof ChunkCursor cc) {
                        chunksHeld--;
                        if (pool != null) {
                            pool.put(cc.lc.data); // reused from the next hasNext() on, as documented
                        }
                    }
                }
            }
            return next != null;
        }

        /**
         * @return the next message with its channel and schema
         * @throws NoSuchElementException when there is none
         * @throws McapFormatException when a chunk, index or message is malformed
         */
        public MessageView next() throws IOException {
            if (!hasNext()) {
                throw new NoSuchElementException("no more messages");
            }
            MessageView m = next;
            next = null;
            position = nextPosition;
            return m;
        }

        /**
         * @return where the message last returned by {@link #next()} lies in the file
         * @throws IllegalStateException before the first {@link #next()}
         */
        public Position position() {
            if (position == null) {
                throw new IllegalStateException("no message returned yet");
            }
            return position;
        }

        /** @return how many chunks this iterator has read and decompressed so far */
        public int chunksRead() {
            return chunksRead;
        }

        /** @return the most decompressed chunks this iterator has held at once (its memory bound) */
        public int maxChunksHeld() {
            return maxChunksHeld;
        }

        /** Reads the remaining messages into a list (for small files and tests). */
        public List<MessageView> toList() throws IOException {
            List<MessageView> out = new ArrayList<>();
            while (hasNext()) {
                out.add(next());
            }
            return out;
        }

        private boolean wanted(int channel) {
            return selected == null || selected.get(channel);
        }

        private ChunkCursor openChunk(Record.ChunkIndex ci) throws IOException {
            LoadedChunk lc = loadChunk(ci, pool);
            long[] entries;
            int n;
            boolean useIndex = selected != null && !ci.messageIndexOffsets().isEmpty();
            if (useIndex) {
                int[] count = new int[1];
                entries = readMessageIndexes(ci, selected, opts, count);
                n = count[0];
            } else {
                entries = new long[64];
                n = 0;
                int pos = 0;
                while (pos < lc.size) {
                    long len = recordLength(lc, pos);
                    int at = lc.base + pos;
                    if ((lc.data[at] & 0xFF) == Record.OP_MESSAGE) {
                        if (len < 22) {
                            throw new McapFormatException(name, lc.offset, "Message record at offset " + pos
                                    + " inside the chunk is " + len + " bytes, shorter than its 22 bytes of fixed fields");
                        }
                        int channel = (lc.data[at + 9] & 0xFF) | (lc.data[at + 10] & 0xFF) << 8;
                        long t = (long) LE_LONG.get(lc.data, at + 15);
                        if (wanted(channel) && opts.inRange(t)) {
                            if (2 * n + 2 > entries.length) {
                                entries = Arrays.copyOf(entries, entries.length * 2);
                            }
                            entries[2 * n] = t;
                            entries[2 * n + 1] = pos;
                            n++;
                        }
                    }
                    pos += 9 + (int) len;
                }
            }
            sortEntries(entries, n, opts.order() == Order.LOG_TIME, useIndex);
            return new ChunkCursor(lc, entries, n);
        }

        /** @return channel {@code id} and its schema, cached per iterator */
        private ChannelInfo view(int id, long offset) throws McapFormatException {
            if (id < views.length && views[id] != null) {
                return views[id];
            }
            Record.Channel c = channel(id, offset);
            ChannelInfo v = new ChannelInfo(c, schema(c, offset));
            if (id >= views.length) {
                views = Arrays.copyOf(views, Math.max(id + 1, Math.min(65536, 2 * views.length)));
            }
            views[id] = v;
            return v;
        }

        private Record.Channel channel(int id, long offset) throws McapFormatException {
            Record.Channel c = channels.get(id);
            if (c == null) {
                throw new McapFormatException(name, offset, "message on channel id " + id
                        + ", which has no Channel record in the summary or data section");
            }
            return c;
        }

        private Record.Schema schema(Record.Channel c, long offset) throws McapFormatException {
            if (c.schemaId() == 0) {
                return null;
            }
            Record.Schema s = schemas.get(c.schemaId());
            if (s == null) {
                throw new McapFormatException(name, offset, "channel " + c.id() + " (" + c.topic() + ") refers to schema id "
                        + c.schemaId() + ", which has no Schema record");
            }
            return s;
        }

        private record ChannelInfo(Record.Channel channel, Record.Schema schema) {}

        /** Heap entry: a chunk not yet read, or a cursor over read messages. */
        private interface Source {
            long time();

            long major();

            long minor();
        }

        private record PendingChunk(Record.ChunkIndex ci) implements Source {
            public long time() { return ci.messageStartTime(); }

            public long major() { return ci.chunkStartOffset(); }

            public long minor() { return -1; }
        }

        private abstract class Cursor implements Source {
            abstract boolean valid();

            abstract MessageView current() throws IOException;

            abstract void advance();

            /** @return where the current message lies */
            abstract Position position();
        }

        private final class ChunkCursor extends Cursor {
            private final LoadedChunk lc;
            private final long[] entries;
            private final int n;
            private int i;

            ChunkCursor(LoadedChunk lc, long[] entries, int n) {
                this.lc = lc;
                this.entries = entries;
                this.n = n;
            }

            boolean valid() { return i < n; }

            public long time() { return entries[2 * i]; }

            public long major() { return lc.offset; }

            public long minor() { return entries[2 * i + 1]; }

            void advance() { i++; }

            Position position() { return new Position(lc.offset, lc.compression, entries[2 * i + 1]); }

            MessageView current() throws IOException {
                long off = entries[2 * i + 1];
                if (off < 0 || off > lc.size - 9) {
                    throw new McapFormatException(name, lc.offset, "message index offset " + off
                            + " lies outside the chunk's " + lc.size + " decompressed bytes");
                }
                int pos = (int) off;
                long len = recordLength(lc, pos);
                int at = lc.base + pos;
                if ((lc.data[at] & 0xFF) != Record.OP_MESSAGE) {
                    throw new McapFormatException(name, lc.offset, String.format("expected a Message record (opcode 0x05)"
                            + " at offset %d inside the chunk, found opcode 0x%02X", pos, lc.data[at] & 0xFF));
                }
                if (len < 22) {
                    throw new McapFormatException(name, lc.offset, "Message record at offset " + pos
                            + " inside the chunk is " + len + " bytes, shorter than its 22 bytes of fixed fields");
                }
                byte[] d = lc.data;
                int channelId = (d[at + 9] & 0xFF) | (d[at + 10] & 0xFF) << 8;
                if (!wanted(channelId)) {
                    throw new McapFormatException(name, lc.offset, "message index entry at chunk offset " + pos
                            + " points at a message on channel " + channelId + ", not an indexed channel");
                }
                ChannelInfo cv = view(channelId, lc.offset);
                long sequence = (int) LE_INT.get(d, at + 11) & 0xFFFF_FFFFL;
                long logTime = (long) LE_LONG.get(d, at + 15);
                long publishTime = (long) LE_LONG.get(d, at + 23);
                ByteBuffer data = lc.readOnly().slice(at + 31, (int) len - 22);
                return new MessageView(cv.schema(), cv.channel(),
                        new Record.Message(channelId, sequence, logTime, publishTime, data));
            }
        }

        /** Messages outside chunks, found by the data-section scan. */
        private final class LooseCursor extends Cursor {
            private final int[] order;
            private int i;

            LooseCursor() {
                int k = 0;
                Integer[] idx = new Integer[looseCount];
                for (int j = 0; j < looseCount; j++) {
                    if (wanted(looseChannels[j]) && opts.inRange(looseTimes[j])) {
                        idx[k++] = j;
                    }
                }
                Integer[] sel = Arrays.copyOf(idx, k);
                if (opts.order() == Order.LOG_TIME) {
                    Arrays.sort(sel, (a, b) -> { // stable: equal times keep file order
                        return Long.compareUnsigned(looseTimes[a], looseTimes[b]);
                    });
                }
                order = new int[k];
                for (int j = 0; j < k; j++) {
                    order[j] = sel[j];
                }
            }

            boolean valid() { return i < order.length; }

            public long time() { return looseTimes[order[i]]; }

            public long major() { return looseOffsets[order[i]]; }

            public long minor() { return 0; }

            void advance() { i++; }

            Position position() { return new Position(-1, "", looseOffsets[order[i]]); }

            MessageView current() throws IOException {
                long off = looseOffsets[order[i]];
                byte[] h = read(off, 9);
                long len = (long) LE_LONG.get(h, 1);
                if (len < 22 || len > MAX_BYTES || len > dataEnd - off - 9) {
                    throw new McapFormatException(name, off, "Message record length " + Long.toUnsignedString(len)
                            + " is invalid here");
                }
                Record.Message m = (Record.Message) RecordParser.parse(Record.OP_MESSAGE,
                        ByteBuffer.wrap(read(off + 9, (int) len)), name, off);
                Record.Channel c = channel(m.channelId(), off);
                return new MessageView(schema(c, off), c, m);
            }
        }
    }

    /**
     * Sorts (time, offset) pairs: by offset for file order, by (unsigned time, offset) for log-time
     * order. Scanned entries are already in offset order; index entries may not be.
     */
    private static void sortEntries(long[] e, int n, boolean byTime, boolean fromIndex) {
        boolean sorted = true;
        for (int i = 1; i < n && sorted; i++) {
            sorted = compareEntries(e, i - 1, i, byTime) <= 0;
        }
        if (sorted) {
            return;
        }
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (a, b) -> compareEntries(e, a, b, byTime));
        long[] copy = Arrays.copyOf(e, 2 * n);
        for (int i = 0; i < n; i++) {
            e[2 * i] = copy[2 * idx[i]];
            e[2 * i + 1] = copy[2 * idx[i] + 1];
        }
    }

    private static int compareEntries(long[] e, int a, int b, boolean byTime) {
        if (byTime) {
            int c = Long.compareUnsigned(e[2 * a], e[2 * b]);
            if (c != 0) {
                return c;
            }
        }
        return Long.compare(e[2 * a + 1], e[2 * b + 1]);
    }

    // ---------------------------------------------------------------- file access

    private byte[] readRecordAt(long offset, long length, int opcode, String indexKind) throws IOException {
        if (offset < MAGIC_LEN || length < 9 || Long.compareUnsigned(offset, dataEnd) >= 0
                || Long.compareUnsigned(length, dataEnd - offset) > 0 || length > MAX_BYTES) {
            throw new McapFormatException(name, offset, indexKind + " points at " + Long.toUnsignedString(length)
                    + " bytes at offset " + Long.toUnsignedString(offset) + ", outside the data section (8 .. " + dataEnd + ")");
        }
        byte[] rec = read(offset, (int) length);
        long len = (long) LE_LONG.get(rec, 1);
        if ((rec[0] & 0xFF) != opcode || len != length - 9) {
            throw new McapFormatException(name, offset, String.format("%s points at offset %d, where a %s record "
                    + "(opcode 0x%02X) of length %d was expected, found opcode 0x%02X length %s", indexKind, offset,
                    RecordParser.name(opcode), opcode, length - 9, rec[0] & 0xFF, Long.toUnsignedString(len)));
        }
        return rec;
    }

    /** Reads exactly {@code len} bytes at {@code pos}. */
    private byte[] read(long pos, int len) throws IOException {
        if (pos < 0 || len < 0 || pos > size - len) {
            throw new McapFormatException(name, pos, "expected " + len + " bytes at offset " + pos
                    + ", but the file has " + size + " bytes");
        }
        byte[] out = new byte[len];
        ByteBuffer b = ByteBuffer.wrap(out);
        while (b.hasRemaining()) {
            int r = ch.read(b, pos + b.position());
            if (r < 0) {
                throw new McapFormatException(name, pos + b.position(), "file ended while reading " + len + " bytes at " + pos);
            }
        }
        return out;
    }

    /** A read-ahead window for scanning many small record headers. */
    private final class Window {
        private static final int SIZE = 1 << 20;
        private byte[] buf = new byte[0];
        private long start = -1;

        /** @return a little-endian view of {@code n} bytes at {@code pos}, or null when they would pass {@code limit} */
        ByteBuffer at(long pos, int n, long limit) throws IOException {
            if (n < 0 || pos + n > limit || pos + n > size) {
                return null;
            }
            if (start < 0 || pos < start || pos + n > start + buf.length) {
                int len = (int) Math.min(Math.max(SIZE, n), size - pos);
                buf = read(pos, len);
                start = pos;
            }
            return ByteBuffer.wrap(buf, (int) (pos - start), n).slice().order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    private static int utf8Len(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
