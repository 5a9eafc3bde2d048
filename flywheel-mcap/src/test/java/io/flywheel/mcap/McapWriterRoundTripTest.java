package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Writes files with {@link McapWriter} under many option sets and reads them back with {@link McapIndexedReader}. */
class McapWriterRoundTripTest {
    @TempDir
    Path dir;

    /** Index variants: what the summary holds. */
    enum Variant {
        /** writer defaults: every index, statistics, summary offsets, repeated schemas/channels, CRCs */
        ALL(b -> b),
        /** only statistics in the summary: the reader must scan the data section (and chunks) */
        STATS_ONLY(b -> b.messageIndexes(false).chunkIndexes(false).summaryOffsets(false).repeatSchemas(false)
                .repeatChannels(false).attachmentIndexes(false).metadataIndexes(false)),
        /** chunk indexes without message indexes, no channels in the summary, no CRCs */
        CHUNK_INDEX_NO_MX(b -> b.messageIndexes(false).repeatChannels(false).repeatSchemas(false).statistics(false)
                .crcs(false));

        final UnaryOperator<McapWriter.Builder> apply;

        Variant(UnaryOperator<McapWriter.Builder> apply) {
            this.apply = apply;
        }
    }

    static Stream<Arguments> combinations() {
        List<Arguments> out = new ArrayList<>();
        for (Variant v : Variant.values()) {
            for (McapWriter.Compression c : McapWriter.Compression.values()) {
                out.add(Arguments.of(c, true, v));
            }
            out.add(Arguments.of(McapWriter.Compression.NONE, false, v));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} chunked={1} {2}")
    @MethodSource("combinations")
    void roundTrip(McapWriter.Compression compression, boolean chunked, Variant variant) throws IOException {
        Path file = dir.resolve("rt.mcap");
        McapWriter.Builder b = McapWriter.builder().profile("ros2").library("test-lib").compression(compression)
                .useChunks(chunked).chunkSize(16 * 1024);
        GeneratedMcap g = GeneratedMcap.write(variant.apply.apply(b).build(file), 120);
        // 120 each on /a and /b, 60 on /c
        assertEquals(300, g.messages.size());

        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            assertEquals(new Record.Header("ros2", "test-lib"), r.header());
            assertEquals(2, r.schemas().size());
            Record.Schema sa = r.schemas().get(1);
            assertEquals("pkg/msg/A", sa.name());
            assertEquals("ros2msg", sa.encoding());
            assertArrayEquals(GeneratedMcap.SCHEMA_A, GeneratedMcap.toArray(sa.data()));
            assertEquals("jsonschema", r.schemas().get(2).encoding());
            assertEquals(3, r.channels().size());
            Record.Channel ca = r.channels().get(g.channelIds.get("/a"));
            assertEquals("/a", ca.topic());
            assertEquals("cdr", ca.messageEncoding());
            assertEquals(1, ca.schemaId());
            assertEquals(Map.of("offered_qos_profiles", "", "ünïcode", "✓"), ca.metadata());
            assertEquals(0, r.channels().get(g.channelIds.get("/c")).schemaId());

            List<MessageView> got = r.messages().toList();
            assertMessages(g.inLogTimeOrder(), got);
            assertNull(got.stream().filter(m -> m.topic().equals("/c")).findFirst().orElseThrow().schema());

            boolean indexed = chunked && variant != Variant.STATS_ONLY;
            assertEquals(!indexed, r.scannedDataSection());
            if (variant != Variant.STATS_ONLY) {
                assertEquals(2, r.attachmentIndexes().size());
                Record.Attachment a = r.readAttachment(r.attachmentIndexes().get(0));
                assertEquals("calib.yaml", a.name());
                assertEquals("text/yaml", a.mediaType());
                assertEquals(1500, a.logTime());
                assertEquals(1400, a.createTime());
                assertArrayEquals(g.attachments.get(0).data(), GeneratedMcap.toArray(a.data()));
                assertEquals(variant == Variant.ALL, a.crc() != 0);
                Record.Attachment empty = r.readAttachment(r.attachmentIndexes().get(1));
                assertEquals("empty.bin", empty.name());
                assertEquals(0, empty.data().remaining());
                assertEquals(2, r.metadataIndexes().size());
                assertEquals(new Record.Metadata("episode", Map.of("index", "7")), r.readMetadata(r.metadataIndexes().get(0)));
                Record.Metadata m2 = r.readMetadata(r.metadataIndexes().get(1));
                assertEquals("recording", m2.name());
                assertEquals(List.of("robot", "operator"), List.copyOf(m2.metadata().keySet()));
                // ALL: schemas, channels, statistics, (chunk indexes), attachment indexes, metadata indexes
                // CHUNK_INDEX_NO_MX: (chunk indexes), attachment indexes, metadata indexes
                int groups = (variant == Variant.ALL ? 3 : 0) + (chunked ? 1 : 0) + 2;
                assertEquals(groups, r.summaryOffsets().size());
            } else {
                assertTrue(r.attachmentIndexes().isEmpty());
                assertTrue(r.metadataIndexes().isEmpty());
                assertTrue(r.summaryOffsets().isEmpty());
            }
            if (variant == Variant.CHUNK_INDEX_NO_MX) {
                assertEquals(0, r.footer().summaryCrc());
                assertFalse(r.statistics().isPresent());
            } else {
                Record.Statistics st = r.statistics().orElseThrow();
                assertEquals(300, st.messageCount());
                assertEquals(2, st.schemaCount());
                assertEquals(3, st.channelCount());
                assertEquals(2, st.attachmentCount());
                assertEquals(2, st.metadataCount());
                assertEquals(1000, st.messageStartTime());
                assertEquals(1005 + 10 * 119, st.messageEndTime());
                assertEquals(Map.of(1, 120L, 2, 120L, 3, 60L), st.channelMessageCounts());
                if (chunked) {
                    // ~400 KB of payload (300 messages averaging 1327 bytes) in 16 KiB chunks
                    assertTrue(st.chunkCount() >= 20 && st.chunkCount() <= 26, "chunk count " + st.chunkCount());
                    if (variant == Variant.ALL) {
                        assertEquals(st.chunkCount(), r.chunkIndexes().size());
                    }
                } else {
                    assertEquals(0, st.chunkCount());
                }
            }
            if (chunked && variant == Variant.ALL) {
                for (Record.ChunkIndex ci : r.chunkIndexes()) {
                    assertEquals(compression.specName(), ci.compression());
                    assertFalse(ci.messageIndexOffsets().isEmpty());
                }
            }

            // topic + time filters: /b in [1100, 1300) -> 1105..1295 step 10 = 20 messages
            List<MessageView> b2 = r.messages(McapIndexedReader.ReadOptions.builder().topic("/b").startTime(1100)
                    .endTime(1300).build()).toList();
            assertEquals(20, b2.size());
            assertEquals(1105, b2.get(0).logTime());
            assertEquals(1295, b2.get(19).logTime());
            // /a and /c in [1000, 1040): /a 1000,1010,1020,1030 and /c 1000,1020 -> a,c,a,a,c,a
            List<MessageView> ac = r.messages(McapIndexedReader.ReadOptions.builder().topics(List.of("/a", "/c"))
                    .endTime(1040).build()).toList();
            assertEquals(List.of("/a", "/c", "/a", "/a", "/c", "/a"), ac.stream().map(MessageView::topic).toList());
            // file order is write order here
            List<MessageView> fileOrder = r.messages(McapIndexedReader.ReadOptions.builder()
                    .order(McapIndexedReader.Order.FILE).build()).toList();
            assertMessages(g.messages, fileOrder);
        }
    }

