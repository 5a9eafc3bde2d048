package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged files: the indexed reader throws McapFormatException naming the file and the byte offset,
 * never another exception type, never hangs.
 */
class McapIndexedReaderBadInputTest {
    @TempDir
    Path dir;

    /** A zstd file of 3 channels in several 2 KiB chunks, written by McapWriter. */
    private byte[] goodFile(boolean crcs) throws IOException {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (McapWriter w = McapWriter.builder().chunkSize(2048).crcs(crcs).build(bos)) {
            int s = w.registerSchema("s", "ros2msg", "int32 x".getBytes());
            int a = w.registerChannel("/a", "cdr", s, Map.of());
            int b = w.registerChannel("/b", "cdr", s, Map.of("k", "v"));
            int c = w.registerChannel("/c", "raw", 0, Map.of());
            Random rnd = new Random(1);
            for (int i = 0; i < 60; i++) {
                byte[] p = new byte[100 + rnd.nextInt(200)];
                rnd.nextBytes(p);
                w.writeMessage(i % 3 == 0 ? a : i % 3 == 1 ? b : c, i, 1000L * i, 1000L * i, p);
            }
            w.writeAttachment("a.txt", "text/plain", 5, 5, "hello".getBytes());
            w.writeMetadata("m", Map.of("x", "y"));
        }
        return bos.toByteArray();
    }

