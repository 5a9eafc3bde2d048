package io.flywheel.mcap;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;

import net.jpountz.lz4.LZ4FrameOutputStream;

/**
 * Chunk compression for the MCAP writer and the indexed reader: the spec's well-known chunk
 * compressions ({@code ""} none, {@code "zstd"} the Zstandard frame format of RFC 8878, {@code
 * "lz4"} the LZ4 frame format), see https://mcap.dev/spec/registry#well-known-compression-formats.
 *
 * <p>A compressing instance holds reusable native contexts and buffers; it is not thread-safe.
 * Decompression is static and allocates the output array (whose size the chunk declares), so views
 * into it stay valid after the call.
 */
final class ChunkCodec implements AutoCloseable {
    static final String NONE = "";
    static final String ZSTD = "zstd";
    static final String LZ4 = "lz4";

    /** Java arrays cannot hold more. */
    static final int MAX_CHUNK_BYTES = Integer.MAX_VALUE - 16;

    private final String compression;
    private final ZstdCompressCtx zstd;
    private final GrowBuffer out = new GrowBuffer(1 << 16);

    /**
     * @param compression "", "zstd" or "lz4"
     * @param zstdLevel Zstandard level (1..22, negative for fast modes), used only for "zstd"
     */
    ChunkCodec(String compression, int zstdLevel) {
        this.compression = compression;
        if (ZSTD.equals(compression)) {
            zstd = new ZstdCompressCtx();
            zstd.setLevel(zstdLevel);
            zstd.setContentSize(true);
            zstd.setChecksum(false);
        } else if (LZ4.equals(compression) || NONE.equals(compression)) {
            zstd = null;
        } else {
            throw new IllegalArgumentException("unsupported chunk compression \"" + compression
                    + "\"; expected \"\", \"zstd\" or \"lz4\"");
        }
    }

    String compression() {
        return compression;
    }

    /**
     * Compresses {@code src[off, off+len)}. The result is valid until the next call.
     *
     * @return a buffer whose bytes {@code [0, size())} are the compressed records (the input
     *     itself is not copied when compression is "")
     */
    GrowBuffer compress(byte[] src, int off, int len) throws IOException {
        out.reset();
        switch (compression) {
            case ZSTD -> {
                long bound = Zstd.compressBound(len);
                if (bound > MAX_CHUNK_BYTES) {
                    throw new IOException("chunk of " + len + " bytes is too large to compress");
                }
                out.ensure((int) bound);
                int n = zstd.compressByteArray(out.array(), 0, (int) bound, src, off, len);
                out.setSize(n);
            }
            case LZ4 -> {
                // 64 KiB blocks: the LZ4 match window is 64 KiB anyway, and the per-chunk buffers stay small.
                try (LZ4FrameOutputStream lz = new LZ4FrameOutputStream(out.asOutputStream(),
                        LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB, len,
                        LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
                        LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE,
                        LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM)) {
                    lz.write(src, off, len);
                }
            }
            default -> {
                out.ensure(len);
                System.arraycopy(src, off, out.array(), 0, len);
                out.setSize(len);
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (zstd != null) {
            zstd.close();
        }
    }


    /** A growable byte array with an OutputStream view; reused across chunks. */
    static final class GrowBuffer {
        private byte[] buf;
        private int size;

        GrowBuffer(int initial) {
            buf = new byte[initial];
        }

        byte[] array() {
            return buf;
        }

        int size() {
            return size;
        }

        void setSize(int n) {
            size = n;
        }

        void reset() {
            size = 0;
        }

        void ensure(int capacity) {
            if (capacity > buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min(MAX_CHUNK_BYTES, Math.max(capacity, 2L * buf.length)));
            }
        }

        OutputStream asOutputStream() {
            return new OutputStream() {
                @Override
                public void write(int b) {
                    ensure(size + 1);
                    buf[size++] = (byte) b;
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    ensure(size + len);
                    System.arraycopy(b, off, buf, size, len);
                    size += len;
                }
            };
        }
    }
}
