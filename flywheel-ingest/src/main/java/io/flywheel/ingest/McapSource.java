package io.flywheel.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.zip.CRC32;

import com.github.luben.zstd.ZstdDecompressCtx;

import io.flywheel.decode.DecodeException;
import io.flywheel.decode.Decoders;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.mcap.ChunkDecompressor;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;
import io.flywheel.ros.cdr.CdrFastPaths;

/**
 * Reads one MCAP file into a {@link Collector} and computes its SHA-256 in the same pass.
 *
 * <p>The file is read front to back once, in blocks, into one reused heap array; every block is fed to
 * the SHA-256 (FIPS 180-4) as it arrives, then its records are parsed ({@link RecordParser}) and each chunk
 * is decompressed into a second reused array, so that every message's chunk offset and offset inside the
 * decompressed chunk are known (MCAP spec, "Chunk" and "Message" records). It checks what
 * {@link McapStreamReader} checks in strict mode with CRCs on (magic at both ends, Header first, record
 * lengths, the data section, summary and chunk CRCs; an attachment whose CRC fails is left out with a warning in the
 * episode metadata, and the data section CRC it breaks too is then let pass when every message was in a chunk whose
 * own CRC matched). When any of those checks fails, the file is
 * read again by the reference path ({@link McapStreamReader} with
 * {@link McapStreamReader.Options.Builder#emitChunks(boolean) emitChunks(true)} and {@link ChunkDecompressor})
 * into a scratch collector, so the error thrown is the one that reader gives, with its offset and wording.
 */
final class McapSource {
    /** How a channel's messages are handled. */
    private enum Kind { CDR_COMPRESSED_IMAGE, CDR_COMPRESSED_VIDEO, CDR_IMAGE, CDR_JOINT_STATE, CDR_HEADER, TREE, LOG_ONLY, PROTOBUF_IMAGE,
        JSON_IMAGE, FRAME_SKIPS }

    /** @param dataField protobuf images: the field number of the {@code data} bytes field */
    private record Plan(StreamBuilder stream, Kind kind, MessageDecoder decoder, boolean raw, int dataField) {}

    private static final byte[] MAGIC = {(byte) 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
    /** Largest record the reference reader holds in memory ({@code McapStreamReader.MAX_RECORD}). */
    private static final long MAX_RECORD = Integer.MAX_VALUE - 64;
    /** Bytes mapped at a time (more when one record is longer). */
    private static final long MAP_WINDOW = 1L << 30;
    /** Bytes read at a time from a file of a remote store (more when one record is longer). */
    private static final int REMOTE_WINDOW = 16 << 20;

    private final Path path;
    private final RawFiles raw;
    private final String uri;
    private final String name;
    private final Collector out;
    private final Map<Integer, Record.Schema> schemas = new HashMap<>();
    private final Map<Integer, Plan> plans = new HashMap<>();
    private final Map<Integer, Record.Channel> channels = new HashMap<>();
    /** The channels of {@code /robot_description} String topics, by id. */
    private final Map<Integer, Record.Channel> robotDescriptions = new HashMap<>();
    /** One zstd context for every chunk of the file (the static form would set one up per chunk). */
    private final ChunkDecompressor decompressor = new ChunkDecompressor();

    private McapSource(Path path, Collector out) {
        this(path, out, RawFiles.local());
    }

    private McapSource(Path path, Collector out, RawFiles raw) {
        this.path = path;
        this.raw = raw;
        this.uri = raw.uri(path);
        this.name = raw.name(path);
        this.out = out;
    }

    /**
     * @param path the MCAP file
     * @param out receives streams and metadata
     * @return the file's entry: absolute URI, SHA-256 of its bytes (the size taken when it is opened), size
     * @throws McapFormatException when the file breaks the MCAP spec (file, offset, what)
     * @throws IngestException when a message cannot be decoded (file, chunk offset, offset in chunk)
     */
    static SourceFile read(Path path, Collector out) throws IOException {
        return read(path, out, RawFiles.local());
    }

    /**
     * {@link #read(Path, Collector)} through {@code raw}: a file of a remote store is read by positioned reads of
     * {@value #REMOTE_WINDOW} bytes at a time (each byte once), its locators name its remote URI.
     */
    static SourceFile read(Path path, Collector out, RawFiles raw) throws IOException {
        McapSource fast = new McapSource(path, out, raw);
        try {
            return fast.runFast();
        } catch (McapFormatException e) {
            // The reference reader gives the error its own way (same checks, same order); the collector is
            // dropped with the recording, so the scratch one only serves to reach the error.
            new McapSource(path, new Collector(out.profile), raw).runReference();
            throw e; // not reached unless the two readers disagree, then the fast reader's error stands
        }
    }

    /**
     * Reads the messages of one topic, in log-time order, into {@code out} with the same per-message handling as
     * {@link #read} (so their locators are the ones ingest stored): through the file's index ({@link
     * McapIndexedReader} with a topic filter, which decompresses only the chunks holding the topic), or, for a file
     * without a summary, by reading the whole file as {@link #read} does.
     *
     * @param path the MCAP file
     * @param topic the topic
     * @param out receives the topic's stream (give it a forced CAMERA role to get image locators)
     * @throws McapFormatException when the file breaks the MCAP spec
     * @throws IngestException when a message cannot be decoded
     */
    static void readTopic(Path path, String topic, Collector out) throws IOException {
        McapSource src = new McapSource(path, out);
        McapIndexedReader r;
        try {
            r = McapIndexedReader.open(path);
        } catch (McapFormatException e) {
            read(path, out); // no summary to select by: the full pass
            return;
        }
        try (r) {
            for (Record.Channel c : r.channels().values()) {
                if (!c.topic().equals(topic)) continue;
                Record.Schema s = r.schemas().get(c.schemaId());
                if (s != null) src.schema(s);
                src.channel(c);
            }
            McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder().topic(topic)
                    .order(McapIndexedReader.Order.LOG_TIME).build());
            while (it.hasNext()) {
                Record.Message m = it.next().message();
                McapIndexedReader.Position p = it.position();
                if (!src.plans.containsKey(m.channelId())) {
                    src.channel(r.channels().get(m.channelId()));
                }
                if (p.chunkOffset() < 0) {
                    long d = p.recordOffset() + 31;
                    src.message(m, -1, "", d, d);
                } else if (p.compression().isEmpty()) {
                    // records of an uncompressed chunk start after its 40 bytes of fields and the empty compression
                    long d = p.chunkOffset() + 9 + 40 + p.recordOffset() + 31;
                    src.message(m, -1, "", d, d);
                } else {
                    src.message(m, p.chunkOffset(), p.compression(), p.recordOffset() + 31, p.chunkOffset());
                }
            }
        }
    }

