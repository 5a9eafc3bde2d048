package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Broken inputs, made from real files copied to a temporary folder: truncated at many offsets,
 * flipped or patched bytes, forged lengths, empty input, wrong magic. The reader must yield every
 * complete message before the break, then report exactly one {@link McapFormatException} (strict) or
 * a problem (lenient) naming the file, the offset and what was expected; never anything else.
 * The timeouts guard against hangs only.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class McapBadInputTest {
    private static final McapStreamReader.Options STRICT = McapStreamReader.Options.defaults();
    private static final McapStreamReader.Options LENIENT = McapStreamReader.Options.builder().lenient(true).build();

    @TempDir
    Path tmp;

    /** Result of reading a file: messages yielded, the exception (or null), problems, last good offset. */
    record Outcome(int messages, McapFormatException error, List<McapStreamReader.Problem> problems,
                   long lastGood, List<Record> records) {}

    static Outcome read(Path p, McapStreamReader.Options o) throws IOException {
        List<Record> recs = new ArrayList<>();
        int n = 0;
        McapFormatException err = null;
        try (McapStreamReader r = McapStreamReader.open(p, o)) {
            try {
                Record rec;
                while ((rec = r.next()) != null) {
                    recs.add(rec);
                    n += rec instanceof Record.Message ? 1 : 0;
                }
                assertEquals(null, r.next(), "next() after the end stays null");
            } catch (McapFormatException e) {
                err = e;
            }
            return new Outcome(n, err, List.copyOf(r.problems()), r.lastGoodOffset(), recs);
        }
    }

    static Outcome readStream(byte[] bytes, McapStreamReader.Options o) throws IOException {
        List<Record> recs = new ArrayList<>();
        int n = 0;
        McapFormatException err = null;
        try (McapStreamReader r = McapStreamReader.open(new ByteArrayInputStream(bytes), "stream", o)) {
            try {
                Record rec;
                while ((rec = r.next()) != null) {
                    recs.add(rec);
                    n += rec instanceof Record.Message ? 1 : 0;
                }
            } catch (McapFormatException e) {
                err = e;
            }
            return new Outcome(n, err, List.copyOf(r.problems()), r.lastGoodOffset(), recs);
        }
    }

    private byte[] input(String name) throws IOException {
        if (name.startsWith("resource:")) {
            return McapChunkCompressionTest.fixture(name.substring("resource:".length()));
        }
        return Files.readAllBytes(SharedData.data(name));
    }

    private Path write(String name, byte[] bytes) throws IOException {
        Path p = tmp.resolve(name);
        Files.write(p, bytes);
        return p;
    }

    /** Offset and total length (opcode + length + body) of the top-level records, in order. */
    static List<long[]> layout(byte[] f) {
        List<long[]> out = new ArrayList<>();
        long pos = 8;
        while (pos + 9 <= f.length - 8) {
            long len = McapBytes.le64(f, (int) pos + 1);
            out.add(new long[] {pos, 9 + len, f[(int) pos] & 0xFF});
            pos += 9 + len;
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"camera/bridge-mcap/bridge_ep00.mcap", "camera/bridge-mcap/bridge_ep01.mcap",
            "mcap-real/ros2-rosbag2/talker/talker.mcap", "mcap-real/rosbags-rs/test_bag_mcap/test_bag_mcap.mcap",
            "resource:lz4-linked.mcap"})
    void truncatedAnywhereYieldsTheMessagesBeforeTheBreakThenOneError(String name) throws IOException {
        byte[] full = input(name);
        int size = full.length;
        Path whole = write("whole.mcap", full);
        Outcome all = read(whole, STRICT);
        assertEquals(null, all.error());
        assertTrue(all.messages() > 0);
        List<long[]> recs = layout(full);
        long[] chunk = recs.stream().filter(r -> r[2] == Record.OP_CHUNK).findFirst().orElseThrow();
        long headerEnd = recs.get(0)[0] + recs.get(0)[1];
        TreeSet<Long> cuts = new TreeSet<>(List.of(0L, 1L, 7L, 8L, 9L, 16L, headerEnd - 1, headerEnd, headerEnd + 1,
                chunk[0] + 1, chunk[0] + 9, chunk[0] + chunk[1] / 2, chunk[0] + chunk[1] - 1, chunk[0] + chunk[1],
                size - 8L, size - 1L, (long) size));
        for (int k = 1; k < 50; k++) {
            cuts.add((long) size * k / 50);
        }
        int previous = 0;
        for (long cut : cuts) {
            byte[] part = java.util.Arrays.copyOf(full, (int) cut);
            Path p = write("cut.mcap", part);
            Outcome strict = read(p, STRICT);
            String at = name + " cut at " + cut;
            if (cut == size) {
                assertEquals(null, strict.error(), at);
                assertEquals(all.messages(), strict.messages(), at);
                continue;
            }
            McapFormatException e = strict.error();
            if (e == null) {
                fail(at + ": no error");
            }
            assertTrue(e.getMessage().startsWith(p.toString() + " at byte "), e.getMessage());
            assertTrue(e.offset() >= 0 && e.offset() <= cut, at + ": " + e.getMessage());
            assertTrue(strict.messages() >= previous, at + ": " + strict.messages() + " < " + previous);
            previous = strict.messages();
            assertTrue(strict.lastGood() <= cut, at);
            if (cut > chunk[0] + 9 && cut < chunk[0] + chunk[1]) {
                assertEquals(chunk[0], e.offset(), at);
                assertTrue(e.getMessage().contains("Chunk record (opcode 0x06) at byte " + chunk[0] + " declares length "
                        + (chunk[1] - 9) + " but the file ends at byte " + cut), e.getMessage());
            }
            // Lenient: the same messages, the break as a problem instead of an exception (except for a bad magic).
            if (cut < 8) {
                McapFormatException m = read(p, LENIENT).error();
                assertTrue(m != null && m.offset() == 0 && m.getMessage().contains("magic"), at);
            } else {
                Outcome lenient = read(p, LENIENT);
                assertEquals(null, lenient.error(), at);
                assertEquals(strict.messages(), lenient.messages(), at);
                assertFalse(lenient.problems().isEmpty(), at);
            }
            // As a stream, the same messages and an error at the same offset.
            Outcome stream = readStream(part, STRICT);
            assertEquals(strict.messages(), stream.messages(), at + " (stream)");
            assertEquals(e.offset(), stream.error().offset(), at + " (stream)");
        }
        assertTrue(previous <= all.messages());
    }

    @Test
    void emptyFileAndWrongMagic() throws IOException {
        McapFormatException e = read(write("empty.mcap", new byte[0]), LENIENT).error();
        assertEquals(0, e.offset());
        assertTrue(e.getMessage().contains("empty input"), e.getMessage());

        byte[] f = input("camera/bridge-mcap/bridge_ep00.mcap");
        f[1] = 'X';
        e = read(write("magic.mcap", f), STRICT).error();
        assertEquals(0, e.offset());
        assertTrue(e.getMessage().contains("expected the MCAP magic 89 4D 43 41 50 30 0D 0A, found bytes 89 58 43"),
                e.getMessage());

        byte[] g = input("camera/bridge-mcap/bridge_ep00.mcap");
        g[g.length - 1] = 0;
        Outcome o = read(write("endmagic.mcap", g), STRICT);
        assertEquals(g.length - 8, o.error().offset());
        assertTrue(o.error().getMessage().contains("closing MCAP magic"), o.error().getMessage());
        assertEquals(51, o.messages());
        Outcome l = read(write("endmagic.mcap", g), LENIENT);
        assertEquals(1, l.problems().size());
        assertTrue(l.records().get(l.records().size() - 1) instanceof Record.Footer);
    }

    @Test
    void recordLengthPastTheEndAndHugeLengthsDoNotAllocate() throws IOException {
        byte[] f = input("camera/bridge-mcap/bridge_ep00.mcap");
        long[] lengths = {f.length, 1L << 63, -1L, 1L << 40, 0x7FFF_0000L};
        for (long len : lengths) {
            byte[] g = f.clone();
            McapBytes.putLe64(g, 9, len); // the Header's length field
            McapFormatException e = read(write("len.mcap", g), STRICT).error();
            assertEquals(8, e.offset(), e.getMessage());
            assertTrue(e.getMessage().contains("Header record (opcode 0x01) at byte 8 declares length "
                    + Long.toUnsignedString(len) + " but the file ends at byte " + f.length), e.getMessage());
            // A stream does not know its length: the reader must still refuse without allocating it.
            McapFormatException s = readStream(g, STRICT).error();
            assertEquals(8, s.offset(), s.getMessage());
            assertTrue(s.getMessage().contains("declares length " + Long.toUnsignedString(len)), s.getMessage());
        }
    }

    @Test
    void crcMismatchesAreReportedAndLenientModeGoesOn() throws IOException {
        byte[] f = input("camera/bridge-mcap/bridge_ep00.mcap");
        List<long[]> recs = layout(f);
        long[] dataEnd = recs.stream().filter(r -> r[2] == Record.OP_DATA_END).findFirst().orElseThrow();
        long[] footer = recs.stream().filter(r -> r[2] == Record.OP_FOOTER).findFirst().orElseThrow();

        byte[] g = f.clone();
        g[(int) dataEnd[0] + 9] ^= 1;
        Outcome o = read(write("dcrc.mcap", g), STRICT);
        assertEquals(dataEnd[0], o.error().offset());
        assertTrue(o.error().getMessage().contains("data_section_crc"), o.error().getMessage());
        assertEquals(51, o.messages());
        Outcome l = read(write("dcrc.mcap", g), LENIENT);
        assertEquals(1, l.problems().size());
        assertEquals(dataEnd[0], l.problems().get(0).offset());
        assertTrue(l.records().get(l.records().size() - 1) instanceof Record.Footer);
        assertEquals(null, read(write("dcrc.mcap", g),
                McapStreamReader.Options.builder().validateCrcs(false).build()).error());

        byte[] h = f.clone();
        h[(int) footer[0] + 9 + 16] ^= 1; // summary_crc
        o = read(write("scrc.mcap", h), STRICT);
        assertEquals(footer[0], o.error().offset());
        assertTrue(o.error().getMessage().contains("summary_crc"), o.error().getMessage());

        // A byte of the summary section (a SummaryOffset record's group_length) changed.
        byte[] s = f.clone();
        long[] so = recs.stream().filter(r -> r[2] == Record.OP_SUMMARY_OFFSET).findFirst().orElseThrow();
        s[(int) so[0] + 9 + 9] ^= 1; // lowest byte of group_length
        o = read(write("sbyte.mcap", s), STRICT);
        assertEquals(footer[0], o.error().offset());
        assertTrue(o.error().getMessage().contains("summary_crc"), o.error().getMessage());
    }

    @Test
    void uncompressedChunkAndAttachmentCrcs() throws IOException {
        byte[] f = input("mcap-real/ros2-rosbag2/cdr_test/cdr_test_0.mcap");
        long[] chunk = layout(f).stream().filter(r -> r[2] == Record.OP_CHUNK).findFirst().orElseThrow();
        byte[] g = f.clone();
        g[(int) chunk[0] + 9 + 24] ^= 1; // uncompressed_crc
        Outcome o = read(write("ccrc.mcap", g), STRICT);
        assertEquals(chunk[0], o.error().offset());
        assertTrue(o.error().getMessage().contains("uncompressed_crc"), o.error().getMessage());
        assertEquals(0, o.messages());
        assertEquals(7, read(write("ccrc.mcap", g), McapStreamReader.Options.builder().validateCrcs(false).build())
                .messages());

        byte[] a = input("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap");
        long[] att = layout(a).stream().filter(r -> r[2] == Record.OP_ATTACHMENT).findFirst().orElseThrow();
        byte[] b = a.clone();
        b[(int) (att[0] + att[1] - 1)] ^= 1; // last byte of the crc (no padding in this file)
        o = read(write("acrc.mcap", b), STRICT);
        assertEquals(att[0], o.error().offset());
        assertTrue(o.error().getMessage().contains("Attachment \"robot_description\" declares crc"), o.error().getMessage());
        Outcome l = read(write("acrc.mcap", b), LENIENT);
        assertEquals(1, l.problems().size(), l.problems().toString());
        assertEquals(0, l.records().stream().filter(r -> r instanceof Record.Attachment).count());
        assertEquals(1, read(write("a.mcap", a), STRICT).records().stream()
                .filter(r -> r instanceof Record.Attachment).count());
    }

    @Test
    void brokenRecordInsideAChunkAndMissingHeader() throws IOException {
        byte[] m1 = McapBytes.message(1, 0, 5, new byte[] {1});
        byte[] m2 = McapBytes.message(1, 1, 6, new byte[] {2});
        byte[] broken = m2.clone();
        McapBytes.putLe64(broken, 1, 1000); // inner length past the chunk's end
        byte[] inner = new McapBytes().raw(m1).raw(broken).bytes();
        byte[] header = McapBytes.header("", "t");
        byte[] file = McapBytes.file(header, McapBytes.chunk("", inner, inner.length), m2,
                McapBytes.dataEnd(), McapBytes.footer());
        long chunkAt = 8 + header.length;
        Outcome o = readStream(file, STRICT);
        assertEquals(1, o.messages());
        assertEquals(chunkAt, o.error().offset());
        assertTrue(o.error().getMessage().contains("Message record at uncompressed offset " + m1.length
                + " declares length 1000"), o.error().getMessage());
        Outcome l = readStream(file, LENIENT);
        assertEquals(2, l.messages());
        assertEquals(1, l.problems().size());
        assertEquals(chunkAt, l.problems().get(0).offset());

        byte[] noHeader = McapBytes.file(m1, McapBytes.dataEnd(), McapBytes.footer());
        o = readStream(noHeader, STRICT);
        assertEquals(8, o.error().offset());
        assertTrue(o.error().getMessage().contains("expected a Header record"), o.error().getMessage());
    }

    /** Seeded random byte flips: whatever breaks, only McapFormatException comes out, in both modes. */
    @ParameterizedTest
    @ValueSource(strings = {"resource:lz4-linked.mcap", "resource:lz4-independent.mcap", "resource:zstd-stream.mcap",
            "mcap-conformance/TenMessages/TenMessages-ch-chx-mx-pad-rch-rsh-st-sum.mcap",
            "mcap-real/ros2-rosbag2/cdr_test/cdr_test_0.mcap"})
    void randomByteFlipsOnlyEverGiveMcapFormatException(String name) throws IOException {
        byte[] f = input(name);
        java.util.Random rnd = new java.util.Random(42);
        int broken = 0;
        for (int trial = 0; trial < 150; trial++) {
            byte[] g = f.clone();
            int flips = 1 + rnd.nextInt(3);
            for (int k = 0; k < flips; k++) {
                g[rnd.nextInt(g.length)] ^= (byte) (1 + rnd.nextInt(255));
            }
            // read() and readStream() let only McapFormatException through as a value; anything else fails here.
            Outcome strict = readStream(g, STRICT);
            Outcome lenient = readStream(g, LENIENT);
            if (strict.error() != null) {
                broken++;
                assertTrue(strict.error().getMessage().startsWith("stream"), strict.error().getMessage());
                assertTrue(lenient.error() != null || !lenient.problems().isEmpty(), "lenient saw nothing wrong");
            }
        }
        assertTrue(broken >= 75, "only " + broken + " of 150 corrupted copies were noticed");
    }

    @Test
    void unknownOpcodesAreSkippedUnlessAsked() throws IOException {
        byte[] file = McapBytes.file(McapBytes.header("", "t"), McapBytes.record(0x80, new byte[] {9, 9}),
                McapBytes.message(1, 0, 5, new byte[] {1}), McapBytes.dataEnd(), McapBytes.footer());
        assertEquals(List.of(Record.OP_HEADER, Record.OP_MESSAGE, Record.OP_DATA_END, Record.OP_FOOTER),
                readStream(file, STRICT).records().stream().map(Record::opcode).toList());
        List<Record> withUnknown = readStream(file, McapStreamReader.Options.builder().emitUnknown(true).build()).records();
        assertEquals(List.of(Record.OP_HEADER, 0x80, Record.OP_MESSAGE, Record.OP_DATA_END, Record.OP_FOOTER),
                withUnknown.stream().map(Record::opcode).toList());
        assertEquals(2, ((Record.Unknown) withUnknown.get(1)).body().remaining());
    }
}
