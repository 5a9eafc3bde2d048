package io.flywheel.mcap;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

/**
 * Writes an MCAP file (https://mcap.dev/spec): magic, Header, a data section of Schema, Channel
 * and Message records (grouped into compressed Chunks, each followed by its Message Index records,
 * by default), Attachment and Metadata records, Data End with the data-section CRC, the summary
 * section (repeated Schemas and Channels, Statistics, Chunk Indexes, Attachment Indexes, Metadata
 * Indexes), Summary Offset records, the Footer with the summary CRC, and the closing magic.
 *
 * <p>Usage:
 * <pre>{@code
 * try (McapWriter w = McapWriter.builder().profile("ros2").compression(McapWriter.Compression.ZSTD).build(path)) {
 *     int schema = w.registerSchema("sensor_msgs/msg/CompressedImage", "ros2msg", msgText);
 *     int channel = w.registerChannel("/camera0/image/compressed", "cdr", schema, Map.of());
 *     w.writeMessage(channel, seq, logTimeNs, publishTimeNs, cdrBytes);
 * }
 * }</pre>
 *
 * <p>When writing to a {@link Path}, bytes go to a hidden temporary file in the same folder, which
 * {@link #close()} moves atomically onto the target name once the file is complete; a crash or
 * {@link #abort()} never leaves a partial file under the target name.
 *
 * <p>Message payloads are copied into a reused chunk buffer; apart from that no per-message
 * allocation is made. Not thread-safe.
 */
public final class McapWriter implements Closeable {

    /** Chunk compression, with the spec's compression strings. */
    public enum Compression {
        /** Chunks stored uncompressed (compression {@code ""}). */
        NONE(""),
        /** Zstandard frames (compression {@code "zstd"}). */
        ZSTD("zstd"),
        /** LZ4 frame format (compression {@code "lz4"}). */
        LZ4("lz4");

        private final String specName;

        Compression(String specName) {
            this.specName = specName;
        }

        /** @return the compression string written into Chunk and Chunk Index records */
        public String specName() {
            return specName;
        }
    }

    /** Immutable writer options; defaults: chunked, zstd level 3, 4 MiB chunks, every index, CRCs on. */
    public record Options(String profile, String library, Compression compression, int zstdLevel,
                          long chunkSize, boolean useChunks, boolean messageIndexes, boolean chunkIndexes,
                          boolean statistics, boolean summaryOffsets, boolean repeatSchemas,
                          boolean repeatChannels, boolean attachmentIndexes, boolean metadataIndexes,
                          boolean crcs, boolean syncOnClose) {
    }

