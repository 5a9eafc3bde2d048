package io.flywheel.fleet.live;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32;

import com.google.protobuf.InvalidProtocolBufferException;

import io.flywheel.fleet.v1.ObservationRequest;

/**
 * The journal of one live episode, {@code _staging/streams/<robot>/<stream-id>.journal}: every request the gateway
 * accepted, in order, the OPEN first and, once the episode is over, the END last. A record is the 4-byte
 * little-endian length of its body, the body's CRC-32 (4 bytes, little-endian), and the body: the
 * {@code ObservationRequest} as it arrived, in protobuf's wire format. Appends go to the operating system as they come
 * (they survive the gateway's process, not a power loss); {@link #force()} puts them on the disk.
 *
 * <p>Reading stops at the end of the last complete record. What a process killed in the middle of an append leaves
 * after it (fewer bytes than a record header or its length promise, or a last record whose CRC fails and that ends
 * at the end of the file) is a torn tail: {@link #open} cuts it off. A record whose CRC fails with more records after
 * it is damage, not a torn write: {@link JournalDamagedException}.
 */
final class LiveJournal implements AutoCloseable {
    /** The largest record body read back, bytes (a request is at most the gateway's gRPC message limit). */
    static final int MAX_RECORD = 64 << 20;

    /** Told of each record read, in order. */
    interface Visitor {
        void record(ObservationRequest req) throws IOException;
    }

    /** The journal is damaged before its end; the message names the file and the offset. */
    static final class JournalDamagedException extends IOException {
        private static final long serialVersionUID = 1L;

        JournalDamagedException(String message) {
            super(message);
        }
    }

    private final Path file;
    private final FileChannel ch;
    private final CRC32 crc = new CRC32();
    private final ByteBuffer header = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    private long size;

    private LiveJournal(Path file, FileChannel ch, long size) {
        this.file = file;
        this.ch = ch;
        this.size = size;
    }

    /**
     * Creates a journal holding the OPEN (replacing nothing: the file must not exist).
     *
     * @throws java.nio.file.FileAlreadyExistsException when it does
     */
    static LiveJournal create(Path file, ObservationRequest open) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ);
        LiveJournal j = new LiveJournal(file, ch, 0);
        try {
            j.append(open);
        } catch (IOException | RuntimeException e) {
            j.close();
            throw e;
        }
        return j;
    }

    /**
     * Opens a journal for appending, cutting off a torn tail.
     *
     * @param replay told of every complete record, in order (null: the caller knows them, and {@code knownSize}
     *     is where they end)
     * @param knownSize with {@code replay} null: the size up to which the records are known good
     * @throws JournalDamagedException when a record before the last one is damaged
     */
    static LiveJournal open(Path file, Visitor replay, long knownSize) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.READ);
        try {
            long end = replay == null ? knownSize : scan(file, ch, replay);
            if (ch.size() > end) {
                ch.truncate(end);
            }
            return new LiveJournal(file, ch, end);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Reads every complete record of a journal, in order.
     *
     * @return the offset where the complete records end
     * @throws JournalDamagedException when a record before the last one is damaged
     */
    static long read(Path file, Visitor visitor) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return scan(file, ch, visitor);
        }
    }

    private static long scan(Path file, FileChannel ch, Visitor visitor) throws IOException {
        long size = ch.size();
        long at = 0;
        ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        CRC32 crc = new CRC32();
        byte[] body = new byte[1 << 16];
        while (size - at >= 8) {
            head.clear();
            readFully(ch, head, at);
            int len = head.getInt(0);
            long want = head.getInt(4) & 0xFFFFFFFFL;
            if (len < 0 || len > MAX_RECORD) { // an append writes header and body in one call: not a torn write
                throw new JournalDamagedException(file + " at byte " + at + ": record length "
                        + Integer.toUnsignedString(len) + " is past " + MAX_RECORD);
            }
            if (size - at - 8 < len) {
                break; // the body was cut: torn
            }
            if (body.length < len) {
                body = new byte[Math.max(len, body.length * 2)];
            }
            ByteBuffer b = ByteBuffer.wrap(body, 0, len);
            readFully(ch, b, at + 8);
            crc.reset();
            crc.update(body, 0, len);
            if (crc.getValue() != want) {
                if (at + 8 + len == size) {
                    break; // the last record, half written: torn
                }
                throw new JournalDamagedException(file + " at byte " + at + ": the CRC-32 of a " + len + "-byte record"
                        + " is " + Long.toHexString(crc.getValue()) + ", its header says " + Long.toHexString(want)
                        + ", and " + (size - at - 8 - len) + " bytes of records follow it");
            }
            ObservationRequest req;
            try {
                req = ObservationRequest.parseFrom(ByteBuffer.wrap(body, 0, len));
            } catch (InvalidProtocolBufferException e) {
                throw new JournalDamagedException(file + " at byte " + at + ": a record with a good CRC-32 is not an"
                        + " ObservationRequest: " + e.getMessage());
            }
            visitor.record(req);
            at += 8 + len;
        }
        return at;
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, at + b.position());
            if (n < 0) {
                throw new IOException("unexpected end of file");
            }
        }
    }

    /**
     * Appends one record.
     *
     * @return the journal's size after it, bytes
     */
    long append(ObservationRequest req) throws IOException {
        byte[] body = req.toByteArray();
        crc.reset();
        crc.update(body);
        header.clear();
        header.putInt(body.length).putInt((int) crc.getValue()).flip();
        ByteBuffer[] bufs = {header, ByteBuffer.wrap(body)};
        long at = size;
        while (bufs[1].hasRemaining()) {
            ch.position(at);
            at += ch.write(bufs);
        }
        size = at;
        return size;
    }

    /** @return the bytes a record of {@code req} takes */
    static long recordBytes(ObservationRequest req) {
        return 8L + req.getSerializedSize();
    }

    /** Puts what was appended on the disk. */
    void force() throws IOException {
        ch.force(true);
    }

    /** @return the journal's size, bytes */
    long size() {
        return size;
    }

    /** @return the journal file */
    Path file() {
        return file;
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
