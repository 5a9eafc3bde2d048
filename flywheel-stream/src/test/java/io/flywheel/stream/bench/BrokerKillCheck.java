package io.flywheel.stream.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.flink.LabellingJob;
import io.flywheel.stream.flink.LabellingJobOptions;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.topics.FleetEventPublisher;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The Flink labelling job through a broker crash: a single KRaft Kafka node in a child JVM, the job on a MiniCluster
 * in this JVM, episodes sent in time order (idempotent producer) while the broker is killed with SIGKILL mid-stream
 * and started again on the same log folder and port. Passes when every episode has exactly one {@code label_history}
 * entry, equal to the truth (and the kill came while the producer was sending). The watermark's idleness (45 s here) is longer than the outage (a broker restart takes
 * 10-20 s on 2 cores): an outage looks like a quiet fleet to the watermark, and with a shorter idleness it closes the
 * windows of episodes whose records are still held by the producers (with 15 s and an 18 s restart, 9 of 30
 * episodes were never labelled). Prints one JSON line; exit status 1 when it fails.
 *
 * <p>usage: BrokerKillCheck DIR [EPISODES]
 */
public final class BrokerKillCheck {
    private BrokerKillCheck() {}

    public static void main(String[] a) throws Exception {
        try {
            check(a);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void check(String[] a) throws Exception {
        Path dir = Path.of(a[0]);
        int count = a.length > 1 ? Integer.parseInt(a[1]) : 30;
        Files.createDirectories(dir);
        int brokerPort = freePort();
        int controllerPort = freePort();
        Path props = dir.resolve("server.properties");
        Files.writeString(props, String.join("\n",
                "process.roles=broker,controller", "node.id=1",
                "controller.quorum.voters=1@localhost:" + controllerPort,
                "listeners=PLAINTEXT://localhost:" + brokerPort + ",CONTROLLER://localhost:" + controllerPort,
                "advertised.listeners=PLAINTEXT://localhost:" + brokerPort,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT", "log.dirs=" + dir.resolve("kafka-logs"),
                "offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1", "group.initial.rebalance.delay.ms=0", ""));
        String bootstrap = "localhost:" + brokerPort;
        int rc = child(dir, "format", "kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(), "-c",
                props.toString()).waitFor();
        if (rc != 0) {
            throw new IllegalStateException("kafka storage format failed (" + rc + "), see " + dir.resolve("format.log"));
        }
        long t = System.nanoTime();
        Process broker = child(dir, "broker-1", "kafka.Kafka", props.toString());
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
        admin.createTopics(FleetTopics.ALL.stream().map(n -> new NewTopic(n, 2, (short) 1)).toList()).all()
                .get(60, TimeUnit.SECONDS);
        double firstStart = (System.nanoTime() - t) / 1e9;
        admin.close();

        LabelRules rules = LabelRules.parse("allowed_lateness_s: 1\n", "check", LabelRules.defaults());
        long t0 = System.currentTimeMillis() * 1_000_000L - 300_000_000_000L;
        List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(count, 4, t0, 5, 41);
        Set<String> ids = new java.util.HashSet<>();
        eps.forEach(e -> ids.add(e.episodeId()));
        List<Message> stream = timeOrdered(eps, new Random(9));
        String result;
        boolean ok;
        try (Lake lake = Lake.init(dir.resolve("lake"));
             FleetEventPublisher pub = new FleetEventPublisher(bootstrap)) {
            LabellingJobOptions o = LabellingJobOptions.builder(lake.location(), bootstrap).group("broker-kill")
                    .rules(rules).checkpointInterval(Duration.ofMillis(300)).outOfOrderness(Duration.ofSeconds(1))
                    .idleness(Duration.ofSeconds(45)).parallelism(2).build();
            JobClient job = LabellingJob.start(StreamExecutionEnvironment.createLocalEnvironment(2), o);
            while (job.getJobStatus().get() != org.apache.flink.api.common.JobStatus.RUNNING) {
                Thread.sleep(20);
            }
            java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
            Thread producer = new Thread(() -> {
                for (int i = 0; i < stream.size(); i++) {
                    publish(pub, stream.get(i));
                    sent.incrementAndGet();
                    if (i % 5 == 4) {
                        try {
                            Thread.sleep(200);
                        } catch (InterruptedException x) {
                            return;
                        }
                    }
                }
                pub.flush();
            }, "producer");
            producer.start();
            // mid-stream: 40% of the messages sent (a sparse partition, as the alerts', holds the watermark until the
            // idleness, so few or no labels are in yet)
            waitFor(() -> sent.get() >= stream.size() * 2 / 5, 120, "40% of the messages sent");
            int beforeKill = own(lake, ids);
            broker.destroyForcibly().waitFor(); // SIGKILL
            Thread.sleep(2000);
            t = System.nanoTime();
            broker = child(dir, "broker-2", "kafka.Kafka", props.toString());
            try (Admin back = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                back.listTopics().names().get(60, TimeUnit.SECONDS);
            }
            System.err.printf("broker back after %.1f s; %d of %d messages sent%n", (System.nanoTime() - t) / 1e9,
                    sent.get(), stream.size());
            boolean sendingAtKill = producer.isAlive();
            producer.join(180_000);
            double restart = (System.nanoTime() - t) / 1e9;
            System.err.printf("producer done; %d labels%n", own(lake, ids));
            waitFor(() -> own(lake, ids) >= count, 180, "all labels");
            Thread.sleep(1500);
            job.cancel().get();
            Map<String, List<LabelHistoryRow>> rows = new HashMap<>();
            for (LabelHistoryRow r : LakeLabelSink.history(lake)) {
                rows.computeIfAbsent(r.episodeId(), k -> new ArrayList<>()).add(r);
            }
            int once = 0;
            int truth = 0;
            for (LiveEpisodes.Episode e : eps) {
                List<LabelHistoryRow> r = rows.getOrDefault(e.episodeId(), List.of());
                if (r.size() == 1) {
                    once++;
                    if (r.get(0).label().equals(e.truth().outcome.label()) && r.get(0).rule().equals(e.truth().rule)) {
                        truth++;
                    }
                }
            }
            ok = once == count && truth == count && rows.size() == count && sendingAtKill;
            result = String.format(java.util.Locale.ROOT, "{\"episodes\":%d,\"labelled_before_kill\":%d,"
                    + "\"exactly_once\":%d,\"equal_to_truth\":%d,\"history_episodes\":%d,\"broker_start_s\":%.1f,"
                    + "\"producer_done_after_restart_s\":%.1f,\"sending_at_kill\":%b,\"ok\":%b}", count, beforeKill, once,
                    truth, rows.size(), firstStart, restart, sendingAtKill, ok);
        } finally {
            broker.destroyForcibly().waitFor();
        }
        System.out.println(result);
        System.exit(ok ? 0 : 1);
    }

    private static int own(Lake lake, Set<String> ids) {
        return (int) LakeLabelSink.history(lake).stream().filter(r -> ids.contains(r.episodeId())).count();
    }

    private static void waitFor(java.util.function.BooleanSupplier done, int seconds, String what) throws Exception {
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    private static Process child(Path dir, String name, String main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile())
                .start();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
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
}