    static void assertMessages(List<GeneratedMcap.Msg> want, List<MessageView> got) {
        assertEquals(want.size(), got.size(), "message count");
        for (int i = 0; i < want.size(); i++) {
            GeneratedMcap.Msg w = want.get(i);
            MessageView m = got.get(i);
            String at = "message " + i;
            assertEquals(w.topic(), m.topic(), at);
            assertEquals(w.sequence(), m.message().sequence(), at);
            assertEquals(w.logTime(), m.logTime(), at);
            assertEquals(w.publishTime(), m.publishTime(), at);
            assertArrayEquals(w.data(), GeneratedMcap.toArray(m.message().data()), at);
        }
    }

    @Test
    void noSummaryIsRejectedWithAClearMessage() throws IOException {
        Path file = dir.resolve("nosummary.mcap");
        GeneratedMcap.write(McapWriter.builder().statistics(false).chunkIndexes(false).repeatChannels(false)
                .repeatSchemas(false).attachmentIndexes(false).metadataIndexes(false).build(file), 10);
        McapFormatException e = assertThrows(McapFormatException.class, () -> McapIndexedReader.open(file));
        assertTrue(e.getMessage().contains("no summary section"), e.getMessage());
        assertEquals(Files.size(file) - 8 - 29, e.offset());
    }

