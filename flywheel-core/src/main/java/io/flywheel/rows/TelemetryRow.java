package io.flywheel.rows;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One row of {@code telemetry}: one MQTT message a robot published on {@code fleet/<robot>/<class>/<kind>} (see
 * {@code io.flywheel.lake.FleetTables}).
 *
 * @param robotId the robot, from the topic; not null
 * @param tsNs when the robot says the message was made: int64 ns since the Unix epoch, robot clock
 * @param receivedNs when the gateway received it: int64 ns since the Unix epoch, gateway clock
 * @param kind what it is, the topic's last level: {@code heartbeat}, {@code battery}, {@code joint_temp},
 *     {@code alert}, {@code estop}, {@code audit}, ...; not null
 * @param messageClass the topic's class level: {@link #TELEMETRY}, {@link #ALERT} or {@link #AUDIT}; not null
 * @param qos the QoS the message was delivered with: 0, 1 or 2
 * @param messageId the robot's id of the message (payload field or MQTT 5 user property {@code message_id}), unique
 *     per robot; null only for a QoS 0 message that carries none
 * @param topic the MQTT topic it came on; not null
 * @param values named readings, e.g. {@code voltage -> 48.1} (volts, as the robot sends them); never null, kept in
 *     the payload's order
 * @param text free text (an alert's description, an audit record), or null
 * @param episodeId the episode the robot was recording at {@code tsNs} (alerts only; null until linked)
 */
public record TelemetryRow(String robotId, long tsNs, long receivedNs, String kind, String messageClass, int qos,
        String messageId, String topic, Map<String, Double> values, String text, String episodeId) {
    /** Routine readings: heartbeats, battery, joint temperatures (QoS 0). */
    public static final String TELEMETRY = "telemetry";
    /** Safety alerts and e-stops (QoS 1); linked to the episode being recorded. */
    public static final String ALERT = "alert";
    /** Audit and billing events (QoS 2, exactly once in the table). */
    public static final String AUDIT = "audit";

    public TelemetryRow {
        Objects.requireNonNull(robotId, "robotId");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(messageClass, "messageClass");
        Objects.requireNonNull(topic, "topic");
        if (qos < 0 || qos > 2) {
            throw new IllegalArgumentException("qos must be 0, 1 or 2, got " + qos);
        }
        values = values == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** @return this row with its episode set */
    public TelemetryRow withEpisodeId(String episode) {
        return new TelemetryRow(robotId, tsNs, receivedNs, kind, messageClass, qos, messageId, topic, values, text,
                episode);
    }
}
