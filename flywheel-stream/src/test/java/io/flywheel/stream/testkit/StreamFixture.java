package io.flywheel.stream.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.topics.FleetEventPublisher;
import io.flywheel.stream.topics.FleetTopics;

/**
 * What the stream tests and benches share: a simulated fleet (episodes with ground truth from {@link LiveEpisodes}) and
 * the orders a fleet sends it in, publishing to the fleet topics, reading back the lake's label history and the
 * dead-letter topic, and the check that every episode was labelled exactly once and as its truth. The brokers are
 * {@link io.flywheel.stream.topics.EmbeddedKafka} (in this JVM) and {@link ChildBroker} (a child JVM, to be killed).
 */
public final class StreamFixture {
    private StreamFixture() {}

    /**
     * @param allowedLatenessS the rules' allowed lateness, seconds
     * @param version the rules' version, or null to keep the defaults'
     * @return the default rules with that lateness
     */
    public static LabelRules rules(int allowedLatenessS, String version) {
        try {
            return LabelRules.parse((version == null ? "" : "version: " + version + "\n") + "allowed_lateness_s: "
                    + allowedLatenessS + "\n", "test", LabelRules.defaults());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Sends one fleet message to its topic (keyed by its robot). */
    public static void publish(FleetEventPublisher p, Message m) {
        if (m instanceof EpisodeEvent e) {
            p.publish(e);
        } else if (m instanceof ObservationSummary s) {
            p.publish(s);
        } else {
            p.publish((Alert) m);
        }
    }

    /** Sends every message of the episodes, episode by episode in send order, and flushes. */
    public static void publishAll(FleetEventPublisher p, List<LiveEpisodes.Episode> eps) {
        eps.forEach(e -> e.messages().forEach(m -> publish(p, m)));
        p.flush();
    }

    /** @return a fleet message's event time, ns since the Unix epoch */
    public static long timeNs(Message m) {
        return m instanceof EpisodeEvent e ? e.getTimeNs() : m instanceof ObservationSummary s ? s.getTimeNs()
                : ((Alert) m).getTimeNs();
    }

    /** @return the message with its event time moved by {@code d} ns */
    public static Message shift(Message m, long d) {
        if (m instanceof EpisodeEvent e) {
            return e.toBuilder().setTimeNs(e.getTimeNs() + d).build();
        } else if (m instanceof ObservationSummary s) {
            return s.toBuilder().setTimeNs(s.getTimeNs() + d).build();
        }
        Alert x = (Alert) m;
        return x.toBuilder().setTimeNs(x.getTimeNs() + d).build();
    }

    /** @return the episodes' ids */
    public static Set<String> ids(List<LiveEpisodes.Episode> eps) {
        Set<String> ids = new HashSet<>();
        eps.forEach(e -> ids.add(e.episodeId()));
        return ids;
    }

    /**
     * Messages of overlapping episodes as a live fleet sends them: in time order across the episodes, each moved by up
     * to 0.4 s of jitter (so out of order by up to 0.4 s).
     */
    public static List<Message> timeOrdered(List<LiveEpisodes.Episode> eps, Random rnd) {
        List<Map.Entry<Long, Message>> all = new ArrayList<>();
        for (LiveEpisodes.Episode e : eps) {
            for (Message m : e.messages()) {
                all.add(Map.entry(timeNs(m) + (long) (rnd.nextDouble() * 400_000_000L), m));
            }
        }
        all.sort(Map.Entry.comparingByKey());
        return all.stream().map(Map.Entry::getValue).toList();
    }

    /** @return one episode's messages shuffled (the end event may come first) */
    public static List<Message> shuffled(LiveEpisodes.Episode e, Random rnd) {
        List<Message> m = new ArrayList<>(e.messages());
        Collections.shuffle(m, rnd);
        return m;
    }

    /**
     * The episodes with one WARNING alert each, 0.2 s after the start: the alerts topic then carries records as often
     * as the others, as a fleet's does, so that its watermark does not lag. The default rules count only e-stops:
     * the truth is unchanged.
     */
    public static List<LiveEpisodes.Episode> withWarnings(List<LiveEpisodes.Episode> eps) {
        List<LiveEpisodes.Episode> out = new ArrayList<>();
        for (LiveEpisodes.Episode e : eps) {
            List<Message> m = new ArrayList<>(e.messages());
            m.add(1, Alert.newBuilder().setRobotId(e.robotId()).setEpisodeId(e.episodeId()).setKind(Alert.Kind.WARNING)
                    .setTimeNs(timeNs(m.get(0)) + 200_000_000L).setMessage("battery below 30%").build());
            out.add(new LiveEpisodes.Episode(e.robotId(), e.episodeId(), e.truth(), List.copyOf(m)));
        }
        return out;
    }

    /**
     * A producer thread: sends the messages, {@code every} at a time then a flush and a pause of {@code pauseMs}.
     *
     * @param sent counts the messages handed to the producer
     * @return the started thread
     */
    public static Thread producer(FleetEventPublisher p, List<Message> messages, int every, long pauseMs,
            AtomicInteger sent) {
        Thread t = new Thread(() -> {
            for (int i = 0; i < messages.size(); i++) {
                publish(p, messages.get(i));
                sent.incrementAndGet();
                if (i % every == every - 1) {
                    p.flush();
                    try {
                        Thread.sleep(pauseMs);
                    } catch (InterruptedException x) {
                        return;
                    }
                }
            }
            p.flush();
        }, "fleet-producer");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Polls every 100 ms until done. @throws AssertionError naming what when {@code max} passes first */
    public static void waitFor(BooleanSupplier done, Duration max, String what) throws InterruptedException {
        long until = System.nanoTime() + max.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("timed out after " + max.toSeconds() + " s waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    /** @return the lake's {@code label_history} rows of these episodes */
    public static List<LabelHistoryRow> history(Lake lake, Set<String> ids) {
        return LakeLabelSink.history(lake).stream().filter(r -> ids.contains(r.episodeId())).toList();
    }

    /**
     * The exactly-once check against the truth.
     *
     * @param episodes episodes of the fleet
     * @param once episodes with exactly one {@code label_history} entry
     * @param equalToTruth of those, entries whose label and rule are the truth's
     * @param historyEpisodes distinct episodes of the fleet in the history
     * @param problems one line per episode that fails: missing, doubled or not the truth
     */
    public record ExactlyOnce(int episodes, int once, int equalToTruth, int historyEpisodes, List<String> problems) {
        /** @return whether every episode has one entry, equal to the truth */
        public boolean holds() {
            return problems.isEmpty() && once == episodes && equalToTruth == episodes;
        }

        /** @throws AssertionError listing the problems when it does not hold */
        public void assertHolds(String context) {
            if (!holds()) {
                throw new AssertionError(context + ": " + once + " of " + episodes + " episodes with exactly one entry, "
                        + equalToTruth + " equal to the truth; " + problems);
            }
        }
    }

    /**
     * @param lake the lake
     * @param group the consumer group whose entries count, or null for all
     * @param eps the fleet's episodes with their truth
     * @return each episode's entries compared with its truth
     */
    public static ExactlyOnce exactlyOnce(Lake lake, String group, List<LiveEpisodes.Episode> eps) {
        Map<String, List<LabelHistoryRow>> rows = new HashMap<>();
        for (LabelHistoryRow r : LakeLabelSink.history(lake)) {
            if (group == null || r.consumerGroup().equals(group)) {
                rows.computeIfAbsent(r.episodeId(), k -> new ArrayList<>()).add(r);
            }
        }
        int once = 0;
        int truth = 0;
        int present = 0;
        List<String> problems = new ArrayList<>();
        for (LiveEpisodes.Episode e : eps) {
            List<LabelHistoryRow> r = rows.getOrDefault(e.episodeId(), List.of());
            if (!r.isEmpty()) {
                present++;
            }
            if (r.size() != 1) {
                problems.add(e.episodeId() + ": " + r.size() + " entries");
                continue;
            }
            once++;
            LabelHistoryRow x = r.get(0);
            if (x.label().equals(e.truth().outcome.label()) && x.rule().equals(e.truth().rule)) {
                truth++;
            } else {
                problems.add(e.episodeId() + ": " + x.label() + "/" + x.rule() + ", truth " + e.truth());
            }
        }
        return new ExactlyOnce(eps.size(), once, truth, present, List.copyOf(problems));
    }

    /**
     * @param bootstrap the broker
     * @param ids episodes of interest
     * @return "reason: episode" of every record of theirs in the dead-letter topic, read to its end
     */
    public static List<String> deadLetters(String bootstrap, Set<String> ids) throws Exception {
        List<String> found = new ArrayList<>();
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> dlq = new KafkaConsumer<>(c)) {
            List<TopicPartition> parts = dlq.partitionsFor(FleetTopics.DEAD_LETTERS).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            dlq.assign(parts);
            dlq.seekToBeginning(parts);
            Map<TopicPartition, Long> end = dlq.endOffsets(parts);
            while (parts.stream().anyMatch(p -> dlq.position(p) < end.get(p))) {
                for (ConsumerRecord<byte[], byte[]> r : dlq.poll(Duration.ofMillis(200))) {
                    String from = new String(r.headers().lastHeader(FleetTopics.H_TOPIC).value(), StandardCharsets.UTF_8);
                    String episode = episodeOf(from, r.value());
                    if (episode != null && ids.contains(episode)) {
                        found.add(new String(r.headers().lastHeader(FleetTopics.H_REASON).value(), StandardCharsets.UTF_8)
                                + ": " + episode);
                    }
                }
            }
        }
        return found;
    }

    /** @return the episode id of a fleet topic's record, null when it does not decode */
    private static String episodeOf(String topic, byte[] value) {
        try {
            return switch (topic) {
                case FleetTopics.EPISODES -> EpisodeEvent.parseFrom(value).getEpisodeId();
                case FleetTopics.OBSERVATIONS -> ObservationSummary.parseFrom(value).getEpisodeId();
                case FleetTopics.ALERTS -> Alert.parseFrom(value).getEpisodeId();
                default -> null;
            };
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            return null;
        }
    }

    /**
     * @param bootstrap the broker
     * @return the end offset of every partition of the input topics, as {@code TOPIC/PARTITION -> offset}
     */
    public static Map<String, Long> endOffsets(String bootstrap) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, Long> out = new java.util.TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> k = new KafkaConsumer<>(c)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : FleetTopics.INPUTS) {
                k.partitionsFor(t).forEach(p -> parts.add(new TopicPartition(t, p.partition())));
            }
            k.endOffsets(parts).forEach((p, off) -> {
                if (off > 0) {
                    out.put(p.topic() + "/" + p.partition(), off);
                }
            });
        }
        return out;
    }

    /**
     * Starts a Flink MiniCluster (one task manager) whose REST endpoint listens on a free port.
     *
     * @param slots task slots
     */
    public static MiniCluster miniCluster(int slots) throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_PORT, "0");
        MiniCluster flink = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf)
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build());
        flink.start();
        return flink;
    }

    /** @return a MiniCluster's REST endpoint as {@code HOST:PORT} (what {@code --jobmanager} takes) */
    public static String restAddress(MiniCluster flink) throws Exception {
        java.net.URI rest = flink.getRestAddress().get();
        return rest.getHost() + ":" + rest.getPort();
    }

    /**
     * Starts a JVM with this JVM's class path and the JVM flags Lance needs, its output to {@code NAME.log} in
     * {@code dir}.
     *
     * @param heapMb its heap, MB
     */
    public static Process childJvm(java.nio.file.Path dir, String name, int heapMb, String main, List<String> args)
            throws java.io.IOException {
        java.nio.file.Files.createDirectories(dir.resolve("tmp"));
        List<String> cmd = new ArrayList<>(List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx" + heapMb + "m",
                "-Djava.io.tmpdir=" + dir.resolve("tmp"), "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(args);
        return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(java.lang.ProcessBuilder.Redirect.appendTo(dir.resolve(name + ".log").toFile())).start();
    }
}
