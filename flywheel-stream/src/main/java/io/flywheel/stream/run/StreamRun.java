package io.flywheel.stream.run;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import com.google.protobuf.Message;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.fleet.v1.EpisodeEvent;
import io.flywheel.fleet.v1.ObservationSummary;
import io.flywheel.lake.Lake;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.accuracy.LabelAccuracy;
import io.flywheel.stream.flink.LabellingJob;
import io.flywheel.stream.flink.LabellingJobOptions;
import io.flywheel.stream.job.LabellerOptions;
import io.flywheel.stream.job.LabellerStats;
import io.flywheel.stream.job.StreamLabeller;
import io.flywheel.stream.label.Label;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.rules.Outcome;
import io.flywheel.stream.sim.LiveEpisodes;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.stream.topics.FleetEventPublisher;

/**
 * One run of realtime labelling on one machine ({@code flywheel stream run}): a Kafka broker in this JVM (or the
 * one at a given bootstrap), simulated live episodes with ground truth published to the fleet topics, the labeller
 * labelling them into the lake, then each label compared with the truth (precision and recall per class).
 */
public final class StreamRun {
    private StreamRun() {}

    /** Which labeller runs. */
    public enum Engine {
        /** The Flink job ({@link LabellingJob}) on a Flink MiniCluster in this JVM. */
        FLINK,
        /** The plain Kafka consumer ({@link StreamLabeller}). */
        CONSUMER;

        /** @return the name on the command line */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * @param episodes episodes published
     * @param labelled episodes with exactly one label in the lake afterwards
     * @param accuracy each label against the truth: precision and recall per class, confusion counts
     * @param stats the labeller's counters
     * @param rulesVersion the rules' version
     * @param bootstrap the broker used
     * @param embedded whether it was the in-JVM broker
     * @param engine the labeller that ran
     * @param seconds wall time of the run
     * @param brokerLog where the in-JVM broker's start-up output went, null with an external broker
     */
    public record Report(int episodes, int labelled, LabelAccuracy accuracy, LabellerStats stats, String rulesVersion,
            String bootstrap, boolean embedded, Engine engine, double seconds, Path brokerLog) {}

    /**
     * Runs it.
     *
     * @param lake the lake labels go to
     * @param bootstrap a Kafka cluster's bootstrap servers (with the fleet topics), or null for the in-JVM broker
     * @param rules the labelling rules
     * @param episodes how many simulated episodes to publish, &ge; 1
     * @param seed the simulation's seed
     * @param timeout the longest the labelling may take after publishing
     * @param engine the labeller
     * @param progress receives a line per label as it is committed, and per stage
     * @param brokerLog the file the in-JVM broker's start-up output is appended to (its storage format report), so
     *     that it stays off this process's standard streams; unused with {@code bootstrap}
     * @return the report
     * @throws IllegalStateException when the labels did not all arrive within {@code timeout}
     */
    public static Report run(Lake lake, String bootstrap, LabelRules rules, int episodes, long seed, Duration timeout,
            Engine engine, Consumer<String> progress, Path brokerLog) throws Exception {
        long t0 = System.nanoTime();
        EmbeddedKafka kafka = null;
        if (bootstrap == null) {
            progress.accept("starting the in-JVM Kafka broker (KRaft; its log: " + brokerLog + ")");
            kafka = EmbeddedKafka.start(null, 2, brokerLog);
            bootstrap = kafka.bootstrap();
        }
        try {
            long start = System.currentTimeMillis() * 1_000_000L - (episodes * 2L + 10) * 1_000_000_000L;
            List<LiveEpisodes.Episode> eps = LiveEpisodes.generate(episodes, Math.min(8, episodes), start, 5, seed);
            progress.accept("publishing " + episodes + " simulated live episodes to " + bootstrap);
            try (FleetEventPublisher pub = new FleetEventPublisher(bootstrap)) {
                publish(pub, eps, bootstrap);
            }
            Map<String, LiveEpisodes.Episode> byId = new HashMap<>();
            eps.forEach(e -> byId.put(e.episodeId(), e));
            int[] done = {0};
            Consumer<Label> onLabel = l -> {
                LiveEpisodes.Episode e = byId.get(l.episodeId());
                if (e != null) {
                    done[0]++;
                    progress.accept(String.format(java.util.Locale.ROOT, "label %d/%d  %s  %-12s rule %-17s truth %s",
                            done[0], episodes, l.episodeId(), l.outcome().label(), l.rule(), e.truth().outcome.label()));
                }
            };
            // an embedded broker is new each run, its topics start at offset 0 again: its own consumer group, so that
            // the positions an earlier run left in the lake are not taken for this one's
            String group = "flywheel-run-" + Long.toString(seed, 36)
                    + (kafka != null ? "-" + java.util.UUID.randomUUID().toString().substring(0, 8) : "");
            LabellerStats stats = engine == Engine.FLINK
                    ? runFlink(lake, bootstrap, group, rules, byId, timeout, onLabel, done, episodes)
                    : runConsumer(lake, bootstrap, group, rules, timeout, onLabel, done, episodes);
            Map<String, LabelHistoryRow> labels = new LinkedHashMap<>();
            for (LabelHistoryRow r : LakeLabelSink.history(lake)) {
                if (r.consumerGroup().equals(group) && byId.containsKey(r.episodeId())) {
                    labels.put(r.episodeId(), r);
                }
            }
            if (labels.size() < episodes) {
                throw new IllegalStateException("only " + labels.size() + " of " + episodes + " episodes were labelled"
                        + " within " + timeout.toSeconds() + " s");
            }
            Map<String, Outcome> got = new HashMap<>();
            Map<String, Outcome> truth = new HashMap<>();
            for (LiveEpisodes.Episode e : eps) {
                got.put(e.episodeId(), Outcome.parse(labels.get(e.episodeId()).label()));
                truth.put(e.episodeId(), e.truth().outcome);
            }
            return new Report(episodes, labels.size(), LabelAccuracy.of(got, truth), stats, rules.version(), bootstrap,
                    kafka != null, engine, (System.nanoTime() - t0) / 1e9, kafka != null ? brokerLog : null);
        } finally {
            if (kafka != null) {
                kafka.close();
            }
        }
    }

