package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link McapIndexedReader.ReadOptions#reuseBuffers()}: recycled chunk arrays must never be
 * overwritten while a chunk still has messages to yield, also when chunks overlap in time and
 * several are held at once.
 *
 * <p>Ground truth: as in {@link McapIndexedReaderOrderTest}, topics /a (log times 0, 10, ..., 990),
 * /b (5, 15, ..., 995) and /c (0, 10, ..., 990) are written one after the other, 100 messages each,
 * so their chunks overlap in time. Message i of topic t has a payload of 100 + (i % 7) * 30 bytes
 * whose byte j is {@code t * 31 + i * 7 + j} (mod 256), so any byte left over from another message
 * shows.
 */
class McapIndexedReaderReuseTest {
    @TempDir
    Path dir;

    static byte[] payload(char topic, int i) {
        byte[] p = new byte[100 + (i % 7) * 30];
        for (int j = 0; j < p.length; j++) {
            p[j] = (byte) (topic * 31 + i * 7 + j);
        }
        return p;
    }

    private Path write(McapWriter.Compression compression) throws IOException {
        Path file = dir.resolve("overlap-" + compression + ".mcap");
        try (McapWriter w = McapWriter.builder().compression(compression).chunkSize(2000).build(file)) {
            int s = w.registerSchema("x", "ros2msg", new byte[0]);
            for (char t : new char[] {'a', 'b', 'c'}) {
                int ch = w.registerChannel("/" + t, "cdr", s, Map.of());
                for (int i = 0; i < 100; i++) {
                    long time = 10L * i + (t == 'b' ? 5 : 0);
                    w.writeMessage(ch, i, time, time, payload(t, i));
                }
            }
        }
        return file;
    }

    @ParameterizedTest
    @EnumSource(McapWriter.Compression.class)
    void reusedBuffersYieldTheSameMessagesAsFreshOnes(McapWriter.Compression compression) throws IOException {
        Path file = write(compression);
        try (McapIndexedReader r = McapIndexedReader.open(file)) {
            List<String> fresh = new ArrayList<>();
            for (MessageView m : r.messages().toList()) { // all kept, then checked: data must stay valid
                check(m);
                fresh.add(m.topic() + "@" + m.logTime());
            }
            for (McapIndexedReader.Order order : McapIndexedReader.Order.values()) {
                McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder()
                        .order(order).reuseBuffers(true).build());
                List<String> reused = new ArrayList<>();
                while (it.hasNext()) {
                    MessageView m = it.next();
                    check(m); // before the next hasNext(), as the option requires
                    reused.add(m.topic() + "@" + m.logTime());
                }
                assertEquals(300, reused.size());
                if (order == McapIndexedReader.Order.LOG_TIME) {
                    assertEquals(fresh, reused);
                    // at each time 10k: /a, /c (file order breaks the tie), then /b at 10k + 5
                    assertEquals(List.of("/a@0", "/c@0", "/b@5", "/a@10"), reused.subList(0, 4));
                    assertTrue(it.maxChunksHeld() >= 3, "chunks held at once: " + it.maxChunksHeld());
                } else {
                    assertEquals("/a@0", reused.get(0));
                    assertEquals("/b@5", reused.get(100));
                    assertEquals("/c@990", reused.get(299));
                }
            }
            // a topic filter goes through the message indexes
            McapIndexedReader.MessageIterator it = r.messages(McapIndexedReader.ReadOptions.builder()
                    .topic("/b").startTime(100).endTime(300).reuseBuffers(true).build());
            int n = 0;
            while (it.hasNext()) {
                MessageView m = it.next();
                check(m);
                assertEquals(105 + 10L * n, m.logTime());
                n++;
            }
            assertEquals(20, n);
        }
    }

    private static void check(MessageView m) {
        char t = m.topic().charAt(1);
        int i = (int) m.message().sequence();
        ByteBuffer d = m.message().data();
        byte[] want = payload(t, i);
        byte[] got = new byte[d.remaining()];
        d.duplicate().get(got);
        assertEquals(ByteBuffer.wrap(want), ByteBuffer.wrap(got), m.topic() + " message " + i);
    }
}
