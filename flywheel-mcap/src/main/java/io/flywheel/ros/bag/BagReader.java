package io.flywheel.ros.bag;

import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;

import net.jpountz.lz4.LZ4FrameInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;

/**
 * Reads ROS 1 bag files, format version 2.0 (http://wiki.ros.org/Bags/Format/2.0).
 *
 * <p>A bag is the line {@code #ROSBAG V2.0\n} followed by records, each
 * {@code <uint32 header_len><header><uint32 data_len><data>} (little-endian). The bag header record
 * (op 0x03) gives the position of the index section, which holds one connection record (op 0x07)
 * per connection and one chunk info record (op 0x06) per chunk. Messages (op 0x02) and connection
 * records live inside chunk records (op 0x05), compressed with {@code none}, {@code bz2} or
 * {@code lz4} (the LZ4 frame format as roslz4 writes it: independent blocks, content checksum,
 * which is all roslz4 itself accepts; read with lz4-java's frame stream); after each chunk come its index data
 * records (op 0x04), one per connection, listing (time, offset in the uncompressed chunk) per
 * message.
 *
 * <p>Two read paths, chosen with {@link ReadOptions#order()}:
 * <ul>
 *   <li>{@link Order#LOG_TIME}: uses the index section and each chunk's index data records to give
 *       the messages in log-time order across chunks (ties: chunk start time, then position in the
 *       chunk); needs an index ({@link #hasIndex()}), reads only the chunks that hold wanted
 *       connections in the wanted time range;</li>
 *   <li>{@link Order#FILE}: walks the records front to back without the index, for bags whose
 *       index is missing (a recording that was cut off). On a truncated bag it delivers every
 *       message whose record is complete before the break (also inside a partly written chunk,
 *       as far as its compression lets the prefix be decoded), then throws
 *       {@link BagFormatException} naming the offset of the broken record (or, when the file ends
 *       cleanly between records but before the index section the bag header points at, the end
 *       of the file). A bag whose header says {@code index_pos=0} (never closed) reads to its end
 *       without an error.</li>
 * </ul>
 *
 * <p>Every length read from the file is checked against what is left before it is used; bad input
 * gives {@link BagFormatException} (the file, the byte offset, what was expected), never an
 * unchecked exception. Not thread-safe; one reader per thread.
 */
public final class BagReader implements Closeable {
    /** The magic line that starts a version 2.0 bag. */
    public static final String MAGIC = "#ROSBAG V2.0\n";
    private static final int MAGIC_LEN = MAGIC.length();
    /** Largest chunk (compressed or uncompressed) that fits a Java array. */
    private static final long MAX_CHUNK = Integer.MAX_VALUE - 16;

    /** Message order of a read. */
    public enum Order {
        /** Log-time order through the bag's index. */
        LOG_TIME,
        /** File order, front to back, without the index. */
        FILE
    }

    /** Receives the messages of a read, one at a time. */
    @FunctionalInterface
    public interface MessageVisitor {
        /**
         * @param message the next message; its data buffer stays valid after the call
         * @throws IOException to stop the read; passed through unchanged
         */
        void accept(BagMessage message) throws IOException;
    }

    /**
     * What to read: order, topics and a log-time range. Build with {@link #builder()}; the default
     * reads every message in {@link Order#LOG_TIME} order.
     *
     * @param order message order
     * @param topics topics to read; empty means all
     * @param startTime first log time to include, int64 ns since the Unix epoch (inclusive)
     * @param endTime last log time to include, int64 ns since the Unix epoch (inclusive)
     */
    public record ReadOptions(Order order, Set<String> topics, long startTime, long endTime) {
        public ReadOptions {
            if (order == null) {
                throw new IllegalArgumentException("order must not be null");
            }
            topics = Set.copyOf(topics);
            if (startTime > endTime) {
                throw new IllegalArgumentException("startTime " + startTime + " is after endTime " + endTime);
            }
        }

        /** @return a builder with the defaults: LOG_TIME order, all topics, all times */
        public static Builder builder() {
            return new Builder();
        }

        boolean wants(String topic, long time) {
            return (topics.isEmpty() || topics.contains(topic)) && time >= startTime && time <= endTime;
        }

