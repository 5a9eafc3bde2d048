package io.flywheel.stream.job;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import com.google.protobuf.InvalidProtocolBufferException;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.stream.label.EpisodeEvidence;
import io.flywheel.stream.label.EpisodeLabeller;
import io.flywheel.stream.label.Label;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.sink.PartitionOffsets;
import io.flywheel.stream.topics.FleetTopics;

/**
 * Labels episodes from the fleet topics into a lake, exactly once, with a plain Kafka consumer.
 *
 * <p>Event time: each record's time is its message's {@code time_ns}. The watermark is the newest event time seen
 * minus {@link LabellerOptions#outOfOrderness()}; with no record for {@link LabellerOptions#idleness()} it follows the
 * wall clock. An episode's window closes when the watermark passes its end event plus the rules' allowed lateness:
 * then it is labelled ({@link EpisodeLabeller}) and the label is final. Records of a closed episode are late; records
 * of an episode whose start and end never came within the allowed lateness of their time are of an unknown episode;
 * records that do not decode are malformed: each is counted, logged with its topic, partition and offset, and sent to
 * {@link FleetTopics#DEAD_LETTERS}; the labeller keeps running.
 *
 * <p>Exactly once: every {@link LabellerOptions#commitInterval()} the labels closed since the last commit go to the
 * lake in one transaction with the positions to resume from ({@link LakeLabelSink}): per partition the first offset
 * of any episode still open (its records must be read again after a crash), else the position reached. The highest
 * position read is kept beside it, so that after a restart records below it of episodes already labelled are known
 * to be replays (skipped, counted) and not late events. The labeller restarts from the lake's positions, never from
 * Kafka's group offsets.
 */
public final class StreamLabeller implements AutoCloseable {
    private final LabellerOptions options;
    private final LakeLabelSink sink;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final KafkaProducer<byte[], byte[]> deadLetters;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Map<String, Open> open = new LinkedHashMap<>();
    private final Set<String> closed = new HashSet<>();
    private final List<Label> pending = new ArrayList<>();
    private final Map<TopicPartition, Long> position = new HashMap<>();
    private final PartitionOffsets seenBefore;
    private final Consumer<Label> onLabel;
    private long maxEventNs = Long.MIN_VALUE;
    private long watermarkNs = Long.MIN_VALUE;
    private long lastRecordWall = System.nanoTime();
    private long records;
    private long replayed;
    private long labels;
    private long commits;
    private long malformed;
    private long unknown;
    private long late;

    /** What is known of an episode not yet labelled, and where its first records lie. */
    private static final class Open {
        final EpisodeEvidence evidence;
        final Map<TopicPartition, Long> firstOffset = new HashMap<>();
        final List<ConsumerRecord<byte[], byte[]>> unstarted = new ArrayList<>();
        long lastEventNs = Long.MIN_VALUE;

        Open(String robot, String episode) {
            evidence = new EpisodeEvidence(robot, episode);
        }
    }

