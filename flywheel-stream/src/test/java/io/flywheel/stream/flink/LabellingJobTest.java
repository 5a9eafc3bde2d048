package io.flywheel.stream.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
import java.util.function.BooleanSupplier;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.job.LabellerStats;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetEventPublisher;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The Flink labelling job on one in-JVM broker and one Flink MiniCluster shared by the class (jobs are submitted to
 * the MiniCluster's REST endpoint, as {@code --jobmanager} does). The tests share the fleet topics: each asserts on
 * its own episodes (ids carry the seed) and its own lake. Each job reads the earlier tests' records too, so the tests
 * run in the order of their event times (each later than every earlier test's): records newer than a test's own would
 * move the watermark past its episodes before they are all read.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LabellingJobTest {
    private static EmbeddedKafka kafka;
    private static MiniCluster flink;
    private static String jobManager;
    private static final LabelRules RULES;

    static {
        try {
            RULES = LabelRules.parse("allowed_lateness_s: 1\n", "test", LabelRules.defaults());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        kafka = EmbeddedKafka.start(null, 2);
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_PORT, "0");
        flink = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf).setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(4).build());
        flink.start();
        URI rest = flink.getRestAddress().get();
        jobManager = rest.getHost() + ":" + rest.getPort();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            flink.close();
        } finally {
            kafka.close();
        }
    }

    private static void publish(FleetEventPublisher p, Message m) {
        if (m instanceof EpisodeEvent e) {
            p.publish(e);
        } else if (m instanceof ObservationSummary s) {
            p.publish(s);
        } else {
            p.publish((Alert) m);
        }
    }

    /** An episode's messages in a shuffled order (the end event may come first): out of order within the episode. */
    private static void publishShuffled(FleetEventPublisher p, LiveEpisodes.Episode e, Random rnd) {
        List<Message> m = new ArrayList<>(e.messages());
        Collections.shuffle(m, rnd);
        m.forEach(x -> publish(p, x));
    }

    private static void waitFor(BooleanSupplier done, Duration max, String what) throws InterruptedException {
        long until = System.nanoTime() + max.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    /** Messages of overlapping episodes in time order, each moved by up to 0.4 s of jitter (out of order). */
    private static List<Message> timeOrdered(List<LiveEpisodes.Episode> eps, Random rnd) {
        List<Map.Entry<Long, Message>> all = new ArrayList<>();
        for (LiveEpisodes.Episode e : eps) {
            for (Message m : e.messages()) {
                long t = m instanceof EpisodeEvent x ? x.getTimeNs()
                        : m instanceof ObservationSummary x ? x.getTimeNs() : ((Alert) m).getTimeNs();
                all.add(Map.entry(t + (long) (rnd.nextDouble() * 400_000_000L), m));
            }
        }
        all.sort(Map.Entry.comparingByKey());
        return all.stream().map(Map.Entry::getValue).toList();
    }

    /** @return "reason: episode" of every record in the dead-letter topic (read to its end) of the given episodes */
    private static List<String> deadLettersOf(Set<String> ids) throws Exception {
        List<String> found = new ArrayList<>();
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> dlq = new KafkaConsumer<>(c)) {
            List<org.apache.kafka.common.TopicPartition> parts = dlq.partitionsFor(FleetTopics.DEAD_LETTERS).stream()
                    .map(p -> new org.apache.kafka.common.TopicPartition(p.topic(), p.partition())).toList();
            dlq.assign(parts);
            dlq.seekToBeginning(parts);
            Map<org.apache.kafka.common.TopicPartition, Long> end = dlq.endOffsets(parts);
            while (parts.stream().anyMatch(p -> dlq.position(p) < end.get(p))) {
                for (ConsumerRecord<byte[], byte[]> r : dlq.poll(Duration.ofMillis(200))) {
                    String from = new String(r.headers().lastHeader(FleetTopics.H_TOPIC).value(), StandardCharsets.UTF_8);
                    var d = FleetRecordDeserializer.decode(from, 0, 0, r.key(), r.value());
                    if (ids.contains(d.episodeId)) {
                        found.add(new String(r.headers().lastHeader(FleetTopics.H_REASON).value(), StandardCharsets.UTF_8)
                                + ": " + d.episodeId);
                    }
                }
            }
        }
        return found;
    }

    private static List<LabelHistoryRow> own(Lake lake, Set<String> ids) {
        return LakeLabelSink.history(lake).stream().filter(r -> ids.contains(r.episodeId())).toList();
    }

    private static LabellingJobOptions.Builder options(Path lake, String group) {
        return LabellingJobOptions.builder(lake.toString(), kafka.bootstrap()).group(group).rules(RULES)
                .checkpointDir(lake.resolveSibling("checkpoints").toUri().toString())
                .checkpointInterval(Duration.ofMillis(300)).outOfOrderness(Duration.ofSeconds(1)).idleness(Duration.ofMillis(500));
    }

    private static JobClient submit(LabellingJobOptions o) throws Exception {
        return LabellingJob.start(new LabellingJob.Parsed(o, jobManager).environment(), o);
    }

    @Test
    @Order(1) // event times from now - 200 s
    void cancelledMidStreamAndRestartedLabelsEveryEpisodeOnceAsTheTruth(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 200_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(40, 1, t0, 5, 23);
        Set<String> ids = new HashSet<>();
        eps.forEach(e -> ids.add(e.episodeId()));
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            LabellingJobOptions o = options(lakeDir, "cancel-test").parallelism(2).build();
            // as a live fleet sends them: in time order across the overlapping episodes (one robot: one partition per
            // topic), each message up to 0.4 s out of order; a producer sends them while the first job runs and after
            // it is cancelled
            List<Message> stream = timeOrdered(eps, new Random(5));
            JobClient first = submit(o);
            waitFor(() -> first.getJobStatus().join() == org.apache.flink.api.common.JobStatus.RUNNING,
                    Duration.ofSeconds(30), "the first job to run");
            Thread producer = new Thread(() -> {
                for (int i = 0; i < stream.size(); i++) {
                    publish(pub, stream.get(i));
                    if (i % 5 == 4) {
                        pub.flush();
                        try {
                            Thread.sleep(100);
                        } catch (InterruptedException x) {
                            return;
                        }
                    }
                }
                pub.flush();
            }, "producer");
            producer.start();
            waitFor(() -> own(lake, ids).size() >= 3, Duration.ofSeconds(60), "first labels");
            first.cancel().get(); // mid-stream, no final checkpoint: what is not committed is lost with the job
            int afterCancel = own(lake, ids).size();
            assertTrue(afterCancel >= 3 && afterCancel < 40, "labels before the cancel: " + afterCancel);
            producer.join(30_000);

            JobClient second = submit(o);
            waitFor(() -> own(lake, ids).size() >= 40, Duration.ofSeconds(60), "all 40 labels");
            Thread.sleep(1000); // further checkpoints: nothing more may appear
            LabellerStats st = LabellingJob.stop(second, dir.resolve("savepoints"));

            List<LabelHistoryRow> hist = own(lake, ids);
            assertEquals(40, hist.size(), "one history entry per episode: " + st);
            Map<String, LabelHistoryRow> byEpisode = new HashMap<>();
            hist.forEach(r -> byEpisode.put(r.episodeId(), r));
            assertEquals(40, byEpisode.size());
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = byEpisode.get(e.episodeId());
                assertEquals(e.truth().outcome.label(), r.label(), e.episodeId() + " " + e.truth());
                assertEquals(e.truth().rule, r.rule(), e.episodeId());
                assertEquals("cancel-test", r.consumerGroup());
                assertTrue(r.checkpointId() >= 1, "a checkpoint's batch: " + r);
            }
            assertEquals(List.of(), deadLettersOf(ids), "no record of ours was taken for late or unknown");
            assertTrue(st.replayed() > 0, "the restart read records of labelled episodes again: " + st);
            assertTrue(st.labels() >= 40 - afterCancel, "the second job wrote the rest: " + st + ", " + afterCancel);
            System.err.println("cancel test: " + afterCancel + " labels before the cancel; second job " + st);
            String mark = new LakeLabelSink(lake, "cancel-test").committedCheckpoint();
            assertTrue(mark != null && mark.startsWith(second.getJobID().toString() + ":"), "checkpoint mark " + mark);
        }
    }

    @Test
    @Order(3) // event times from now - 60 s
    void badInputIsDeadLetteredAndTheJobKeepsRunning(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 60_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(3, 1, t0, 4, 31);
        Set<String> ids = new HashSet<>();
        eps.forEach(e -> ids.add(e.episodeId()));
        String ghost = "ghost-31";
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            byte[] bad = {(byte) 0xff, 0x01, 0x31};
            pub.send(FleetTopics.OBSERVATIONS, "robot-00", bad).get();
            pub.publish(ObservationSummary.newBuilder().setRobotId("robot-00").setEpisodeId(ghost)
                    .setTimeNs(t0).setSamplePeriodNs(100_000_000L).addGripperOpening(0.5f).addGripperForceN(0f).build()).get();
            Random rnd = new Random(3);
            eps.forEach(e -> publishShuffled(pub, e, rnd));
            pub.flush();
            LabellingJobOptions o = options(lakeDir, "bad-input").build();
            JobClient job = submit(o);
            waitFor(() -> own(lake, ids).size() >= 3, Duration.ofSeconds(60), "3 labels");
            Alert lateAlert = Alert.newBuilder().setRobotId("robot-00").setEpisodeId(eps.get(0).episodeId())
                    .setKind(Alert.Kind.E_STOP).setTimeNs(t0 + 1_000_000_000L).build();
            pub.publish(lateAlert).get();

            Map<String, String> reasons = new HashMap<>(); // what of ours reached the dead-letter topic, and why
            Properties c = new Properties();
            c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
            c.put(ConsumerConfig.GROUP_ID_CONFIG, "dlq-reader-31");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> dlq = new KafkaConsumer<>(c)) {
                dlq.subscribe(List.of(FleetTopics.DEAD_LETTERS));
                long until = System.nanoTime() + 30_000_000_000L;
                while (reasons.size() < 3 && System.nanoTime() < until) {
                    for (ConsumerRecord<byte[], byte[]> r : dlq.poll(Duration.ofMillis(200))) {
                        String why = new String(r.headers().lastHeader(FleetTopics.H_REASON).value(), StandardCharsets.UTF_8);
                        String from = new String(r.headers().lastHeader(FleetTopics.H_TOPIC).value(), StandardCharsets.UTF_8);
                        if (java.util.Arrays.equals(r.value(), bad)) {
                            reasons.put("bad bytes from " + from, why);
                        } else if (java.util.Arrays.equals(r.value(), lateAlert.toByteArray())) {
                            reasons.put("late alert from " + from, why);
                        } else if (from.equals(FleetTopics.OBSERVATIONS)
                                && ObservationSummary.parseFrom(r.value()).getEpisodeId().equals(ghost)) {
                            reasons.put("ghost from " + from, why);
                        }
                    }
                }
            }
            assertEquals(org.apache.flink.api.common.JobStatus.RUNNING, job.getJobStatus().get(), "the job keeps running");
            LabellerStats st = LabellingJob.stop(job, dir.resolve("savepoints"));
            assertEquals(Map.of("bad bytes from fleet.observations", "malformed",
                    "ghost from fleet.observations", "unknown_episode",
                    "late alert from fleet.alerts", "late"), reasons);
            assertEquals(1, st.malformed(), st.toString());
            assertEquals(1, st.unknownEpisode(), st.toString());
            assertEquals(1, st.late(), st.toString());
            List<LabelHistoryRow> hist = own(lake, ids);
            assertEquals(3, hist.size());
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = hist.stream().filter(x -> x.episodeId().equals(e.episodeId())).findFirst().orElseThrow();
                assertEquals(e.truth().outcome.label(), r.label(), e.episodeId());
            }
        }
    }

    @Test
    @Order(2) // event times from now - 100 s
    void mainRunsABoundedCatchUpOnTheClusterAndARerunLabelsNothingTwice(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 100_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(12, 3, t0, 4, 37);
        Set<String> ids = new HashSet<>();
        eps.forEach(e -> ids.add(e.episodeId()));
        Path lakeDir = dir.resolve("lake");
        Path rules = dir.resolve("rules.yaml");
        java.nio.file.Files.writeString(rules, "version: label-rules-test\nallowed_lateness_s: 2\n");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            eps.forEach(e -> e.messages().forEach(m -> publish(pub, m)));
            pub.flush();
            String[] args = {"--lake", lakeDir.toString(), "--bootstrap", kafka.bootstrap(), "--rules", rules.toString(),
                "--group", "main-test", "--checkpoint-interval-ms", "200",
                "--checkpoint-dir", dir.resolve("checkpoints").toUri().toString(), "--bounded", "--jobmanager", jobManager};
            LabellingJob.main(args);
            List<LabelHistoryRow> hist = own(lake, ids);
            assertEquals(12, hist.size());
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = hist.stream().filter(x -> x.episodeId().equals(e.episodeId())).findFirst().orElseThrow();
                assertEquals(e.truth().outcome.label(), r.label(), e.episodeId());
                assertEquals("label-rules-test", r.rulesVersion());
            }
            // a second catch-up starts at the lake's positions: no episode of ours gets a second entry
            LabellingJob.main(args);
            assertEquals(12, own(lake, ids).size());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LabellingJob.parse(new String[] {"--lake", "x", "--bootstrap", "nohostport"}));
        assertTrue(e.getMessage().startsWith("--bootstrap must be HOST:PORT") && e.getMessage().contains("usage:"),
                e.getMessage());
    }
}