    /** The reference reading alone (no hash), for tests that compare it with {@link #read}. */
    static void readReference(Path path, Collector out) throws IOException {
        new McapSource(path, out).runReference();
    }

    // ------------------------------------------------------------------------------------------------ fast path

    /**
     * A read-only memory map over part of the file, moved forward as records are consumed (no copy of the bytes
     * onto the Java heap). Every byte up to the end of the last {@link #ensure} is hashed, once, in file order.
     */
    private static final class Window {
        /** The file when it is local (then memory-mapped), else null. */
        private final FileChannel fc;
        /** The file when it is remote (then read into direct buffers), else null. */
        private final io.flywheel.raw.RawChannel remote;
        private final String name;
        private final long size;
        private final MessageDigest sha;
        /** Holds [start, start + map.capacity()) of the file; little-endian. */
        ByteBuffer map;
        long start;
        /** Bytes [0, hashed) of the file went into the hash. */
        long hashed;

        Window(FileChannel fc, io.flywheel.raw.RawChannel remote, String name, long size, MessageDigest sha) {
            this.fc = fc;
            this.remote = remote;
            this.name = name;
            this.size = size;
            this.sha = sha;
        }

        /**
         * Maps (when needed) and hashes bytes [at, at + n); at is never before a byte already hashed.
         *
         * @return the index of byte {@code at} in {@link #map}, or -1 when the file ends before at + n
         */
        int ensure(long at, long n) throws IOException {
            if (n > size - at) return -1;
            if (map == null || at < start || at + n > start + map.capacity()) {
                if (fc != null) {
                    long len = Math.min(Math.max(n, MAP_WINDOW), size - at);
                    map = fc.map(FileChannel.MapMode.READ_ONLY, at, len);
                } else {
                    // a new buffer each time: records parsed from the old one (schemas) may still point into it
                    int len = (int) Math.min(Math.max(n, REMOTE_WINDOW), size - at);
                    map = ByteBuffer.allocateDirect(len);
                    remote.readFully(map, at, name);
                    map.clear();
                }
                map.order(ByteOrder.LITTLE_ENDIAN);
                start = at;
            }
            if (at + n > hashed) {
                sha.update(map.slice((int) (hashed - start), (int) (at + n - hashed)));
                hashed = at + n;
            }
            return (int) (at - start);
        }

        /** Hashes the rest of the file, up to the size it had when opened. */
        void drain() throws IOException {
            while (hashed < size) {
                long n = Math.min(fc != null ? MAP_WINDOW : REMOTE_WINDOW, size - hashed);
                ensure(hashed, n);
            }
        }
    }

    /** Thrown inside the fast path for a check that failed; the reference path then gives the real error. */
    private McapFormatException bail(long offset, String what) {
        return new McapFormatException(name, offset, what);
    }