        /** Builder for {@link ReadOptions}. */
        public static final class Builder {
            private Order order = Order.LOG_TIME;
            private Set<String> topics = Set.of();
            private long startTime = Long.MIN_VALUE;
            private long endTime = Long.MAX_VALUE;

            public Builder order(Order order) {
                this.order = order;
                return this;
            }

            /** @param topics topics to read; empty means all */
            public Builder topics(Set<String> topics) {
                this.topics = topics;
                return this;
            }

            /** @param startTime inclusive, int64 ns since the Unix epoch */
            public Builder startTime(long startTime) {
                this.startTime = startTime;
                return this;
            }

            /** @param endTime inclusive, int64 ns since the Unix epoch */
            public Builder endTime(long endTime) {
                this.endTime = endTime;
                return this;
            }

            public ReadOptions build() {
                return new ReadOptions(order, topics, startTime, endTime);
            }
        }
    }

    /** Random-access bytes: a file channel, a buffer, or an object of a remote store read by byte range. */
    public interface Source extends Closeable {
        /** @return the bag's size in bytes */
        long size() throws IOException;

        /** Fills {@code dst} from {@code pos}; the caller has checked that the bytes exist. */
        void read(long pos, ByteBuffer dst) throws IOException;
    }

    /**
     * Opens a bag through positioned reads (one small read per record header, so a remote source should buffer).
     *
     * @param source the bag's bytes; closed with the reader
     * @param name the file, for error messages
     * @return an open reader
     * @throws BagFormatException when the magic line or the bag header record is missing or broken
     */
    public static BagReader open(Source source, String name) throws IOException {
        try {
            return new BagReader(source, name);
        } catch (IOException | RuntimeException e) {
            source.close();
            throw e;
        }
    }

    private final Source source;
    private final String file;
    private final long size;
    private final long indexPosition;
    private final long declaredConnectionCount;
    private final long declaredChunkCount;
    private final Map<Integer, Connection> indexConnections;
    private final List<ChunkInfo> chunkInfos;
    private final String indexProblem;

    private BagReader(Source source, String file) throws IOException {
        this.source = source;
        this.file = file;
        this.size = source.size();
        if (size < MAGIC_LEN) {
            throw new BagFormatException(file, 0, "file of " + size + " bytes is too short for the magic line '"
                    + MAGIC.trim() + "'");
        }
        byte[] magic = readBytes(0, MAGIC_LEN);
        if (!Arrays.equals(magic, MAGIC.getBytes(StandardCharsets.US_ASCII))) {
            throw new BagFormatException(file, 0, "expected the magic line '" + MAGIC.trim()
                    + "\\n' (ROS bag format 2.0), found '" + printable(magic) + "'");
        }
        Rec hdr = readRecord(MAGIC_LEN);
        if (hdr.op != RecordHeader.OP_BAG_HEADER) {
            throw new BagFormatException(file, MAGIC_LEN, String.format(
                    "expected the bag header record (op 0x03) after the magic line, found op 0x%02X", hdr.op));
        }
        hdr.requireComplete();
        this.indexPosition = hdr.header.u64("index_pos");
        this.declaredConnectionCount = hdr.header.u32("conn_count");
        this.declaredChunkCount = hdr.header.u32("chunk_count");

        Map<Integer, Connection> conns = new TreeMap<>();
        List<ChunkInfo> infos = new ArrayList<>();
        String problem = null;
        if (indexPosition == 0) {
            problem = "the bag header's index_pos is 0 (the recording was not closed)";
        } else if (indexPosition < MAGIC_LEN || indexPosition >= size) {
            problem = "the bag header's index_pos " + indexPosition + " is outside the file of " + size
                    + " bytes (truncated file?)";
        } else {
            try {
                readIndexSection(conns, infos);
            } catch (BagFormatException e) {
                problem = e.getMessage();
            }
        }
        this.indexProblem = problem;
        this.indexConnections = problem == null ? Collections.unmodifiableMap(conns) : Map.of();
        this.chunkInfos = problem == null ? List.copyOf(infos) : List.of();
    }

