package io.flywheel.stream.flink;

import static io.flywheel.stream.testkit.StreamFixture.history;
import static io.flywheel.stream.testkit.StreamFixture.ids;
import static io.flywheel.stream.testkit.StreamFixture.publish;
import static io.flywheel.stream.testkit.StreamFixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
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


import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.job.LabellerStats;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.testkit.StreamFixture;
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
    private static final LabelRules RULES = StreamFixture.rules(1, null);

    @BeforeAll
    static void start() throws Exception {
        kafka = EmbeddedKafka.start(null, 2);
        flink = StreamFixture.miniCluster(4);
        jobManager = StreamFixture.restAddress(flink);
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            flink.close();
        } finally {
            kafka.close();
        }
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
        Set<String> ids = ids(eps);
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            LabellingJobOptions o = options(lakeDir, "cancel-test").parallelism(2).build();
            // as a live fleet sends them: in time order across the overlapping episodes (one robot: one partition per
            // topic), each message up to 0.4 s out of order; a producer sends them while the first job runs and after
            // it is cancelled
            List<com.google.protobuf.Message> stream = StreamFixture.timeOrdered(eps, new Random(5));
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
            waitFor(() -> history(lake, ids).size() >= 3, Duration.ofSeconds(60), "first labels");
            first.cancel().get(); // mid-stream, no final checkpoint: what is not committed is lost with the job
            int afterCancel = history(lake, ids).size();
            assertTrue(afterCancel >= 3 && afterCancel < 40, "labels before the cancel: " + afterCancel);
            producer.join(30_000);

            JobClient second = submit(o);
            waitFor(() -> history(lake, ids).size() >= 40, Duration.ofSeconds(60), "all 40 labels");
            Thread.sleep(1000); // further checkpoints: nothing more may appear
            LabellerStats st = LabellingJob.stop(second, dir.resolve("savepoints"));

            List<LabelHistoryRow> hist = history(lake, ids);
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
            assertEquals(List.of(), StreamFixture.deadLetters(kafka.bootstrap(), ids), "no record of ours was taken for late or unknown");
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
        Set<String> ids = ids(eps);
        String ghost = "ghost-31";
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            byte[] bad = {(byte) 0xff, 0x01, 0x31};
            pub.send(FleetTopics.OBSERVATIONS, "robot-00", bad).get();
            pub.publish(ObservationSummary.newBuilder().setRobotId("robot-00").setEpisodeId(ghost)
                    .setTimeNs(t0).setSamplePeriodNs(100_000_000L).addGripperOpening(0.5f).addGripperForceN(0f).build()).get();
            Random rnd = new Random(3);
            eps.forEach(e -> StreamFixture.shuffled(e, rnd).forEach(m -> publish(pub, m)));
            pub.flush();
            LabellingJobOptions o = options(lakeDir, "bad-input").build();
            JobClient job = submit(o);
            waitFor(() -> history(lake, ids).size() >= 3, Duration.ofSeconds(60), "3 labels");
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
            List<LabelHistoryRow> hist = history(lake, ids);
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
        Set<String> ids = ids(eps);
        Path lakeDir = dir.resolve("lake");
        Path rules = dir.resolve("rules.yaml");
        java.nio.file.Files.writeString(rules, "version: label-rules-test\nallowed_lateness_s: 2\n");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            StreamFixture.publishAll(pub, eps);
            String[] args = {"--lake", lakeDir.toString(), "--bootstrap", kafka.bootstrap(), "--rules", rules.toString(),
                "--group", "main-test", "--checkpoint-interval-ms", "200",
                "--checkpoint-dir", dir.resolve("checkpoints").toUri().toString(), "--bounded", "--jobmanager", jobManager};
            LabellingJob.main(args);
            List<LabelHistoryRow> hist = history(lake, ids);
            assertEquals(12, hist.size());
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = hist.stream().filter(x -> x.episodeId().equals(e.episodeId())).findFirst().orElseThrow();
                assertEquals(e.truth().outcome.label(), r.label(), e.episodeId());
                assertEquals("label-rules-test", r.rulesVersion());
            }
            // a second catch-up starts at the lake's positions: no episode of ours gets a second entry
            LabellingJob.main(args);
            assertEquals(12, history(lake, ids).size());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LabellingJob.parse(new String[] {"--lake", "x", "--bootstrap", "nohostport"}));
        assertTrue(e.getMessage().startsWith("--bootstrap must be HOST:PORT") && e.getMessage().contains("usage:"),
                e.getMessage());
    }

    @Test
    @Order(4) // event times from now - 40 s
    void everyMessageRelayedTwiceGivesTheLabelsOfOnce(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 40_000_000_000L;
        // a warning per episode keeps both alerts partitions (robot-00 on one, robot-01 and -02 on the other) moving:
        // the earlier tests' last alerts would otherwise hold the watermark back for the gap to them
        List<LiveEpisodes.Episode> eps = StreamFixture.withWarnings(LiveEpisodes.generate(12, 3, t0, 5, 55));
        Set<String> ids = ids(eps);
        assertTrue(eps.stream().anyMatch(e -> e.truth() == LiveEpisodes.Truth.INTERVENTION), "seed 55 has take-overs");
        // two take-overs for needs_review: an intervention episode (one take-over, then the success signal) is a
        // success, unless a copy of its take-over's summary counts as a second one
        LabelRules twoTakeOvers = LabelRules.parse("intervention:\n  min_interventions: 2\n", "test", RULES);
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir);
             FleetEventPublisher pub = new FleetEventPublisher(kafka.bootstrap())) {
            // each message twice, the copy right after it: what the gateway relays when MQTT delivers a QoS 1
            // message again (the gateway stopped between Kafka's acknowledgement and its own)
            for (LiveEpisodes.Episode e : eps) {
                for (com.google.protobuf.Message m : e.messages()) {
                    publish(pub, m);
                    publish(pub, m);
                }
            }
            pub.flush();
            JobClient job = submit(options(lakeDir, "twice").rules(twoTakeOvers).build());
            waitFor(() -> history(lake, ids).size() >= 12, Duration.ofSeconds(60), "12 labels");
            Thread.sleep(1000); // further checkpoints: nothing more may appear
            LabellerStats st = LabellingJob.stop(job, dir.resolve("savepoints"));
            List<LabelHistoryRow> hist = history(lake, ids);
            assertEquals(12, hist.size(), "one entry per episode: " + st);
            for (LiveEpisodes.Episode e : eps) {
                LabelHistoryRow r = hist.stream().filter(x -> x.episodeId().equals(e.episodeId())).findFirst().orElseThrow();
                boolean takeOver = e.truth() == LiveEpisodes.Truth.INTERVENTION;
                assertEquals(takeOver ? "success" : e.truth().outcome.label(), r.label(), e.episodeId() + " " + e.truth());
                assertEquals(takeOver ? io.flywheel.stream.label.Label.SUCCESS_SIGNAL : e.truth().rule, r.rule(),
                        e.episodeId());
            }
            assertEquals(List.of(), StreamFixture.deadLetters(kafka.bootstrap(), ids), "a copy is neither late nor unknown");
        }
    }
}
