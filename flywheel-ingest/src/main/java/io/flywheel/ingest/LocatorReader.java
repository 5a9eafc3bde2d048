package io.flywheel.ingest;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

import io.flywheel.error.BadInputException;
import io.flywheel.mcap.ChunkDecompressor;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;
import io.flywheel.raw.RawChannel;
import io.flywheel.raw.RawStorage;

/**
 * Reads the image bytes a {@link RawLocator} points at, from the raw file, without a copy of the file: a
 * plain range is read directly; a chunked locator reads the chunk record at {@code chunkOffset} (an MCAP
 * Chunk record, MCAP spec "Chunk", decompressed with {@link ChunkDecompressor}; or, when the file starts with
 * the ROS 1 bag magic {@code #ROSBAG V2.0}, a bag chunk record, op 0x05, decompressed as bz2 or lz4 frame)
 * and slices {@code [offset, offset + length)}; a plain range of format {@code h264} / {@code h265} in an MP4 file
 * (a sidecar video sample, length-prefixed NAL units) is turned into Annex B with the track's parameter sets in
 * front of keyframes ({@link Mp4SampleTable#toAnnexB}); then the payload is decoded ({@code base64}: RFC 4648 base64
 * text; {@code json:<path>}: the base64 string at that field path of a JSON message). The last decompressed
 * chunk is kept, so reading the frames of one chunk in a row decompresses it once. Files stay open until
 * {@link #close()}. Not thread-safe: one reader per thread.
 */
public final class LocatorReader implements Closeable {
    /** Largest chunk record read. */
    private static final long MAX_CHUNK = Integer.MAX_VALUE - 64;

    private static final byte[] BAG_MAGIC = "#ROSBAG V2.0\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Map<String, RawChannel> open = new HashMap<>();
    private final Map<String, Boolean> isBag = new HashMap<>();
    private final Map<String, Boolean> isMp4 = new HashMap<>();
    private final Map<String, Mp4SampleTable> mp4 = new HashMap<>();
    private final RawStorage storage;
    private String cachedUri;
    private long cachedChunk = -1;
    private ByteBuffer cachedRecords;

    /** A reader of {@code file:} URIs only. */
    public LocatorReader() {
        this(RawStorage.local());
    }

    /** @param storage opens the raw files ({@code Lake.rawStorage()} also reads a lake's files on S3) */
    public LocatorReader(RawStorage storage) {
        this.storage = storage;
    }

