package io.flywheel.mcap;

import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Decodes data in the LZ4 frame format (lz4 "Frame format" v1.6.x,
 * https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md) into a caller-provided array of known
 * size, as MCAP "lz4" chunks hold it.
 *
 * <p>lz4-java's {@code LZ4FrameInputStream} refuses frames with linked (dependent) blocks, which the
 * reference {@code lz4} tool writes with {@code -BD}; so the frame layer is decoded here. Independent
 * blocks are handed to lz4-java's {@link LZ4SafeDecompressor} (native where available). Linked blocks
 * are decoded by {@link #decodeBlock}, a bounds-checked LZ4 block decoder whose matches may reach
 * back into the output already written for earlier blocks of the same frame (the "previous 64 KB"
 * dictionary of the format): since the whole chunk is decoded into one array, that history is
 * simply the bytes before the block.
 *
 * <p>Handles concatenated frames, skippable frames, block checksums, the content checksum and the
 * content size field. Frames with a dictionary id are refused (MCAP has no way to supply one).
 */
final class Lz4FrameDecoder {
    private static final int MAGIC = 0x184D2204;
    private static final int SKIPPABLE_MASK = 0xFFFFFFF0;
    private static final int SKIPPABLE_BASE = 0x184D2A50;
    private static final LZ4SafeDecompressor BLOCK = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXH = XXHashFactory.fastestInstance().hash32();

    private Lz4FrameDecoder() {}

    /**
     * @param src compressed bytes: one or more LZ4 frames (skippable frames allowed)
     * @param dst output; exactly {@code dst.length} bytes are expected
     * @param forceIndependent test hook: decode linked blocks as if independent (so references into
     *     earlier blocks fail)
     * @param where prefix for error messages, e.g. "lz4 chunk at byte 610"
     * @return number of bytes written to dst
     * @throws IllegalStateException with a message saying what is wrong and at which compressed
     *     offset; the caller wraps it into a McapFormatException
     */
    static int decode(byte[] src, int srcOff, int srcLen, byte[] dst, boolean forceIndependent, String where) {
        int ip = srcOff;
        final int iend = srcOff + srcLen;
        int op = 0;
        boolean anyFrame = false;
        while (ip < iend) {
            int frameStart = ip;
            need(ip, 4, iend, frameStart - srcOff, "frame magic", where);
            int magic = le32(src, ip);
            ip += 4;
            if ((magic & SKIPPABLE_MASK) == SKIPPABLE_BASE) {
                need(ip, 4, iend, ip - srcOff, "skippable frame size", where);
                long skip = Integer.toUnsignedLong(le32(src, ip));
                ip += 4;
                if (skip > iend - ip) {
                    throw bad(where, ip - srcOff, "skippable frame of " + skip + " bytes runs past the end ("
                            + (iend - ip) + " bytes left)");
                }
                ip += (int) skip;
                continue;
            }
            if (magic != MAGIC) {
                throw bad(where, frameStart - srcOff, String.format(
                        "expected the LZ4 frame magic 0x184D2204, found 0x%08X", magic));
            }
            anyFrame = true;
            // Frame descriptor: FLG, BD, [content size 8], [dict id 4], HC.
            need(ip, 3, iend, ip - srcOff, "frame descriptor", where);
            int descStart = ip;
            int flg = src[ip++] & 0xFF;
            int bd = src[ip++] & 0xFF;
            if ((flg >>> 6) != 1) {
                throw bad(where, descStart - srcOff, "LZ4 frame version " + (flg >>> 6) + " is not 1");
            }
            if ((flg & 0x02) != 0 || (bd & 0x8F) != 0) {
                throw bad(where, descStart - srcOff, "reserved bits set in the frame descriptor");
            }
            boolean independent = (flg & 0x20) != 0;
            boolean blockChecksum = (flg & 0x10) != 0;
            boolean hasContentSize = (flg & 0x08) != 0;
            boolean contentChecksum = (flg & 0x04) != 0;
            boolean hasDictId = (flg & 0x01) != 0;
            int bsid = (bd >>> 4) & 0x7;
            if (bsid < 4) {
                throw bad(where, descStart - srcOff, "block maximum size id " + bsid + " (4..7 allowed)");
            }
            int blockMax = 1 << (8 + 2 * bsid);
            long contentSize = -1;
            if (hasContentSize) {
                need(ip, 8, iend, ip - srcOff, "content size", where);
                contentSize = le64(src, ip);
                ip += 8;
            }
            if (hasDictId) {
                throw bad(where, descStart - srcOff, "frame needs an external dictionary (dict id set)");
            }
            need(ip, 1, iend, ip - srcOff, "header checksum", where);
            int hc = src[ip] & 0xFF;
            int expectHc = (XXH.hash(src, descStart, ip - descStart, 0) >>> 8) & 0xFF;
            if (hc != expectHc) {
                throw bad(where, ip - srcOff, String.format(
                        "frame descriptor checksum 0x%02X, expected 0x%02X", hc, expectHc));
            }
            ip++;
            int frameOut = op;
            boolean linked = !independent && !forceIndependent;
            while (true) {
                need(ip, 4, iend, ip - srcOff, "block size (or EndMark)", where);
                int blockHeader = le32(src, ip);
                int blockAt = ip - srcOff;
                ip += 4;
                if (blockHeader == 0) {
                    break;
                }
                boolean stored = (blockHeader & 0x80000000) != 0;
                int size = blockHeader & 0x7FFFFFFF;
                if (size > blockMax) {
                    throw bad(where, blockAt, "block of " + size + " bytes exceeds the frame's maximum of " + blockMax);
                }
                need(ip, size + (blockChecksum ? 4 : 0), iend, blockAt, "block of " + size + " bytes", where);
                if (blockChecksum) {
                    int want = le32(src, ip + size);
                    int got = XXH.hash(src, ip, size, 0);
                    if (want != got) {
                        throw bad(where, blockAt, String.format("block checksum 0x%08X, expected 0x%08X", got, want));
                    }
                }
                int room = Math.min(blockMax, dst.length - op);
                if (stored) {
                    if (size > dst.length - op) {
                        throw bad(where, blockAt, "decompressed data exceeds the expected " + dst.length + " bytes");
                    }
                    System.arraycopy(src, ip, dst, op, size);
                    op += size;
                } else if (linked) {
                    op = decodeBlock(src, ip, size, dst, op, room, frameOut, where, blockAt);
                } else {
                    int n;
                    try {
                        n = BLOCK.decompress(src, ip, size, dst, op, room);
                    } catch (LZ4Exception | IndexOutOfBoundsException e) {
                        throw bad(where, blockAt, "corrupt LZ4 block (" + e.getMessage() + ")"
                                + (room < blockMax ? " or decompressed data exceeds the expected "
                                + dst.length + " bytes" : ""));
                    }
                    op += n;
                }
                ip += size + (blockChecksum ? 4 : 0);
            }
            if (contentChecksum) {
                need(ip, 4, iend, ip - srcOff, "content checksum", where);
                int want = le32(src, ip);
                int got = XXH.hash(dst, frameOut, op - frameOut, 0);
                if (want != got) {
                    throw bad(where, ip - srcOff, String.format(
                            "content checksum (xxHash32) 0x%08X, expected 0x%08X", got, want));
                }
                ip += 4;
            }
            if (contentSize >= 0 && contentSize != op - frameOut) {
                throw bad(where, frameStart - srcOff, "frame declares content size " + Long.toUnsignedString(contentSize)
                        + " but decodes to " + (op - frameOut) + " bytes");
            }
        }
        if (!anyFrame) {
            throw bad(where, 0, "no LZ4 frame in " + srcLen + " bytes");
        }
        return op;
    }

    /**
     * Decodes one LZ4 block (lz4 "Block format") at {@code dst[op..]}, allowing matches to reach back
     * to {@code dst[lowBound]}.
     *
     * @return the new output position
     */
    static int decodeBlock(byte[] src, int ip, int len, byte[] dst, int op, int room, int lowBound,
                           String where, int blockAt) {
        final int iend = ip + len;
        final int oend = op + room;
        while (true) {
            if (ip >= iend) {
                throw bad(where, blockAt, "LZ4 block ends without a final literal run");
            }
            int token = src[ip++] & 0xFF;
            int lit = token >>> 4;
            if (lit == 15) {
                int b;
                do {
                    if (ip >= iend) {
                        throw bad(where, blockAt, "LZ4 block ends inside a literal length");
                    }
                    b = src[ip++] & 0xFF;
                    lit += b;
                    if (lit < 0) {
                        throw bad(where, blockAt, "LZ4 literal length overflows");
                    }
                } while (b == 255);
            }
            if (lit > iend - ip) {
                throw bad(where, blockAt, "LZ4 literal run of " + lit + " bytes runs past the block end");
            }
            if (lit > oend - op) {
                throw bad(where, blockAt, "decompressed data exceeds the expected size (literal run of " + lit + " bytes)");
            }
            System.arraycopy(src, ip, dst, op, lit);
            ip += lit;
            op += lit;
            if (ip == iend) {
                return op;
            }
            if (iend - ip < 2) {
                throw bad(where, blockAt, "LZ4 block ends inside a match offset");
            }
            int offset = (src[ip] & 0xFF) | (src[ip + 1] & 0xFF) << 8;
            ip += 2;
            int match = op - offset;
            if (offset == 0 || match < lowBound) {
                throw bad(where, blockAt, "LZ4 match offset " + offset + " reaches before the start of the "
                        + "available history (" + (op - lowBound) + " bytes)");
            }
            int mlen = token & 0xF;
            if (mlen == 15) {
                int b;
                do {
                    if (ip >= iend) {
                        throw bad(where, blockAt, "LZ4 block ends inside a match length");
                    }
                    b = src[ip++] & 0xFF;
                    mlen += b;
                    if (mlen < 0) {
                        throw bad(where, blockAt, "LZ4 match length overflows");
                    }
                } while (b == 255);
            }
            mlen += 4;
            if (mlen > oend - op) {
                throw bad(where, blockAt, "decompressed data exceeds the expected size (match of " + mlen + " bytes)");
            }
            if (offset >= mlen) {
                System.arraycopy(dst, match, dst, op, mlen);
                op += mlen;
            } else {
                for (int i = 0; i < mlen; i++) {
                    dst[op++] = dst[match++];
                }
            }
        }
    }

    private static void need(int ip, int n, int iend, int at, String what, String where) {
        if (n > iend - ip) {
            throw bad(where, at, "compressed data ends inside the " + what + " (" + n + " bytes needed, "
                    + Math.max(0, iend - ip) + " left)");
        }
    }

    private static IllegalStateException bad(String where, int at, String what) {
        return new IllegalStateException(where + ", compressed offset " + at + ": " + what);
    }

    private static int le32(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16 | (b[i + 3] & 0xFF) << 24;
    }

    private static long le64(byte[] b, int i) {
        return Integer.toUnsignedLong(le32(b, i)) | (long) le32(b, i + 4) << 32;
    }
}
