package io.flywheel.fleet.telemetry;

import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.rows.TelemetryRow;

/**
 * The fleet's MQTT topics and telemetry payloads, parsed into {@link TelemetryRow}s; anything else is refused with a
 * {@link MalformedTelemetryException} that says what is wrong.
 *
 * <p>Topic: {@code fleet/<robot>/<class>/<kind>}: robot 1-64 characters of {@code [A-Za-z0-9._-]} (as a gateway token's
 * robot), class {@code telemetry}, {@code alert} or {@code audit}, kind 1-64 characters of {@code [a-z0-9_]}
 * ({@code heartbeat}, {@code battery}, {@code joint_temp}, {@code estop}, ...).
 *
 * <p>Payload: one UTF-8 JSON object of at most {@value #MAX_PAYLOAD_BYTES} bytes (schema:
 * {@code flywheel-fleet/src/main/resources/flywheel/fleet/telemetry.schema.json}):
 * <pre>{"message_id": "arm-1-000042", "ts_ns": 1767225600000000000, "values": {"voltage": 48.1}, "text": "..."}</pre>
 * <ul>
 *   <li>{@code ts_ns} (required): integer, ns since the Unix epoch on the robot's clock, &gt; 0.</li>
 *   <li>{@code message_id}: string of 1-128 characters, unique per robot (a counter or a UUID); or the MQTT 5 user
 *       property {@code message_id} (if both are given they must agree). Required for QoS 1 and 2 (what
 *       redeliveries are recognised by: MQTT packet ids are 16-bit and reused); optional at QoS 0.</li>
 *   <li>{@code kind}: optional; when given, the topic's kind.</li>
 *   <li>{@code values}: optional object of name (1-64 characters) to finite number, at most 256 entries.</li>
 *   <li>{@code text}: optional string of at most 4,096 characters.</li>
 * </ul>
 * Any other field is refused (a misspelt {@code value} would otherwise be lost without a word).
 */
public final class TelemetryMessages {
    /** The largest payload accepted, bytes. */
    public static final int MAX_PAYLOAD_BYTES = 65_536;
    /** The MQTT 5 user property that may carry the message id. */
    public static final String MESSAGE_ID_PROPERTY = "message_id";
    /** The topics the gateway subscribes to, with their QoS: telemetry 0, alerts 1, audit 2. */
    public static final Map<String, Integer> SUBSCRIPTIONS = Map.of("fleet/+/telemetry/+", 0, "fleet/+/alert/+", 1,
            "fleet/+/audit/+", 2);

    private static final Pattern KIND = Pattern.compile("[a-z0-9_]{1,64}");
    private static final int MAX_ID = 128;
    private static final int MAX_VALUES = 256;
    private static final int MAX_TEXT = 4096;
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private TelemetryMessages() {}

    /**
     * The parts of a topic.
     *
     * @param robotId the robot
     * @param messageClass {@link TelemetryRow#TELEMETRY}, {@link TelemetryRow#ALERT} or {@link TelemetryRow#AUDIT}
     * @param kind the last level
     */
    public record Topic(String robotId, String messageClass, String kind) {}

    /**
     * @param topic an MQTT topic
     * @return its parts
     * @throws MalformedTelemetryException when it is not {@code fleet/<robot>/<class>/<kind>}
     */
    public static Topic topic(String topic) {
        String[] l = topic.split("/", -1);
        String robot = l.length > 1 ? l[1] : null;
        if (l.length != 4 || !l[0].equals("fleet")) {
            throw new MalformedTelemetryException(topic, robot, "the topic is not fleet/<robot>/<class>/<kind>");
        }
        String bad = UploadIds.checkRobotId(robot);
        if (bad != null) {
            throw new MalformedTelemetryException(topic, null, "robot: " + bad);
        }
        if (!l[2].equals(TelemetryRow.TELEMETRY) && !l[2].equals(TelemetryRow.ALERT) && !l[2].equals(TelemetryRow.AUDIT)) {
            throw new MalformedTelemetryException(topic, robot, "class '" + l[2] + "' is not telemetry, alert or audit");
        }
        if (!KIND.matcher(l[3]).matches()) {
            throw new MalformedTelemetryException(topic, robot, "kind '" + l[3] + "': expected 1-64 characters of"
                    + " [a-z0-9_]");
        }
        return new Topic(robot, l[2], l[3]);
    }