    private SourceFile runFast() throws IOException {
        if (java.nio.file.Files.isDirectory(path)) throw bail(-1, "is a folder, not an MCAP file");
        boolean local = raw.isLocal(path);
        MessageDigest sha = sha256();
        CRC32 dataCrc = new CRC32();
        CRC32 summaryCrc = null;
        long summaryCrcStart = -1;
        byte[] chunkOut = new byte[0];
        try (FileChannel fc = local ? FileChannel.open(path, StandardOpenOption.READ) : null;
             io.flywheel.raw.RawChannel ch = local ? io.flywheel.raw.RawStorage.of(fc) : raw.open(path);
             ChunkDecompressor dec = decompressor; ZstdDecompressCtx zstd = new ZstdDecompressCtx()) {
            long size = ch.size();
            Window w = new Window(fc, local ? null : ch, name, size, sha);
            int i = w.ensure(0, 8);
            if (i < 0 || !magicAt(w.map, i)) throw bail(0, "bad start magic");
            dataCrc.update(w.map.slice(i, 8));
            long at = 8;
            boolean first = true;
            while (true) {
                i = w.ensure(at, 9);
                if (i < 0) throw bail(at, "the input ends inside a record's opcode and length");
                int op = w.map.get(i) & 0xFF;
                long len = w.map.getLong(i + 1);
                if (len < 0 || len > size - (at + 9) || len > MAX_RECORD) throw bail(at, "bad record length");
                i = w.ensure(at, 9 + len);
                if (i < 0) throw bail(at, "the input ends inside a record");
                ByteBuffer map = w.map;
                if (op != Record.OP_FOOTER && op != Record.OP_DATA_END) {
                    (summaryCrc != null ? summaryCrc : dataCrc).update(map.slice(i, 9 + (int) len));
                }
                long end = at + 9 + len;
                if (first && op != Record.OP_HEADER) throw bail(at, "expected a Header record first");
                first = false;
                if (op == Record.OP_MESSAGE_INDEX) {
                    if (!messageIndexOk(map, i + 9, (int) len)) throw bail(at, "bad MessageIndex record");
                    at = end;
                    continue; // not used here: the parse would only allocate its entries
                }
                ByteBuffer body = map.slice(i + 9, (int) len).order(ByteOrder.LITTLE_ENDIAN);
                Record rec = RecordParser.parse(op, body, name, at);
                switch (op) {
                    case Record.OP_CHUNK -> {
                        Record.Chunk c = (Record.Chunk) rec;
                        messagesUnguarded |= c.uncompressedCrc() == 0;
                        if (c.compression().equals("zstd")) {
                            // the compressed records are the body's last field: they end where the record ends
                            chunkOut = zstdChunk(c, at, zstd, chunkOut, map, i + 9 + (int) len - c.records().remaining());
                            chunkRecords(ByteBuffer.wrap(chunkOut, 0, (int) c.uncompressedSize())
                                    .order(ByteOrder.LITTLE_ENDIAN), c, at);
                        } else {
                            chunkRecords(dec.decompressChunk(c, name, at, true), c, at);
                        }
                    }
                    case Record.OP_ATTACHMENT -> {
                        Record.Attachment a = (Record.Attachment) rec;
                        if (a.crc() != 0 && !attachmentCrcOk(a, body)) {
                            damagedAttachment(a, at); // the messages are intact: read on without it
                        } else {
                            attachment(a);
                        }
                    }
                    case Record.OP_DATA_END -> {
                        long want = ((Record.DataEnd) rec).dataSectionCrc();
                        // a damaged attachment breaks the data section CRC too; the messages stand when every one
                        // was in a chunk whose own CRC matched
                        if (want != 0 && dataCrc.getValue() != want && (!attachmentDamaged || messagesUnguarded)) {
                            throw bail(at, "data section CRC");
                        }
                        summaryCrc = new CRC32();
                        summaryCrcStart = end;
                    }
                    case Record.OP_FOOTER -> {
                        Record.Footer f = (Record.Footer) rec;
                        if (f.summaryCrc() != 0) checkSummaryCrc(ch, f, at, map.slice(i, 9 + 16), summaryCrc, summaryCrcStart);
                        i = w.ensure(end, 8);
                        if (i < 0 || !magicAt(w.map, i)) throw bail(end, "bad end magic");
                        w.drain();
                        return new SourceFile(uri, HexFormat.of().formatHex(sha.digest()), size);
                    }
                    default -> handle(rec, end);
                }
                at = end;
            }
        }
    }

    /** Whether an attachment's CRC failed, and whether a message was read that no chunk CRC covers. */
    private boolean attachmentDamaged;
    private boolean messagesUnguarded;

    /** A top-level record other than Chunk, as the reference path handles it. */
    private void handle(Record rec, long end) throws IOException {
        if (rec instanceof Record.Header h) {
            out.recordingMetadata.putIfAbsent("mcap.profile", h.profile());
            out.recordingMetadata.putIfAbsent("mcap.library", h.library());
        } else if (rec instanceof Record.Schema s) {
            schema(s);
        } else if (rec instanceof Record.Channel c) {
            channel(c);
        } else if (rec instanceof Record.Message m) {
            messagesUnguarded = true; // outside a chunk: only the data section CRC covers it
            long dataAbs = end - m.data().remaining();
            message(m, -1, "", dataAbs, dataAbs);
        } else if (rec instanceof Record.Metadata md) {
            metadata(md);
        } else if (rec instanceof Record.Attachment a) {
            attachment(a);
        }
    }

