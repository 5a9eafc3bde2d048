package io.flywheel.ros.cdr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.Node;

/**
 * Output of {@code tools/node/ros2-decode.mjs}: channels (with schema text) and messages (raw
 * bytes and the reference decoding by @foxglove/rosmsg2-serialization), for the tests.
 */
final class ReferenceRun {
    static final ObjectMapper MAPPER = new ObjectMapper();

    record Channel(String file, int id, String topic, String messageEncoding, String schemaName, String schemaEncoding,
                   String schema) {}

    record Message(Channel channel, String logTime, byte[] data, JsonNode value, String error) {}

    final Map<String, Channel> channels = new LinkedHashMap<>();
    final List<Message> messages = new ArrayList<>();

    static ReferenceRun of(Path... files) throws Exception {
        String[] args = new String[files.length];
        for (int i = 0; i < files.length; i++) {
            args[i] = files[i].toString();
        }
        Node.Result res = Node.run("ros2-decode.mjs", args);
        assertEquals(0, res.exitCode(), "ros2-decode.mjs failed: " + res.stderr());
        ReferenceRun run = new ReferenceRun();
        for (String line : res.stdout().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode o = MAPPER.readTree(line);
            String file = o.get("file").asText();
            if (o.get("kind").asText().equals("channel")) {
                Channel c = new Channel(file, o.get("id").asInt(), o.get("topic").asText(),
                        o.get("messageEncoding").asText(), o.get("schemaName").asText(),
                        o.get("schemaEncoding").asText(), o.get("schema").asText());
                run.channels.put(file + "#" + c.id(), c);
            } else {
                Channel c = run.channels.get(file + "#" + o.get("channel").asInt());
                run.messages.add(new Message(c, o.get("logTime").asText(),
                        Base64.getDecoder().decode(o.get("data").asText()), o.get("value"),
                        o.has("error") ? o.get("error").asText() : null));
            }
        }
        return run;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Asserts that our normalised JSON equals the reference's. Numbers compare by value (integers
     * exactly, others as doubles). One asymmetry is allowed: our tree holds uint32 as Long, which
     * JsonTree prints as a decimal string, while the reference prints uint32 as a JS number; so our
     * integer string may equal a reference integral number. The reverse (reference string = BigInt,
     * ours a number) is a mismatch.
     */
    static void assertSameJson(JsonNode ref, JsonNode ours, String path) {
        if (ref.isObject()) {
            if (!ours.isObject()) {
                fail(path + ": reference has an object, ours " + ours);
            }
            List<String> rk = new ArrayList<>();
            ref.fieldNames().forEachRemaining(rk::add);
            List<String> ok = new ArrayList<>();
            ours.fieldNames().forEachRemaining(ok::add);
            assertEquals(rk, ok, path + ": field names");
            for (String k : rk) {
                assertSameJson(ref.get(k), ours.get(k), path + "." + k);
            }
        } else if (ref.isArray()) {
            if (!ours.isArray()) {
                fail(path + ": reference has an array, ours " + ours);
            }
            assertEquals(ref.size(), ours.size(), path + ": array length");
            Iterator<JsonNode> a = ref.elements();
            Iterator<JsonNode> b = ours.elements();
            int i = 0;
            while (a.hasNext()) {
                assertSameJson(a.next(), b.next(), path + "[" + i++ + "]");
            }
        } else if (ref.isNumber()) {
            if (ours.isTextual() && ref.isIntegralNumber() && ours.asText().matches("-?\\d+")) {
                assertEquals(ref.bigIntegerValue(), new BigInteger(ours.asText()), path + " (uint32 as string)");
            } else if (!ours.isNumber()) {
                fail(path + ": reference " + ref + ", ours " + ours);
            } else if (ref.isIntegralNumber() && ours.isIntegralNumber()) {
                assertEquals(ref.bigIntegerValue(), ours.bigIntegerValue(), path);
            } else {
                assertEquals(ref.doubleValue(), ours.doubleValue(), 0.0, path);
            }
        } else {
            assertEquals(ref, ours, path);
        }
    }
}
