package io.flywheel.ros.ros1;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flywheel.decode.DecodeException;
import io.flywheel.ros.bag.BagMessage;
import io.flywheel.ros.bag.BagReader;
import io.flywheel.ros.bag.Connection;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;

/**
 * Decodes every message of the three turtlesim bags (shared/data/ros1-bag) and compares them with
 * each other and, message by message, with cruise-automation/rosbag.js (tools/node/ros1-read.mjs).
 */
class Ros1BagDecodeTest {
    static final String[] FILES = {"example.bag", "example-lz4.bag", "example-bz2.bag"};

    record Decoded(String topic, long logTime, Object value) {}

    static List<Decoded> decodeAll(Path file) throws Exception {
        List<Decoded> out = new ArrayList<>();
        Map<Integer, Ros1Decoder> decoders = new HashMap<>();
        try (BagReader r = BagReader.open(file)) {
            for (BagMessage m : r.readAll(BagReader.Order.LOG_TIME)) {
                Connection c = m.connection();
                Ros1Decoder d = decoders.get(c.id());
                if (d == null) {
                    d = Ros1Decoder.forDefinition(c.type(), c.messageDefinition());
                    decoders.put(c.id(), d);
                }
                try {
                    out.add(new Decoded(m.topic(), m.logTime(), d.decode(m.data())));
                } catch (DecodeException e) {
                    fail(file + " " + m.topic() + " @" + m.logTime() + ": " + e.getMessage(), e);
                }
            }
        }
        return out;
    }

