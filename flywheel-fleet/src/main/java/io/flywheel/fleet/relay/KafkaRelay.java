package io.flywheel.fleet.relay;

import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.google.protobuf.InvalidProtocolBufferException;
import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.fleet.telemetry.MalformedTelemetryException;
import io.flywheel.fleet.telemetry.TelemetryMessages;
import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.rows.TelemetryRow;
import io.flywheel.stream.topics.FleetEventPublisher;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The gateway's relay of the fleet stream to Kafka, for realtime labelling: what robots publish over MQTT goes to
 * the {@link FleetTopics}, keyed by robot id, protobuf-encoded, through an idempotent producer
 * ({@link FleetEventPublisher}: {@code enable.idempotence=true}, {@code acks=all}).
 *
 * <ul>
 *   <li>{@code fleet/<robot>/stream/episode}: an {@code EpisodeEvent} (protobuf bytes; started, ended, with ids) to
 *       {@code fleet.episodes};</li>
 *   <li>{@code fleet/<robot>/stream/observation}: an {@code ObservationSummary} (protobuf bytes; one second of
 *       gripper opening and force samples, the task's success signal, operator interventions) to
 *       {@code fleet.observations};</li>
 *   <li>{@code fleet/<robot>/alert/<kind>}: the alert's JSON telemetry payload ({@link TelemetryMessages}) as an
 *       {@code Alert} to {@code fleet.alerts}: kind {@code estop} is {@code E_STOP}, a kind containing {@code fault}
 *       is {@code FAULT}, any other {@code WARNING}; its time the payload's {@code ts_ns}; its episode the one the
 *       robot has running by the episode events relayed (started, not yet ended), empty when none.</li>
 * </ul>
 * A stream message whose robot_id is not the topic's robot (a robot publishes only as itself), that does not decode,
 * or that lacks its ids or time is refused: counted ({@link Stats#refused()}), logged with its topic and why, and not
 * relayed. MQTT at QoS 1; a message is acknowledged to the broker once Kafka has acknowledged it, so a gateway that
 * stops in between gets it again, and a robot whose PUBACK was lost sends it again (at least once into Kafka: such a
 * copy is relayed and counted again; the labeller is idempotent per event, see
 * {@link io.flywheel.stream.label.EpisodeEvidence}). Separate from the telemetry subscriber (its own MQTT 3.1.1 client and session), so either runs without the
 * other.
 */
public final class KafkaRelay implements AutoCloseable {
    /** The MQTT subscriptions, each at QoS 1. */
    public static final java.util.List<String> SUBSCRIPTIONS = java.util.List.of("fleet/+/stream/+", "fleet/+/alert/+");
    /** The stream class of the MQTT topics. */
    public static final String STREAM_CLASS = "stream";

    private final FleetEventPublisher publisher;
    private final Consumer<String> log;
    private final Mqtt3AsyncClient client;
    private final Map<String, String> running = new ConcurrentHashMap<>();
    private final AtomicLong episodes = new AtomicLong();
    private final AtomicLong observations = new AtomicLong();
    private final AtomicLong alerts = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /**
     * Counts so far.
     *
     * @param episodes episode events relayed to fleet.episodes
     * @param observations observation summaries relayed to fleet.observations
     * @param alerts alerts relayed to fleet.alerts
     * @param refused messages refused (malformed, another robot's, missing ids)
     */
    public record Stats(long episodes, long observations, long alerts, long refused) {}

    private KafkaRelay(FleetEventPublisher publisher, Mqtt3AsyncClient client, Consumer<String> log) {
        this.publisher = publisher;
        this.client = client;
        this.log = log;
    }

    /**
     * Connects to the MQTT broker and to Kafka and starts relaying.
     *
     * @param mqttBroker the broker URL, {@code tcp://HOST:PORT}
     * @param clientId the relay's MQTT client id (its persistent session)
     * @param kafkaBootstrap Kafka bootstrap servers, {@code HOST:PORT[,HOST:PORT...]}, with the fleet topics
     * @param log receives a line per refused message
     * @return the running relay
     * @throws StorageUnavailableException when the MQTT broker cannot be reached within 10 s
     */
    public static KafkaRelay start(String mqttBroker, String clientId, String kafkaBootstrap, Consumer<String> log) {
        InetSocketAddress at = TelemetryOptions.hostPort(mqttBroker);
        Mqtt3AsyncClient c = MqttClient.builder().useMqttVersion3().identifier(clientId)
                .serverHost(at.getHostString()).serverPort(at.getPort()).automaticReconnect()
                .initialDelay(100, TimeUnit.MILLISECONDS).maxDelay(5, TimeUnit.SECONDS).applyAutomaticReconnect()
                .buildAsync();
        FleetEventPublisher pub = new FleetEventPublisher(kafkaBootstrap);
        KafkaRelay r = new KafkaRelay(pub, c, log);
        try {
            c.publishes(MqttGlobalPublishFilter.ALL, r::onPublish, true);
            c.connectWith().cleanSession(false).keepAlive(30).send().get(10, TimeUnit.SECONDS);
            var subs = new java.util.ArrayList<com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscription>();
            for (String f : SUBSCRIPTIONS) {
                subs.add(com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscription.builder().topicFilter(f)
                        .qos(MqttQos.AT_LEAST_ONCE).build());
            }
            c.subscribe(com.hivemq.client.mqtt.mqtt3.message.subscribe.Mqtt3Subscribe.builder().addSubscriptions(subs)
                    .build()).get(10, TimeUnit.SECONDS);
            return r;
        } catch (Exception e) {
            r.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new StorageUnavailableException("the Kafka relay cannot subscribe at the MQTT broker " + mqttBroker
                    + ": " + cause, cause);
        }
    }

    /** @return the counts so far */
    public Stats stats() {
        return new Stats(episodes.get(), observations.get(), alerts.get(), refused.get());
    }

    /** Blocks until every message relayed so far is acknowledged by Kafka. */
    public void flush() {
        publisher.flush();
    }

    private void onPublish(Mqtt3Publish p) {
        String topic = p.getTopic().toString();
        byte[] payload = p.getPayloadAsBytes();
        java.util.concurrent.Future<?> sent;
        try {
            sent = relay(topic, payload);
        } catch (InvalidProtocolBufferException | MalformedTelemetryException | IllegalArgumentException e) {
            refused.incrementAndGet();
            log.accept("kafka relay: refused " + topic + ": " + e.getMessage());
            p.acknowledge();
            return;
        }
        if (sent == null) {
            p.acknowledge();
            return;
        }
        java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                sent.get();
                p.acknowledge();
            } catch (Exception e) {
                // not acknowledged: the broker delivers it again when the relay reconnects
                log.accept("kafka relay: Kafka did not take " + topic + ": " + e);
            }
        });
    }

    /** @return the send, or null for a message not relayed (an MQTT topic of no stream) */
    private java.util.concurrent.Future<?> relay(String topic, byte[] payload) throws InvalidProtocolBufferException {
        String[] part = topic.split("/", -1);
        if (part.length != 4 || !part[0].equals("fleet") || part[1].isEmpty()) {
            return null;
        }
        String robot = part[1];
        if (part[2].equals(STREAM_CLASS) && part[3].equals("episode")) {
            EpisodeEvent e = EpisodeEvent.parseFrom(payload);
            check(robot, e.getRobotId(), e.getEpisodeId(), e.getTimeNs());
            if (e.getKind() == EpisodeEvent.Kind.STARTED) {
                running.put(robot, e.getEpisodeId());
            } else if (e.getKind() == EpisodeEvent.Kind.ENDED) {
                running.remove(robot, e.getEpisodeId());
            } else {
                throw new IllegalArgumentException("episode event kind " + e.getKindValue() + " is neither STARTED nor ENDED");
            }
            episodes.incrementAndGet();
            return publisher.publish(e);
        }
        if (part[2].equals(STREAM_CLASS) && part[3].equals("observation")) {
            ObservationSummary s = ObservationSummary.parseFrom(payload);
            check(robot, s.getRobotId(), s.getEpisodeId(), s.getTimeNs());
            observations.incrementAndGet();
            return publisher.publish(s);
        }
        if (part[2].equals(TelemetryRow.ALERT)) {
            TelemetryRow row = TelemetryMessages.parse(topic, payload, null, 1, System.currentTimeMillis() * 1_000_000L);
            Alert a = Alert.newBuilder().setRobotId(robot).setEpisodeId(running.getOrDefault(robot, ""))
                    .setKind(kind(row.kind())).setTimeNs(row.tsNs()).setMessage(row.text() == null ? "" : row.text())
                    .build();
            alerts.incrementAndGet();
            return publisher.publish(a);
        }
        if (part[2].equals(STREAM_CLASS)) {
            throw new IllegalArgumentException("unknown stream kind '" + part[3] + "' (expected episode or observation)");
        }
        return null;
    }

    private static void check(String topicRobot, String robot, String episode, long timeNs) {
        if (!topicRobot.equals(robot)) {
            throw new IllegalArgumentException("robot_id '" + robot + "' is not the topic's robot '" + topicRobot + "'");
        }
        if (episode.isEmpty() || timeNs <= 0) {
            throw new IllegalArgumentException("episode_id and time_ns are required (got '" + episode + "', " + timeNs + ")");
        }
    }

    /** @return the Alert kind of a telemetry alert kind */
    static Alert.Kind kind(String telemetryKind) {
        String k = telemetryKind.toLowerCase(Locale.ROOT);
        if (k.equals("estop") || k.equals("e_stop")) {
            return Alert.Kind.E_STOP;
        }
        return k.contains("fault") ? Alert.Kind.FAULT : Alert.Kind.WARNING;
    }

    @Override
    public void close() {
        try {
            client.disconnect().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            // closing anyway
        }
        publisher.close();
    }
}
