package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.decode.Decoders;
import io.flywheel.decode.JsonTree;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.testkit.SharedData;

/**
 * Decodes real rosbag2 / rosbags MCAP messages with our CDR decoder and compares every message,
 * after JsonTree's normalisation, with @foxglove/rosmsg2-serialization's decoding of the same bytes
 * (tools/node/ros2-decode.mjs).
 */
class CdrReferenceCrossCheckTest {

    private static MessageDecoder decoderFor(ReferenceRun.Channel c, Map<String, MessageDecoder> cache) throws Exception {
        String key = c.file() + "#" + c.id();
        MessageDecoder d = cache.get(key);
        if (d == null) {
            d = Decoders.forSchema(c.messageEncoding(), c.schemaName(), c.schemaEncoding(), ReferenceRun.utf8(c.schema()));
            cache.put(key, d);
        }
        return d;
    }

    @Test
    void rosbagsRsAll94TypesMatchReference() throws Exception {
        Path file = SharedData.data("mcap-real/rosbags-rs/test_bag_mcap/test_bag_mcap.mcap");
        ReferenceRun run = ReferenceRun.of(file);
        Map<String, MessageDecoder> cache = new HashMap<>();
        TreeSet<String> types = new TreeSet<>();
        int compared = 0;
        for (ReferenceRun.Message m : run.messages) {
            assertNull(m.error(), () -> m.channel().topic() + ": reference failed: " + m.error());
            MessageDecoder d = decoderFor(m.channel(), cache);
            Object tree = d.decode(ByteBuffer.wrap(m.data()));
            JsonNode ours = ReferenceRun.MAPPER.readTree(JsonTree.toJson(tree));
            ReferenceRun.assertSameJson(m.value(), ours, m.channel().topic() + "@" + m.logTime());
            types.add(m.channel().schemaName());
            compared++;
        }
        assertEquals(188, compared, "messages compared");
        assertEquals(94, types.size(), "message types compared: " + types);
        assertEquals(94, run.channels.size());
    }

    @Test
    void rosbag2FilesAllDecode() throws Exception {
        Path dir = SharedData.data("mcap-real/ros2-rosbag2");
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
        assertEquals(8, files.size(), "mcap files under ros2-rosbag2: " + files);
        ReferenceRun run = ReferenceRun.of(files.toArray(Path[]::new));
        Map<String, MessageDecoder> cache = new HashMap<>();
        int decoded = 0;
        int compared = 0;
        int serviceEvents = 0;
        Map<String, Integer> perType = new HashMap<>();
        for (ReferenceRun.Message m : run.messages) {
            MessageDecoder d = decoderFor(m.channel(), cache);
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = (Map<String, Object>) d.decode(ByteBuffer.wrap(m.data()));
            decoded++;
            perType.merge(m.channel().schemaName(), 1, Integer::sum);
            if (m.error() == null) {
                JsonNode ours = ReferenceRun.MAPPER.readTree(JsonTree.toJson(tree));
                ReferenceRun.assertSameJson(m.value(), ours, m.channel().file() + " " + m.channel().topic() + "@" + m.logTime());
                compared++;
            } else {
                // the reference cannot parse rosbag2's service-event schemas (.srv text); check by hand
                assertTrue(m.channel().schemaName().endsWith("_Event"), m.error());
                serviceEvents++;
                @SuppressWarnings("unchecked")
                Map<String, Object> info = (Map<String, Object>) tree.get("info");
                assertNotNull(info);
                assertTrue((Integer) info.get("event_type") >= 0 && (Integer) info.get("event_type") <= 3);
                assertEquals(16, ((byte[]) info.get("client_gid")).length);
                List<?> req = (List<?>) tree.get("request");
                List<?> resp = (List<?>) tree.get("response");
                assertEquals(1, req.size() + resp.size(), "one of request/response per event");
            }
        }
        assertEquals(3377, decoded, "messages decoded in ros2-rosbag2: " + perType);
        assertEquals(14, serviceEvents);
        assertEquals(3363, compared);
        assertEquals(100, perType.get("test_msgs/msg/Empty"));
        assertEquals(10, perType.get("rcl_interfaces/msg/Log"));
        assertEquals(6, perType.get("example_interfaces/srv/AddTwoInts_Event"));
    }

    @Test
    void addTwoIntsServiceEventsHaveTheirValues() throws Exception {
        Path file = SharedData.data("mcap-real/ros2-rosbag2/bags/topics_and_services.mcap");
        ReferenceRun run = ReferenceRun.of(file);
        Map<String, MessageDecoder> cache = new HashMap<>();
        int requests = 0;
        int responses = 0;
        for (ReferenceRun.Message m : run.messages) {
            if (!m.channel().schemaName().equals("example_interfaces/srv/AddTwoInts_Event")) {
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = (Map<String, Object>) decoderFor(m.channel(), cache).decode(ByteBuffer.wrap(m.data()));
            for (Object o : (List<?>) tree.get("request")) {
                Map<?, ?> r = (Map<?, ?>) o;
                assertTrue(r.get("a") instanceof Long && r.get("b") instanceof Long, r.toString());
                requests++;
            }
            for (Object o : (List<?>) tree.get("response")) {
                assertTrue(((Map<?, ?>) o).get("sum") instanceof Long);
                responses++;
            }
        }
        assertEquals(6, requests + responses);
        assertTrue(requests > 0 && responses > 0, requests + " requests, " + responses + " responses");
    }

    @Test
    void comparisonDetectsDifferences() throws Exception {
        JsonNode ref = ReferenceRun.MAPPER.readTree("{\"a\":1,\"b\":[0.5,\"NaN\"],\"c\":\"9007199254740993\",\"d\":4294967295}");
        ReferenceRun.assertSameJson(ref, ReferenceRun.MAPPER.readTree(
                "{\"a\":1,\"b\":[0.5,\"NaN\"],\"c\":\"9007199254740993\",\"d\":\"4294967295\"}"), "ok");
        for (String bad : List.of(
                "{\"a\":2,\"b\":[0.5,\"NaN\"],\"c\":\"9007199254740993\",\"d\":4294967295}",
                "{\"a\":1,\"b\":[0.25,\"NaN\"],\"c\":\"9007199254740993\",\"d\":4294967295}",
                "{\"a\":1,\"b\":[0.5],\"c\":\"9007199254740993\",\"d\":4294967295}",
                "{\"a\":1,\"b\":[0.5,\"NaN\"],\"c\":9007199254740993,\"d\":4294967295}",
                "{\"a\":1,\"b\":[0.5,\"NaN\"],\"c\":\"9007199254740993\",\"d\":\"4294967294\"}",
                "{\"b\":[0.5,\"NaN\"],\"a\":1,\"c\":\"9007199254740993\",\"d\":4294967295}")) {
            JsonNode ours = ReferenceRun.MAPPER.readTree(bad);
            org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                    () -> ReferenceRun.assertSameJson(ref, ours, "bad"), bad);
        }
    }
}