    @Test
    void streamAndPathOutputsAreIdentical() throws IOException {
        Path file = dir.resolve("p.mcap");
        GeneratedMcap.write(McapWriter.builder().compression(McapWriter.Compression.LZ4).chunkSize(8192).build(file), 40);
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        GeneratedMcap.write(McapWriter.builder().compression(McapWriter.Compression.LZ4).chunkSize(8192).build(bos), 40);
        assertArrayEquals(Files.readAllBytes(file), bos.toByteArray());
    }

    @Test
    void pathOutputAppearsOnlyOnCloseAndAbortLeavesNothing() throws IOException {
        Path file = dir.resolve("atomic.mcap");
        Files.writeString(file, "old content");
        McapWriter w = McapWriter.builder().build(file);
        int s = w.registerSchema("s", "ros2msg", new byte[] {1});
        int c = w.registerChannel("/t", "cdr", s, Map.of());
        w.writeMessage(c, 0, 1, 1, new byte[100]);
        assertEquals("old content", Files.readString(file));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(2, files.count()); // target + hidden temp file
        }
        w.abort();
        assertEquals("old content", Files.readString(file));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(file), files.toList());
        }
        assertThrows(IllegalStateException.class, () -> w.writeMessage(c, 0, 1, 1, new byte[1]));

        McapWriter w2 = McapWriter.builder().build(file);
        int c2 = w2.registerChannel("/t", "cdr", 0, Map.of());
        w2.writeMessage(c2, 0, 5, 5, new byte[] {9});
        w2.close();
        w2.close(); // idempotent
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(file), files.toList());
        }
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            List<MessageView> all = r.messages().toList();
            assertEquals(1, all.size());
            assertEquals(5, all.get(0).logTime());
        }
    }

    @Test
    void registrationIsDeduplicatedAndValidated() throws IOException {
        try (McapWriter w = McapWriter.builder().build(new ByteArrayOutputStream())) {
            int s1 = w.registerSchema("a", "ros2msg", new byte[] {1, 2});
            assertEquals(s1, w.registerSchema("a", "ros2msg", new byte[] {1, 2}));
            assertEquals(s1 + 1, w.registerSchema("a", "ros2msg", new byte[] {1, 3}));
            int c1 = w.registerChannel("/x", "cdr", s1, Map.of("q", "1"));
            assertEquals(c1, w.registerChannel("/x", "cdr", s1, Map.of("q", "1")));
            assertThrows(IllegalArgumentException.class, () -> w.registerChannel("/y", "cdr", 99, Map.of()));
            assertThrows(IllegalArgumentException.class, () -> w.writeMessage(42, 0, 0, 0, new byte[0]));
            assertThrows(IllegalArgumentException.class, () -> w.writeMessage(c1, 1L << 32, 0, 0, new byte[0]));
        }
    }
}
