package io.flywheel.fleet.telemetry;

import java.nio.charset.StandardCharsets;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;

/** A robot's side in the tests: a HiveMQ MQTT 5 client publishing JSON payloads. */
final class Publisher implements AutoCloseable {
    private final Mqtt5BlockingClient client;

    Publisher(String broker, String clientId) {
        java.net.InetSocketAddress at = TelemetryOptions.hostPort(broker);
        client = MqttClient.builder().useMqttVersion5().identifier(clientId).serverHost(at.getHostString())
                .serverPort(at.getPort()).buildBlocking();
        client.connect();
    }

    /** Publishes and waits for the broker's acknowledgement (QoS 1, 2). */
    void publish(String topic, int qos, String json) {
        publish(topic, qos, json, null);
    }

    /** As {@link #publish}, with the message id as an MQTT 5 user property. */
    void publish(String topic, int qos, String json, String messageIdProperty) {
        var b = client.publishWith().topic(topic).qos(MqttQos.fromCode(qos))
                .payload(json.getBytes(StandardCharsets.UTF_8));
        if (messageIdProperty != null) {
            b.userProperties().add(TelemetryMessages.MESSAGE_ID_PROPERTY, messageIdProperty).applyUserProperties();
        }
        b.send();
    }

    @Override
    public void close() {
        client.disconnect();
    }
}
