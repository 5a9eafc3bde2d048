package io.flywheel.decode.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flywheel.decode.DecodeException;
import io.flywheel.decode.MessageDecoder;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;

/**
 * JSON messages: the two Labelbox Franka FR3 teleop recordings (shared/data/mcap-real/labelbox-franka),
 * read by @mcap/core through tools/node/mcap-dump.mjs, decoded here; plus hand-written documents.
 */
class JsonMessageDecoderTest {
    static final ObjectMapper JSON = new ObjectMapper();

    record Dump(Map<Integer, JsonNode> schemas, Map<Integer, JsonNode> channels, List<JsonNode> messages) {}

    static Dump dump(Path mcap) throws Exception {
        Node.Result res = Node.run("mcap-dump.mjs", mcap.toString());
        assertEquals(0, res.exitCode(), res.stderr());
        Dump d = new Dump(new HashMap<>(), new HashMap<>(), new ArrayList<>());
        for (String line : res.stdout().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode n = JSON.readTree(line);
            switch (n.get("kind").asText()) {
                case "schema" -> d.schemas().put(n.get("id").asInt(), n);
                case "channel" -> d.channels().put(n.get("id").asInt(), n);
                default -> d.messages().add(n);
            }
        }
        return d;
    }

    /** topic -> decoded messages in log-time order. */
    static Map<String, List<Object>> decodeAll(Dump d) throws Exception {
        Map<Integer, MessageDecoder> decoders = new HashMap<>();
        for (JsonNode c : d.channels().values()) {
            assertEquals("json", c.get("messageEncoding").asText());
            JsonNode s = d.schemas().get(c.get("schemaId").asInt());
            assertEquals("jsonschema", s.get("encoding").asText());
            decoders.put(c.get("id").asInt(), JsonMessageDecoder.forSchema(s.get("name").asText(),
                    Base64.getDecoder().decode(s.get("data").asText())));
        }
        Map<String, List<Object>> out = new TreeMap<>();
        for (JsonNode m : d.messages()) {
            byte[] bytes = Base64.getDecoder().decode(m.get("data").asText());
            Object v = decoders.get(m.get("channelId").asInt()).decode(ByteBuffer.wrap(bytes));
            // second reading of the same bytes by Jackson databind: same numbers, same order
            assertEquals(JSON.readValue(bytes, Object.class), v, m.get("topic").asText());
            out.computeIfAbsent(m.get("topic").asText(), k -> new ArrayList<>()).add(v);
        }
        return out;
    }

    static Map<String, Integer> counts(Map<String, List<Object>> byTopic) {
        Map<String, Integer> c = new TreeMap<>();
        byTopic.forEach((k, v) -> c.put(k, v.size()));
        return c;
    }

