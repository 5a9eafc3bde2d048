package io.flywheel.fleet.sim;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.fleet.telemetry.TelemetryOptions;

/**
 * One simulated robot's MQTT session: a HiveMQ MQTT 3.1.1 client (what both the embedded Moquette broker and mosquitto
 * speak) with the robot id as client id, a persistent session (clean session off) and automatic reconnection (50 ms
 * doubling to 2 s), so that after a cut it reconnects by itself and sends again every QoS 1 and 2 message the broker
 * had not acknowledged (with the DUP flag); messages published while it is away are queued by the client. Publishing
 * never blocks; {@link #awaitAcknowledged} waits for the broker's PUBACK / PUBCOMP of everything published.
 *
 * <p>Against mosquitto 2.0.11 every flow a cut leaves in flight completes after the reconnect. The embedded Moquette
 * 0.17 broker does not resume them: measured with a QoS 1 or 2 message in flight at a cut, its acknowledgement never
 * comes, and QoS 1 and 2 messages of that robot are lost (never routed to the gateway); run reconnect faults against
 * mosquitto.
 *
 * <p>Not thread-safe: the robot's recorder thread only.
 */
final class RobotMqtt implements AutoCloseable {
    private final String robotId;
    private final Mqtt3AsyncClient client;
    private final CuttableLink link;
    private final List<CompletableFuture<?>> pending = new ArrayList<>();
    private final AtomicLong connects;
    private final long[] published = new long[3];
    private long streamPublished;
    private long inFlightAtCuts;

    private RobotMqtt(String robotId, Mqtt3AsyncClient client, CuttableLink link, AtomicLong connects) {
        this.robotId = robotId;
        this.client = client;
        this.link = link;
        this.connects = connects;
    }

    /**
     * Connects.
     *
     * @param robotId the robot, also the MQTT client id (its session's name)
     * @param broker {@code tcp://host:port}
     * @param cuttable whether to dial the broker through a {@link CuttableLink} (for reconnect faults)
     * @throws StorageUnavailableException when the broker cannot be reached within 10 s
     */
    static RobotMqtt connect(String robotId, String broker, boolean cuttable) {
        InetSocketAddress at = TelemetryOptions.hostPort(broker);
        CuttableLink link = cuttable ? CuttableLink.start(at.getHostString(), at.getPort(), robotId + "-mqtt") : null;
        AtomicLong connects = new AtomicLong();
        Mqtt3AsyncClient c = MqttClient.builder().useMqttVersion3().identifier(robotId)
                .serverHost(link != null ? "127.0.0.1" : at.getHostString())
                .serverPort(link != null ? link.port() : at.getPort())
                .automaticReconnect().initialDelay(50, TimeUnit.MILLISECONDS).maxDelay(2, TimeUnit.SECONDS)
                .applyAutomaticReconnect()
                .addConnectedListener(ctx -> connects.incrementAndGet())
                .buildAsync();
        RobotMqtt m = new RobotMqtt(robotId, c, link, connects);
        try {
            c.connectWith().cleanSession(false).keepAlive(30).send().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            m.close();
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new StorageUnavailableException("robot " + robotId + " cannot connect to the MQTT broker at " + broker
                    + ": " + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            m.close();
            throw new StorageUnavailableException("interrupted while connecting to " + broker, e);
        }
        return m;
    }

    /**
     * Publishes without waiting.
     *
     * @param topic the topic
     * @param qos 0, 1 or 2
     * @param json the payload
     */
    void publish(String topic, int qos, String json) {
        CompletableFuture<?> f = client.publishWith().topic(topic).qos(MqttQos.fromCode(qos))
                .payload(json.getBytes(StandardCharsets.UTF_8)).send();
        published[qos]++;
        if (qos > 0) {
            pending.add(f);
        }
    }

    /**
     * Publishes bytes at QoS 1 without waiting (a fleet stream message); counted apart from the telemetry, waited for
     * by {@link #awaitAcknowledged}.
     */
    void publishStream(String topic, byte[] payload) {
        pending.add(client.publishWith().topic(topic).qos(MqttQos.AT_LEAST_ONCE).payload(payload).send());
        streamPublished++;
    }

    /** @return fleet stream messages published */
    long streamPublished() {
        return streamPublished;
    }

    /** Cuts the connection now (a reconnect fault); counts the QoS 1 and 2 messages it leaves unacknowledged. */
    void cut() {
        if (link == null) {
            throw new IllegalStateException("robot " + robotId + " was connected without a cuttable link");
        }
        inFlightAtCuts += pending.stream().filter(f -> !f.isDone()).count();
        link.cutNow();
    }

    /**
     * Waits until the broker has acknowledged every QoS 1 and 2 message published.
     *
     * @param wait the longest wait
     * @return how many are still unacknowledged after it (0: all)
     */
    long awaitAcknowledged(Duration wait) throws InterruptedException {
        long end = System.nanoTime() + wait.toNanos();
        long late = 0;
        for (CompletableFuture<?> f : pending) {
            try {
                f.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                late++;
            }
        }
        return late;
    }

    /** @return messages published per QoS (index 0, 1, 2) */
    long[] published() {
        return published.clone();
    }

    /** @return connection cuts made */
    long cuts() {
        return link == null ? 0 : link.cuts();
    }

    /** @return connections after the first (reconnections) */
    long reconnects() {
        return Math.max(0, connects.get() - 1);
    }

    /** @return QoS 1 and 2 messages unacknowledged when their connection was cut */
    long inFlightAtCuts() {
        return inFlightAtCuts;
    }

    /** Disconnects (the session stays with the broker) and closes the link. */
    @Override
    public void close() {
        try {
            client.disconnect().get(5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // not connected
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (link != null) {
            link.close();
        }
    }
}
