package io.flywheel.stream.flink;

import java.nio.charset.StandardCharsets;

import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

import io.flywheel.stream.topics.FleetTopics;

/**
 * Writes a {@link DeadLetter} to {@link FleetTopics#DEAD_LETTERS}: the original key and value, with the headers
 * naming the source topic, partition, offset and reason (as the plain consumer engine writes them).
 */
final class DeadLetterSerializer implements KafkaRecordSerializationSchema<DeadLetter> {
    private static final long serialVersionUID = 1L;

    @Override
    public ProducerRecord<byte[], byte[]> serialize(DeadLetter d, KafkaSinkContext context, Long timestamp) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(FleetTopics.DEAD_LETTERS, d.key, d.value);
        r.headers().add(FleetTopics.H_TOPIC, d.topic.getBytes(StandardCharsets.UTF_8));
        r.headers().add(FleetTopics.H_PARTITION, Integer.toString(d.partition).getBytes(StandardCharsets.UTF_8));
        r.headers().add(FleetTopics.H_OFFSET, Long.toString(d.offset).getBytes(StandardCharsets.UTF_8));
        r.headers().add(FleetTopics.H_REASON, d.reason.getBytes(StandardCharsets.UTF_8));
        return r;
    }
}
