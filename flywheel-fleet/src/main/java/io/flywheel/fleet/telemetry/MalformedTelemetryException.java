package io.flywheel.fleet.telemetry;

import io.flywheel.error.BadInputException;

/** A telemetry message that is refused: its topic or payload is not what {@link TelemetryMessages} describes. */
public final class MalformedTelemetryException extends BadInputException {
    private static final long serialVersionUID = 1L;

    private final String topic;
    private final String robotId;
    private final String reason;

    /**
     * @param topic the MQTT topic
     * @param robotId the robot, when the topic names one (else null)
     * @param reason what is wrong
     */
    public MalformedTelemetryException(String topic, String robotId, String reason) {
        super("telemetry message on " + topic + (robotId == null ? "" : " (robot " + robotId + ")") + " refused: "
                + reason);
        this.topic = topic;
        this.robotId = robotId;
        this.reason = reason;
    }

    /** @return the MQTT topic */
    public String topic() {
        return topic;
    }

    /** @return the robot, or null when the topic names none */
    public String robotId() {
        return robotId;
    }

    /** @return what is wrong */
    public String reason() {
        return reason;
    }
}