    @Test
    void threeFilesDecodeToTheSameMessages() throws Exception {
        List<Decoded> plain = decodeAll(SharedData.data("ros1-bag/example.bag"));
        assertEquals(8647, plain.size());
        for (String other : new String[] {"example-lz4.bag", "example-bz2.bag"}) {
            List<Decoded> got = decodeAll(SharedData.data("ros1-bag/" + other));
            assertEquals(plain.size(), got.size());
            for (int i = 0; i < plain.size(); i++) {
                assertEquals(plain.get(i).topic(), got.get(i).topic(), other + " #" + i);
                assertEquals(plain.get(i).logTime(), got.get(i).logTime(), other + " #" + i);
                assertEquals(canon(plain.get(i).value()), canon(got.get(i).value()), other + " #" + i);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void valuesAPersonCanCheck() throws Exception {
        List<Decoded> all = decodeAll(SharedData.data("ros1-bag/example-lz4.bag"));
        Decoded pose = all.stream().filter(d -> d.topic().equals("/turtle1/pose")).findFirst().orElseThrow();
        Map<String, Object> p = (Map<String, Object>) pose.value();
        // turtlesim spawns turtle1 in the middle of its 11.09 x 11.09 window
        assertEquals(List.of("x", "y", "theta", "linear_velocity", "angular_velocity"), List.copyOf(p.keySet()));
        assertEquals(5.544444561004639f, (Float) p.get("x"));
        assertEquals(5.544444561004639f, (Float) p.get("y"));
        assertEquals(1_396_293_888_056_045_055L, pose.logTime());

        Decoded stat = all.stream().filter(d -> d.topic().equals("/tf_static")).findFirst().orElseThrow();
        List<Object> transforms = (List<Object>) ((Map<String, Object>) stat.value()).get("transforms");
        assertEquals(1, transforms.size());
        Map<String, Object> t = (Map<String, Object>) transforms.get(0);
        Map<String, Object> header = (Map<String, Object>) t.get("header");
        assertEquals(0L, header.get("seq"));
        assertEquals(Map.of("sec", 1_396_293_887L, "nsec", 807_552_910L), header.get("stamp"));
        assertEquals("turtle1", header.get("frame_id"));
        assertEquals("carrot", t.get("child_frame_id"));
        Map<String, Object> tr = (Map<String, Object>) ((Map<String, Object>) t.get("transform")).get("translation");
        assertEquals(1.0, tr.get("x"));

        Decoded color = all.stream().filter(d -> d.topic().equals("/turtle1/color_sensor")).findFirst().orElseThrow();
        assertEquals(Map.of("r", 69, "g", 86, "b", 255), color.value());

        Decoded log = all.get(0);
        Map<String, Object> l = (Map<String, Object>) log.value();
        assertEquals("/rosout", log.topic());
        assertEquals("Subscribing to /rosout", l.get("msg"));
        assertEquals(2, l.get("level")); // byte level: INFO=2
        assertEquals(205L, l.get("line"));
        assertEquals(List.of("/rosout"), l.get("topics"));
    }

    @Test
    void matchesRosbagJsMessageByMessage() throws Exception {
        ObjectMapper json = new ObjectMapper();
        for (String name : FILES) {
            Path file = SharedData.data("ros1-bag/" + name);
            Node.Result res = Node.run("ros1-read.mjs", file.toString());
            assertEquals(0, res.exitCode(), res.stderr());
            List<JsonNode> peer = new ArrayList<>();
            for (String line : res.stdout().split("\n")) {
                if (!line.isBlank()) {
                    JsonNode n = json.readTree(line);
                    if (n.get("kind").asText().equals("message")) {
                        peer.add(n);
                    }
                }
            }
            List<Decoded> ours = decodeAll(file);
            assertEquals(peer.size(), ours.size(), name);
            for (int i = 0; i < ours.size(); i++) {
                JsonNode p = peer.get(i);
                Decoded d = ours.get(i);
                String where = name + " #" + i + " " + d.topic();
                assertEquals(p.get("topic").asText(), d.topic(), where);
                assertEquals(p.get("sec").asLong() * 1_000_000_000L + p.get("nsec").asLong(), d.logTime(), where);
                assertSame(p.get("message"), d.value(), where);
            }
        }
    }

    /** Compares our tree with the normalised JSON of rosbag.js (64-bit integers as strings, bytes as numbers). */
    static void assertSame(JsonNode expected, Object actual, String where) {
        if (actual instanceof Map<?, ?> m) {
            assertTrue(expected.isObject(), where + ": expected " + expected + ", got a message");
            List<String> keys = new ArrayList<>();
            expected.fieldNames().forEachRemaining(keys::add);
            assertEquals(keys, new ArrayList<>(m.keySet().stream().map(String::valueOf).toList()), where);
            for (Map.Entry<?, ?> e : m.entrySet()) {
                assertSame(expected.get((String) e.getKey()), e.getValue(), where + "." + e.getKey());
            }
        } else if (actual instanceof List<?> l) {
            assertTrue(expected.isArray() && expected.size() == l.size(), where + ": " + expected + " vs " + l);
            Iterator<JsonNode> it = expected.elements();
            int i = 0;
            for (Object o : l) {
                assertSame(it.next(), o, where + "[" + i++ + "]");
            }
        } else if (actual instanceof byte[] b) {
            assertTrue(expected.isArray() && expected.size() == b.length, where);
            for (int i = 0; i < b.length; i++) {
                assertEquals(b[i] & 0xff, expected.get(i).asInt() & 0xff, where + "[" + i + "]");
            }
        } else if (actual instanceof Float f) {
            if (f.isNaN() || f.isInfinite()) {
                assertEquals(String.valueOf(f), expected.asText(), where);
            } else {
                assertEquals((double) f, expected.asDouble(), 0.0, where);
            }
        } else if (actual instanceof Double f) {
            if (f.isNaN() || f.isInfinite()) {
                assertEquals(String.valueOf(f), expected.asText(), where);
            } else {
                assertEquals(f, expected.asDouble(), 0.0, where);
            }
        } else if (actual instanceof Integer || actual instanceof Long || actual instanceof BigInteger) {
            assertEquals(actual.toString(), expected.isNumber() ? expected.bigIntegerValue().toString()
                    : expected.asText(), where);
        } else if (actual instanceof Boolean bo) {
            assertEquals(bo, expected.asBoolean(), where);
        } else if (actual instanceof String s) {
            assertEquals(s, expected.asText(), where);
        } else {
            fail(where + ": unexpected value " + actual);
        }
    }

    /** A canonical string of a decoded tree, with the Java type of each leaf. */
    static String canon(Object v) {
        StringBuilder sb = new StringBuilder();
        canon(v, sb);
        return sb.toString();
    }

    private static void canon(Object v, StringBuilder sb) {
        if (v instanceof Map<?, ?> m) {
            sb.append('{');
            m.forEach((k, x) -> {
                sb.append(k).append('=');
                canon(x, sb);
                sb.append(',');
            });
            sb.append('}');
        } else if (v instanceof List<?> l) {
            sb.append('[');
            l.forEach(x -> {
                canon(x, sb);
                sb.append(',');
            });
            sb.append(']');
        } else if (v instanceof byte[] b) {
            sb.append("bytes").append(java.util.Arrays.toString(b));
        } else {
            sb.append(v.getClass().getSimpleName()).append(':').append(v);
        }
    }
}
