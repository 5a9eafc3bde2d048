package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Real recordings read end to end; counts and contents checked against what their sources state. */
class McapRealFilesTest {

    /** Everything one pass over a file yields, summarised. */
    record Summary(Record.Header header, Map<String, Integer> countsByTopic, Map<Integer, Long> countsByChannel,
                   Map<String, List<ByteBuffer>> dataByTopic, long firstLogTime, long lastLogTime,
                   Record.Statistics statistics, List<String> chunkCompressions, int messages) {}

    static Summary summarise(Path p) throws IOException {
        Map<Integer, String> topics = new LinkedHashMap<>();
        Map<String, Integer> byTopic = new TreeMap<>();
        Map<Integer, Long> byChannel = new TreeMap<>();
        Map<String, List<ByteBuffer>> data = new TreeMap<>();
        Record.Header header = null;
        Record.Statistics stats = null;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        int n = 0;
        try (McapStreamReader r = McapStreamReader.open(p)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Header h) {
                    header = h;
                } else if (rec instanceof Record.Channel c) {
                    topics.putIfAbsent(c.id(), c.topic());
                    byTopic.putIfAbsent(c.topic(), 0);
                } else if (rec instanceof Record.Statistics s) {
                    stats = s;
                } else if (rec instanceof Record.Message m) {
                    String t = topics.get(m.channelId());
                    assertTrue(t != null, "message on channel " + m.channelId() + " before its Channel record");
                    byTopic.merge(t, 1, Integer::sum);
                    byChannel.merge(m.channelId(), 1L, Long::sum);
                    data.computeIfAbsent(t, k -> new ArrayList<>()).add(m.data());
                    first = Math.min(first, m.logTime());
                    last = Math.max(last, m.logTime());
                    n++;
                }
            }
            assertEquals(List.of(), r.problems());
            assertEquals(Files.size(p), r.lastGoodOffset());
        }
        List<String> comps = new ArrayList<>();
        try (McapStreamReader r = McapStreamReader.open(p, McapStreamReader.Options.builder().emitChunks(true).build())) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Chunk c) {
                    comps.add(c.compression());
                }
            }
        }
        return new Summary(header, byTopic, byChannel, data, first, last, stats, comps, n);
    }

    @TestFactory
    Stream<DynamicTest> bridgeFilesHoldWhatExpectedJsonSays() throws IOException {
        Path dir = SharedData.data("camera/bridge-mcap");
        JsonNode expected = new ObjectMapper().readTree(dir.resolve("expected.json").toFile());
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode f : expected.get("files")) {
            tests.add(DynamicTest.dynamicTest(f.get("file").asText(), () -> checkBridge(dir, f)));
        }
        assertEquals(25, tests.size());
        return tests.stream();
    }

    private static void checkBridge(Path dir, JsonNode f) throws IOException, NoSuchAlgorithmException {
        Path p = dir.resolve(f.get("file").asText());
        assertEquals(f.get("size_bytes").asLong(), Files.size(p));
        Summary s = summarise(p);
        assertEquals(f.get("header").get("profile").asText(), s.header().profile());
        assertEquals(f.get("header").get("library").asText(), s.header().library());
        assertEquals(f.get("message_count").asInt(), s.messages());
        Map<String, Integer> want = new TreeMap<>();
        f.get("topics").fields().forEachRemaining(e -> want.put(e.getKey(), e.getValue().get("count").asInt()));
        assertEquals(want, s.countsByTopic());
        assertEquals(f.get("first_log_time_ns").asLong(), s.firstLogTime());
        assertEquals(f.get("last_log_time_ns").asLong(), s.lastLogTime());
        assertEquals(List.of(f.get("chunk_compression").asText()), s.chunkCompressions());
        assertEquals(f.get("chunk_count").asInt(), s.chunkCompressions().size());
        // Each CompressedImage's JPEG is the tail of its CDR message (uint8[] data is the last field).
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        int images = 0;
        var it = f.get("images").fields();
        while (it.hasNext()) {
            var e = it.next();
            List<ByteBuffer> msgs = s.dataByTopic().get(e.getKey());
            JsonNode hashes = e.getValue().get("sha256");
            JsonNode sizes = e.getValue().get("size_bytes");
            assertEquals(hashes.size(), msgs.size(), e.getKey());
            for (int k = 0; k < msgs.size(); k++) {
                ByteBuffer d = msgs.get(k);
                int len = sizes.get(k).asInt();
                byte[] jpeg = new byte[len];
                d.duplicate().position(d.remaining() - len).get(jpeg);
                assertEquals(hashes.get(k).asText(), HexFormat.of().formatHex(sha.digest(jpeg)),
                        e.getKey() + " step " + k);
                assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8}, new byte[] {jpeg[0], jpeg[1]});
                images++;
            }
        }
        assertEquals(30, images);
    }

    @Test
    void ros2BagsHoldTheDocumentedMessageCounts() throws IOException {
        String base = "mcap-real/ros2-rosbag2/";
        assertEquals(Map.of("/rosout", 10, "/parameter_events", 0, "/topic", 10),
                summarise(SharedData.data(base + "talker/talker.mcap")).countsByTopic());
        assertEquals(Map.of("/test_topic", 3, "/array_topic", 4),
                summarise(SharedData.data(base + "cdr_test/cdr_test_0.mcap")).countsByTopic());
        assertEquals(Map.of("a_empty", 100, "b_basictypes", 50),
                summarise(SharedData.data(base + "convert_a/rewriter_a_0.mcap")).countsByTopic());
        int[] split = {1324, 1324, 529};
        for (int i = 0; i < 3; i++) {
            Summary s = summarise(SharedData.data(base + "multiple_files/multiple_files_" + i + ".mcap"));
            assertEquals(Map.of("/chatter", split[i]), s.countsByTopic());
            assertEquals(List.of("zstd"), s.chunkCompressions());
        }
        Summary rosbags = summarise(SharedData.data("mcap-real/rosbags-rs/test_bag_mcap/test_bag_mcap.mcap"));
        assertEquals(94, rosbags.countsByTopic().size());
        assertTrue(rosbags.countsByTopic().values().stream().allMatch(c -> c == 2), rosbags.countsByTopic().toString());
        assertEquals(null, rosbags.statistics());
        assertEquals("rosbags-0.10.10", rosbags.header().library());
    }

    /** Every real file: the messages counted per channel equal the writer's own Statistics record. */
    @TestFactory
    Stream<DynamicTest> countsAgreeWithEachFilesStatistics() throws IOException {
        Path root = SharedData.data("mcap-real");
        List<Path> files;
        try (Stream<Path> w = Files.walk(root)) {
            files = w.filter(x -> x.toString().endsWith(".mcap")).sorted().toList();
        }
        assertEquals(11, files.size());
        return files.stream().map(p -> DynamicTest.dynamicTest(root.relativize(p).toString(), () -> {
            Summary s = summarise(p);
            if (s.statistics() == null) {
                return; // rosbags-rs writes none; checked above
            }
            assertEquals(s.statistics().messageCount(), s.messages());
            Map<Integer, Long> declared = new TreeMap<>(s.statistics().channelMessageCounts());
            declared.values().removeIf(v -> v == 0);
            assertEquals(declared, s.countsByChannel());
            if (s.messages() > 0) {
                // rosbag2's writer leaves log_time 0 out of message_start_time (convert_a/rewriter_a_0.mcap:
                // messages start at 0, Statistics says 1000000; @mcap/core's reader sees the same 0).
                if (s.firstLogTime() != 0) {
                    assertEquals(s.statistics().messageStartTime(), s.firstLogTime());
                }
                assertEquals(s.statistics().messageEndTime(), s.lastLogTime());
            }
        }));
    }
}