    /** @return a builder with the default options */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link McapWriter}; every setter returns {@code this}. */
    public static final class Builder {
        private String profile = "";
        private String library = "flywheel-mcap";
        private Compression compression = Compression.ZSTD;
        private int zstdLevel = 3;
        private long chunkSize = 4L << 20;
        private boolean useChunks = true;
        private boolean messageIndexes = true;
        private boolean chunkIndexes = true;
        private boolean statistics = true;
        private boolean summaryOffsets = true;
        private boolean repeatSchemas = true;
        private boolean repeatChannels = true;
        private boolean attachmentIndexes = true;
        private boolean metadataIndexes = true;
        private boolean crcs = true;
        private boolean syncOnClose = true;

        private Builder() {}

        /** @param profile the Header profile, e.g. "ros2", "ros1" or "" (default "") */
        public Builder profile(String profile) { this.profile = Objects.requireNonNull(profile); return this; }

        /** @param library the Header library string (default "flywheel-mcap") */
        public Builder library(String library) { this.library = Objects.requireNonNull(library); return this; }

        /** @param compression chunk compression (default ZSTD) */
        public Builder compression(Compression compression) { this.compression = Objects.requireNonNull(compression); return this; }

        /** @param level Zstandard level, 1..22 or negative for the fast modes (default 3) */
        public Builder zstdLevel(int level) { this.zstdLevel = level; return this; }

        /**
         * @param bytes uncompressed chunk size at which a chunk is closed (default 4 MiB); a chunk
         *     holds at least one message, so one larger message makes a larger chunk
         * @throws IllegalArgumentException when not in 1 .. 1 GiB
         */
        public Builder chunkSize(long bytes) {
            if (bytes < 1 || bytes > (1L << 30)) {
                throw new IllegalArgumentException("chunk size must be in 1 .. 1 GiB, got " + bytes);
            }
            this.chunkSize = bytes;
            return this;
        }

        /** @param on group records into Chunks (default true); false writes messages straight into the data section */
        public Builder useChunks(boolean on) { this.useChunks = on; return this; }

        /** @param on write Message Index records after each chunk (default true) */
        public Builder messageIndexes(boolean on) { this.messageIndexes = on; return this; }

        /** @param on write Chunk Index records into the summary (default true) */
        public Builder chunkIndexes(boolean on) { this.chunkIndexes = on; return this; }

        /** @param on write a Statistics record into the summary (default true) */
        public Builder statistics(boolean on) { this.statistics = on; return this; }

        /** @param on write Summary Offset records (default true) */
        public Builder summaryOffsets(boolean on) { this.summaryOffsets = on; return this; }

        /** @param on repeat every Schema record in the summary (default true) */
        public Builder repeatSchemas(boolean on) { this.repeatSchemas = on; return this; }

        /** @param on repeat every Channel record in the summary (default true) */
        public Builder repeatChannels(boolean on) { this.repeatChannels = on; return this; }

        /** @param on write Attachment Index records into the summary (default true) */
        public Builder attachmentIndexes(boolean on) { this.attachmentIndexes = on; return this; }

        /** @param on write Metadata Index records into the summary (default true) */
        public Builder metadataIndexes(boolean on) { this.metadataIndexes = on; return this; }

        /** @param on compute chunk, attachment, data-section and summary CRC32s (default true); off writes 0 */
        public Builder crcs(boolean on) { this.crcs = on; return this; }

        /** @param on fsync the temporary file before the atomic rename (default true; Path output only) */
        public Builder syncOnClose(boolean on) { this.syncOnClose = on; return this; }

        /** @return the options as set */
        public Options options() {
            return new Options(profile, library, compression, zstdLevel, chunkSize, useChunks, messageIndexes,
                    chunkIndexes, statistics, summaryOffsets, repeatSchemas, repeatChannels, attachmentIndexes,
                    metadataIndexes, crcs, syncOnClose);
        }

        /**
         * Opens a writer onto {@code target}, through a temporary file beside it.
         *
         * @param target the final file; replaced atomically on {@link McapWriter#close()}
         * @return the writer, with magic and Header already written
         * @throws IOException when the temporary file cannot be created
         */
        public McapWriter build(Path target) throws IOException {
            Path abs = target.toAbsolutePath();
            Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp-"
                    + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE));
            FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try {
                return new McapWriter(options(), Channels.newOutputStream(ch), ch, tmp, abs);
            } catch (IOException | RuntimeException e) {
                ch.close();
                Files.deleteIfExists(tmp);
                throw e;
            }
        }

        /**
         * Opens a writer onto a stream; {@link McapWriter#close()} closes the stream.
         *
         * @param out where the bytes go, in order, never seeked
         * @return the writer, with magic and Header already written
         * @throws IOException when the stream fails
         */
        public McapWriter build(OutputStream out) throws IOException {
            return new McapWriter(options(), Objects.requireNonNull(out), null, null, null);
        }
    }

    /** The 8 magic bytes that open and close every MCAP file. */
    static final byte[] MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', 0x30, '\r', '\n'};

    private final Options opt;
    private final Sink sink;
    private final FileChannel fileChannel;
    private final Path tmpPath;
    private final Path targetPath;
    private final ChunkCodec codec;
    private final LeBuffer chunk;
    private final CRC32 chunkCrc = new CRC32();

    private final List<SchemaEntry> schemas = new ArrayList<>();
    private final Map<SchemaKey, Integer> schemaIds = new HashMap<>();
    private final List<ChannelState> channels = new ArrayList<>();
    private final Map<ChannelKey, Integer> channelIds = new HashMap<>();
    private ChannelState[] channelById = new ChannelState[16];
    private final List<byte[]> chunkIndexRecords = new ArrayList<>();
    private final List<byte[]> attachmentIndexRecords = new ArrayList<>();
    private final List<byte[]> metadataIndexRecords = new ArrayList<>();
    private final LeBuffer scratch = new LeBuffer(256);

    // Current chunk.
    private boolean chunkHasRecords;
    private long chunkStart;
    private long chunkEnd;
    private int chunkMessageCount;
    private int[] chunkChannels = new int[16];
    private int chunkChannelCount;

    // Statistics.
    private long messageCount;
    private long messageStart;
    private long messageEnd;
    private long attachmentCount;
    private long metadataCount;
    private long chunkCount;

    private boolean closed;

    private McapWriter(Options opt, OutputStream out, FileChannel fileChannel, Path tmpPath, Path targetPath)
            throws IOException {
        this.opt = opt;
        this.fileChannel = fileChannel;
        this.tmpPath = tmpPath;
        this.targetPath = targetPath;
        this.sink = new Sink(out, opt.crcs());
        this.codec = opt.useChunks() && opt.compression() != Compression.NONE
                ? new ChunkCodec(opt.compression().specName(), opt.zstdLevel()) : null;
        this.chunk = opt.useChunks() ? new LeBuffer((int) Math.min(opt.chunkSize() + (opt.chunkSize() >> 3) + 1024, 1 << 26))
                : null;
        sink.bytes(MAGIC, 0, MAGIC.length);
        byte[] profile = utf8(opt.profile());
        byte[] library = utf8(opt.library());
        scratch.reset();
        scratch.u8(Record.OP_HEADER);
        scratch.u64(8L + profile.length + library.length);
        scratch.str(profile);
        scratch.str(library);
        sink.bytes(scratch.array(), 0, scratch.size());
    }

    /** @return the options this writer was built with */
    public Options options() {
        return opt;
    }

    /**
     * Registers a schema, writing its Schema record. Registering the same (name, encoding, data)
     * again returns the existing id.
     *
     * @param name schema name, e.g. "sensor_msgs/msg/Image"
     * @param encoding schema encoding, e.g. "ros2msg", "ros1msg", "protobuf", "jsonschema"
     * @param data schema bytes in that encoding
     * @return the schema id, 1..65535
     * @throws IllegalStateException when more than 65535 schemas are registered or the writer is closed
     */
    public int registerSchema(String name, String encoding, byte[] data) throws IOException {
        ensureOpen();
        SchemaKey key = new SchemaKey(name, encoding, data.clone());
        Integer existing = schemaIds.get(key);
        if (existing != null) {
            return existing;
        }
        int id = schemas.size() + 1;
        if (id > 0xFFFF) {
            throw new IllegalStateException("an MCAP file holds at most 65535 schemas");
        }
        SchemaEntry s = new SchemaEntry(id, utf8(name), utf8(encoding), key.data);
        schemas.add(s);
        schemaIds.put(key, id);
        writeDataRecord(schemaRecord(s));
        return id;
    }

    /**
     * Registers a channel, writing its Channel record. Registering the same (topic, encoding,
     * schema, metadata) again returns the existing id.
     *
     * @param topic topic name, e.g. "/camera0/image/compressed"
     * @param messageEncoding message encoding, e.g. "cdr", "ros1", "protobuf", "json"
     * @param schemaId a registered schema id, or 0 for schemaless
     * @param metadata channel metadata, written in the map's iteration order
     * @return the channel id, 1..65535
     * @throws IllegalArgumentException when {@code schemaId} is not registered
     */
    public int registerChannel(String topic, String messageEncoding, int schemaId, Map<String, String> metadata)
            throws IOException {
        ensureOpen();
        if (schemaId < 0 || schemaId > schemas.size()) {
            throw new IllegalArgumentException("schema id " + schemaId + " is not registered");
        }
        Map<String, String> md = copyMetadata(metadata);
        ChannelKey key = new ChannelKey(topic, messageEncoding, schemaId, md);
        Integer existing = channelIds.get(key);
        if (existing != null) {
            return existing;
        }
        int id = channels.size() + 1;
        if (id > 0xFFFF) {
            throw new IllegalStateException("an MCAP file holds at most 65535 channels");
        }
        ChannelState c = new ChannelState(id, schemaId, utf8(topic), utf8(messageEncoding), encodeMap(md));
        channels.add(c);
        channelIds.put(key, id);
        if (id >= channelById.length) {
            channelById = Arrays.copyOf(channelById, Math.max(id + 1, channelById.length * 2));
        }
        channelById[id] = c;
        writeDataRecord(channelRecord(c));
        return id;
    }

    /**
     * Writes one message.
     *
     * @param channelId a registered channel id
     * @param sequence uint32 publisher sequence number, 0 .. 2^32-1
     * @param logTime uint64 nanoseconds when the message was recorded
     * @param publishTime uint64 nanoseconds when it was published (use logTime when unknown)
     * @param data the serialized message
     * @throws IllegalArgumentException for an unknown channel or a sequence outside uint32
     */
    public void writeMessage(int channelId, long sequence, long logTime, long publishTime, byte[] data)
            throws IOException {
        writeMessage(channelId, sequence, logTime, publishTime, data, 0, data.length);
    }

    /** Same as {@link #writeMessage(int, long, long, long, byte[])} for {@code data[off, off+len)}. */
    public void writeMessage(int channelId, long sequence, long logTime, long publishTime, byte[] data, int off,
                             int len) throws IOException {
        ChannelState c = beginMessage(channelId, sequence, len);
        if (chunk != null) {
            int at = chunk.size();
            messageHeader(chunk, channelId, sequence, logTime, publishTime, len);
            chunk.bytes(data, off, len);
            endChunkMessage(c, at, logTime);
        } else {
            scratch.reset();
            messageHeader(scratch, channelId, sequence, logTime, publishTime, len);
            sink.bytes(scratch.array(), 0, scratch.size());
            sink.bytes(data, off, len);
            countMessage(c, logTime);
        }
    }

    /**
     * Same as {@link #writeMessage(int, long, long, long, byte[])} for the bytes from the buffer's
     * position to its limit; the buffer's position is not changed.
     */
    public void writeMessage(int channelId, long sequence, long logTime, long publishTime, ByteBuffer data)
            throws IOException {
        int len = data.remaining();
        ChannelState c = beginMessage(channelId, sequence, len);
        if (chunk != null) {
            int at = chunk.size();
            messageHeader(chunk, channelId, sequence, logTime, publishTime, len);
            chunk.bytes(data);
            endChunkMessage(c, at, logTime);
        } else {
            scratch.reset();
            messageHeader(scratch, channelId, sequence, logTime, publishTime, len);
            scratch.bytes(data);
            sink.bytes(scratch.array(), 0, scratch.size());
            countMessage(c, logTime);
        }
    }

    /**
     * Writes an Attachment record into the data section (never inside a chunk), with its CRC32.
     *
     * @param name attachment name, e.g. "calibration.yaml"
     * @param mediaType media type, e.g. "text/plain"
     * @param logTime uint64 nanoseconds when it was recorded
     * @param createTime uint64 nanoseconds when it was created, 0 when unknown
     * @param data the attachment bytes
     */
    public void writeAttachment(String name, String mediaType, long logTime, long createTime, byte[] data)
            throws IOException {
        writeAttachment(name, mediaType, logTime, createTime, ByteBuffer.wrap(data));
    }

    /** Same as {@link #writeAttachment(String, String, long, long, byte[])}; the buffer's position is not changed. */
    public void writeAttachment(String name, String mediaType, long logTime, long createTime, ByteBuffer data)
            throws IOException {
        ensureOpen();
        byte[] n = utf8(name);
        byte[] m = utf8(mediaType);
        int len = data.remaining();
        scratch.reset();
        scratch.u64(logTime);
        scratch.u64(createTime);
        scratch.str(n);
        scratch.str(m);
        scratch.u64(len);
        long crc = 0;
        if (opt.crcs()) {
            CRC32 c = new CRC32();
            c.update(scratch.array(), 0, scratch.size());
            c.update(data.duplicate());
            crc = c.getValue();
        }
        long bodyLen = scratch.size() + (long) len + 4;
        long offset = sink.position();
        byte[] head = new byte[9];
        ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).put((byte) Record.OP_ATTACHMENT).putLong(bodyLen);
        sink.bytes(head, 0, 9);
        sink.bytes(scratch.array(), 0, scratch.size());
        sink.bytes(data);
        sink.u32(crc);
        attachmentCount++;
        if (opt.attachmentIndexes()) {
            LeBuffer r = new LeBuffer(64 + n.length + m.length);
            r.u8(Record.OP_ATTACHMENT_INDEX);
            r.u64(40L + 4 + n.length + 4 + m.length);
            r.u64(offset);
            r.u64(9 + bodyLen);
            r.u64(logTime);
            r.u64(createTime);
            r.u64(len);
            r.str(n);
            r.str(m);
            attachmentIndexRecords.add(r.toArray());
        }
    }

    /**
     * Writes a Metadata record into the data section.
     *
     * @param name metadata name, e.g. "episode"
     * @param metadata key-value pairs, written in the map's iteration order
     */
    public void writeMetadata(String name, Map<String, String> metadata) throws IOException {
        ensureOpen();
        byte[] n = utf8(name);
        byte[] map = encodeMap(metadata);
        scratch.reset();
        scratch.u8(Record.OP_METADATA);
        scratch.u64(4L + n.length + map.length);
        scratch.str(n);
        scratch.bytes(map, 0, map.length);
        long offset = sink.position();
        sink.bytes(scratch.array(), 0, scratch.size());
        metadataCount++;
        if (opt.metadataIndexes()) {
            LeBuffer r = new LeBuffer(32 + n.length);
            r.u8(Record.OP_METADATA_INDEX);
            r.u64(16L + 4 + n.length);
            r.u64(offset);
            r.u64(scratch.size());
            r.str(n);
            metadataIndexRecords.add(r.toArray());
        }
    }

    /** @return bytes written so far (the data section grows as chunks are closed) */
    public long bytesWritten() {
        return sink.position();
    }

    /**
     * Finishes the file: closes the open chunk, writes Data End, the summary, the Summary Offsets,
     * the Footer and the closing magic, closes the output and (for a Path) moves the temporary file
     * onto the target name. Calling it again does nothing.
     *
     * @throws IOException when writing fails; the temporary file is then deleted
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        boolean ok = false;
        try {
            finish();
            sink.flush();
            if (fileChannel != null && opt.syncOnClose()) {
                fileChannel.force(true);
            }
            sink.out.close();
            if (tmpPath != null) {
                try {
                    Files.move(tmpPath, targetPath, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmpPath, targetPath, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            ok = true;
        } finally {
            if (codec != null) {
                codec.close();
            }
            if (!ok) {
                discard();
            }
        }
    }

    /**
     * Abandons the file: closes the output and deletes the temporary file (Path output), leaving
     * any existing file under the target name untouched. Calling it after close() does nothing.
     */
    public void abort() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (codec != null) {
            codec.close();
        }
        discard();
    }

    private void discard() throws IOException {
        try {
            sink.out.close();
        } catch (IOException ignored) {
            // the file is being thrown away
        }
        if (tmpPath != null) {
            Files.deleteIfExists(tmpPath);
        }
    }

    private void finish() throws IOException {
        if (chunk != null && chunkHasRecords) {
            flushChunk();
        }
        long dataCrc = opt.crcs() ? sink.crc() : 0;
        sink.u8(Record.OP_DATA_END);
        sink.u64(4);
        sink.u32(dataCrc);

        sink.resetCrc();
        long summaryStart = sink.position();
        List<long[]> groups = new ArrayList<>(); // {opcode, start, length}
        if (opt.repeatSchemas() && !schemas.isEmpty()) {
            long start = sink.position();
            for (SchemaEntry s : schemas) {
                LeBuffer r = schemaRecord(s);
                sink.bytes(r.array(), 0, r.size());
            }
            groups.add(new long[] {Record.OP_SCHEMA, start, sink.position() - start});
        }
        if (opt.repeatChannels() && !channels.isEmpty()) {
            long start = sink.position();
            for (ChannelState c : channels) {
                LeBuffer r = channelRecord(c);
                sink.bytes(r.array(), 0, r.size());
            }
            groups.add(new long[] {Record.OP_CHANNEL, start, sink.position() - start});
        }
        if (opt.statistics()) {
            long start = sink.position();
            writeStatistics();
            groups.add(new long[] {Record.OP_STATISTICS, start, sink.position() - start});
        }
        writeGroup(groups, Record.OP_CHUNK_INDEX, opt.chunkIndexes() ? chunkIndexRecords : List.of());
        writeGroup(groups, Record.OP_ATTACHMENT_INDEX, attachmentIndexRecords);
        writeGroup(groups, Record.OP_METADATA_INDEX, metadataIndexRecords);
        boolean hasSummary = sink.position() > summaryStart;
        long summaryOffsetStart = 0;
        if (hasSummary && opt.summaryOffsets()) {
            summaryOffsetStart = sink.position();
            for (long[] g : groups) {
                sink.u8(Record.OP_SUMMARY_OFFSET);
                sink.u64(17);
                sink.u8((int) g[0]);
                sink.u64(g[1]);
                sink.u64(g[2]);
            }
        }
        sink.u8(Record.OP_FOOTER);
        sink.u64(20);
        sink.u64(hasSummary ? summaryStart : 0);
        sink.u64(summaryOffsetStart);
        sink.u32(opt.crcs() && hasSummary ? sink.crc() : 0);
        sink.bytes(MAGIC, 0, MAGIC.length);
    }

    private void writeGroup(List<long[]> groups, int opcode, List<byte[]> records) throws IOException {
        if (records.isEmpty()) {
            return;
        }
        long start = sink.position();
        for (byte[] r : records) {
            sink.bytes(r, 0, r.length);
        }
        groups.add(new long[] {opcode, start, sink.position() - start});
    }

    private void writeStatistics() throws IOException {
        int counted = 0;
        for (ChannelState c : channels) {
            if (c.messageCount > 0) {
                counted++;
            }
        }
        sink.u8(Record.OP_STATISTICS);
        sink.u64(8 + 2 + 4 * 4 + 8 + 8 + 4 + 10L * counted);
        sink.u64(messageCount);
        sink.u16(schemas.size());
        sink.u32(channels.size());
        sink.u32(attachmentCount);
        sink.u32(metadataCount);
        sink.u32(chunkCount);
        sink.u64(messageStart);
        sink.u64(messageEnd);
        sink.u32(10L * counted);
        for (ChannelState c : channels) {
            if (c.messageCount > 0) {
                sink.u16(c.id);
                sink.u64(c.messageCount);
            }
        }
    }

    private ChannelState beginMessage(int channelId, long sequence, int len) {
        ensureOpen();
        ChannelState c = channelId > 0 && channelId < channelById.length ? channelById[channelId] : null;
        if (c == null) {
            throw new IllegalArgumentException("channel id " + channelId + " is not registered");
        }
        if (sequence < 0 || sequence > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("sequence " + sequence + " is outside uint32");
        }
        if (chunk != null && chunk.size() + 31L + len > ChunkCodec.MAX_CHUNK_BYTES) {
            throw new IllegalArgumentException("message of " + len + " bytes does not fit in a chunk");
        }
        return c;
    }

    private static void messageHeader(LeBuffer b, int channelId, long sequence, long logTime, long publishTime,
                                      int len) {
        b.u8(Record.OP_MESSAGE);
        b.u64(22L + len);
        b.u16(channelId);
        b.u32(sequence);
        b.u64(logTime);
        b.u64(publishTime);
    }

    private void countMessage(ChannelState c, long logTime) {
        if (messageCount == 0 || Long.compareUnsigned(logTime, messageStart) < 0) {
            messageStart = logTime;
        }
        if (messageCount == 0 || Long.compareUnsigned(logTime, messageEnd) > 0) {
            messageEnd = logTime;
        }
        messageCount++;
        c.messageCount++;
    }

    private void endChunkMessage(ChannelState c, int offsetInChunk, long logTime) throws IOException {
        countMessage(c, logTime);
        if (chunkMessageCount == 0 || Long.compareUnsigned(logTime, chunkStart) < 0) {
            chunkStart = logTime;
        }
        if (chunkMessageCount == 0 || Long.compareUnsigned(logTime, chunkEnd) > 0) {
            chunkEnd = logTime;
        }
        chunkMessageCount++;
        chunkHasRecords = true;
        if (opt.messageIndexes()) {
            if (c.indexCount == 0) {
                if (chunkChannelCount == chunkChannels.length) {
                    chunkChannels = Arrays.copyOf(chunkChannels, chunkChannelCount * 2);
                }
                chunkChannels[chunkChannelCount++] = c.id;
            }
            c.addIndex(logTime, offsetInChunk);
        }
        if (chunk.size() >= opt.chunkSize()) {
            flushChunk();
        }
    }

    /** Schema and Channel records go into the open chunk (chunked files) or straight into the data section. */
    private void writeDataRecord(LeBuffer r) throws IOException {
        if (chunk != null) {
            chunk.bytes(r.array(), 0, r.size());
            chunkHasRecords = true;
        } else {
            sink.bytes(r.array(), 0, r.size());
        }
    }

    private void flushChunk() throws IOException {
        int usize = chunk.size();
        long crc = 0;
        if (opt.crcs()) {
            chunkCrc.reset();
            chunkCrc.update(chunk.array(), 0, usize);
            crc = chunkCrc.getValue();
        }
        byte[] payload;
        int psize;
        if (codec != null) {
            ChunkCodec.GrowBuffer c = codec.compress(chunk.array(), 0, usize);
            payload = c.array();
            psize = c.size();
        } else {
            payload = chunk.array();
            psize = usize;
        }
        byte[] comp = utf8(opt.compression().specName());
        long start = chunkMessageCount > 0 ? chunkStart : 0;
        long end = chunkMessageCount > 0 ? chunkEnd : 0;
        long chunkOffset = sink.position();
        long bodyLen = 8 + 8 + 8 + 4 + 4 + comp.length + 8 + (long) psize;
        sink.u8(Record.OP_CHUNK);
        sink.u64(bodyLen);
        sink.u64(start);
        sink.u64(end);
        sink.u64(usize);
        sink.u32(crc);
        sink.str(comp);
        sink.u64(psize);
        sink.bytes(payload, 0, psize);
        long chunkLength = sink.position() - chunkOffset;

        // Message Index records, by ascending channel id.
        Arrays.sort(chunkChannels, 0, chunkChannelCount);
        long indexStart = sink.position();
        long[] indexOffsets = new long[chunkChannelCount];
        for (int i = 0; i < chunkChannelCount; i++) {
            ChannelState c = channelById[chunkChannels[i]];
            indexOffsets[i] = sink.position();
            sink.u8(Record.OP_MESSAGE_INDEX);
            sink.u64(2 + 4 + 16L * c.indexCount);
            sink.u16(c.id);
            sink.u32(16L * c.indexCount);
            for (int k = 0; k < c.indexCount; k++) {
                sink.u64(c.index[2 * k]);
                sink.u64(c.index[2 * k + 1]);
            }
            c.indexCount = 0;
        }
        long indexLength = sink.position() - indexStart;

        if (opt.chunkIndexes()) {
            LeBuffer r = new LeBuffer(96 + 10 * chunkChannelCount);
            r.u8(Record.OP_CHUNK_INDEX);
            r.u64(8 * 4 + 4 + 10L * chunkChannelCount + 8 + 4 + comp.length + 8 + 8);
            r.u64(start);
            r.u64(end);
            r.u64(chunkOffset);
            r.u64(chunkLength);
            r.u32(10L * chunkChannelCount);
            for (int i = 0; i < chunkChannelCount; i++) {
                r.u16(chunkChannels[i]);
                r.u64(indexOffsets[i]);
            }
            r.u64(indexLength);
            r.str(comp);
            r.u64(psize);
            r.u64(usize);
            chunkIndexRecords.add(r.toArray());
        }
        chunkCount++;
        chunk.reset();
        chunkHasRecords = false;
        chunkMessageCount = 0;
        chunkChannelCount = 0;
        chunkStart = 0;
        chunkEnd = 0;
    }

    private LeBuffer schemaRecord(SchemaEntry s) {
        LeBuffer r = new LeBuffer(32 + s.name.length + s.encoding.length + s.data.length);
        r.u8(Record.OP_SCHEMA);
        r.u64(2L + 4 + s.name.length + 4 + s.encoding.length + 4 + s.data.length);
        r.u16(s.id);
        r.str(s.name);
        r.str(s.encoding);
        r.str(s.data);
        return r;
    }

    private LeBuffer channelRecord(ChannelState c) {
        LeBuffer r = new LeBuffer(32 + c.topic.length + c.encoding.length + c.metadata.length);
        r.u8(Record.OP_CHANNEL);
        r.u64(2L + 2 + 4 + c.topic.length + 4 + c.encoding.length + c.metadata.length);
        r.u16(c.id);
        r.u16(c.schemaId);
        r.str(c.topic);
        r.str(c.encoding);
        r.bytes(c.metadata, 0, c.metadata.length);
        return r;
    }

    /** Map&lt;string, string&gt;: uint32 byte length, then (uint32-prefixed key, uint32-prefixed value) pairs. */
    private static byte[] encodeMap(Map<String, String> map) {
        LeBuffer b = new LeBuffer(64);
        b.u32(0);
        for (Map.Entry<String, String> e : map.entrySet()) {
            b.str(utf8(e.getKey()));
            b.str(utf8(e.getValue()));
        }
        byte[] out = b.toArray();
        long n = out.length - 4L;
        out[0] = (byte) n;
        out[1] = (byte) (n >>> 8);
        out[2] = (byte) (n >>> 16);
        out[3] = (byte) (n >>> 24);
        return out;
    }

    private static Map<String, String> copyMetadata(Map<String, String> m) {
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : m.entrySet()) {
            copy.put(Objects.requireNonNull(e.getKey(), "metadata key"), Objects.requireNonNull(e.getValue(), "metadata value"));
        }
        return copy;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the MCAP writer is closed");
        }
    }

    private record SchemaEntry(int id, byte[] name, byte[] encoding, byte[] data) {}

    private record SchemaKey(String name, String encoding, byte[] data) {
        @Override
        public boolean equals(Object o) {
            return o instanceof SchemaKey k && k.name.equals(name) && k.encoding.equals(encoding)
                    && Arrays.equals(k.data, data);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, encoding, Arrays.hashCode(data));
        }
    }

    private record ChannelKey(String topic, String encoding, int schemaId, Map<String, String> metadata) {}

    private static final class ChannelState {
        final int id;
        final int schemaId;
        final byte[] topic;
        final byte[] encoding;
        final byte[] metadata;
        long messageCount;
        long[] index = new long[32];
        int indexCount;

        ChannelState(int id, int schemaId, byte[] topic, byte[] encoding, byte[] metadata) {
            this.id = id;
            this.schemaId = schemaId;
            this.topic = topic;
            this.encoding = encoding;
            this.metadata = metadata;
        }

        void addIndex(long logTime, long offset) {
            if (2 * indexCount + 2 > index.length) {
                index = Arrays.copyOf(index, index.length * 2);
            }
            index[2 * indexCount] = logTime;
            index[2 * indexCount + 1] = offset;
            indexCount++;
        }
    }

    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    /** A growable little-endian byte builder. */
    static final class LeBuffer {
        private byte[] a;
        private int n;

        LeBuffer(int capacity) {
            a = new byte[Math.max(16, capacity)];
        }

        byte[] array() { return a; }

        int size() { return n; }

        void reset() { n = 0; }

        byte[] toArray() { return Arrays.copyOf(a, n); }

        private void ensure(int more) {
            if (n + more > a.length) {
                long want = Math.max((long) n + more, a.length * 2L);
                a = Arrays.copyOf(a, (int) Math.min(want, Integer.MAX_VALUE - 16));
            }
        }

        void u8(int v) { ensure(1); a[n++] = (byte) v; }

        void u16(int v) { ensure(2); LE_SHORT.set(a, n, (short) v); n += 2; }

        void u32(long v) { ensure(4); LE_INT.set(a, n, (int) v); n += 4; }

        void u64(long v) { ensure(8); LE_LONG.set(a, n, v); n += 8; }

        void bytes(byte[] src, int off, int len) {
            ensure(len);
            System.arraycopy(src, off, a, n, len);
            n += len;
        }

        void bytes(ByteBuffer src) {
            int len = src.remaining();
            ensure(len);
            src.get(src.position(), a, n, len);
            n += len;
        }

        /** uint32 length prefix + bytes. */
        void str(byte[] s) { u32(s.length); bytes(s, 0, s.length); }
    }

    /** Buffered output that counts bytes and keeps a running CRC32 of what it wrote. */
    private static final class Sink {
        final OutputStream out;
        private final boolean crcOn;
        private final CRC32 crc = new CRC32();
        private final byte[] buf = new byte[1 << 18];
        private int n;
        private long flushed;

        Sink(OutputStream out, boolean crcOn) {
            this.out = out;
            this.crcOn = crcOn;
        }

        long position() { return flushed + n; }

        long crc() throws IOException {
            flush();
            return crc.getValue();
        }

        void resetCrc() throws IOException {
            flush();
            crc.reset();
        }

        void flush() throws IOException {
            if (n > 0) {
                if (crcOn) {
                    crc.update(buf, 0, n);
                }
                out.write(buf, 0, n);
                flushed += n;
                n = 0;
            }
        }

        private void room(int k) throws IOException {
            if (n + k > buf.length) {
                flush();
            }
        }

        void u8(int v) throws IOException { room(1); buf[n++] = (byte) v; }

        void u16(int v) throws IOException { room(2); LE_SHORT.set(buf, n, (short) v); n += 2; }

        void u32(long v) throws IOException { room(4); LE_INT.set(buf, n, (int) v); n += 4; }

        void u64(long v) throws IOException { room(8); LE_LONG.set(buf, n, v); n += 8; }

        void str(byte[] s) throws IOException { u32(s.length); bytes(s, 0, s.length); }

        void bytes(byte[] src, int off, int len) throws IOException {
            if (len <= buf.length - n) {
                System.arraycopy(src, off, buf, n, len);
                n += len;
                return;
            }
            flush();
            if (len < buf.length / 2) {
                System.arraycopy(src, off, buf, 0, len);
                n = len;
                return;
            }
            if (crcOn) {
                crc.update(src, off, len);
            }
            out.write(src, off, len);
            flushed += len;
        }

        void bytes(ByteBuffer src) throws IOException {
            ByteBuffer b = src.duplicate();
            if (b.hasArray()) {
                bytes(b.array(), b.arrayOffset() + b.position(), b.remaining());
                return;
            }
            while (b.hasRemaining()) {
                room(1);
                int k = Math.min(b.remaining(), buf.length - n);
                b.get(buf, n, k);
                n += k;
            }
        }
    }
}