    /**
     * Decompresses a zstd chunk, whose compressed records are {@code src[srcOff, srcOff + records)}, into
     * {@code dst} (grown when too small) and checks its size and CRC as {@link ChunkDecompressor} does.
     *
     * @return the array holding the records from index 0
     */
    private byte[] zstdChunk(Record.Chunk c, long at, ZstdDecompressCtx zstd, byte[] dst, ByteBuffer src, int srcOff)
            throws McapFormatException {
        int compressedLen = c.records().remaining();
        long declared = c.uncompressedSize();
        if (declared < 0 || declared > ChunkDecompressor.MAX_UNCOMPRESSED || declared > (long) compressedLen * 65536 + (1 << 20)) {
            throw bail(at, "zstd chunk size");
        }
        if (dst.length < declared) dst = new byte[(int) Math.max(declared, Math.min(ChunkDecompressor.MAX_UNCOMPRESSED,
                dst.length + (dst.length >> 1)))];
        int n;
        try {
            n = zstd.decompressDirectByteBufferToByteArray(dst, 0, (int) declared, src, srcOff, compressedLen);
        } catch (RuntimeException e) {
            throw bail(at, "zstd error: " + e.getMessage());
        }
        if (n != declared) throw bail(at, "zstd chunk size");
        if (c.uncompressedCrc() != 0) {
            CRC32 crc = new CRC32();
            crc.update(dst, 0, n);
            if (crc.getValue() != c.uncompressedCrc()) throw bail(at, "chunk CRC");
        }
        return dst;
    }

    /** The checks {@link RecordParser} makes of a MessageIndex body, without building its entries. */
    private static boolean messageIndexOk(ByteBuffer b, int at, int len) {
        if (len < 6) return false;
        long n = b.getInt(at + 2) & 0xFFFF_FFFFL;
        return n <= len - 6 && n % 16 == 0;
    }

    /** Attachment CRC as the reference reader checks it: CRC-32 of the fields before the crc. */
    private static boolean attachmentCrcOk(Record.Attachment a, ByteBuffer body) {
        ByteBuffer b = body.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int p = 16;
        p += 4 + b.getInt(p);
        p += 4 + b.getInt(p);
        p += 8 + (int) b.getLong(p);
        CRC32 crc = new CRC32();
        crc.update(b.slice(0, p));
        return crc.getValue() == a.crc();
    }

    /** The Footer's summary_crc, as the reference reader checks it. */
    private void checkSummaryCrc(io.flywheel.raw.RawChannel fc, Record.Footer f, long at, ByteBuffer footerStart, CRC32 summaryCrc,
                                 long summaryCrcStart) throws IOException {
        long start = f.summaryStart();
        CRC32 crc;
        if (start == 0) {
            crc = new CRC32();
        } else if (start == summaryCrcStart) {
            crc = summaryCrc;
        } else if (start > 0 && start < at) {
            crc = new CRC32();
            ByteBuffer tmp = ByteBuffer.allocate((int) Math.min(1 << 20, at - start));
            for (long p = start; p < at; ) {
                tmp.clear().limit((int) Math.min(tmp.capacity(), at - p));
                int n = fc.read(tmp, p);
                if (n <= 0) throw bail(p, "cannot re-read the summary section for its CRC");
                tmp.flip();
                crc.update(tmp);
                p += n;
            }
        } else {
            throw bail(at, "summary_start does not point at the summary section");
        }
        crc.update(footerStart);
        if (crc.getValue() != f.summaryCrc()) throw bail(at, "summary CRC");
    }

