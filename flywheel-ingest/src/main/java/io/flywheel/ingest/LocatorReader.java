package io.flywheel.ingest;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

import io.flywheel.mcap.ChunkDecompressor;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;

/**
 * Reads the image bytes a {@link RawLocator} points at, from the raw file, without a copy of the file: a
 * plain range is read directly; a chunked locator reads the MCAP Chunk record at {@code chunkOffset}
 * (MCAP spec, "Chunk"), decompresses it with {@link ChunkDecompressor} and slices {@code [offset, offset +
 * length)}. The last decompressed chunk is kept, so reading the frames of one chunk in a row decompresses
 * it once. Files stay open until {@link #close()}. Not thread-safe: one reader per thread.
 */
public final class LocatorReader implements Closeable {
    /** Largest chunk record read. */
    private static final long MAX_CHUNK = Integer.MAX_VALUE - 64;

    private final Map<String, FileChannel> open = new HashMap<>();
    private String cachedUri;
    private long cachedChunk = -1;
    private ByteBuffer cachedRecords;

    /**
     * @param loc the locator
     * @return a new array holding exactly {@code loc.length()} bytes
     * @throws IngestException naming the file and offset when the range lies outside the file, no Chunk record
     *     is at {@code chunkOffset}, or the range lies outside the decompressed chunk
     * @throws McapFormatException when the chunk does not decompress or fails its CRC
     * @throws IOException when reading fails, or the URI is not a {@code file:} URI
     */
    public byte[] read(RawLocator loc) throws IOException {
        FileChannel fc = channel(loc.uri());
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
        ByteBuffer recs = chunk(fc, loc.uri(), loc.chunkOffset());
        if (loc.offset() + loc.length() > recs.remaining()) {
            throw new IngestException(name, loc.chunkOffset(), "locator range [" + loc.offset() + ", "
                    + (loc.offset() + loc.length()) + ") lies outside the " + recs.remaining()
                    + " decompressed bytes of the chunk");
        }
        byte[] out = new byte[loc.length()];
        recs.get((int) loc.offset(), out);
        return out;
    }

    private ByteBuffer chunk(FileChannel fc, String uri, long at) throws IOException {
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

    private static void readFully(FileChannel fc, ByteBuffer b, long at, String name) throws IOException {
        long p = at;
        while (b.hasRemaining()) {
            int n = fc.read(b, p);
            if (n < 0) throw new IngestException(name, p, "the file ends early");
            p += n;
        }
    }

    private FileChannel channel(String uri) throws IOException {
        FileChannel fc = open.get(uri);
        if (fc == null) {
            URI u = URI.create(uri);
            if (!"file".equals(u.getScheme())) {
                throw new IngestException(uri, -1, "only file: URIs can be read here, found scheme '" + u.getScheme() + "'");
            }
            fc = FileChannel.open(Path.of(u), StandardOpenOption.READ);
            open.put(uri, fc);
        }
        return fc;
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (FileChannel fc : open.values()) {
            try {
                fc.close();
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        open.clear();
        cachedRecords = null;
        if (first != null) throw first;
    }
}
