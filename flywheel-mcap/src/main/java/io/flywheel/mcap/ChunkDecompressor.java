package io.flywheel.mcap;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.IntFunction;
import java.util.zip.CRC32;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;

/**
 * Turns a {@link Record.Chunk}'s {@code records} bytes back into the uncompressed record stream, per
 * the MCAP specification, "Chunk" record (https://mcap.dev/spec#chunk-op0x06) and "Compression":
 * {@code ""} (stored), {@code "zstd"} (Zstandard frames, via zstd-jni) and {@code "lz4"} (the LZ4
 * <em>frame</em> format with independent or linked blocks, see {@link Lz4FrameDecoder}).
 *
 * <p>Checks: the decompressed length equals {@code uncompressed_size}; when asked and the chunk's
 * {@code uncompressed_crc} is non-zero, the CRC-32 (IEEE 802.3, {@link CRC32}) of the decompressed
 * bytes equals it. Before allocating, the declared size is bounded by what the codec can produce from
 * the compressed length (lz4: 256x, zstd: 65536x) and by the 2 GiB a Java array can hold, so a
 * forged size cannot exhaust memory.
 *
 * <p>Two ways to use it: the static {@link #decompress(Record.Chunk, String, long, boolean)}
 * (stateless, thread-safe, sets up a zstd context per call), or an instance, which keeps one zstd
 * context and CRC for many chunks (not thread-safe; {@link #close()} frees the native context).
 * Compressed input in a direct buffer (e.g. read from a file into one) is decompressed in place,
 * without a copy onto the Java heap.
 */
public final class ChunkDecompressor implements AutoCloseable {
    /** Largest uncompressed chunk this reader holds in memory: the largest Java byte array. */
    public static final int MAX_UNCOMPRESSED = Integer.MAX_VALUE - 16;

    private ZstdDecompressCtx zstdCtx;
    private final CRC32 crc = new CRC32();
    private boolean closed;

    /** A reusable decompressor: one zstd context, created on first use. Not thread-safe. */
    public ChunkDecompressor() {}

    /**
     * Stateless form of {@link #decompressChunk(Record.Chunk, String, long, boolean)}: sets up and
     * frees a zstd context for this one chunk. Thread-safe.
     *
     * @param chunk the chunk record
     * @param file file name for error messages, may be null
     * @param chunkOffset absolute offset of the chunk record's opcode byte, for error messages
     * @param validateCrc check {@code uncompressed_crc} when it is non-zero
     * @return the uncompressed records: a little-endian buffer positioned at 0 with exactly
     *     {@code uncompressed_size} bytes remaining (a view of the input for compression "", else a
     *     new array the caller may keep)
     * @throws McapFormatException naming the file and the chunk's offset when the compression is
     *     unknown, the data is corrupt, the size differs from {@code uncompressed_size}, or the CRC
     *     does not match
     */
    public static ByteBuffer decompress(Record.Chunk chunk, String file, long chunkOffset, boolean validateCrc)
            throws McapFormatException {
        try (ChunkDecompressor d = new ChunkDecompressor()) {
            return d.decompressChunk(chunk, file, chunkOffset, validateCrc);
        }
    }

    /**
     * Decompresses one chunk with this instance's zstd context.
     *
     * @param chunk the chunk record; its {@code records} may be a heap or a direct buffer
     * @param file file name for error messages, may be null
     * @param chunkOffset absolute offset of the chunk record's opcode byte, for error messages
     * @param validateCrc check {@code uncompressed_crc} when it is non-zero
     * @return the uncompressed records: a little-endian buffer positioned at 0 with exactly
     *     {@code uncompressed_size} bytes remaining (a view of the input for compression "", else a
     *     new heap array the caller may keep)
     * @throws McapFormatException as {@link #decompress(Record.Chunk, String, long, boolean)}
     * @throws IllegalStateException when this decompressor is closed
     */
    public ByteBuffer decompressChunk(Record.Chunk chunk, String file, long chunkOffset, boolean validateCrc)
            throws McapFormatException {
        return decompressChunk(chunk, null, 0, file, chunkOffset, validateCrc, null);
    }