    /**
     * Opens the consumer on every partition of {@link FleetTopics#INPUTS}, at the positions the lake holds for the
     * group (the beginning for a partition it holds none of).
     *
     * @param lake the lake labels go to
     * @param options options
     * @param onLabel told of each label once it is committed (progress, the console); may be a no-op
     */
    public StreamLabeller(Lake lake, LabellerOptions options, Consumer<Label> onLabel) {
        this.options = options;
        this.onLabel = onLabel;
        this.sink = new LakeLabelSink(lake, options.group());
        this.seenBefore = sink.committedSeen();
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrap());
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        consumer = new KafkaConsumer<>(c);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrap());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        deadLetters = new KafkaProducer<>(p);
        List<TopicPartition> parts = new ArrayList<>();
        for (String t : FleetTopics.INPUTS) {
            for (PartitionInfo pi : consumer.partitionsFor(t, Duration.ofSeconds(30))) {
                parts.add(new TopicPartition(t, pi.partition()));
            }
        }
        consumer.assign(parts);
        PartitionOffsets resume = sink.committedOffsets();
        List<TopicPartition> fromStart = new ArrayList<>();
        for (TopicPartition tp : parts) {
            long at = resume.of(tp.topic(), tp.partition());
            if (at < 0) {
                fromStart.add(tp);
            } else {
                consumer.seek(tp, at);
                position.put(tp, at);
            }
        }
        consumer.seekToBeginning(fromStart);
        for (TopicPartition tp : fromStart) {
            position.put(tp, consumer.position(tp));
        }
    }

    /**
     * Reads, labels and commits until {@link #stop()} is called (from another thread) or the thread is interrupted,
     * then commits what is closed.
     */
    public void run() {
        long nextCommit = System.nanoTime() + options.commitInterval().toNanos();
        while (!stop.get() && !Thread.currentThread().isInterrupted()) {
            pollOnce(Duration.ofMillis(100));
            if (System.nanoTime() >= nextCommit) {
                commit();
                nextCommit = System.nanoTime() + options.commitInterval().toNanos();
            }
        }
        commit();
    }

    /** Asks {@link #run()} to finish (thread-safe). */
    public void stop() {
        stop.set(true);
    }

    /** @return the counters so far (call from the thread running {@link #run()}, or after it returned) */
    public synchronized LabellerStats stats() {
        return new LabellerStats(records, replayed, labels, commits, malformed, unknown, late, open.size());
    }

    private synchronized void pollOnce(Duration timeout) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(timeout);
        for (ConsumerRecord<byte[], byte[]> r : batch) {
            records++;
            handle(r);
            position.put(new TopicPartition(r.topic(), r.partition()), r.offset() + 1);
        }
        long now = System.nanoTime();
        if (!batch.isEmpty()) {
            lastRecordWall = now;
        }
        if (maxEventNs != Long.MIN_VALUE) {
            watermarkNs = Math.max(watermarkNs, maxEventNs - options.outOfOrderness().toNanos());
        }
        if (now - lastRecordWall >= options.idleness().toNanos()) {
            watermarkNs = Math.max(watermarkNs, System.currentTimeMillis() * 1_000_000L - options.outOfOrderness().toNanos());
        }
        closeWindows();
    }

    private void handle(ConsumerRecord<byte[], byte[]> r) {
        String robot;
        String episode;
        long time;
        Consumer<Open> apply;
        try {
            switch (r.topic()) {
                case FleetTopics.EPISODES -> {
                    EpisodeEvent e = EpisodeEvent.parseFrom(r.value());
                    robot = e.getRobotId();
                    episode = e.getEpisodeId();
                    time = e.getTimeNs();
                    if (e.getKind() == EpisodeEvent.Kind.STARTED) {
                        apply = o -> o.evidence.started(e.getTimeNs());
                    } else if (e.getKind() == EpisodeEvent.Kind.ENDED) {
                        apply = o -> o.evidence.ended(e.getTimeNs());
                    } else {
                        throw new InvalidProtocolBufferException("episode event kind " + e.getKindValue());
                    }
                }
                case FleetTopics.OBSERVATIONS -> {
                    ObservationSummary s = ObservationSummary.parseFrom(r.value());
                    robot = s.getRobotId();
                    episode = s.getEpisodeId();
                    time = s.getTimeNs();
                    if (s.getGripperOpeningCount() != s.getGripperForceNCount()
                            || (s.getGripperOpeningCount() > 0 && s.getSamplePeriodNs() <= 0)) {
                        throw new InvalidProtocolBufferException("gripper samples: " + s.getGripperOpeningCount()
                                + " openings, " + s.getGripperForceNCount() + " forces, period " + s.getSamplePeriodNs() + " ns");
                    }
                    apply = o -> o.evidence.add(s);
                }
                case FleetTopics.ALERTS -> {
                    Alert a = Alert.parseFrom(r.value());
                    robot = a.getRobotId();
                    episode = a.getEpisodeId();
                    time = a.getTimeNs();
                    if (episode.isEmpty()) {
                        return; // an alert outside any episode labels nothing
                    }
                    apply = o -> o.evidence.add(a);
                }
                default -> {
                    return;
                }
            }
            if (robot.isEmpty() || episode.isEmpty() || time <= 0) {
                throw new InvalidProtocolBufferException("robot_id, episode_id and time_ns are required (got '" + robot
                        + "', '" + episode + "', " + time + ")");
            }
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            malformed++;
            deadLetter(r, "malformed", e.getMessage());
            return;
        }
        if (closed.contains(episode) || sink.isLabelled(episode)) {
            if (seenBefore.of(r.topic(), r.partition()) > r.offset() && !closed.contains(episode)) {
                replayed++;
            } else {
                late++;
                deadLetter(r, "late", "episode " + episode + " is labelled already");
            }
            return;
        }
        maxEventNs = Math.max(maxEventNs, time);
        Open o = open.computeIfAbsent(episode, k -> new Open(robot, episode));
        o.firstOffset.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
        o.lastEventNs = Math.max(o.lastEventNs, time);
        apply.accept(o);
        if (!o.evidence.hasStart()) {
            o.unstarted.add(r);
        } else {
            o.unstarted.clear();
        }
    }

    private void closeWindows() {
        long lateness = options.rules().allowedLateness().toNanos();
        var it = open.values().iterator();
        while (it.hasNext()) {
            Open o = it.next();
            EpisodeEvidence e = o.evidence;
            if (e.hasStart() && e.hasEnd()) {
                if (watermarkNs >= e.endNs() + lateness) {
                    pending.add(EpisodeLabeller.label(options.rules(), e));
                    closed.add(e.episodeId());
                    it.remove();
                }
            } else if (watermarkNs >= o.lastEventNs + lateness && !e.hasStart()) {
                for (ConsumerRecord<byte[], byte[]> r : o.unstarted) {
                    unknown++;
                    deadLetter(r, "unknown_episode", "no start event for episode " + e.episodeId());
                }
                closed.add(e.episodeId());
                it.remove();
            }
        }
    }

    private synchronized void commit() {
        Map<String, Long> resume = new TreeMap<>();
        for (Map.Entry<TopicPartition, Long> p : position.entrySet()) {
            resume.put(PartitionOffsets.key(p.getKey().topic(), p.getKey().partition()), p.getValue());
        }
        Map<String, Long> seen = new TreeMap<>(resume);
        for (Open o : open.values()) {
            o.firstOffset.forEach((tp, off) -> resume.merge(PartitionOffsets.key(tp.topic(), tp.partition()), off, Math::min));
        }
        if (pending.isEmpty() && new PartitionOffsets(resume).equals(sink.committedOffsets())) {
            return;
        }
        deadLetters.flush();
        List<Label> written = sink.commit(pending, new PartitionOffsets(resume), new PartitionOffsets(seen), -1);
        commits++;
        labels += written.size();
        pending.clear();
        written.forEach(onLabel);
    }

    private void deadLetter(ConsumerRecord<byte[], byte[]> r, String reason, String detail) {
        options.log().accept("dead letter (" + reason + "): " + r.topic() + " partition " + r.partition() + " offset "
                + r.offset() + ": " + detail);
        ProducerRecord<byte[], byte[]> d = new ProducerRecord<>(FleetTopics.DEAD_LETTERS, r.key(), r.value());
        d.headers().add(FleetTopics.H_TOPIC, r.topic().getBytes(StandardCharsets.UTF_8));
        d.headers().add(FleetTopics.H_PARTITION, Integer.toString(r.partition()).getBytes(StandardCharsets.UTF_8));
        d.headers().add(FleetTopics.H_OFFSET, Long.toString(r.offset()).getBytes(StandardCharsets.UTF_8));
        d.headers().add(FleetTopics.H_REASON, reason.getBytes(StandardCharsets.UTF_8));
        deadLetters.send(d);
    }

    @Override
    public void close() {
        consumer.close();
        deadLetters.close();
    }

    /** @return the rules in use */
    public LabelRules rules() {
        return options.rules();
    }
}