    private static boolean magicAt(ByteBuffer b, int p) {
        for (int i = 0; i < 8; i++) {
            if (b.get(p + i) != MAGIC[i]) return false;
        }
        return true;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    // ------------------------------------------------------------------------------------------- reference path

    /** The reference reading ({@link McapStreamReader}); used to report the error of a file the fast path rejects. */
    private void runReference() throws IOException {
        McapStreamReader.Options opts = McapStreamReader.Options.builder().emitChunks(true).build();
        try (McapStreamReader r = raw.isLocal(path) ? McapStreamReader.open(path, opts)
                : McapStreamReader.open(new java.io.BufferedInputStream(new RemoteStream(raw.open(path)), 1 << 20), name,
                        opts);
             ChunkDecompressor dec = decompressor) {
            while (true) {
                Record rec = r.next();
                if (rec == null) break;
                if (rec instanceof Record.Chunk c) {
                    long chunkOffset = r.recordOffset();
                    chunkRecords(dec.decompressChunk(c, name, chunkOffset, true), c, chunkOffset);
                } else {
                    handle(rec, r.position());
                }
            }
        }
    }

    /** A remote file as a stream, for the reference path. */
    private static final class RemoteStream extends java.io.InputStream {
        private final io.flywheel.raw.RawChannel ch;
        private long at;

        RemoteStream(io.flywheel.raw.RawChannel ch) {
            this.ch = ch;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) return 0;
            int n = ch.read(ByteBuffer.wrap(b, off, len), at);
            if (n > 0) at += n;
            return n;
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    // ------------------------------------------------------------------------------------------ shared handlers

    /** Handles the records of a decompressed chunk. */
    private void chunkRecords(ByteBuffer recs, Record.Chunk c, long chunkOffset) throws IOException {
        boolean plain = c.compression().isEmpty();
        long recordsAbs = chunkOffset + 9 + 8 + 8 + 8 + 4 + 4 + c.compression().getBytes(StandardCharsets.UTF_8).length + 8;
        int limit = recs.limit();
        int at = recs.position();
        while (at < limit) {
            if (limit - at < 9) {
                throw new McapFormatException(name, chunkOffset, "chunk records end inside the opcode and length of the"
                        + " record at uncompressed offset " + at);
            }
            int op = recs.get(at) & 0xFF;
            long len = recs.getLong(at + 1);
            if (len < 0 || len > limit - at - 9) {
                throw new McapFormatException(name, chunkOffset, RecordParser.name(op) + " record at uncompressed offset "
                        + at + " declares length " + Long.toUnsignedString(len) + " but the chunk's records end at " + limit);
            }
            if (op == Record.OP_MESSAGE || op == Record.OP_SCHEMA || op == Record.OP_CHANNEL) {
                Record rec = RecordParser.parse(op, recs.slice(at + 9, (int) len), name, chunkOffset);
                if (rec instanceof Record.Schema s) {
                    schema(s);
                } else if (rec instanceof Record.Channel ch) {
                    channel(ch);
                } else if (rec instanceof Record.Message m) {
                    long dataInChunk = at + 9 + 22;
                    if (plain) {
                        message(m, -1, "", recordsAbs + dataInChunk, recordsAbs + dataInChunk);
                    } else {
                        message(m, chunkOffset, c.compression(), dataInChunk, chunkOffset);
                    }
                }
            }
            at += 9 + (int) len;
        }
    }

    /** Keeps the first Schema record of each id, with its own copy of the data (read buffers are reused). */
    private void schema(Record.Schema s) {
        if (!schemas.containsKey(s.id())) {
            schemas.put(s.id(), new Record.Schema(s.id(), s.name(), s.encoding(),
                    ByteBuffer.wrap(bytes(s.data())).asReadOnlyBuffer()));
        }
    }

    /**
     * A URDF attachment (a name ending in {@code .urdf}, or an {@code application/xml} / {@code text/xml} one with a
     * {@code <robot>} root) becomes the episode's {@code robot_description} metadata, with
     * {@code robot_description.source} = {@code attachment NAME}; one that does not parse leaves a
     * {@code robot_description.warning} naming the attachment and what is wrong instead, and the file is read on.
     */
    private void attachment(Record.Attachment a) {
        String media = a.mediaType().toLowerCase(java.util.Locale.ROOT);
        boolean urdfName = a.name().toLowerCase(java.util.Locale.ROOT).endsWith(".urdf");
        boolean xml = media.equals("application/xml") || media.equals("text/xml");
        if (!urdfName && !xml) return;
        byte[] data = bytes(a.data());
        if (!urdfName && !Urdf.hasRobotRoot(data)) return;
        String source = "attachment " + a.name();
        try {
            Urdf.parse(data, source);
            out.episodeMetadata.putIfAbsent("robot_description", new String(data, StandardCharsets.UTF_8));
            out.episodeMetadata.putIfAbsent("robot_description.source", source);
        } catch (IngestException e) {
            out.episodeMetadata.putIfAbsent("robot_description.warning", e.getMessage());
        }
    }

    /**
     * An attachment whose CRC does not match its bytes is not used: a warning in the episode metadata names it, its
     * offset and the CRC stored ({@code robot_description.warning} for a URDF by name or media type, else
     * {@code attachment.warning}); the file's messages are read on.
     */
    private void damagedAttachment(Record.Attachment a, long at) {
        attachmentDamaged = true;
        String media = a.mediaType().toLowerCase(java.util.Locale.ROOT);
        boolean urdf = a.name().toLowerCase(java.util.Locale.ROOT).endsWith(".urdf") || media.equals("application/xml")
                || media.equals("text/xml");
        out.episodeMetadata.putIfAbsent(urdf ? "robot_description.warning" : "attachment.warning", name + ": attachment "
                + a.name() + " at byte " + at + " is damaged (its CRC-32 does not match the stored " + a.crc()
                + "); not used");
    }

    private void metadata(Record.Metadata md) {
        if (md.name().equals("episode")) {
            md.metadata().forEach(out.episodeMetadata::putIfAbsent);
        } else {
            md.metadata().forEach((k, v) -> out.episodeMetadata.putIfAbsent(md.name() + "." + k, v));
        }
    }

    private void channel(Record.Channel c) throws IOException {
        if (plans.containsKey(c.id())) return;
        Record.Schema s = schemas.get(c.schemaId());
        if (c.schemaId() != 0 && s == null) {
            throw new IngestException(name, -1, "channel " + c.id() + " (" + c.topic() + ") refers to schema " + c.schemaId()
                    + ", which no Schema record before it defines");
        }
        channels.put(c.id(), c);
        if (c.topic().equals(FrameSkips.TOPIC) && c.messageEncoding().equals(FrameSkips.MESSAGE_ENCODING)) {
            plans.put(c.id(), new Plan(null, Kind.FRAME_SKIPS, null, false, 0)); // a record of skips, not a stream
            return;
        }
        String type = s == null ? "" : s.name();
        StreamBuilder sb = out.stream(c.topic(), c.id(), type);
        String enc = c.messageEncoding();
        String shortType = Values.shortType(type);
        Kind kind;
        if (enc.equals("cdr")) {
            if (sb.role == StreamRole.CAMERA && shortType.equals("CompressedImage")) kind = Kind.CDR_COMPRESSED_IMAGE;
            else if (sb.role == StreamRole.CAMERA && shortType.equals("CompressedVideo")) kind = Kind.CDR_COMPRESSED_VIDEO;
            else if (sb.role == StreamRole.CAMERA && shortType.equals("Image")) kind = Kind.CDR_IMAGE;
            else if ((sb.role == StreamRole.STATE || sb.role == StreamRole.GRIPPER) && shortType.equals("JointState")) {
                kind = Kind.CDR_JOINT_STATE;
            } else if (sb.role == StreamRole.OTHER) kind = headerFirst(s) ? Kind.CDR_HEADER : Kind.LOG_ONLY;
            else kind = Kind.TREE;
        } else {
            kind = Kind.TREE;
        }
        MessageDecoder dec = null;
        if (kind == Kind.TREE) {
            byte[] data = s == null ? null : bytes(s.data());
            try {
                dec = Decoders.forSchema(enc, type, s == null ? "" : s.encoding(), data);
            } catch (DecodeException e) {
                if (sb.role == StreamRole.OTHER) {
                    kind = Kind.LOG_ONLY; // an undecodable side stream keeps its log times
                } else {
                    throw new IngestException(name, -1, "channel " + c.id() + " (" + c.topic() + ", " + type
                            + ") has role " + sb.role + " but cannot be decoded: " + e.getMessage(), e);
                }
            }
        }
        int dataField = 0;
        if (kind == Kind.TREE && sb.role == StreamRole.CAMERA) {
            if (dec instanceof io.flywheel.decode.protobuf.ProtobufDecoder pd) {
                com.google.protobuf.Descriptors.FieldDescriptor f = pd.descriptor().findFieldByName("data");
                if (f != null && !f.isRepeated() && f.getType() == com.google.protobuf.Descriptors.FieldDescriptor.Type.BYTES) {
                    kind = Kind.PROTOBUF_IMAGE;
                    dataField = f.getNumber();
                }
            } else if (enc.equals("json")) {
                kind = Kind.JSON_IMAGE;
            }
        }
        if (kind != Kind.LOG_ONLY && kind != Kind.TREE && kind != Kind.PROTOBUF_IMAGE && kind != Kind.JSON_IMAGE) {
            sb.hasHeader(true);
        }
        plans.put(c.id(), new Plan(sb, kind, dec, kind == Kind.CDR_IMAGE, dataField));
        if (c.topic().endsWith("/robot_description") && shortType.equals("String")) {
            robotDescriptions.put(c.id(), c);
        }
    }

    /**
     * The first message of a {@code /robot_description} {@code std_msgs/String} topic (ROS 2's robot_state_publisher
     * publishes the URDF there) becomes the episode's {@code robot_description} metadata, with
     * {@code robot_description.source} = {@code topic TOPIC}, when it parses as a URDF; else a
     * {@code robot_description.warning} says why.
     */
    private void robotDescription(Record.Message m, Record.Channel c) {
        String source = "topic " + c.topic();
        String text;
        try {
            ByteBuffer d = m.data().duplicate();
            if (c.messageEncoding().equals("cdr")) {
                // CDR: 4-byte encapsulation header (byte 1: 0 big-, 1 little-endian), uint32 length incl. the NUL
                d.order(d.get(d.position() + 1) % 2 == 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
                int len = d.getInt(d.position() + 4);
                if (len < 1 || len > d.remaining() - 8) throw new DecodeException("string length " + len + " out of range");
                byte[] b = new byte[len - 1];
                d.get(d.position() + 8, b);
                text = new String(b, StandardCharsets.UTF_8);
            } else {
                Record.Schema s = schemas.get(c.schemaId());
                MessageDecoder dec = Decoders.forSchema(c.messageEncoding(), s == null ? "" : s.name(),
                        s == null ? "" : s.encoding(), s == null ? null : bytes(s.data()));
                text = Values.text(dec.decode(d));
            }
            Urdf.parse(Urdf.utf8(text), source);
        } catch (DecodeException | IngestException e) {
            out.episodeMetadata.putIfAbsent("robot_description.warning", source + ": " + e.getMessage());
            return;
        }
        out.episodeMetadata.put("robot_description", text);
        out.episodeMetadata.put("robot_description.source", source);
    }

    /** @return true when a ros2msg schema's first field is a std_msgs/Header */
    private static boolean headerFirst(Record.Schema s) {
        if (s == null || !s.encoding().equals("ros2msg")) return false;
        String text = StandardCharsets.UTF_8.decode(s.data().duplicate()).toString();
        for (String line : text.split("\n")) {
            String l = line.strip();
            int hash = l.indexOf('#');
            if (hash >= 0) l = l.substring(0, hash).strip();
            if (l.isEmpty()) continue;
            String t = l.split("\\s+")[0];
            return t.equals("std_msgs/Header") || t.equals("Header") || t.equals("std_msgs/msg/Header");
        }
        return false;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    /**
     * @param dataOffset offset of the message data's first byte: in the decompressed chunk when chunkOffset >= 0,
     *     else absolute
     * @param where offset to name in errors (the chunk's, or the message data's)
     */
    private void message(Record.Message m, long chunkOffset, String compression, long dataOffset, long where)
            throws IOException {
        Plan p = plans.get(m.channelId());
        if (p == null) {
            throw new IngestException(name, where, "message on channel " + m.channelId()
                    + ", which no Channel record before it defines");
        }
        ByteBuffer data = m.data();
        if (p.kind == Kind.FRAME_SKIPS) {
            out.frameSkips.add(FrameSkips.decode(data, name, where));
            return;
        }
        if (robotDescriptions.containsKey(m.channelId()) && !out.episodeMetadata.containsKey("robot_description")) {
            robotDescription(m, robotDescriptions.get(m.channelId()));
        }
        StreamBuilder sb = p.stream;
        try {
            switch (p.kind) {
                case CDR_COMPRESSED_IMAGE -> compressedImage(sb, m, data, chunkOffset, compression, dataOffset);
                case CDR_COMPRESSED_VIDEO -> compressedVideo(sb, m, data, chunkOffset, compression, dataOffset);
                case CDR_IMAGE -> image(sb, m, data, chunkOffset, compression, dataOffset);
                case CDR_JOINT_STATE -> jointState(sb, m, data);
                case CDR_HEADER -> sb.add(m.logTime(), CdrFastPaths.headerStamp(data));
                case LOG_ONLY -> sb.add(m.logTime(), 0);
                case TREE -> {
                    Object tree = p.decoder.decode(data);
                    if (Values.hasStamp(tree)) sb.hasHeader(true);
                    int i = sb.add(m.logTime(), Values.stamp(tree));
                    tree(sb, i, tree);
                }
                case PROTOBUF_IMAGE, JSON_IMAGE -> encodedImage(p, m, data, chunkOffset, compression, dataOffset);
                case FRAME_SKIPS -> throw new IllegalStateException("handled above");
            }
        } catch (DecodeException e) {
            throw new IngestException(name, chunkOffset >= 0 ? chunkOffset : where, "message on " + sb.topic + " ("
                    + sb.messageType + ")" + (chunkOffset >= 0 ? " at offset " + dataOffset + " of the decompressed chunk"
                    : "") + " does not decode: " + e.getMessage(), e);
        }
    }

    // One small method per kind keeps message() cheap for the JIT to compile (one huge method took C2 over a
    // second on one core, time taken from the ingest itself).

    private void compressedImage(StreamBuilder sb, Record.Message m, ByteBuffer data, long chunkOffset,
                                 String compression, long dataOffset) throws DecodeException {
        CdrFastPaths.CompressedImage ci = CdrFastPaths.compressedImage(data);
        long lay = CdrImageLayout.locate(data, false);
        int off = (int) (lay >>> 32);
        int len = (int) lay;
        if (len != ci.data().remaining()) throw new DecodeException("image payload length mismatch");
        int i = sb.add(m.logTime(), ci.stampNs());
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression,
                normaliseFormat(ci.format()), 0, 0));
    }

    /**
     * A CDR {@code foxglove_msgs/msg/CompressedVideo}: the locator is the {@code data} bytes (one H.264 / H.265
     * access unit, Annex B), its format the message's {@code format} ({@code h264}, {@code h265}); the stamp is
     * the {@code timestamp} field. Such an image decodes only in stream order from a keyframe (enrich does so).
     */
    private void compressedVideo(StreamBuilder sb, Record.Message m, ByteBuffer data, long chunkOffset,
                                 String compression, long dataOffset) throws DecodeException {
        CdrImageLayout.Video v = CdrImageLayout.video(data);
        int i = sb.add(m.logTime(), v.stampNs());
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + v.offset(), v.length(), compression,
                normaliseFormat(v.format()), 0, 0));
    }

