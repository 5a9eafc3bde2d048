package io.flywheel.raw;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Positional reads of one raw file (a recording or a sidecar video kept as it is), wherever it lies: a local file or
 * an object in S3. Not thread-safe; one reader at a time.
 */
public interface RawChannel extends Closeable {
    /** @return the file's size in bytes */
    long size() throws IOException;

    /**
     * Reads up to {@code dst.remaining()} bytes starting at byte {@code position} of the file.
     *
     * @return bytes read, -1 at or past the end of the file
     */
    int read(ByteBuffer dst, long position) throws IOException;

    /**
     * Reads exactly {@code dst.remaining()} bytes from {@code position}.
     *
     * @param name the file, for the message
     * @throws java.io.EOFException naming the file and the offset when it ends first
     */
    default void readFully(ByteBuffer dst, long position, String name) throws IOException {
        long p = position;
        while (dst.hasRemaining()) {
            int n = read(dst, p);
            if (n < 0) {
                throw new java.io.EOFException(name + ": the file ends at byte " + p + ", " + dst.remaining()
                        + " more bytes expected from byte " + position);
            }
            p += n;
        }
    }
}