    /**
     * Opens a bag file and reads its bag header and index section.
     *
     * @param path the {@code .bag} file
     * @return an open reader; close it
     * @throws BagFormatException when the magic line or the bag header record is missing or broken
     * @throws IOException when the file cannot be read
     */
    public static BagReader open(Path path) throws IOException {
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
        try {
            return new BagReader(new Source() {
                @Override
                public long size() throws IOException {
                    return ch.size();
                }

                @Override
                public void read(long pos, ByteBuffer dst) throws IOException {
                    long p = pos;
                    while (dst.hasRemaining()) {
                        int n = ch.read(dst, p);
                        if (n < 0) {
                            throw new BagFormatException(path.toString(), p, "file ended while reading");
                        }
                        p += n;
                    }
                }

                @Override
                public void close() throws IOException {
                    ch.close();
                }
            }, path.toString());
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Opens a bag held in memory.
     *
     * @param bytes the whole bag, from position to limit (not modified)
     * @param name a name for error messages, may be null
     * @return an open reader
     * @throws BagFormatException when the magic line or the bag header record is missing or broken
     */
    public static BagReader open(ByteBuffer bytes, String name) throws IOException {
        ByteBuffer b = bytes.slice();
        return new BagReader(new Source() {
            @Override
            public long size() {
                return b.remaining();
            }

            @Override
            public void read(long pos, ByteBuffer dst) {
                ByteBuffer src = b.duplicate();
                src.position((int) pos).limit((int) pos + dst.remaining());
                dst.put(src);
            }

            @Override
            public void close() {}
        }, name);
    }

    /** @return the file name used in error messages */
    public String file() {
        return file;
    }

    /** @return the bag header's {@code index_pos}: absolute offset of the index section, 0 if none */
    public long indexPosition() {
        return indexPosition;
    }

    /** @return the bag header's {@code conn_count} */
    public long declaredConnectionCount() {
        return declaredConnectionCount;
    }

    /** @return the bag header's {@code chunk_count} */
    public long declaredChunkCount() {
        return declaredChunkCount;
    }

    /** @return true when the index section was read whole, so {@link Order#LOG_TIME} reads work */
    public boolean hasIndex() {
        return indexProblem == null;
    }

    /** @return why the index could not be used, or null when {@link #hasIndex()} */
    public String indexProblem() {
        return indexProblem;
    }

    /** @return the index section's connections, by id; empty without an index */
    public Map<Integer, Connection> connections() {
        return indexConnections;
    }

    /** @return the index section's chunk infos, in file order; empty without an index */
    public List<ChunkInfo> chunkInfos() {
        return chunkInfos;
    }

    /**
     * @return topic -> number of messages, summed over the chunk infos (no chunk is read); in topic
     *     order; empty without an index
     */
    public Map<String, Long> messageCountsByTopic() {
        Map<String, Long> counts = new TreeMap<>();
        for (ChunkInfo ci : chunkInfos) {
            for (Map.Entry<Integer, Long> e : ci.messageCounts().entrySet()) {
                Connection c = indexConnections.get(e.getKey());
                counts.merge(c.topic(), e.getValue(), Long::sum);
            }
        }
        return counts;
    }

    /**
     * Reads messages in the order and with the filters of {@code options}.
     *
     * @param options order, topics, time range
     * @param visitor receives each message
     * @throws BagFormatException when a record is broken or the file ends inside one (after the
     *     messages before it were delivered), or when {@link Order#LOG_TIME} is asked of a bag
     *     without an index
     * @throws IOException when the file cannot be read, or as thrown by the visitor
     */
    public void read(ReadOptions options, MessageVisitor visitor) throws IOException {
        if (options.order() == Order.FILE) {
            readFileOrder(options, visitor);
        } else {
            readLogTimeOrder(options, visitor);
        }
    }

    /**
     * Reads every message into a list.
     *
     * @param order message order
     * @return all messages
     * @see #read(ReadOptions, MessageVisitor)
     */
    public List<BagMessage> readAll(Order order) throws IOException {
        List<BagMessage> out = new ArrayList<>();
        read(ReadOptions.builder().order(order).build(), out::add);
        return out;
    }

    @Override
    public void close() throws IOException {
        source.close();
    }

    // ---------------------------------------------------------------- index section

    private void readIndexSection(Map<Integer, Connection> conns, List<ChunkInfo> infos) throws IOException {
        long pos = indexPosition;
        while (pos < size) {
            Rec r = readRecord(pos);
            r.requireComplete();
            switch (r.op) {
                case RecordHeader.OP_CONNECTION -> {
                    Connection c = connection(r.header, readBytes(r.dataPos, (int) r.dataLen), r.pos);
                    conns.put(c.id(), c);
                }
                case RecordHeader.OP_CHUNK_INFO -> infos.add(chunkInfo(r));
                default -> { } // unknown or unexpected records are skipped
            }
            pos = r.end;
        }
        if (conns.size() != declaredConnectionCount) {
            throw new BagFormatException(file, indexPosition, "the bag header declares " + declaredConnectionCount
                    + " connections, the index section holds " + conns.size());
        }
        if (infos.size() != declaredChunkCount) {
            throw new BagFormatException(file, indexPosition, "the bag header declares " + declaredChunkCount
                    + " chunks, the index section holds " + infos.size() + " chunk infos");
        }
        for (ChunkInfo ci : infos) {
            for (Integer id : ci.messageCounts().keySet()) {
                if (!conns.containsKey(id)) {
                    throw new BagFormatException(file, indexPosition, "chunk info for the chunk at "
                            + ci.chunkPosition() + " counts messages of connection " + id
                            + ", which the index section does not define");
                }
            }
        }
    }

    private ChunkInfo chunkInfo(Rec r) throws IOException {
        long ver = r.header.u32("ver");
        if (ver != 1) {
            throw new BagFormatException(file, r.pos, "chunk info version " + ver + " (only 1 is defined)");
        }
        long chunkPos = r.header.u64("chunk_pos");
        long count = r.header.u32("count");
        if (count * 8 != r.dataLen) {
            throw new BagFormatException(file, r.pos, "chunk info with count=" + count + " needs " + count * 8
                    + " data bytes, has " + r.dataLen);
        }
        ByteBuffer d = ByteBuffer.wrap(readBytes(r.dataPos, (int) r.dataLen)).order(ByteOrder.LITTLE_ENDIAN);
        Map<Integer, Long> counts = new LinkedHashMap<>();
        for (long i = 0; i < count; i++) {
            counts.put(connId(Integer.toUnsignedLong(d.getInt()), r.pos), Integer.toUnsignedLong(d.getInt()));
        }
        return new ChunkInfo(chunkPos, r.header.time("start_time"), r.header.time("end_time"), counts);
    }

    private Connection connection(RecordHeader h, byte[] data, long pos) throws BagFormatException {
        int id = connId(h.u32("conn"), pos);
        RecordHeader d = RecordHeader.parse(ByteBuffer.wrap(data), file, pos);
        String topic = d.strOr("topic", h.strOr("topic", ""));
        return new Connection(id, topic, d.str("type"), d.str("md5sum"), d.str("message_definition"),
                d.strOr("callerid", ""), "1".equals(d.strOr("latching", "0")));
    }

    private int connId(long id, long pos) throws BagFormatException {
        if (id > Integer.MAX_VALUE) {
            throw new BagFormatException(file, pos, "connection id " + id + " is larger than 2^31-1");
        }
        return (int) id;
    }

    // ---------------------------------------------------------------- file order

    private void readFileOrder(ReadOptions options, MessageVisitor visitor) throws IOException {
        Map<Integer, Connection> conns = new HashMap<>();
        long pos = MAGIC_LEN;
        while (pos < size) {
            Rec r = readRecord(pos);
            switch (r.op) {
                case RecordHeader.OP_CHUNK -> {
                    Chunk chunk = loadChunk(r, true);
                    walkChunk(chunk, conns, options, visitor);
                    if (chunk.truncated) {
                        throw new BagFormatException(file, r.pos, "the file is truncated: this chunk record needs "
                                + r.dataLen + " data bytes, the file ends " + (size - r.dataPos) + " bytes into them (at"
                                + " byte " + size + "); the messages of the " + chunk.length + " uncompressed bytes that"
                                + " could be decoded were read before this error");
                    }
                }
                case RecordHeader.OP_CONNECTION -> {
                    r.requireComplete();
                    Connection c = connection(r.header, readBytes(r.dataPos, (int) r.dataLen), r.pos);
                    conns.putIfAbsent(c.id(), c);
                }
                case RecordHeader.OP_MESSAGE_DATA -> {
                    r.requireComplete();
                    deliver(r.header, ByteBuffer.wrap(readBytes(r.dataPos, (int) r.dataLen)), conns, options,
                            visitor, r.pos, null, r.dataPos);
                }
                default -> r.requireComplete(); // bag header, index data, chunk info, unknown: skipped
            }
            pos = r.end;
        }
        if (indexPosition >= size) {
            throw new BagFormatException(file, size, "the file ends at " + size + " before the index section that"
                    + " the bag header places at " + indexPosition + " (truncated); all messages before it were read");
        }
    }

    /** Walks the records inside a chunk's uncompressed bytes, in order. */
    private void walkChunk(Chunk chunk, Map<Integer, Connection> conns, ReadOptions options,
                           MessageVisitor visitor) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(chunk.bytes, 0, chunk.length).order(ByteOrder.LITTLE_ENDIAN);
        int p = 0;
        while (p < chunk.length) {
            InnerRec r = innerRecord(chunk, p);
            if (r == null) {
                return; // truncated chunk: the caller reports it
            }
            if (r.op == RecordHeader.OP_CONNECTION) {
                byte[] data = new byte[r.dataLen];
                b.get(r.dataPos, data);
                Connection c = connection(r.header, data, chunk.pos);
                conns.putIfAbsent(c.id(), c);
            } else if (r.op == RecordHeader.OP_MESSAGE_DATA) {
                deliver(r.header, b.slice(r.dataPos, r.dataLen), conns, options, visitor, chunk.pos, chunk, r.dataPos);
            }
            p = r.end;
        }
    }

    /**
     * @param chunk the chunk holding the record, or null for a record outside any chunk
     * @param dataAt offset of the data's first byte: in the chunk's uncompressed bytes, or absolute when no chunk
     */
    private void deliver(RecordHeader h, ByteBuffer data, Map<Integer, Connection> conns, ReadOptions options,
                         MessageVisitor visitor, long pos, Chunk chunk, long dataAt) throws IOException {
        int id = connId(h.u32("conn"), pos);
        Connection c = conns.get(id);
        if (c == null) {
            throw new BagFormatException(file, pos, "message data record of connection " + id
                    + " comes before that connection's record");
        }
        long time = h.time("time");
        if (options.wants(c.topic(), time)) {
            visitor.accept(message(c, time, data.asReadOnlyBuffer(), chunk, dataAt));
        }
    }

    private static BagMessage message(Connection c, long time, ByteBuffer data, Chunk chunk, long dataAt) {
        if (chunk == null) {
            return new BagMessage(c, time, data, -1, "", -1, dataAt);
        }
        return new BagMessage(c, time, data, chunk.pos, chunk.compression, dataAt,
                "none".equals(chunk.compression) ? chunk.dataPos + dataAt : -1);
    }

    // ---------------------------------------------------------------- log-time order

    private record Entry(long time, int chunkSeq, int offset, int connId, LoadedChunk chunk) {}

    private static final class LoadedChunk {
        Chunk chunk;
        int pending;
    }

    private void readLogTimeOrder(ReadOptions options, MessageVisitor visitor) throws IOException {
        if (!hasIndex()) {
            throw new BagFormatException(file, indexPosition, "reading in log-time order needs the index, "
                    + "which is unusable: " + indexProblem + "; read with Order.FILE instead");
        }
        List<ChunkInfo> wanted = new ArrayList<>();
        for (ChunkInfo ci : chunkInfos) {
            if (ci.endTime() < options.startTime() || ci.startTime() > options.endTime()) {
                continue;
            }
            boolean any = false;
            for (Integer id : ci.messageCounts().keySet()) {
                any |= options.topics().isEmpty() || options.topics().contains(indexConnections.get(id).topic());
            }
            if (any) {
                wanted.add(ci);
            }
        }
        wanted.sort(Comparator.comparingLong(ChunkInfo::startTime).thenComparingLong(ChunkInfo::chunkPosition));
        PriorityQueue<Entry> heap = new PriorityQueue<>(Comparator.comparingLong(Entry::time)
                .thenComparingInt(Entry::chunkSeq).thenComparingInt(Entry::offset));
        int next = 0;
        while (true) {
            while (next < wanted.size() && (heap.isEmpty() || wanted.get(next).startTime() <= heap.peek().time())) {
                loadIndexed(wanted.get(next), next, options, heap);
                next++;
            }
            Entry e = heap.poll();
            if (e == null) {
                return;
            }
            Chunk chunk = e.chunk().chunk;
            InnerRec r = innerRecord(chunk, e.offset());
            if (r == null || r.op != RecordHeader.OP_MESSAGE_DATA) {
                throw new BagFormatException(file, chunk.pos, "index data points at uncompressed chunk offset "
                        + e.offset() + ", which does not hold a message data record");
            }
            int id = connId(r.header.u32("conn"), chunk.pos);
            if (id != e.connId()) {
                throw new BagFormatException(file, chunk.pos, "index data of connection " + e.connId()
                        + " points at uncompressed chunk offset " + e.offset() + ", a message of connection " + id);
            }
            ByteBuffer data = ByteBuffer.wrap(chunk.bytes, r.dataPos, r.dataLen).slice().asReadOnlyBuffer();
            if (--e.chunk().pending == 0) {
                e.chunk().chunk = null; // let the chunk's bytes go once its last message is out
            }
            visitor.accept(message(indexConnections.get(id), r.header.time("time"), data, chunk, r.dataPos));
        }
    }

    /** Loads one chunk and pushes the wanted entries of the index data records that follow it. */
    private void loadIndexed(ChunkInfo ci, int seq, ReadOptions options, PriorityQueue<Entry> heap)
            throws IOException {
        if (ci.chunkPosition() < MAGIC_LEN || ci.chunkPosition() >= size) {
            throw new BagFormatException(file, ci.chunkPosition(), "chunk info points outside the file of "
                    + size + " bytes");
        }
        Rec r = readRecord(ci.chunkPosition());
        if (r.op != RecordHeader.OP_CHUNK) {
            throw new BagFormatException(file, r.pos, String.format(
                    "chunk info points here, expected a chunk record (op 0x05), found op 0x%02X", r.op));
        }
        LoadedChunk lc = new LoadedChunk();
        lc.chunk = loadChunk(r, false);
        List<Entry> entries = new ArrayList<>();
        Map<Integer, Long> seen = new HashMap<>();
        long pos = r.end;
        while (pos < size) {
            Rec ix = readRecord(pos);
            if (ix.op != RecordHeader.OP_INDEX_DATA) {
                break;
            }
            ix.requireComplete();
            long ver = ix.header.u32("ver");
            if (ver != 1) {
                throw new BagFormatException(file, ix.pos, "index data version " + ver + " (only 1 is defined)");
            }
            int id = connId(ix.header.u32("conn"), ix.pos);
            long count = ix.header.u32("count");
            if (count * 12 != ix.dataLen) {
                throw new BagFormatException(file, ix.pos, "index data with count=" + count + " needs "
                        + count * 12 + " data bytes, has " + ix.dataLen);
            }
            seen.merge(id, count, Long::sum);
            Connection c = indexConnections.get(id);
            if (c == null) {
                throw new BagFormatException(file, ix.pos, "index data for connection " + id
                        + ", which the index section does not define");
            }
            ByteBuffer d = ByteBuffer.wrap(readBytes(ix.dataPos, (int) ix.dataLen)).order(ByteOrder.LITTLE_ENDIAN);
            for (long i = 0; i < count; i++) {
                long time = Integer.toUnsignedLong(d.getInt()) * 1_000_000_000L + Integer.toUnsignedLong(d.getInt());
                long offset = Integer.toUnsignedLong(d.getInt());
                if (offset >= lc.chunk.length) {
                    throw new BagFormatException(file, ix.pos, "index entry " + i + " points at offset " + offset
                            + ", past the chunk's " + lc.chunk.length + " uncompressed bytes");
                }
                if (options.wants(c.topic(), time)) {
                    entries.add(new Entry(time, seq, (int) offset, id, lc));
                }
            }
            pos = ix.end;
        }
        if (!seen.equals(new HashMap<>(ci.messageCounts()))) {
            throw new BagFormatException(file, r.pos, "the index data records after this chunk count "
                    + new TreeMap<>(seen) + " messages per connection, its chunk info says "
                    + new TreeMap<>(ci.messageCounts()));
        }
        lc.pending = entries.size();
        heap.addAll(entries);
    }

    // ---------------------------------------------------------------- records

    /** A record at an absolute file position; data not yet read. */
    private final class Rec {
        final long pos;
        final RecordHeader header;
        final int op;
        final long dataPos;
        final long dataLen;
        final long end;

        Rec(long pos, RecordHeader header, long dataPos, long dataLen) throws BagFormatException {
            this.pos = pos;
            this.header = header;
            this.op = header.op();
            this.dataPos = dataPos;
            this.dataLen = dataLen;
            this.end = dataPos + dataLen;
        }

        /** Fails when the record's data runs past the end of the file. */
        void requireComplete() throws BagFormatException {
            if (end > size) {
                throw new BagFormatException(file, pos, String.format("record (op 0x%02X) needs %d data bytes "
                        + "from offset %d, the file ends at %d (truncated)", op, dataLen, dataPos, size));
            }
            if (dataLen > MAX_CHUNK) {
                throw new BagFormatException(file, pos, "record data of " + dataLen + " bytes is too large");
            }
        }
    }

    /** Reads a record's lengths and header at {@code pos}; the data may run past the end of the file. */
    private Rec readRecord(long pos) throws IOException {
        if (size - pos < 4) {
            throw new BagFormatException(file, pos, "record needs a 4-byte header length, the file ends at "
                    + size + " (truncated)");
        }
        long headerLen = Integer.toUnsignedLong(ByteBuffer.wrap(readBytes(pos, 4)).order(ByteOrder.LITTLE_ENDIAN)
                .getInt());
        if (headerLen > size - pos - 8) {
            throw new BagFormatException(file, pos, "record header of " + headerLen + " bytes and its data length"
                    + " run past the end of the file at " + size + " (truncated)");
        }
        RecordHeader header = RecordHeader.parse(ByteBuffer.wrap(readBytes(pos + 4, (int) headerLen)), file, pos);
        long dataLenPos = pos + 4 + headerLen;
        long dataLen = Integer.toUnsignedLong(ByteBuffer.wrap(readBytes(dataLenPos, 4))
                .order(ByteOrder.LITTLE_ENDIAN).getInt());
        return new Rec(pos, header, dataLenPos + 4, dataLen);
    }

    /** A record inside a chunk's uncompressed bytes. */
    private record InnerRec(RecordHeader header, int op, int dataPos, int dataLen, int end) {}

    /**
     * @return the record at {@code p} inside the chunk, or null when the chunk is truncated and the
     *     record runs past the bytes that could be decoded
     */
    private InnerRec innerRecord(Chunk chunk, int p) throws BagFormatException {
        ByteBuffer b = ByteBuffer.wrap(chunk.bytes, 0, chunk.length).order(ByteOrder.LITTLE_ENDIAN);
        long left = (long) chunk.length - p;
        long headerLen = left < 4 ? -1 : Integer.toUnsignedLong(b.getInt(p));
        long dataLen = headerLen < 0 || headerLen > left - 8 ? -1 : Integer.toUnsignedLong(b.getInt(p + 4 + (int) headerLen));
        if (dataLen < 0 || dataLen > left - 8 - headerLen) {
            if (chunk.truncated) {
                return null;
            }
            throw new BagFormatException(file, chunk.pos, "the record at uncompressed offset " + p
                    + " of this chunk runs past the chunk's " + chunk.length + " uncompressed bytes");
        }
        RecordHeader h = RecordHeader.parse(b.slice(p + 4, (int) headerLen), file, chunk.pos);
        int dataPos = p + 8 + (int) headerLen;
        return new InnerRec(h, h.op(), dataPos, (int) dataLen, dataPos + (int) dataLen);
    }

    /** A chunk's uncompressed bytes. */
    private record Chunk(long pos, byte[] bytes, int length, boolean truncated, String compression, long dataPos) {}

    /**
     * Reads and decompresses a chunk record.
     *
     * @param allowTruncated when the file ends inside the chunk's data: true to decode what is there
     *     (the result says {@code truncated}), false to fail
     */
    private Chunk loadChunk(Rec r, boolean allowTruncated) throws IOException {
        boolean truncated = r.end > size;
        if (truncated && !allowTruncated) {
            r.requireComplete();
        }
        String compression = r.header.str("compression");
        long declared = r.header.u32("size");
        if (declared > MAX_CHUNK || r.dataLen > MAX_CHUNK) {
            throw new BagFormatException(file, r.pos, "chunk of " + Math.max(declared, r.dataLen)
                    + " bytes is larger than this reader supports (" + MAX_CHUNK + ")");
        }
        byte[] raw = readBytes(r.dataPos, (int) Math.min(r.dataLen, size - r.dataPos));
        switch (compression) {
            case "none" -> {
                if (!truncated && raw.length != declared) {
                    throw new BagFormatException(file, r.pos, "uncompressed chunk declares size=" + declared
                            + " but holds " + raw.length + " bytes");
                }
                return new Chunk(r.pos, raw, raw.length, truncated, compression, r.dataPos);
            }
            case "bz2", "lz4" -> {
                if ("lz4".equals(compression) && raw.length >= 5 && (raw[4] & 0x20) == 0) {
                    throw new BagFormatException(file, r.pos, String.format("lz4 chunk frame uses linked blocks "
                            + "(FLG 0x%02X has no block-independence bit); roslz4 always writes independent blocks "
                            + "and this reader supports only those", raw[4] & 0xff));
                }
                byte[] out = new byte[(int) Math.min(declared, Math.max(65536L, raw.length * 4L))];
                int n = 0;
                try (InputStream in = "bz2".equals(compression)
                        ? new BZip2CompressorInputStream(new ByteArrayInputStream(raw))
                        : new LZ4FrameInputStream(new ByteArrayInputStream(raw))) {
                    while (true) {
                        if (n == out.length) {
                            if (n == declared) {
                                if (in.read() >= 0) {
                                    throw new BagFormatException(file, r.pos, compression + " chunk decompresses "
                                            + "to more than its declared size=" + declared + " bytes");
                                }
                                break;
                            }
                            out = Arrays.copyOf(out, (int) Math.min(declared, Math.max(out.length * 2L, 1024)));
                        }
                        int k = in.read(out, n, out.length - n);
                        if (k < 0) {
                            break;
                        }
                        n += k;
                    }
                } catch (BagFormatException e) {
                    throw e;
                } catch (IOException | RuntimeException e) {
                    if (!truncated) {
                        throw new BagFormatException(file, r.pos, compression + " chunk data does not decompress: "
                                + e.getMessage(), e);
                    }
                    // truncated: keep the prefix that decoded
                }
                if (!truncated && n != declared) {
                    throw new BagFormatException(file, r.pos, compression + " chunk decompresses to " + n
                            + " bytes, its header declares size=" + declared);
                }
                return new Chunk(r.pos, out, n, truncated, compression, r.dataPos);
            }
            default -> throw new BagFormatException(file, r.pos, "unknown chunk compression '" + compression
                    + "' (expected none, bz2 or lz4)");
        }
    }

    private byte[] readBytes(long pos, int len) throws IOException {
        if (pos < 0 || len < 0 || pos + len > size) {
            throw new BagFormatException(file, pos, "needs " + len + " bytes, the file ends at " + size);
        }
        ByteBuffer dst = ByteBuffer.allocate(len);
        source.read(pos, dst);
        return dst.array();
    }

    private static String printable(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(x >= 0x20 && x < 0x7f ? (char) x : '?');
        }
        return sb.toString();
    }
}
