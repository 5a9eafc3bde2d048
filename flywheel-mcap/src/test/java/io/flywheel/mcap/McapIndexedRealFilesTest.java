package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
import org.junit.jupiter.api.Test;

/** The indexed reader on real files: the 25 BridgeData episodes (zstd and lz4 chunks) and mcap-real/. */
class McapIndexedRealFilesTest {

    @Test
    void bridgeEpisodesMatchExpectedJson() throws Exception {
        Path dir = SharedData.data("camera/bridge-mcap");
        JsonNode expected = new ObjectMapper().readTree(dir.resolve("expected.json").toFile());
        int files = 0;
        int images = 0;
        Map<String, Integer> compressions = new TreeMap<>();
        for (JsonNode f : expected.get("files")) {
            Path file = dir.resolve(f.get("file").asText());
            String name = file.getFileName().toString();
            try (McapIndexedReader r = McapIndexedReader.open(file)) {
                assertEquals(f.get("header").get("profile").asText(), r.header().profile(), name);
                assertEquals(f.get("header").get("library").asText(), r.header().library(), name);
                assertEquals(f.get("chunk_count").asInt(), r.chunkIndexes().size(), name);
                String comp = f.get("chunk_compression").asText();
                assertEquals(comp, r.chunkIndexes().get(0).compression(), name);
                compressions.merge(comp, 1, Integer::sum);

                List<MessageView> all = r.messages().toList();
                assertEquals(f.get("message_count").asInt(), all.size(), name);
                assertEquals(51, all.size());
                assertEquals(f.get("first_log_time_ns").asLong(), all.get(0).logTime(), name);
                assertEquals(f.get("last_log_time_ns").asLong(), all.get(all.size() - 1).logTime(), name);
                for (int i = 1; i < all.size(); i++) {
                    assertTrue(all.get(i - 1).logTime() <= all.get(i).logTime(), name + " order at " + i);
                }
                Map<String, Integer> counts = new LinkedHashMap<>();
                all.forEach(m -> counts.merge(m.topic(), 1, Integer::sum));
                f.get("topics").fields().forEachRemaining(e -> {
                    assertEquals(e.getValue().get("count").asInt(), counts.get(e.getKey()), name + " " + e.getKey());
                    Record.Channel c = r.channels().get(e.getValue().get("channel_id").asInt());
                    assertEquals(e.getKey(), c.topic());
                    assertEquals(e.getValue().get("schema_name").asText(), r.schemas().get(c.schemaId()).name());
                });
                Record.Statistics st = r.statistics().orElseThrow();
                assertEquals(51, st.messageCount());

                // JPEG payloads, in step order, equal the originals (sha256 in expected.json)
                var it = f.get("images").fields();
                while (it.hasNext()) {
                    var e = it.next();
                    List<MessageView> cam = r.messages(McapIndexedReader.ReadOptions.builder().topic(e.getKey()).build())
                            .toList();
                    JsonNode shas = e.getValue().get("sha256");
                    assertEquals(shas.size(), cam.size());
                    for (int k = 0; k < cam.size(); k++) {
                        assertEquals(shas.get(k).asText(), sha256(jpegOfCompressedImage(cam.get(k).message().data())),
                                name + " " + e.getKey() + " step " + k);
                        images++;
                    }
                }
                assertEquals(1, r.metadataIndexes().size());
                Record.Metadata md = r.readMetadata(r.metadataIndexes().get(0));
                assertEquals("episode", md.name());
                Map<String, String> want = new LinkedHashMap<>();
                f.get("metadata").get("episode").fields().forEachRemaining(e -> want.put(e.getKey(), e.getValue().asText()));
                assertEquals(want, md.metadata());
            }
            files++;
        }
        assertEquals(25, files);
        assertEquals(Map.of("lz4", 12, "zstd", 13), compressions);
        assertEquals(25 * 3 * 10, images);
    }

    /** sensor_msgs/msg/CompressedImage in CDR: header (stamp, frame_id), format, then uint8[] data. */
    static ByteBuffer jpegOfCompressedImage(ByteBuffer cdr) {
        ByteBuffer b = cdr.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int base = b.position() + 4; // encapsulation header
        int p = 8; // stamp sec + nanosec
        p += 4 + b.getInt(base + p); // frame_id
        p = (p + 3) & ~3;
        p += 4 + b.getInt(base + p); // format
        p = (p + 3) & ~3;
        int n = b.getInt(base + p);
        return b.slice(base + p + 4, n);
    }

    static String sha256(ByteBuffer b) throws NoSuchAlgorithmException {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(b.duplicate());
        return HexFormat.of().formatHex(d.digest());
    }

    @Test
    void mcapRealFilesYieldTheirStatisticsCounts() throws IOException {
        Path root = SharedData.data("mcap-real");
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
        assertEquals(11, files.size());
        Map<String, Long> totals = new TreeMap<>();
        for (Path f : files) {
            String name = root.relativize(f).toString();
            try (McapIndexedReader r = McapIndexedReader.open(f)) {
                List<MessageView> all = r.messages().toList();
                Map<Integer, Long> perChannel = new TreeMap<>();
                for (int i = 0; i < all.size(); i++) {
                    perChannel.merge(all.get(i).channel().id(), 1L, Long::sum);
                    if (i > 0) {
                        assertTrue(Long.compareUnsigned(all.get(i - 1).logTime(), all.get(i).logTime()) <= 0, name);
                    }
                }
                if (r.statistics().isPresent()) {
                    Record.Statistics st = r.statistics().get();
                    assertEquals(st.messageCount(), all.size(), name);
                    Map<Integer, Long> want = new TreeMap<>(st.channelMessageCounts());
                    want.values().removeIf(v -> v == 0);
                    assertEquals(want, perChannel, name);
                }
                totals.put(name, (long) all.size());
            }
        }
        // counts from mcap-real/README.txt
        assertEquals(20L, totals.get("ros2-rosbag2/talker/talker.mcap"));
        assertEquals(7L, totals.get("ros2-rosbag2/cdr_test/cdr_test_0.mcap"));
        assertEquals(10L, totals.get("ros2-rosbag2/bag_with_topics_and_service_events/bag_with_topics_and_service_events.mcap"));
        assertEquals(13L, totals.get("ros2-rosbag2/bags/topics_and_services.mcap"));
        assertEquals(1324L, totals.get("ros2-rosbag2/multiple_files/multiple_files_0.mcap"));
        assertEquals(1324L, totals.get("ros2-rosbag2/multiple_files/multiple_files_1.mcap"));
        assertEquals(529L, totals.get("ros2-rosbag2/multiple_files/multiple_files_2.mcap"));
        assertEquals(150L, totals.get("ros2-rosbag2/convert_a/rewriter_a_0.mcap"));
        assertEquals(188L, totals.get("rosbags-rs/test_bag_mcap/test_bag_mcap.mcap")); // 94 channels x 2, no Statistics
    }
}
