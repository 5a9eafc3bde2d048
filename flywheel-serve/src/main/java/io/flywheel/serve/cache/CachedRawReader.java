package io.flywheel.serve.cache;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import io.flywheel.ingest.IngestException;
import io.flywheel.ingest.RawLocator;
import io.flywheel.mcap.ChunkDecompressor;
import io.flywheel.mcap.Record;
import io.flywheel.mcap.RecordParser;
import io.flywheel.serve.loader.RawSource;

/**
 * A {@link RawSource} that reads raw-file bytes from a {@link RangeCache} first and from the raw
 * file otherwise. A plain locator reads its byte range; a chunked one reads the whole MCAP Chunk
 * record at {@code chunkOffset} (the 9-byte opcode and length, then the body), decompresses it
 * (MCAP spec, "Chunk") and slices the image out; the last chunk stays decompressed. One per
 * thread.
 */
public final class CachedRawReader implements RawSource {
    /** Shared hit/miss counters of the raw reads of all readers of one cache. */
    public static final class Counters {
        final AtomicLong hitBytes = new AtomicLong();
        final AtomicLong missBytes = new AtomicLong();
        final AtomicLong hitReads = new AtomicLong();
        final AtomicLong missReads = new AtomicLong();

        /** @return bytes read from the cache */
        public long hitBytes() {
            return hitBytes.get();
        }

        /** @return bytes read from the raw files */
        public long missBytes() {
            return missBytes.get();
        }

        /** @return reads served from the cache */
        public long hitReads() {
            return hitReads.get();
        }

        /** @return reads served from the raw files */
        public long missReads() {
            return missReads.get();
        }
    }

    private final RangeCache cache;
    private final LocalOrigin files = new LocalOrigin(Path.of("/"));
    private final Counters counters;
    private String chunkKey;
    private long chunkAt = -1;
    private ByteBuffer chunkRecords;

    /** @param cache the cache @param counters where to count hits and misses */
    public CachedRawReader(RangeCache cache, Counters counters) {
        this.cache = cache;
        this.counters = counters;
    }

    @Override
    public byte[] read(RawLocator loc) throws IOException {
        String path = Path.of(URI.create(loc.uri())).toString();
        String key = WarmPlanner.rawKey(path);
        if (loc.isPlainRange()) {
            return bytes(key, path, new ByteRange(loc.offset(), loc.offset() + loc.length()));
        }
        if (!(key.equals(chunkKey) && chunkAt == loc.chunkOffset())) {
            long at = loc.chunkOffset();
            ByteBuffer h = ByteBuffer.wrap(bytes(key, path, new ByteRange(at, at + 9))).order(ByteOrder.LITTLE_ENDIAN);
            long len = h.getLong(1);
            if ((h.get(0) & 0xFF) != Record.OP_CHUNK || len < 0 || len > ChunkDecompressor.MAX_UNCOMPRESSED) {
                throw new IngestException(loc.uri(), at, String.format(
                        "expected a Chunk record (opcode 0x06), found opcode 0x%02X with length %d", h.get(0) & 0xFF, len));
            }
            ByteBuffer body = ByteBuffer.wrap(bytes(key, path, new ByteRange(at + 9, at + 9 + len)))
                    .order(ByteOrder.LITTLE_ENDIAN);
            Record.Chunk c = (Record.Chunk) RecordParser.parse(Record.OP_CHUNK, body, loc.uri(), at);
            chunkRecords = ChunkDecompressor.decompress(c, loc.uri(), at, false);
            chunkKey = key;
            chunkAt = at;
        }
        if (loc.offset() + loc.length() > chunkRecords.remaining()) {
            throw new IngestException(loc.uri(), loc.chunkOffset(), "locator range [" + loc.offset() + ", "
                    + (loc.offset() + loc.length()) + ") lies outside the " + chunkRecords.remaining()
                    + " decompressed bytes of the chunk");
        }
        byte[] out = new byte[loc.length()];
        chunkRecords.get((int) loc.offset(), out);
        return out;
    }

    private byte[] bytes(String key, String path, ByteRange r) throws IOException {
        byte[] b = cache.get(key, r);
        if (b != null) {
            counters.hitBytes.addAndGet(b.length);
            counters.hitReads.incrementAndGet();
            return b;
        }
        b = files.read(path, r);
        counters.missBytes.addAndGet(b.length);
        counters.missReads.incrementAndGet();
        return b;
    }

    @Override
    public void close() {
        chunkRecords = null;
    }
}
