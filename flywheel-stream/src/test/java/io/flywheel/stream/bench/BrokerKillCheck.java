package io.flywheel.stream.bench;

import static io.flywheel.stream.testkit.StreamFixture.history;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import com.google.protobuf.Message;

import io.flywheel.lake.Lake;
import io.flywheel.stream.flink.LabellingJob;
import io.flywheel.stream.flink.LabellingJobOptions;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.testkit.ChildBroker;
import io.flywheel.stream.testkit.StreamFixture;
import io.flywheel.stream.topics.FleetEventPublisher;

/**
 * The Flink labelling job through a broker crash, at a larger scale than the suite's {@code CrashRecoveryTest}: a
 * single KRaft Kafka node in a child JVM ({@link ChildBroker}), the job on a MiniCluster in this JVM, episodes sent in
 * time order (idempotent producer, paced) while the broker is killed with SIGKILL mid-stream and started again on the
 * same log folder and port. Passes when every episode has exactly one {@code label_history} entry, equal to the truth
 * (and the kill came while the producer was sending). The watermark's idleness (45 s here) is longer than the outage
 * (a broker restart takes 10-20 s on 2 cores): an outage looks like a quiet fleet to the watermark, and with a shorter
 * idleness it closes the windows of episodes whose records are still held by the producers (with 15 s and an 18 s
 * restart, 9 of 30 episodes were never labelled). Its alerts are only the e-stops (a sparse partition), and its last
 * episodes close by idleness. Prints one JSON line; exit status 1 when it fails.
 *
 * <p>usage: BrokerKillCheck DIR [EPISODES]
 */
public final class BrokerKillCheck {
    private BrokerKillCheck() {}

    public static void main(String[] a) {
        try {
            check(a);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void check(String[] a) throws Exception {
        Path dir = Path.of(a[0]);
        int count = a.length > 1 ? Integer.parseInt(a[1]) : 30;
        Files.createDirectories(dir);
        long t = System.nanoTime();
        String result;
        boolean ok;
        try (ChildBroker broker = ChildBroker.start(dir.resolve("broker"), 2)) {
            double firstStart = (System.nanoTime() - t) / 1e9;
            long t0 = System.currentTimeMillis() * 1_000_000L - 300_000_000_000L;
            List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(count, 4, t0, 5, 41);
            Set<String> ids = StreamFixture.ids(eps);
            List<Message> stream = StreamFixture.timeOrdered(eps, new Random(9));
            try (Lake lake = Lake.init(dir.resolve("lake"));
                 FleetEventPublisher pub = new FleetEventPublisher(broker.bootstrap())) {
                LabellingJobOptions o = LabellingJobOptions.builder(lake.location(), broker.bootstrap())
                        .group("broker-kill").rules(StreamFixture.rules(1, null)).checkpointInterval(Duration.ofMillis(300))
                        .outOfOrderness(Duration.ofSeconds(1)).idleness(Duration.ofSeconds(45)).parallelism(2).build();
                JobClient job = LabellingJob.start(StreamExecutionEnvironment.createLocalEnvironment(2), o);
                while (job.getJobStatus().get() != org.apache.flink.api.common.JobStatus.RUNNING) {
                    Thread.sleep(20);
                }
                AtomicInteger sent = new AtomicInteger();
                Thread producer = StreamFixture.producer(pub, stream, 5, 200, sent);
                // mid-stream: 40% of the messages sent (the sparse alerts partition holds the watermark until the
                // idleness, so few or no labels are in yet)
                StreamFixture.waitFor(() -> sent.get() >= stream.size() * 2 / 5, Duration.ofSeconds(120),
                        "40% of the messages sent");
                int beforeKill = history(lake, ids).size();
                broker.kill();
                Thread.sleep(2000);
                t = System.nanoTime();
                double back = broker.restart(Duration.ofSeconds(60));
                System.err.printf("broker back after %.1f s; %d of %d messages sent%n", back, sent.get(), stream.size());
                boolean sendingAtKill = producer.isAlive();
                producer.join(180_000);
                double restart = (System.nanoTime() - t) / 1e9;
                StreamFixture.waitFor(() -> history(lake, ids).size() >= count, Duration.ofSeconds(180), "all labels");
                Thread.sleep(1500);
                job.cancel().get();
                StreamFixture.ExactlyOnce x = StreamFixture.exactlyOnce(lake, null, eps);
                ok = x.holds() && x.historyEpisodes() == count && sendingAtKill;
                result = String.format(java.util.Locale.ROOT, "{\"episodes\":%d,\"labelled_before_kill\":%d,"
                        + "\"exactly_once\":%d,\"equal_to_truth\":%d,\"history_episodes\":%d,\"broker_start_s\":%.1f,"
                        + "\"producer_done_after_restart_s\":%.1f,\"sending_at_kill\":%b,\"ok\":%b}", count, beforeKill,
                        x.once(), x.equalToTruth(), x.historyEpisodes(), firstStart, restart, sendingAtKill, ok);
            }
        }
        System.out.println(result);
        System.exit(ok ? 0 : 1);
    }
}