    private Path save(String name, byte[] bytes) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, bytes);
        return p;
    }

    private static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static int footerOffset(byte[] f) {
        return f.length - 8 - 29;
    }

    private static long summaryStart(byte[] f) {
        return le(f).getLong(footerOffset(f) + 9);
    }

    /** Recomputes the footer's summary CRC after a summary edit. */
    private static void fixSummaryCrc(byte[] f) {
        int fo = footerOffset(f);
        CRC32 crc = new CRC32();
        int ss = (int) summaryStart(f);
        crc.update(f, ss, fo + 25 - ss);
        le(f).putInt(fo + 25, (int) crc.getValue());
    }

    /** @return the file offset of the first summary record with this opcode */
    private static int findSummaryRecord(byte[] f, int opcode) {
        int pos = (int) summaryStart(f);
        while (pos < footerOffset(f)) {
            if ((f[pos] & 0xFF) == opcode) {
                return pos;
            }
            pos += 9 + (int) le(f).getLong(pos + 1);
        }
        throw new AssertionError("no record with opcode " + opcode);
    }

    private McapFormatException openFails(Path p) {
        return assertThrows(McapFormatException.class, () -> {
            try (McapIndexedReader r = McapIndexedReader.open(p)) {
                r.messages().toList();
            }
        });
    }

    @Test
    void footerPointingPastTheEnd() throws IOException {
        byte[] f = goodFile(true);
        le(f).putLong(footerOffset(f) + 9, f.length + 1000L);
        Path p = save("past-end.mcap", f);
        McapFormatException e = openFails(p);
        assertEquals(footerOffset(f), e.offset());
        assertEquals(p.toString(), e.file());
        assertTrue(e.getMessage().contains("summary_start " + (f.length + 1000L)), e.getMessage());
        assertTrue(e.getMessage().startsWith(p + " at byte " + footerOffset(f)), e.getMessage());
    }

    @Test
    void summaryCrcMismatch() throws IOException {
        byte[] f = goodFile(true);
        int schema = findSummaryRecord(f, Record.OP_SCHEMA);
        f[schema + 9 + 2 + 4] ^= 1; // first byte of the schema name
        McapFormatException e = openFails(save("crc.mcap", f));
        assertEquals(summaryStart(f), e.offset());
        assertTrue(e.getMessage().contains("summary CRC32 mismatch"), e.getMessage());
    }

    @Test
    void chunkIndexPointingIntoTheMiddleOfAChunk() throws IOException {
        byte[] f = goodFile(true);
        int ci = findSummaryRecord(f, Record.OP_CHUNK_INDEX);
        long chunkStart = le(f).getLong(ci + 9 + 16);
        long garbage = chunkStart + 20;
        le(f).putLong(ci + 9 + 16, garbage);
        fixSummaryCrc(f);
        McapFormatException e = openFails(save("garbage-chunk.mcap", f));
        assertEquals(garbage, e.offset());
        assertTrue(e.getMessage().contains("Chunk record (opcode 0x06) was expected"), e.getMessage());
    }

    @Test
    void chunkIndexPointingAtAMessageIndexRecord() throws IOException {
        byte[] f = goodFile(true);
        int ci = findSummaryRecord(f, Record.OP_CHUNK_INDEX);
        ByteBuffer b = le(f);
        long chunkStart = b.getLong(ci + 9 + 16);
        long chunkLength = b.getLong(ci + 9 + 24);
        b.putLong(ci + 9 + 16, chunkStart + chunkLength); // the first message index after the chunk
        fixSummaryCrc(f);
        McapFormatException e = openFails(save("mx-not-chunk.mcap", f));
        assertEquals(chunkStart + chunkLength, e.offset());
        assertTrue(e.getMessage().contains("found opcode 0x07"), e.getMessage());
    }

    @Test
    void chunkIndexWithAHugeLength() throws IOException {
        byte[] f = goodFile(true);
        int ci = findSummaryRecord(f, Record.OP_CHUNK_INDEX);
        long chunkStart = le(f).getLong(ci + 9 + 16);
        le(f).putLong(ci + 9 + 24, 1L << 40);
        fixSummaryCrc(f);
        McapFormatException e = openFails(save("huge.mcap", f));
        assertEquals(chunkStart, e.offset());
        assertTrue(e.getMessage().contains("outside the data section"), e.getMessage());
    }

    @Test
    void messageIndexEntryPointingAtGarbage() throws IOException {
        byte[] f = goodFile(true);
        int ci = findSummaryRecord(f, Record.OP_CHUNK_INDEX);
        ByteBuffer b = le(f);
        long chunkStart = b.getLong(ci + 9 + 16);
        long mx = b.getLong(ci + 9 + 32 + 4 + 2); // first channel's message index offset
        b.putLong((int) mx + 9 + 2 + 4 + 8, 3); // its first entry's offset -> 3 bytes into the chunk
        Path p = save("bad-mx.mcap", f);
        try (McapIndexedReader r = McapIndexedReader.open(p)) {
            McapFormatException e = assertThrows(McapFormatException.class,
                    () -> r.messages(McapIndexedReader.ReadOptions.builder().topic("/a").build()).toList());
            assertEquals(chunkStart, e.offset());
            // reading all topics scans the chunk instead of using the index, and succeeds
            assertEquals(60, r.messages().toList().size());
        }
    }

    @Test
    void corruptCompressedChunk() throws IOException {
        byte[] f = goodFile(true);
        int ci = findSummaryRecord(f, Record.OP_CHUNK_INDEX);
        long chunkStart = le(f).getLong(ci + 9 + 16);
        long chunkLength = le(f).getLong(ci + 9 + 24);
        for (long i = chunkStart + 60; i < chunkStart + chunkLength - 10; i += 7) {
            f[(int) i] ^= (byte) 0xA5;
        }
        McapFormatException e = openFails(save("zstd-garbage.mcap", f));
        assertEquals(chunkStart, e.offset());
    }

    @Test
    void truncatedFile() throws IOException {
        byte[] f = goodFile(true);
        Path p = save("trunc.mcap", Arrays.copyOf(f, f.length - 10));
        McapFormatException e = openFails(p);
        assertEquals(f.length - 10 - 8, e.offset());
        assertTrue(e.getMessage().contains("streaming reader"), e.getMessage());
        McapFormatException tiny = openFails(save("tiny.mcap", Arrays.copyOf(f, 20)));
        assertTrue(tiny.getMessage().contains("too short"), tiny.getMessage());
        McapFormatException notMcap = openFails(save("text.mcap", new byte[100]));
        assertEquals(0, notMcap.offset());
    }

    @Test
    void attachmentCrcMismatch() throws IOException {
        byte[] f = goodFile(true);
        Path good = save("good.mcap", f);
        long off;
        try (McapIndexedReader r = McapIndexedReader.open(good)) {
            Record.AttachmentIndex ai = r.attachmentIndexes().get(0);
            off = ai.offset();
            f[(int) (ai.offset() + ai.length() - 4 - 2)] ^= 1; // inside "hello"
        }
        try (McapIndexedReader r = McapIndexedReader.open(save("bad-att.mcap", f))) {
            McapFormatException e = assertThrows(McapFormatException.class,
                    () -> r.readAttachment(r.attachmentIndexes().get(0)));
            assertEquals(off, e.offset());
            assertTrue(e.getMessage().contains("CRC32 mismatch"), e.getMessage());
        }
    }

    /**
     * 600 seeded random damages (byte flips anywhere, 8-byte overwrites with large values, truncations),
     * with and without CRCs: each either reads or throws McapFormatException; nothing else escapes.
     */
    @Test
    void randomDamageOnlyEverThrowsMcapFormatException() throws IOException {
        Random rnd = new Random(20240607);
        int failures = 0;
        int reads = 0;
        for (boolean crcs : new boolean[] {true, false}) {
            byte[] good = goodFile(crcs);
            for (int k = 0; k < 300; k++) {
                byte[] f = good.clone();
                int kind = k % 3;
                if (kind == 0) {
                    for (int j = 0; j < 1 + rnd.nextInt(4); j++) {
                        f[rnd.nextInt(f.length)] ^= (byte) (1 + rnd.nextInt(255));
                    }
                } else if (kind == 1) {
                    int at = rnd.nextInt(f.length - 8);
                    le(f).putLong(at, rnd.nextBoolean() ? rnd.nextLong() : (long) rnd.nextInt(1 << 20));
                } else {
                    f = Arrays.copyOf(f, rnd.nextInt(f.length));
                    if (rnd.nextBoolean() && f.length > 40) {
                        // keep a valid-looking tail so the footer is parsed
                        System.arraycopy(good, good.length - 37, f, f.length - 37, 37);
                    }
                }
                Path p = save("fuzz.mcap", f);
                try (McapIndexedReader r = McapIndexedReader.open(p)) {
                    r.messages().toList();
                    r.messages(McapIndexedReader.ReadOptions.builder().topic("/b").startTime(5000).build()).toList();
                    for (Record.AttachmentIndex ai : r.attachmentIndexes()) {
                        r.readAttachment(ai);
                    }
                    for (Record.MetadataIndex mi : r.metadataIndexes()) {
                        r.readMetadata(mi);
                    }
                    reads++;
                } catch (McapFormatException e) {
                    assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
                    failures++;
                }
            }
        }
        assertEquals(600, failures + reads);
        assertTrue(failures > 300, "damaged files rejected: " + failures);
    }
}