    /**
     * @param loc the locator
     * @return a new array holding the image bytes: exactly {@code loc.length()} bytes for payload {@code ""}, except
     *     an {@code h264} / {@code h265} sample of an MP4 file, which comes back as Annex B (start codes instead of
     *     length prefixes, parameter sets in front of a keyframe)
     * @throws MalformedDataException (an {@link IngestException}) naming the file and offset when the bytes were read
     *     but are malformed: an MP4 sample's NAL lengths do not add up to the sample (the sample's index is named),
     *     or the payload is not valid base64 / JSON with a base64 string at the path; this image only is bad
     * @throws IngestException naming the file and offset when the range lies outside the file, an MP4's sample
     *     table is malformed, no chunk record is at {@code chunkOffset}, the range lies outside the decompressed
     *     chunk, or a bag chunk does not decompress
     * @throws McapFormatException when an MCAP chunk does not decompress or fails its CRC
     * @throws IOException when reading fails, or the storage cannot read the URI's scheme
     */
    public byte[] read(RawLocator loc) throws IOException {
        byte[] range = range(loc);
        String p = loc.payload();
        if (p.isEmpty()) {
            if (loc.isPlainRange() && Boolean.TRUE.equals(isMp4.get(loc.uri())) && isVideoFormat(loc.format())) {
                return mp4Table(loc.uri()).toAnnexB(range, loc.offset());
            }
            return range;
        }
        long where = loc.isPlainRange() ? loc.offset() : loc.chunkOffset();
        String text;
        if (p.equals("base64")) {
            text = new String(range, java.nio.charset.StandardCharsets.US_ASCII);
        } else {
            com.fasterxml.jackson.databind.JsonNode n;
            try {
                n = JSON.readTree(range);
            } catch (IOException e) {
                throw new MalformedDataException(loc.uri(), where, "locator range of " + range.length + " bytes is not a JSON"
                        + " message: " + e.getMessage().lines().findFirst().orElse(""));
            }
            for (String f : p.substring(5).split("\\.")) {
                n = n == null ? null : n.get(f);
            }
            if (n == null || !n.isTextual()) {
                throw new MalformedDataException(loc.uri(), where, "JSON message has no base64 string at '" + p.substring(5) + "'");
            }
            text = n.textValue();
        }
        try {
            return java.util.Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new MalformedDataException(loc.uri(), where, "image payload is not valid base64: " + e.getMessage());
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /** @return true for h264 / h265 (or avc / hevc) */
    static boolean isVideoFormat(String f) {
        String s = f == null ? "" : f.trim().toLowerCase(java.util.Locale.ROOT);
        return s.equals("h264") || s.equals("h265") || s.equals("avc") || s.equals("hevc");
    }

    private Mp4SampleTable mp4Table(String uri) throws IOException {
        Mp4SampleTable t = mp4.get(uri);
        if (t == null) {
            // messages name a local file by its path, as ingest does
            String name = uri.startsWith("file:") ? java.nio.file.Path.of(java.net.URI.create(uri)).toString() : uri;
            t = Mp4SampleTable.read(channel(uri), name);
            mp4.put(uri, t);
        }
        return t;
    }

    /** The addressed bytes, before any payload decoding. */
    private byte[] range(RawLocator loc) throws IOException {
        RawChannel fc = channel(loc.uri());
        String name = loc.uri();
        if (loc.isPlainRange()) {
            if (loc.offset() + loc.length() > fc.size()) {
                throw new IngestException(name, loc.offset(), "locator range of " + loc.length() + " bytes runs past the"
                        + " end of the file at byte " + fc.size());
            }
            ByteBuffer b = ByteBuffer.allocate(loc.length());
            readFully(fc, b, loc.offset(), name);
            return b.array();
        }
        ByteBuffer recs = isBag.get(loc.uri()) ? bagChunk(fc, loc.uri(), loc.chunkOffset())
                : chunk(fc, loc.uri(), loc.chunkOffset());
        if (loc.offset() + loc.length() > recs.remaining()) {
            throw new IngestException(name, loc.chunkOffset(), "locator range [" + loc.offset() + ", "
                    + (loc.offset() + loc.length()) + ") lies outside the " + recs.remaining()
                    + " decompressed bytes of the chunk");
        }
        byte[] out = new byte[loc.length()];
        recs.get((int) loc.offset(), out);
        return out;
    }

    private ByteBuffer chunk(RawChannel fc, String uri, long at) throws IOException {
        if (at == cachedChunk && uri.equals(cachedUri)) return cachedRecords;
        String name = uri;
        if (at + 9 > fc.size()) {
            throw new IngestException(name, at, "expected a Chunk record (opcode 0x06) but the file ends at byte " + fc.size());
        }
        ByteBuffer h = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN);
        readFully(fc, h, at, name);
        int op = h.get(0) & 0xFF;
        long len = h.getLong(1);
        if (op != Record.OP_CHUNK) {
            throw new IngestException(name, at, String.format("expected a Chunk record (opcode 0x06), found opcode 0x%02X", op));
        }
        if (len < 0 || len > fc.size() - at - 9 || len > MAX_CHUNK) {
            throw new IngestException(name, at, "Chunk record declares length " + Long.toUnsignedString(len)
                    + ", past the end of the file at byte " + fc.size());
        }
        ByteBuffer body = ByteBuffer.allocate((int) len).order(ByteOrder.LITTLE_ENDIAN);
        readFully(fc, body, at + 9, name);
        body.flip();
        Record.Chunk c = (Record.Chunk) RecordParser.parse(Record.OP_CHUNK, body, name, at);
        ByteBuffer recs = ChunkDecompressor.decompress(c, name, at, false);
        cachedUri = uri;
        cachedChunk = at;
        cachedRecords = recs;
        return recs;
    }

    /** A ROS 1 bag chunk record (op 0x05) at {@code at}: header length, header fields, data length, data. */
    private ByteBuffer bagChunk(RawChannel fc, String uri, long at) throws IOException {
        if (at == cachedChunk && uri.equals(cachedUri)) return cachedRecords;
        ByteBuffer n = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        if (at + 4 > fc.size()) {
            throw new IngestException(uri, at, "expected a bag chunk record (op 0x05) but the file ends at byte " + fc.size());
        }
        readFully(fc, n, at, uri);
        long headerLen = Integer.toUnsignedLong(n.getInt(0));
        if (headerLen > fc.size() - at - 8 || headerLen > 1 << 20) {
            throw new IngestException(uri, at, "bag record header of " + headerLen + " bytes runs past the end of the file");
        }
        ByteBuffer h = ByteBuffer.allocate((int) headerLen + 4).order(ByteOrder.LITTLE_ENDIAN);
        readFully(fc, h, at + 4, uri);
        Map<String, byte[]> fields = new HashMap<>();
        int p = 0;
        while (p + 4 <= headerLen) {
            int len = h.getInt(p);
            if (len < 0 || p + 4 + len > headerLen) {
                throw new IngestException(uri, at, "bag record header field at " + p + " runs past the header");
            }
            byte[] f = new byte[len];
            h.get(p + 4, f);
            int eq = 0;
            while (eq < len && f[eq] != '=') eq++;
            fields.put(new String(f, 0, eq, java.nio.charset.StandardCharsets.US_ASCII),
                    java.util.Arrays.copyOfRange(f, Math.min(len, eq + 1), len));
            p += 4 + len;
        }
        byte[] op = fields.get("op");
        if (op == null || op.length != 1 || op[0] != 0x05) {
            throw new IngestException(uri, at, "expected a bag chunk record (op 0x05), found "
                    + (op == null || op.length != 1 ? "no op field" : String.format("op 0x%02X", op[0])));
        }
        String compression = fields.containsKey("compression")
                ? new String(fields.get("compression"), java.nio.charset.StandardCharsets.US_ASCII) : "";
        byte[] sz = fields.get("size");
        if (sz == null || sz.length != 4) {
            throw new IngestException(uri, at, "bag chunk record without a 4-byte size field");
        }
        long size = Integer.toUnsignedLong(ByteBuffer.wrap(sz).order(ByteOrder.LITTLE_ENDIAN).getInt());
        long dataLen = Integer.toUnsignedLong(h.getInt((int) headerLen));
        long dataAt = at + 8 + headerLen;
        if (dataLen > fc.size() - dataAt || dataLen > MAX_CHUNK || size > MAX_CHUNK) {
            throw new IngestException(uri, at, "bag chunk of " + dataLen + " bytes (" + size + " uncompressed) runs past"
                    + " the end of the file at byte " + fc.size());
        }
        ByteBuffer data = ByteBuffer.allocate((int) dataLen);
        readFully(fc, data, dataAt, uri);
        byte[] out;
        if (compression.equals("none")) {
            out = data.array();
        } else if (compression.equals("bz2") || compression.equals("lz4")) {
            try (java.io.InputStream in = compression.equals("bz2")
                    ? new org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream(
                            new java.io.ByteArrayInputStream(data.array()))
                    : new net.jpountz.lz4.LZ4FrameInputStream(new java.io.ByteArrayInputStream(data.array()))) {
                out = in.readNBytes((int) size);
                if (out.length != size || in.read() >= 0) {
                    throw new IngestException(uri, at, compression + " bag chunk does not decompress to its declared "
                            + size + " bytes");
                }
            } catch (IngestException e) {
                throw e;
            } catch (IOException | RuntimeException e) {
                throw new IngestException(uri, at, compression + " bag chunk does not decompress: " + e.getMessage());
            }
        } else {
            throw new IngestException(uri, at, "unknown bag chunk compression '" + compression + "' (expected none, bz2 or lz4)");
        }
        cachedUri = uri;
        cachedChunk = at;
        cachedRecords = ByteBuffer.wrap(out);
        return cachedRecords;
    }

    private static void readFully(RawChannel fc, ByteBuffer b, long at, String name) throws IOException {
        long p = at;
        while (b.hasRemaining()) {
            int n = fc.read(b, p);
            if (n < 0) throw new IngestException(name, p, "the file ends early");
            p += n;
        }
    }

    private RawChannel channel(String uri) throws IOException {
        RawChannel fc = open.get(uri);
        if (fc == null) {
            try {
                fc = storage.open(uri);
            } catch (BadInputException e) {
                throw new IngestException(uri, -1, e.getMessage());
            }
            open.put(uri, fc);
            ByteBuffer magic = ByteBuffer.allocate((int) Math.min(BAG_MAGIC.length, fc.size()));
            readFully(fc, magic, 0, uri);
            isBag.put(uri, java.util.Arrays.equals(magic.array(), BAG_MAGIC));
            isMp4.put(uri, Mp4SampleTable.looksLikeMp4(magic.array(), magic.limit()));
        }
        return fc;
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (RawChannel fc : open.values()) {
            try {
                fc.close();
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        open.clear();
        isBag.clear();
        isMp4.clear();
        mp4.clear();
        cachedRecords = null;
        if (first != null) throw first;
    }
}
