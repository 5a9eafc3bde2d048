package io.flywheel.mcap;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * <p>Stateless and thread-safe.
 */
public final class ChunkDecompressor {
    /** Largest uncompressed chunk this reader holds in memory: the largest Java byte array. */
    public static final int MAX_UNCOMPRESSED = Integer.MAX_VALUE - 16;

    private ChunkDecompressor() {}

    /**
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
                byte[] src = new byte[compressedLen];
                in.get(src);
                byte[] dst = new byte[(int) declared];
                int n;
                if (compression.equals("zstd")) {
                    n = zstd(src, dst, file, chunkOffset, where);
                } else {
                    try {
                        n = Lz4FrameDecoder.decode(src, 0, src.length, dst, false, where);
                    } catch (IllegalStateException e) {
                        throw new McapFormatException(file, chunkOffset, e.getMessage());
                    }
                }
                if (n != declared) {
                    throw new McapFormatException(file, chunkOffset, where + " decompresses to " + n
                            + " bytes but declares uncompressed_size " + declared);
                }
                out = ByteBuffer.wrap(dst).order(ByteOrder.LITTLE_ENDIAN);
            }
            default -> throw new McapFormatException(file, chunkOffset, "chunk uses compression \""
                    + compression + "\", which this reader does not support (expected \"\", \"zstd\" or \"lz4\")");
        }
        if (validateCrc && chunk.uncompressedCrc() != 0) {
            CRC32 crc = new CRC32();
            crc.update(out.duplicate());
            if (crc.getValue() != chunk.uncompressedCrc()) {
                throw new McapFormatException(file, chunkOffset, String.format(
                        "%s: CRC-32 of the %d uncompressed bytes is %d, the chunk declares uncompressed_crc %d",
                        where, out.remaining(), crc.getValue(), chunk.uncompressedCrc()));
            }
        }
        return out;
    }

    private static int zstd(byte[] src, byte[] dst, String file, long chunkOffset, String where)
            throws McapFormatException {
        try (ZstdDecompressCtx ctx = new ZstdDecompressCtx()) {
            return ctx.decompressByteArray(dst, 0, dst.length, src, 0, src.length);
        } catch (ZstdException e) {
            String msg = e.getMessage();
            if (msg != null && msg.toLowerCase(java.util.Locale.ROOT).contains("too small")) {
                msg = "decompresses to more than the declared uncompressed_size " + dst.length;
            }
            throw new McapFormatException(file, chunkOffset, where + ": zstd error: " + msg, e);
        } catch (RuntimeException e) {
            throw new McapFormatException(file, chunkOffset, where + ": zstd error: " + e, e);
        }
    }
}
