package io.flywheel.stream.topics;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;

/**
 * Publishes fleet events to {@link FleetTopics}, keyed by robot id, with an idempotent producer
 * ({@code enable.idempotence=true}, {@code acks=all}): a retried send after a lost acknowledgement or a broker
 * restart is written once. Records of one robot keep their order (one key, one partition). Thread-safe.
 */
public final class FleetEventPublisher implements AutoCloseable {
    private final KafkaProducer<byte[], byte[]> producer;

    /**
     * @param bootstrap Kafka bootstrap servers, {@code HOST:PORT[,HOST:PORT...]}
     */
    public FleetEventPublisher(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000); // an unreachable broker fails a send, not hangs it
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(p);
    }

    /** @return the send's outcome (partition and offset) */
    public Future<RecordMetadata> publish(EpisodeEvent e) {
        return send(FleetTopics.EPISODES, e.getRobotId(), e.toByteArray());
    }

    /** @return the send's outcome (partition and offset) */
    public Future<RecordMetadata> publish(ObservationSummary s) {
        return send(FleetTopics.OBSERVATIONS, s.getRobotId(), s.toByteArray());
    }

    /** @return the send's outcome (partition and offset) */
    public Future<RecordMetadata> publish(Alert a) {
        return send(FleetTopics.ALERTS, a.getRobotId(), a.toByteArray());
    }

    /** Sends raw bytes to a topic (tests of the dead-letter path send malformed values this way). */
    public Future<RecordMetadata> send(String topic, String robotId, byte[] value) {
        return producer.send(new ProducerRecord<>(topic, robotId.getBytes(StandardCharsets.UTF_8), value));
    }

    /** Blocks until every record sent so far is acknowledged. */
    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
