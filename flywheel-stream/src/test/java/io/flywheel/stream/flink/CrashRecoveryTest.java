package io.flywheel.stream.flink;

import static io.flywheel.stream.testkit.StreamFixture.exactlyOnce;
import static io.flywheel.stream.testkit.StreamFixture.history;
import static io.flywheel.stream.testkit.StreamFixture.ids;
import static io.flywheel.stream.testkit.StreamFixture.publish;
import static io.flywheel.stream.testkit.StreamFixture.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import com.google.protobuf.Message;

import io.flywheel.lake.Lake;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.testkit.ChildBroker;
import io.flywheel.stream.testkit.StreamFixture;
import io.flywheel.stream.topics.FleetEventPublisher;

/**
 * The labelling job's exactly-once guarantee through real crashes: the job's JVM killed with SIGKILL, and the Kafka
 * broker's JVM killed with SIGKILL, each mid-stream, then started again; every episode must end with exactly one
 * {@code label_history} entry, equal to its truth. One broker, in a child JVM, for the class; the tests share its
 * topics and run in the order of their event times (each later than the earlier test's), each asserting on its own
 * episodes and lake.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CrashRecoveryTest {
    /**
     * The watermark's idleness of the broker-kill test: it must exceed the broker's outage (kill, start again, first
     * answer: 5-20 s on 2 cores), or the watermark takes the outage for a quiet fleet and closes episodes whose
     * records the producer still holds.
     */
    private static final Duration IDLENESS_OVER_OUTAGE = Duration.ofSeconds(30);

    @TempDir
    static Path shared;
    private static ChildBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = ChildBroker.start(shared.resolve("broker"), 2);
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /** The job's main in a child JVM (a MiniCluster of its own), as {@code flink run} would call it. */
    private static Process jobJvm(Path dir, String name, Path lake) throws Exception {
        return StreamFixture.childJvm(dir, name, 768, LabellingJob.class.getName(), List.of("--lake", lake.toString(),
                "--bootstrap", broker.bootstrap(), "--group", "sigkill", "--allowed-lateness-s", "1",
                "--checkpoint-interval-ms", "300", "--out-of-orderness-ms", "1000", "--idleness-ms", "500",
                "--parallelism", "2", "--checkpoint-dir", dir.resolve("checkpoints").toUri().toString()));
    }

    @Test
    @Order(1) // event times from now - 400 s
    void aJobKilledWithSigkillMidStreamAndStartedAgainLabelsEveryEpisodeOnceAsTheTruth(@TempDir Path dir)
            throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 400_000_000_000L;
        // with a warning per episode the alerts partitions are as dense as the others: a sparse one would hold the
        // watermark back, past the idleness advancing at the wall clock's pace from its last record
        List<LiveEpisodes.Episode> eps = StreamFixture.withWarnings(LiveEpisodes.generate(30, 4, t0, 5, 43));
        Set<String> ids = ids(eps);
        List<Message> stream = StreamFixture.timeOrdered(eps, new Random(43));
        Path lakeDir = dir.resolve("lake");
        Lake.init(lakeDir).close();
        Process second = null;
        try (Lake lake = Lake.open(lakeDir.toString());
             FleetEventPublisher pub = new FleetEventPublisher(broker.bootstrap())) {
            int half = stream.size() / 2;
            stream.subList(0, half).forEach(m -> publish(pub, m));
            pub.flush();
            long started = System.nanoTime();
            Process first = jobJvm(dir, "job-1", lakeDir);
            try {
                waitFor(() -> history(lake, ids).size() >= 5 || !first.isAlive(), Duration.ofSeconds(120),
                        "the first job's first labels");
                assertTrue(first.isAlive(), "the first job ended by itself, see " + dir.resolve("job-1.log"));
                // the rest of the fleet's messages go on while the job dies and a new one starts
                StreamFixture.producer(pub, stream.subList(half, stream.size()), 10, 100, new AtomicInteger());
                Thread.sleep(300);
            } finally {
                first.destroyForcibly().waitFor(); // SIGKILL: no savepoint, no final checkpoint, no close
            }
            int atKill = history(lake, ids).size();
            double firstRun = (System.nanoTime() - started) / 1e9;
            started = System.nanoTime();
            assertTrue(atKill >= 5 && atKill < 30, "labels when the job was killed: " + atKill);
            String offsetsAtKill = new LakeLabelSink(lake, "sigkill").committedOffsets().text();
            second = jobJvm(dir, "job-2", lakeDir);
            Process job2 = second;
            waitFor(() -> history(lake, ids).size() >= 30 || !job2.isAlive(), Duration.ofSeconds(120), "all 30 labels");
            assertTrue(job2.isAlive(), "the second job ended by itself, see " + dir.resolve("job-2.log"));
            double secondRun = (System.nanoTime() - started) / 1e9;
            Thread.sleep(1500); // further checkpoints: nothing more may appear

            exactlyOnce(lake, "sigkill", eps).assertHolds("after a SIGKILL of the job with " + atKill + " labels in");
            assertEquals(List.of(), StreamFixture.deadLetters(broker.bootstrap(), ids),
                    "a replayed record of a labelled episode is skipped, not taken for late");
            // the second job started at the positions the first committed; it ends with every record covered
            assertTrue(!offsetsAtKill.isEmpty(), "the first job committed positions with its labels");
            assertEquals(StreamFixture.endOffsets(broker.bootstrap()).toString(),
                    new java.util.TreeMap<>(new LakeLabelSink(lake, "sigkill").committedOffsets().next()).toString(),
                    "every episode closed: the lake's positions are the topics' ends");
            System.err.printf(java.util.Locale.ROOT, "job SIGKILL: %d of 30 labels in at the kill (%.1f s after the"
                    + " first start), the rest %.1f s after the second; positions at the kill %s%n", atKill, firstRun,
                    secondRun, offsetsAtKill);
        } finally {
            if (second != null) {
                second.destroyForcibly().waitFor();
            }
        }
    }

    @Test
    @Order(2) // event times from now - 200 s
    void theBrokerKilledWithSigkillMidStreamAndStartedAgainLosesAndDoublesNoLabel(@TempDir Path dir) throws Exception {
        long t0 = System.currentTimeMillis() * 1_000_000L - 200_000_000_000L;
        List<LiveEpisodes.Episode> eps = StreamFixture.withWarnings(LiveEpisodes.generate(24, 4, t0, 5, 47));
        Set<String> ids = ids(eps);
        // after the fleet's episodes, the fleet goes on: later episodes of the same robots (on the same partitions)
        // move every partition's watermark past the last of ours, so that they close by event time, not by idleness
        long tail = t0 + (24 * 2 + 5 + 3) * 1_000_000_000L;
        List<LiveEpisodes.Episode> more = StreamFixture.withWarnings(LiveEpisodes.generate(4, 4, tail, 5, 48));
        List<LiveEpisodes.Episode> all = new ArrayList<>(eps);
        all.addAll(more);
        List<Message> stream = StreamFixture.timeOrdered(all, new Random(47));
        try (Lake lake = Lake.init(dir.resolve("lake"));
             FleetEventPublisher pub = new FleetEventPublisher(broker.bootstrap())) {
            LabellingJobOptions o = LabellingJobOptions.builder(lake.location(), broker.bootstrap()).group("broker-kill")
                    .rules(StreamFixture.rules(1, null)).checkpointInterval(Duration.ofMillis(300))
                    .outOfOrderness(Duration.ofSeconds(1)).idleness(IDLENESS_OVER_OUTAGE).parallelism(2)
                    .checkpointDir(dir.resolve("checkpoints").toUri().toString()).build();
            JobClient job = LabellingJob.start(StreamExecutionEnvironment.createLocalEnvironment(2), o);
            try {
                waitFor(() -> job.getJobStatus().join() == JobStatus.RUNNING, Duration.ofSeconds(60), "the job to run");
                // the fleet sends at its pace (25 messages/s); the broker dies under it, with records in flight
                AtomicInteger sent = new AtomicInteger();
                Thread producer = StreamFixture.producer(pub, stream, 5, 200, sent);
                waitFor(() -> sent.get() >= stream.size() * 2 / 5 && history(lake, ids).size() >= 2,
                        Duration.ofSeconds(60), "40% sent and labels in");
                boolean sendingAtKill = producer.isAlive();
                broker.kill();
                long down = System.nanoTime();
                int atKill = history(lake, ids).size();
                int sentAtKill = sent.get();
                assertTrue(sendingAtKill && sentAtKill < stream.size(), "the kill came mid-stream: " + sentAtKill);
                Thread.sleep(1000);
                double restart = broker.restart(Duration.ofSeconds(60));
                double outage = (System.nanoTime() - down) / 1e9;
                assertTrue(outage < IDLENESS_OVER_OUTAGE.toSeconds(), "the outage (" + outage + " s) must be shorter"
                        + " than the idleness for the test to be honest");
                producer.join(120_000);
                assertTrue(!producer.isAlive(), "the producer delivered everything after the restart");
                waitFor(() -> history(lake, ids).size() >= 24, Duration.ofSeconds(90), "all 24 labels");
                Thread.sleep(1500); // further checkpoints: nothing more may appear
                exactlyOnce(lake, "broker-kill", eps).assertHolds("after a SIGKILL of the broker with " + atKill
                        + " labels in and an outage of " + outage + " s");
                assertEquals(List.of(), StreamFixture.deadLetters(broker.bootstrap(), ids), "none of ours dead-lettered");
                System.err.printf(java.util.Locale.ROOT, "broker SIGKILL: %d of 24 labels in at the kill; broker back"
                        + " after %.1f s (outage %.1f s, idleness %d s); %d of %d messages sent at the kill%n", atKill,
                        restart, outage, IDLENESS_OVER_OUTAGE.toSeconds(), sentAtKill, stream.size());
            } finally {
                job.cancel().get();
            }
        }
    }
}