    /**
     * Parses one message.
     *
     * @param topic the topic it came on
     * @param payload its payload
     * @param messageIdProperty the MQTT 5 user property {@code message_id}, or null
     * @param qos the QoS it was delivered with
     * @param receivedNs when it was received, ns since epoch
     * @return the row (episode not set)
     * @throws MalformedTelemetryException naming the topic, robot and what is wrong
     */
    public static TelemetryRow parse(String topic, byte[] payload, String messageIdProperty, int qos, long receivedNs) {
        Topic t = topic(topic);
        if (payload.length > MAX_PAYLOAD_BYTES) {
            throw bad(t, topic, "the payload is " + payload.length + " bytes; at most " + MAX_PAYLOAD_BYTES);
        }
        JsonNode root;
        try (JsonParser p = JSON.createParser(payload)) {
            root = JSON.readTree(p);
            if (root != null && p.nextToken() != null) {
                throw bad(t, topic, "the payload has more after its JSON object");
            }
        } catch (MalformedTelemetryException e) {
            throw e;
        } catch (IOException e) {
            String m = e.getMessage() == null ? e.toString() : e.getMessage().split("\n")[0];
            throw bad(t, topic, "the payload is not JSON: " + m);
        }
        if (root == null || !root.isObject()) {
            throw bad(t, topic, "the payload is not a JSON object");
        }
        String messageId = null;
        Long ts = null;
        Map<String, Double> values = new LinkedHashMap<>();
        String text = null;
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            JsonNode v = f.getValue();
            switch (f.getKey()) {
                case "message_id" -> {
                    if (!v.isTextual() || v.asText().isEmpty() || v.asText().length() > MAX_ID) {
                        throw bad(t, topic, "message_id must be a string of 1-" + MAX_ID + " characters");
                    }
                    messageId = v.asText();
                }
                case "ts_ns" -> {
                    if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() <= 0) {
                        throw bad(t, topic, "ts_ns must be a positive integer (ns since the Unix epoch), got " + v);
                    }
                    ts = v.asLong();
                }
                case "kind" -> {
                    if (!v.isTextual() || !v.asText().equals(t.kind())) {
                        throw bad(t, topic, "kind " + v + " is not the topic's kind '" + t.kind() + "'");
                    }
                }
                case "values" -> {
                    if (!v.isObject()) {
                        throw bad(t, topic, "values must be an object of name to number");
                    }
                    if (v.size() > MAX_VALUES) {
                        throw bad(t, topic, "values has " + v.size() + " entries; at most " + MAX_VALUES);
                    }
                    for (Iterator<Map.Entry<String, JsonNode>> vi = v.fields(); vi.hasNext(); ) {
                        Map.Entry<String, JsonNode> e = vi.next();
                        if (e.getKey().isEmpty() || e.getKey().length() > 64) {
                            throw bad(t, topic, "a value name must have 1-64 characters");
                        }
                        if (!e.getValue().isNumber() || !Double.isFinite(e.getValue().asDouble())) {
                            throw bad(t, topic, "values." + e.getKey() + " must be a finite number, got "
                                    + e.getValue());
                        }
                        values.put(e.getKey(), e.getValue().asDouble());
                    }
                }
                case "text" -> {
                    if (v.isNull()) {
                        break;
                    }
                    if (!v.isTextual() || v.asText().length() > MAX_TEXT) {
                        throw bad(t, topic, "text must be a string of at most " + MAX_TEXT + " characters");
                    }
                    text = v.asText();
                }
                default -> throw bad(t, topic, "unknown field '" + f.getKey() + "' (expected message_id, ts_ns, kind,"
                        + " values, text)");
            }
        }
        if (ts == null) {
            throw bad(t, topic, "ts_ns is missing");
        }
        if (messageIdProperty != null) {
            if (messageIdProperty.isEmpty() || messageIdProperty.length() > MAX_ID) {
                throw bad(t, topic, "the message_id user property must have 1-" + MAX_ID + " characters");
            }
            if (messageId != null && !messageId.equals(messageIdProperty)) {
                throw bad(t, topic, "message_id '" + messageId + "' differs from the message_id user property '"
                        + messageIdProperty + "'");
            }
            messageId = messageIdProperty;
        }
        if (messageId == null && qos > 0) {
            throw bad(t, topic, "a QoS " + qos + " message needs a message_id (payload field or MQTT 5 user property):"
                    + " redeliveries are recognised by it");
        }
        return new TelemetryRow(t.robotId(), ts, receivedNs, t.kind(), t.messageClass(), qos, messageId, topic, values,
                text, null);
    }

    private static MalformedTelemetryException bad(Topic t, String topic, String why) {
        return new MalformedTelemetryException(topic, t.robotId(), why);
    }
}