    private void image(StreamBuilder sb, Record.Message m, ByteBuffer data, long chunkOffset, String compression,
                       long dataOffset) throws DecodeException {
        CdrFastPaths.Image im = CdrFastPaths.image(data);
        long lay = CdrImageLayout.locate(data, true);
        int off = (int) (lay >>> 32);
        int len = (int) lay;
        if (len != im.data().remaining()) throw new DecodeException("image payload length mismatch");
        int i = sb.add(m.logTime(), im.stampNs());
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression, im.encoding(),
                im.width(), im.height()));
    }

    /**
     * A protobuf or JSON camera image (e.g. {@code foxglove.CompressedImage}): decoded for its timestamp and
     * format, and located without a copy. Protobuf: the wire format keeps a bytes field's value as is (protobuf
     * encoding guide, "Length-delimited records"), so the locator is the {@code data} field's value. JSON: the
     * {@code data} string holds base64 (Foxglove's JSON encoding of bytes); the locator is the string's contents
     * with payload {@code base64}, or the whole message with payload {@code json:data} when the string has escapes.
     */
    private void encodedImage(Plan p, Record.Message m, ByteBuffer data, long chunkOffset, String compression,
                              long dataOffset) throws DecodeException {
        StreamBuilder sb = p.stream;
        Object tree = p.decoder.decode(data);
        if (Values.hasStamp(tree)) sb.hasHeader(true);
        int i = sb.add(m.logTime(), Values.stamp(tree));
        String format = "";
        int w = 0;
        int h = 0;
        if (tree instanceof Map<?, ?> t) {
            Object f = t.containsKey("format") ? t.get("format") : t.get("encoding");
            format = t.containsKey("format") ? normaliseFormat(String.valueOf(f)) : f == null ? "" : String.valueOf(f);
            w = t.get("width") instanceof Number x ? x.intValue() : 0;
            h = t.get("height") instanceof Number x ? x.intValue() : 0;
        }
        long loc = p.kind == Kind.PROTOBUF_IMAGE ? EncodedImageLayout.protobufField(data, p.dataField)
                : EncodedImageLayout.jsonString(data, "data");
        if (loc == EncodedImageLayout.NOT_FOUND) {
            return; // no data field in this message: times only
        }
        String payload = "";
        int off;
        int len;
        if (loc == EncodedImageLayout.ESCAPED) {
            off = 0;
            len = data.remaining();
            payload = "json:data";
        } else {
            off = (int) (loc >>> 32);
            len = (int) loc;
            payload = p.kind == Kind.JSON_IMAGE ? "base64" : "";
        }
        sb.locator(i, new RawLocator(uri, chunkOffset, dataOffset + off, len, compression, format, w, h, payload));
    }

    private static void jointState(StreamBuilder sb, Record.Message m, ByteBuffer data) throws DecodeException {
        CdrFastPaths.JointState js = CdrFastPaths.jointState(data);
        int i = sb.add(m.logTime(), js.stampNs());
        if (sb.role == StreamRole.GRIPPER) {
            sb.value(i, js.position().length == 0 ? new double[0] : new double[] {js.position()[0]});
        } else {
            sb.value(i, js.position());
            if (js.names().size() == js.position().length) sb.names(js.names());
        }
    }

    /** Stores the role-specific content of a decoded tree (shared with the ROS 1 reader). */
    static void tree(StreamBuilder sb, int i, Object tree) {
        switch (sb.role) {
            case STATE, ACTION, OTHER -> {
                Values.Vector v = Values.vector(tree, sb.messageType);
                if (sb.role != StreamRole.OTHER || v.values().length > 0) {
                    sb.value(i, v.values());
                    sb.names(v.names());
                }
            }
            case GRIPPER -> {
                Values.Vector v = Values.vector(tree, sb.messageType);
                sb.value(i, v.values().length == 0 ? new double[0] : new double[] {v.values()[0]});
            }
            case TASK, OUTCOME -> sb.text(i, Values.text(tree));
            case CAMERA -> { } // images: located by their readers (CDR, protobuf, JSON, ROS 1), no values
        }
    }

    static String normaliseFormat(String f) {
        String s = f == null ? "" : f.trim().toLowerCase(java.util.Locale.ROOT);
        if (s.equals("jpg") || s.equals("jpeg") || s.endsWith("jpeg compressed bgr8") || s.contains("jpeg")) return "jpeg";
        if (s.contains("png")) return "png";
        if (s.equals("avc")) return "h264"; // foxglove.CompressedVideo format aliases
        if (s.equals("hevc")) return "h265";
        return s;
    }
}
