package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import net.jpountz.lz4.LZ4FrameInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Chunk decompression on fixtures whose chunks were compressed by the reference lz4 and zstd tools
 * (src/test/resources/mcap/README.md says how they were made and what they hold).
 */
class McapChunkCompressionTest {
    @TempDir
    Path tmp;

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = McapChunkCompressionTest.class.getResourceAsStream("/mcap/" + name)) {
            if (in == null) {
                throw new IOException("missing test resource /mcap/" + name);
            }
            return in.readAllBytes();
        }
    }

    static byte[] expectedData(int i) {
        byte[] d = new byte[1000];
        for (int j = 0; j < 1000; j++) {
            d[j] = (byte) ((j * 31 + (i % 7) * 13) % 251);
        }
        return d;
    }

    static List<Record> readAll(byte[] file, McapStreamReader.Options o) throws IOException {
        List<Record> out = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(new ByteArrayInputStream(file), "fixture", o)) {
            Record rec;
            while ((rec = r.next()) != null) {
                out.add(rec);
            }
        }
        return out;
    }

    /** Offsets of the chunk records, read with emitChunks. */
    static List<Long> chunkOffsets(byte[] file) throws IOException {
        List<Long> offs = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(new ByteArrayInputStream(file), "fixture",
                McapStreamReader.Options.builder().emitChunks(true).build())) {
            long before = r.position();
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Chunk) {
                    offs.add(before);
                }
                before = r.position();
            }
        }
        return offs;
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4-linked.mcap", "lz4-independent.mcap", "zstd-stream.mcap"})
    void everyMessageComesBackExactly(String name) throws IOException {
        byte[] file = fixture(name);
        Path p = tmp.resolve(name);
        Files.write(p, file);
        List<Record> recs = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(p)) {
            r.forEach(recs::add);
            assertEquals(List.of(), r.problems());
            assertEquals(file.length, r.lastGoodOffset());
        }
        Map<Integer, String> topics = new HashMap<>();
        int i = 0;
        for (Record rec : recs) {
            if (rec instanceof Record.Channel c) {
                topics.put(c.id(), c.topic());
            } else if (rec instanceof Record.Message m) {
                assertEquals(i % 2 == 0 ? "/a" : "/b", topics.get(m.channelId()), "message " + i);
                assertEquals(i, m.sequence());
                assertEquals(1_000_000_000L + i * 1_000_000L, m.logTime());
                assertEquals(m.logTime(), m.publishTime());
                byte[] d = new byte[m.data().remaining()];
                m.data().duplicate().get(d);
                assertArrayEquals(expectedData(i), d, "data of message " + i);
                i++;
            }
        }
        assertEquals(600, i);
        // Raw chunks: 4, all with the fixture's compression.
        List<Record> raw = readAll(file, McapStreamReader.Options.builder().emitChunks(true).build());
        List<String> comps = raw.stream().filter(r -> r instanceof Record.Chunk)
                .map(r -> ((Record.Chunk) r).compression()).toList();
        assertEquals(name.substring(0, name.indexOf('-')), comps.get(0));
        assertEquals(4, comps.size());
        assertEquals(0, raw.stream().filter(r -> r instanceof Record.Message).count());
        assertTrue(raw.stream().anyMatch(r -> r instanceof Record.MessageIndex));
    }

    @Test
    void linkedLz4BlocksReallyReferenceEarlierBlocks() throws IOException {
        byte[] file = fixture("lz4-linked.mcap");
        Record.Chunk c = firstChunk(file);
        byte[] src = new byte[c.records().remaining()];
        c.records().duplicate().get(src);
        assertEquals(0x44, src[4] & 0xFF, "FLG byte: version 1, linked blocks, content checksum");
        byte[] dst = new byte[(int) c.uncompressedSize()];
        assertEquals(dst.length, Lz4FrameDecoder.decode(src, 0, src.length, dst, false, "t"));
        // Decoding the same blocks as independent must fail: a match reaches into the previous block.
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Lz4FrameDecoder.decode(src, 0, src.length, new byte[dst.length], true, "t"));
        assertTrue(e.getMessage().contains("match offset"), e.getMessage());
        // lz4-java's own frame reader refuses linked blocks, which is why Lz4FrameDecoder exists.
        assertThrows(Exception.class, () -> new LZ4FrameInputStream(new ByteArrayInputStream(src)).readAllBytes());
    }

    @Test
    void independentLz4MatchesLz4JavaFrameReader() throws IOException {
        byte[] file = fixture("lz4-independent.mcap");
        Record.Chunk c = firstChunk(file);
        byte[] src = new byte[c.records().remaining()];
        c.records().duplicate().get(src);
        byte[] viaLibrary = new LZ4FrameInputStream(new ByteArrayInputStream(src)).readAllBytes();
        ByteBuffer ours = ChunkDecompressor.decompress(c, "t", 0, true);
        byte[] o = new byte[ours.remaining()];
        ours.get(o);
        assertArrayEquals(viaLibrary, o);
        assertEquals(c.uncompressedSize(), o.length);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4-linked.mcap", "lz4-independent.mcap", "zstd-stream.mcap"})
    void flippedByteInACompressedChunkNamesTheChunkAndLenientModeGoesOn(String name) throws IOException {
        byte[] file = fixture(name);
        List<Long> chunks = chunkOffsets(file);
        long second = chunks.get(1);
        byte[] bad = file.clone();
        int at = (int) (second + 9 + McapBytes.le64(file, (int) second + 1) / 2); // middle of the chunk record
        bad[at] ^= 0x5A;
        McapFormatException e = assertThrows(McapFormatException.class,
                () -> readAll(bad, McapStreamReader.Options.defaults()));
        assertEquals(second, e.offset(), e.getMessage());
        assertTrue(e.getMessage().contains("chunk at byte " + second), e.getMessage());
        assertTrue(e.getMessage().startsWith("fixture at byte " + second), e.getMessage());

        List<Record> lenient;
        List<McapStreamReader.Problem> problems;
        try (McapStreamReader r = McapStreamReader.open(new ByteArrayInputStream(bad), "fixture",
                McapStreamReader.Options.builder().lenient(true).build())) {
            lenient = new ArrayList<>();
            r.forEach(lenient::add);
            problems = r.problems();
        }
        // The chunk is skipped; the data section CRC then fails too, as it covers the flipped byte.
        assertEquals(2, problems.size(), problems.toString());
        assertEquals(second, problems.get(0).offset());
        assertTrue(problems.get(1).message().contains("data_section_crc"), problems.toString());
        long msgs = lenient.stream().filter(r -> r instanceof Record.Message).count();
        long inSecond = countMessagesInChunk(file, 1);
        assertTrue(inSecond > 0);
        assertEquals(600 - inSecond, msgs);
        assertTrue(lenient.get(lenient.size() - 1) instanceof Record.Footer, "lenient mode reads on to the Footer");
    }

    @Test
    void declaredUncompressedSizeIsChecked(@TempDir Path dir) throws IOException {
        byte[] file = fixture("lz4-linked.mcap");
        long first = chunkOffsets(file).get(0);
        int sizeField = (int) first + 9 + 16; // opcode, length, start time, end time
        long size = MapsFor.le64(file, sizeField);
        for (long forged : new long[] {size + 1, size - 1}) {
            byte[] bad = file.clone();
            MapsFor.putLe64(bad, sizeField, forged);
            McapFormatException e = assertThrows(McapFormatException.class,
                    () -> readAll(bad, McapStreamReader.Options.defaults()));
            assertEquals(first, e.offset(), e.getMessage());
        }
        // A forged huge size is refused before any allocation.
        byte[] bad = file.clone();
        MapsFor.putLe64(bad, sizeField, 1L << 40);
        McapFormatException e = assertThrows(McapFormatException.class,
                () -> readAll(bad, McapStreamReader.Options.defaults()));
        assertTrue(e.getMessage().contains("1099511627776"), e.getMessage());
    }

    @Test
    void unknownCompressionIsNamed() throws IOException {
        byte[] inner = McapBytes.message(1, 0, 5, new byte[] {1, 2, 3});
        byte[] file = McapBytes.file(McapBytes.header("", "t"), McapBytes.chunk("brotli", inner, inner.length),
                McapBytes.message(1, 1, 6, new byte[] {4}), McapBytes.dataEnd(), McapBytes.footer());
        long chunkAt = 8 + McapBytes.header("", "t").length;
        McapFormatException e = assertThrows(McapFormatException.class,
                () -> readAll(file, McapStreamReader.Options.defaults()));
        assertEquals(chunkAt, e.offset());
        assertTrue(e.getMessage().contains("\"brotli\""), e.getMessage());
        // Lenient: the chunk is skipped, the message after it still comes.
        try (McapStreamReader r = McapStreamReader.open(new ByteArrayInputStream(file), "x",
                McapStreamReader.Options.builder().lenient(true).build())) {
            List<Record> recs = new ArrayList<>();
            r.forEach(recs::add);
            assertEquals(List.of(4), recs.stream().filter(x -> x instanceof Record.Message)
                    .map(x -> ((Record.Message) x).data().get(0) & 0xFF).toList());
            assertEquals(1, r.problems().size());
            assertTrue(r.problems().get(0).message().contains("brotli"));
        }
        // An uncompressed chunk built the same way reads fine.
        byte[] ok = McapBytes.file(McapBytes.header("", "t"), McapBytes.chunk("", inner, inner.length),
                McapBytes.dataEnd(), McapBytes.footer());
        assertEquals(1, readAll(ok, McapStreamReader.Options.defaults()).stream()
                .filter(x -> x instanceof Record.Message).count());
    }

    static Record.Chunk firstChunk(byte[] file) throws IOException {
        return (Record.Chunk) readAll(file, McapStreamReader.Options.builder().emitChunks(true).build()).stream()
                .filter(r -> r instanceof Record.Chunk).findFirst().orElseThrow();
    }

    static long countMessagesInChunk(byte[] file, int index) throws IOException {
        Record.Chunk c = (Record.Chunk) readAll(file, McapStreamReader.Options.builder().emitChunks(true).build())
                .stream().filter(r -> r instanceof Record.Chunk).skip(index).findFirst().orElseThrow();
        ByteBuffer b = ChunkDecompressor.decompress(c, "t", 0, true);
        long n = 0;
        while (b.hasRemaining()) {
            int op = b.get() & 0xFF;
            long len = b.getLong();
            b.position(b.position() + (int) len);
            n += op == Record.OP_MESSAGE ? 1 : 0;
        }
        return n;
    }

    /** Little-endian patch helpers. */
    static final class MapsFor {
        static long le64(byte[] b, int at) { return McapBytes.le64(b, at); }
        static void putLe64(byte[] b, int at, long v) { McapBytes.putLe64(b, at, v); }
    }
}