    @Test
    @SuppressWarnings("unchecked")
    void labelboxFrankaRecordingsDecode() throws Exception {
        Map<String, List<Object>> a = decodeAll(dump(
                SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap")));
        assertEquals(Map.of("/action", 4, "/joint_states", 4, "/robot_description", 1, "/robot_state", 4,
                "/tf", 5, "/vr_controller", 4), counts(a));
        Map<String, List<Object>> b = decodeAll(dump(
                SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003442_00m02s.mcap")));
        assertEquals(Map.of("/action", 4, "/joint_states", 4, "/robot_description", 1, "/robot_state", 4,
                "/tf", 5, "/tf_static", 1, "/vr_controller", 4), counts(b));

        // a Franka FR3 has 7 arm joints; JointState adds the 2 finger joints
        Map<String, Object> state = (Map<String, Object>) a.get("/robot_state").get(0);
        assertEquals(List.of(0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785), state.get("joint_positions"));
        assertEquals(Map.of("sec", 1748331238, "nsec", 104014336), state.get("timestamp"));
        assertEquals(0.5, state.get("gripper_position"));
        for (Object o : a.get("/robot_state")) {
            assertEquals(7, ((List<Object>) ((Map<String, Object>) o).get("joint_positions")).size());
        }
        Map<String, Object> js = (Map<String, Object>) a.get("/joint_states").get(0);
        List<Object> names = (List<Object>) js.get("name");
        assertEquals(9, names.size());
        assertEquals("fr3_joint1", names.get(0));
        assertEquals("fr3_finger_joint2", names.get(8));
        assertEquals(9, ((List<Object>) js.get("position")).size());
        assertEquals(Map.of("sec", 1748331238, "nanosec", 104014336),
                ((Map<String, Object>) js.get("header")).get("stamp"));
        String urdf = (String) ((Map<String, Object>) a.get("/robot_description").get(0)).get("data");
        assertTrue(urdf.startsWith("<?xml") && urdf.contains("<robot name=\"fr3\">"), urdf.substring(0, 80));
        Map<String, Object> vr = (Map<String, Object>) a.get("/vr_controller").get(0);
        assertEquals(Boolean.TRUE, vr.get("movement_enabled"));
        assertEquals(Map.of(), vr.get("poses"));
        List<Object> tf = (List<Object>) ((Map<String, Object>) a.get("/tf").get(0)).get("transforms");
        assertEquals("base", ((Map<String, Object>) tf.get(0)).get("child_frame_id"));
    }

    @Test
    void base64FieldsOfTheFilesCompressedImageSchemaBecomeBytes() throws Exception {
        Dump d = dump(SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap"));
        JsonNode schema = d.schemas().values().stream()
                .filter(s -> s.get("name").asText().equals("foxglove.CompressedImage")).findFirst().orElseThrow();
        MessageDecoder dec = JsonMessageDecoder.forSchema("foxglove.CompressedImage",
                Base64.getDecoder().decode(schema.get("data").asText()));
        String msg = "{\"timestamp\": {\"sec\": 1, \"nsec\": 2}, \"frame_id\": \"cam\", \"data\": \"AAEC/w==\", "
                + "\"format\": \"jpeg\"}";
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) dec.decode(utf8(msg));
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 255}, (byte[]) m.get("data"));
        assertEquals("cam", m.get("frame_id")); // plain strings stay strings
        assertEquals("jpeg", m.get("format"));

        DecodeException e = assertThrows(DecodeException.class,
                () -> dec.decode(utf8("{\"frame_id\": \"c\", \"data\": \"not base64!\"}")));
        assertTrue(e.getMessage().startsWith("foxglove.CompressedImage json message at byte 26: field 'data'"),
                e.getMessage());
    }

    @Test
    void base64ThroughArraysAndMaps() throws DecodeException {
        String schema = "{\"type\":\"object\",\"properties\":{\"blobs\":{\"type\":\"array\",\"items\":"
                + "{\"type\":\"string\",\"contentEncoding\":\"base64\"}},\"named\":{\"type\":\"object\","
                + "\"additionalProperties\":{\"type\":\"string\",\"contentEncoding\":\"base64\"}},"
                + "\"text\":{\"type\":\"string\"}}}";
        MessageDecoder dec = JsonMessageDecoder.forSchema("t", schema.getBytes(StandardCharsets.UTF_8));
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) dec.decode(
                utf8("{\"blobs\":[\"AQ==\",\"\"],\"named\":{\"k\":\"Ag==\"},\"text\":\"AQ==\"}"));
        List<?> blobs = (List<?>) m.get("blobs");
        assertArrayEquals(new byte[] {1}, (byte[]) blobs.get(0));
        assertArrayEquals(new byte[0], (byte[]) blobs.get(1));
        assertArrayEquals(new byte[] {2}, (byte[]) ((Map<?, ?>) m.get("named")).get("k"));
        assertEquals("AQ==", m.get("text"));
    }

    @Test
    void numbersGetTheSmallestFittingType() throws DecodeException {
        MessageDecoder dec = JsonMessageDecoder.schemaless();
        Object v = dec.decode(utf8("[1, -2147483648, 3000000000, -9223372036854775808, 99999999999999999999,"
                + " 1.5, 1e3, NaN, -Infinity, null, true, \"s\"]"));
        List<Object> expected = new ArrayList<>(List.of(1, Integer.MIN_VALUE, 3_000_000_000L, Long.MIN_VALUE,
                new BigInteger("99999999999999999999"), 1.5, 1000.0, Double.NaN, Double.NEGATIVE_INFINITY));
        expected.add(null);
        expected.add(true);
        expected.add("s");
        assertEquals(expected, v);
        assertEquals(Map.of("a", Map.of("b", List.of())), dec.decode(utf8("{\"a\": {\"b\": []}}")));
    }

    @Test
    void badJsonNamesTheByteOffset() throws Exception {
        MessageDecoder dec = JsonMessageDecoder.forSchema("t", null);
        DecodeException e = assertThrows(DecodeException.class, () -> dec.decode(utf8("{\"a\": [1, 2,, 3]}")));
        assertTrue(e.getMessage().startsWith("t json message at byte 12: "), e.getMessage());
        e = assertThrows(DecodeException.class, () -> dec.decode(utf8("{\"a\": 1} x")));
        assertTrue(e.getMessage().startsWith("t json message at byte 9: "), e.getMessage());
        e = assertThrows(DecodeException.class, () -> dec.decode(utf8("{\"a\": \"unterminated")));
        assertTrue(e.getMessage().startsWith("t json message at byte "), e.getMessage());
        e = assertThrows(DecodeException.class, () -> dec.decode(utf8("")));
        assertTrue(e.getMessage().contains("empty document"), e.getMessage());
        // offsets count from the buffer's position, not from the start of its backing array
        byte[] padded = "xxxx{\"a\": [1, 2,, 3]}".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.wrap(padded);
        b.position(4);
        e = assertThrows(DecodeException.class, () -> dec.decode(b));
        assertTrue(e.getMessage().startsWith("t json message at byte 12: "), e.getMessage());
        assertEquals(4, b.position());
        e = assertThrows(DecodeException.class,
                () -> JsonMessageDecoder.forSchema("s", "{not json".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().startsWith("s: the JSON schema is not valid JSON"), e.getMessage());
    }

    static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }
}
