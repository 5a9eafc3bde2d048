package io.flywheel.ingest;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Reads TFRecord files record by record. Framing (TensorFlow, {@code tensorflow/core/lib/io/record_writer.cc}):
 * {@code uint64 length, uint32 masked_crc32c(length bytes), byte data[length], uint32 masked_crc32c(data)},
 * little-endian, where {@code masked(c) = ((c >>> 15) | (c << 17)) + 0xa282ead8} (uint32 arithmetic) and
 * the CRC is CRC-32C (Castagnoli, {@link CRC32C}). Both CRCs are checked. Not thread-safe.
 */
public final class TfRecordReader implements Closeable {
    /** Largest record held in memory. */
    public static final long MAX_RECORD = Integer.MAX_VALUE - 64;

    /**
     * One record.
     *
     * @param index 0-based position in the file
     * @param dataOffset absolute file offset of the record's first data byte
     * @param data the record's bytes
     */
    public record TfRecord(int index, long dataOffset, byte[] data) {}

    private final FileChannel fc;
    private final String name;
    private final long size;
    private long pos;
    private int index;

    private TfRecordReader(FileChannel fc, String name) throws IOException {
        this.fc = fc;
        this.name = name;
        this.size = fc.size();
    }

    /**
     * @param path a TFRecord file
     * @return a reader before the first record
     * @throws IOException when the file cannot be opened
     */
    public static TfRecordReader open(Path path) throws IOException {
        return new TfRecordReader(FileChannel.open(path, StandardOpenOption.READ), path.toString());
    }

    /**
     * @return the next record, or null at the end of the file
     * @throws IngestException naming the file and offset when a record is truncated, its length is
     *     impossible, or a CRC does not match
     */
    public TfRecord next() throws IOException {
        if (pos == size) return null;
        long at = pos;
        if (size - at < 12) {
            throw new IngestException(name, at, "the file ends " + (size - at) + " bytes into the 12-byte length and"
                    + " length-CRC of TFRecord record " + index);
        }
        ByteBuffer h = read(at, 12);
        long len = h.getLong(0);
        int lenCrc = h.getInt(8);
        int want = mask(crc32c(h.array(), 0, 8));
        if (want != lenCrc) {
            throw new IngestException(name, at + 8, String.format("TFRecord record %d: length CRC is %08x, expected"
                    + " masked CRC-32C %08x of the length bytes (not a TFRecord file, or corrupt)", index, lenCrc, want));
        }
        if (len < 0 || len > size - at - 16 || len > MAX_RECORD) {
            throw new IngestException(name, at, "TFRecord record " + index + " declares length " + Long.toUnsignedString(len)
                    + " but only " + Math.max(0, size - at - 16) + " bytes of data and CRC follow");
        }
        ByteBuffer d = read(at + 12, (int) len + 4);
        byte[] data = new byte[(int) len];
        System.arraycopy(d.array(), 0, data, 0, (int) len);
        int dataCrc = d.getInt((int) len);
        int w = mask(crc32c(data, 0, data.length));
        if (w != dataCrc) {
            throw new IngestException(name, at + 12 + len, String.format("TFRecord record %d: data CRC is %08x, expected"
                    + " masked CRC-32C %08x of its %d data bytes", index, dataCrc, w, len));
        }
        pos = at + 16 + len;
        return new TfRecord(index++, at + 12, data);
    }

    /** @return the masked CRC of TFRecord framing */
    static int mask(int crc) {
        return ((crc >>> 15) | (crc << 17)) + 0xa282ead8;
    }

    static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /**
     * @param path a file
     * @return true when the file starts with a whole TFRecord record header whose length CRC is right (a masked
     *     CRC-32C: 1 in 2^32 by chance); a length past the end of the file is then a truncated TFRecord, which the
     *     reader reports as such, not "not a recording"
     */
    public static boolean looksLikeTfRecord(Path path) {
        try (FileChannel fc = FileChannel.open(path, StandardOpenOption.READ)) {
            if (fc.size() < 12) return false;
            ByteBuffer h = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
            while (h.hasRemaining() && fc.read(h, h.position()) > 0) { }
            long len = h.getLong(0);
            return mask(crc32c(h.array(), 0, 8)) == h.getInt(8) && len >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    private ByteBuffer read(long at, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (fc.read(b, at + b.position()) < 0) {
                throw new IngestException(name, at + b.position(), "the file ends early");
            }
        }
        return b;
    }

    @Override
    public void close() throws IOException {
        fc.close();
    }
}
