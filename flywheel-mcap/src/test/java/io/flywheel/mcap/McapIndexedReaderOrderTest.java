package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chunks that overlap in time, as in a merge of files written topic by topic.
 *
 * <p>Ground truth: topic /a has 100 messages at log times 0, 10, ..., 990, written first; then /b
 * with 100 messages at 5, 15, ..., 995; then /c with 100 messages at 0, 10, ..., 990 (the same
 * times as /a). Every payload is 100 bytes, so a Message record is 131 bytes; chunks close once they
 * reach 1310 bytes, so each chunk holds exactly 10 messages (the first also holds the 121 bytes of
 * Schema and Channel records: 121 + 9 * 131 = 1300 &lt; 1310), each topic spans 10 chunks of its own,
 * and chunk k of /a covers log times 100k .. 100k+90, of /b 100k+5 .. 100k+95.
 */
class McapIndexedReaderOrderTest {
    @TempDir
    static Path dir;
    static Path file;

    @BeforeAll
    static void write() throws IOException {
        file = dir.resolve("overlap.mcap");
        try (McapWriter w = McapWriter.builder().compression(McapWriter.Compression.LZ4).chunkSize(1310).build(file)) {
            int s = w.registerSchema("x", "ros2msg", new byte[0]);
            int a = w.registerChannel("/a", "cdr", s, Map.of());
            int b = w.registerChannel("/b", "cdr", s, Map.of());
            int c = w.registerChannel("/c", "cdr", s, Map.of());
            for (int i = 0; i < 100; i++) {
                w.writeMessage(a, i, 10L * i, 10L * i, payload('a', i));
            }
            for (int i = 0; i < 100; i++) {
                w.writeMessage(b, i, 10L * i + 5, 10L * i + 5, payload('b', i));
            }
            for (int i = 0; i < 100; i++) {
                w.writeMessage(c, i, 10L * i, 10L * i, payload('c', i));
            }
        }
    }

    static byte[] payload(char topic, int i) {
        byte[] p = new byte[100];
        p[0] = (byte) topic;
        p[1] = (byte) i;
        return p;
    }

    @Test
    void chunksReallyOverlap() throws IOException {
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            assertEquals(30, r.chunkIndexes().size());
            Record.ChunkIndex firstA = r.chunkIndexes().get(0);
            Record.ChunkIndex lastA = r.chunkIndexes().get(9);
            Record.ChunkIndex firstB = r.chunkIndexes().get(10);
            assertEquals(0, firstA.messageStartTime());
            assertEquals(90, firstA.messageEndTime());
            assertEquals(900, lastA.messageStartTime());
            assertEquals(5, firstB.messageStartTime());
            assertEquals(95, firstB.messageEndTime());
            assertEquals(java.util.Set.of(2), firstB.messageIndexOffsets().keySet());
            assertTrue(firstB.chunkStartOffset() > lastA.chunkStartOffset());
        }
    }

    @Test
    void logTimeOrderAcrossOverlappingChunks() throws IOException {
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            McapIndexedReader.MessageIterator it = r.messages();
            List<MessageView> all = it.toList();
            assertEquals(300, all.size());
            // expected: at each time 10k: /a then /c (file order breaks the tie), then /b at 10k+5
            for (int k = 0; k < 100; k++) {
                check(all.get(3 * k), "/a", 10L * k, k);
                check(all.get(3 * k + 1), "/c", 10L * k, k);
                check(all.get(3 * k + 2), "/b", 10L * k + 5, k);
            }
            assertEquals(30, it.chunksRead());
            // one chunk per topic held at a time: /a chunk k drains (last time 100k+90) before /a chunk k+1
            // (first time 100k+100) is read
            assertEquals(3, it.maxChunksHeld());
        }
    }

    private static void check(MessageView m, String topic, long time, int seq) {
        assertEquals(topic, m.topic(), "topic at time " + time);
        assertEquals(time, m.logTime());
        assertEquals(seq, m.message().sequence());
        assertEquals(topic.charAt(1), (char) m.message().data().get(0));
        assertEquals((byte) seq, m.message().data().get(1));
    }

    @Test
    void topicAndTimeFilters() throws IOException {
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            // /b in [100, 300): 105, 115, ..., 295 = 20 messages, from /b chunks only
            McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder()
                    .topic("/b").startTime(100).endTime(300).build());
            List<MessageView> b = it.toList();
            assertEquals(20, b.size());
            for (int i = 0; i < 20; i++) {
                check(b.get(i), "/b", 105 + 10L * i, 10 + i);
            }
            // /b chunk k covers times 100k+5 .. 100k+95: only chunks 1 and 2 overlap [100, 300)
            assertEquals(2, it.chunksRead());

            // every topic in [100, 300): /a 20 + /c 20 + /b 20
            List<MessageView> all = r.messages(McapIndexedReader.ReadOptions.builder().startTime(100).endTime(300)
                    .build()).toList();
            assertEquals(60, all.size());
            assertEquals(100, all.get(0).logTime());
            assertEquals(295, all.get(59).logTime());

            // end is exclusive, start inclusive: [990, 995) holds /a 990 and /c 990 only
            List<MessageView> edge = r.messages(McapIndexedReader.ReadOptions.builder().startTime(990).endTime(995)
                    .build()).toList();
            assertEquals(List.of("/a", "/c"), edge.stream().map(MessageView::topic).toList());

            // unknown topic: nothing, and no chunk read
            McapIndexedReader.MessageIterator none = r.messages(McapIndexedReader.ReadOptions.builder()
                    .topic("/nope").build());
            assertEquals(0, none.toList().size());
            assertEquals(0, none.chunksRead());
        }
    }

    @Test
    void fileOrderYieldsWriteOrder() throws IOException {
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            List<MessageView> all = r.messages(McapIndexedReader.ReadOptions.builder()
                    .order(McapIndexedReader.Order.FILE).build()).toList();
            List<String> topics = new ArrayList<>();
            for (int i = 0; i < 300; i += 100) {
                topics.add(all.get(i).topic());
                assertEquals(0, all.get(i).message().sequence());
                assertEquals(99, all.get(i + 99).message().sequence());
            }
            assertEquals(List.of("/a", "/b", "/c"), topics);
        }
    }

    @Test
    void messagesOutOfOrderInsideOneChunkAreSorted() throws IOException {
        Path f = dir.resolve("reversed.mcap");
        try (McapWriter w = McapWriter.builder().build(f)) {
            int c = w.registerChannel("/r", "raw", 0, Map.of());
            int d = w.registerChannel("/d", "raw", 0, Map.of());
            for (int i = 9; i >= 0; i--) {
                w.writeMessage(c, 9 - i, 100L * i, 0, new byte[] {(byte) i});
            }
            w.writeMessage(d, 0, 500, 0, new byte[] {42}); // same time as /r i=5, later in file
        }
        try (McapIndexedReader r = McapIndexedReader.open(f)) {
            assertEquals(1, r.chunkIndexes().size());
            List<MessageView> all = r.messages().toList();
            assertEquals(11, all.size());
            List<Long> times = all.stream().map(MessageView::logTime).toList();
            assertEquals(List.of(0L, 100L, 200L, 300L, 400L, 500L, 500L, 600L, 700L, 800L, 900L), times);
            assertEquals("/r", all.get(5).topic());
            assertEquals("/d", all.get(6).topic());
            // through the message index (topic filter)
            List<MessageView> rOnly = r.messages(McapIndexedReader.ReadOptions.builder().topic("/r").build()).toList();
            assertEquals(10, rOnly.size());
            assertEquals(9, rOnly.get(0).message().sequence());
        }
    }
}