    private static LabellerStats runConsumer(Lake lake, String bootstrap, String group, LabelRules rules,
            Duration timeout, Consumer<Label> onLabel, int[] done, int episodes) throws InterruptedException {
        LabellerOptions opts = LabellerOptions.builder(bootstrap).group(group).rules(rules).build();
        StreamLabeller labeller = new StreamLabeller(lake, opts, onLabel);
        Thread t = new Thread(labeller::run, "flywheel-labeller");
        t.start();
        long until = System.nanoTime() + timeout.toNanos();
        while (done[0] < episodes && System.nanoTime() < until && t.isAlive()) {
            Thread.sleep(100);
        }
        labeller.stop();
        t.join(30_000);
        LabellerStats stats = labeller.stats();
        labeller.close();
        return stats;
    }

    /**
     * The Flink job on a MiniCluster in this JVM (parallelism 2); labels are told as they appear in the lake; at the
     * end the job is stopped with a savepoint for its final counters (checkpoints and savepoint in a temporary folder,
     * removed).
     */
    private static LabellerStats runFlink(Lake lake, String bootstrap, String group, LabelRules rules,
            Map<String, LiveEpisodes.Episode> byId, Duration timeout, Consumer<Label> onLabel, int[] done, int episodes)
            throws Exception {
        Path savepoints = Files.createTempDirectory("flywheel-savepoints");
        LabellingJobOptions o = LabellingJobOptions.builder(lake.location(), bootstrap).group(group).rules(rules)
                .parallelism(2).checkpointDir(savepoints.resolve("checkpoints").toUri().toString()).build();
        org.apache.flink.configuration.Configuration conf = new org.apache.flink.configuration.Configuration();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(o.parallelism(), conf);
        JobClient job = LabellingJob.start(env, o);
        boolean stopped = false;
        try {
            java.util.Set<String> told = new java.util.HashSet<>();
            long until = System.nanoTime() + timeout.toNanos();
            while (done[0] < episodes && System.nanoTime() < until) {
                JobStatus st = job.getJobStatus().get();
                if (st.isGloballyTerminalState()) {
                    job.getJobExecutionResult().get(); // throws the job's failure
                    throw new IllegalStateException("the labelling job ended (" + st + ") before every label came");
                }
                for (LabelHistoryRow r : LakeLabelSink.history(lake)) {
                    if (r.consumerGroup().equals(group) && byId.containsKey(r.episodeId()) && told.add(r.episodeId())) {
                        onLabel.accept(new Label(r.robotId(), r.episodeId(), Outcome.parse(r.label()), r.rule(),
                                r.rulesVersion()));
                    }
                }
                Thread.sleep(200);
            }
            LabellerStats stats = LabellingJob.stop(job, savepoints);
            stopped = true; // the MiniCluster is gone with the job
            return stats;
        } finally {
            if (!stopped) {
                try {
                    job.cancel().get();
                } catch (java.util.concurrent.ExecutionException e) {
                    // the job ended by itself (its failure is what the caller sees)
                }
            }
            try (var walk = Files.walk(savepoints)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * Publishes every episode's messages and waits until Kafka has them.
     *
     * @throws StorageUnavailableException when the broker does not answer (an unreachable --bootstrap)
     */
    private static void publish(FleetEventPublisher pub, List<LiveEpisodes.Episode> eps, String bootstrap) {
        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> sent = new java.util.ArrayList<>();
        try {
            for (LiveEpisodes.Episode e : eps) {
                for (Message m : e.messages()) {
                    if (m instanceof EpisodeEvent x) {
                        sent.add(pub.publish(x));
                    } else if (m instanceof ObservationSummary x) {
                        sent.add(pub.publish(x));
                    } else {
                        sent.add(pub.publish((Alert) m));
                    }
                    if (sent.size() == 1) {
                        sent.get(0).get(); // an unreachable broker fails here once, not once per message
                    }
                }
            }
            pub.flush();
            for (java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata> f : sent) {
                f.get();
            }
        } catch (org.apache.kafka.common.KafkaException | java.util.concurrent.ExecutionException e) {
            Throwable c = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new StorageUnavailableException("Kafka at " + bootstrap + " did not take the fleet events: "
                    + c.getMessage() + "; check --bootstrap (host:port of a running broker)", c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageUnavailableException("interrupted while publishing to Kafka at " + bootstrap, e);
        }
    }
}