    /**
     * As {@link #decompressChunk(Record.Chunk, String, long, boolean)}, with the compressed bytes
     * given as {@code src[srcOff, srcOff + chunk.records().remaining())} when the caller has them in
     * an array ({@code src} null: read them from {@code chunk.records()}), and, for zstd, the output
     * array taken from {@code zstdOut} (given the size, it returns an array at least that long; null:
     * a new exact array). The result then wraps that array from index 0.
     */
    ByteBuffer decompressChunk(Record.Chunk chunk, byte[] src, int srcOff, String file, long chunkOffset,
                               boolean validateCrc, IntFunction<byte[]> zstdOut) throws McapFormatException {
        if (closed) {
            throw new IllegalStateException("ChunkDecompressor is closed");
        }
        String compression = chunk.compression();
        ByteBuffer in = chunk.records().duplicate();
        long declared = chunk.uncompressedSize();
        int compressedLen = in.remaining();
        String where = (compression.isEmpty() ? "uncompressed" : compression) + " chunk at byte " + chunkOffset;
        ByteBuffer out;
        switch (compression) {
            case "" -> {
                if (declared != compressedLen) {
                    throw new McapFormatException(file, chunkOffset, "uncompressed chunk holds " + compressedLen
                            + " bytes of records but declares uncompressed_size " + Long.toUnsignedString(declared));
                }
                out = in.slice().order(ByteOrder.LITTLE_ENDIAN);
                if (validateCrc && chunk.uncompressedCrc() != 0) {
                    crc.reset();
                    crc.update(out.duplicate());
                    checkCrc(chunk, file, chunkOffset, where, compressedLen);
                }
                return out;
            }
            case "zstd", "lz4" -> {
                long bound = compression.equals("lz4") ? (long) compressedLen * 256 + 1024
                        : (long) compressedLen * 65536 + (1 << 20);
                if (declared < 0 || declared > MAX_UNCOMPRESSED || declared > bound) {
                    throw new McapFormatException(file, chunkOffset, String.format(
                            "%s declares uncompressed_size %s, which %s cannot produce from %d compressed bytes"
                                    + " or which exceeds the %d bytes this reader can hold",
                            where, Long.toUnsignedString(declared), compression, compressedLen, MAX_UNCOMPRESSED));
                }
                if (src == null && in.hasArray()) {
                    src = in.array();
                    srcOff = in.arrayOffset() + in.position();
                } else if (src == null && (compression.equals("lz4") || !in.isDirect())) {
                    src = new byte[compressedLen];
                    in.get(src);
                    srcOff = 0;
                }
                boolean zstd = compression.equals("zstd");
                byte[] dst = zstd && zstdOut != null ? zstdOut.apply((int) declared) : new byte[(int) declared];
                int n;
                if (zstd) {
                    n = zstd(src, srcOff, in, compressedLen, dst, (int) declared, file, chunkOffset, where);
                } else {
                    try {
                        n = Lz4FrameDecoder.decode(src, srcOff, compressedLen, dst, false, where);
                    } catch (IllegalStateException e) {
                        throw new McapFormatException(file, chunkOffset, e.getMessage());
                    }
                }
                if (n != declared) {
                    throw new McapFormatException(file, chunkOffset, where + " decompresses to " + n
                            + " bytes but declares uncompressed_size " + declared);
                }
                if (validateCrc && chunk.uncompressedCrc() != 0) {
                    crc.reset();
                    crc.update(dst, 0, n);
                    checkCrc(chunk, file, chunkOffset, where, n);
                }
                return ByteBuffer.wrap(dst, 0, n).order(ByteOrder.LITTLE_ENDIAN);
            }
            default -> throw new McapFormatException(file, chunkOffset, "chunk uses compression \""
                    + compression + "\", which this reader does not support (expected \"\", \"zstd\" or \"lz4\")");
        }
    }

    private void checkCrc(Record.Chunk chunk, String file, long chunkOffset, String where, int n)
            throws McapFormatException {
        if (crc.getValue() != chunk.uncompressedCrc()) {
            throw new McapFormatException(file, chunkOffset, String.format(
                    "%s: CRC-32 of the %d uncompressed bytes is %d, the chunk declares uncompressed_crc %d",
                    where, n, crc.getValue(), chunk.uncompressedCrc()));
        }
    }

    /** Frees the native zstd context. Idempotent. */
    @Override
    public void close() {
        closed = true;
        if (zstdCtx != null) {
            zstdCtx.close();
            zstdCtx = null;
        }
    }

    /** Decompresses from {@code src[srcOff..]} when given, else from the direct buffer {@code in}. */
    private int zstd(byte[] src, int srcOff, ByteBuffer in, int len, byte[] dst, int dstLen, String file,
                     long chunkOffset, String where) throws McapFormatException {
        try {
            if (zstdCtx == null) {
                zstdCtx = new ZstdDecompressCtx();
            }
            return src != null
                    ? zstdCtx.decompressByteArray(dst, 0, dstLen, src, srcOff, len)
                    : zstdCtx.decompressDirectByteBufferToByteArray(dst, 0, dstLen, in, in.position(), len);
        } catch (ZstdException e) {
            String msg = e.getMessage();
            if (msg != null && msg.toLowerCase(java.util.Locale.ROOT).contains("too small")) {
                msg = "decompresses to more than the declared uncompressed_size " + dstLen;
            }
            throw new McapFormatException(file, chunkOffset, where + ": zstd error: " + msg, e);
        } catch (RuntimeException e) {
            throw new McapFormatException(file, chunkOffset, where + ": zstd error: " + e, e);
        }
    }
}
