package io.flywheel.stream.flink;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

import io.flywheel.lake.Lake;
import io.flywheel.stream.job.LabellerStats;
import io.flywheel.stream.rules.LabelRules;
import io.flywheel.stream.sink.LakeLabelSink;
import io.flywheel.stream.sink.PartitionOffsets;
import io.flywheel.stream.topics.FleetTopics;

/**
 * The Flink labelling job: the fleet topics in, one label per episode into the lake, exactly once.
 *
 * <pre>
 * KafkaSource(fleet.episodes, fleet.observations, fleet.alerts; protobuf; from the lake's positions)
 *   -&gt; event time (message time_ns), watermarks per partition with bounded out-of-orderness
 *   -&gt; keyBy(episode_id) -&gt; {@link EpisodeWindows}: window closes at end event + allowed lateness, label by
 *      EpisodeLabeller and the rules   --side output--&gt; KafkaSink(fleet.dead-letters): malformed, late, unknown
 *   -&gt; {@link LakeCommitter} (parallelism 1): per checkpoint one batch; on checkpoint completion one lake
 *      transaction with the labels, the Kafka positions they cover and JOB:CHECKPOINT
 * </pre>
 *
 * <p>On start the source begins at the positions the lake holds for the consumer group (the earliest offset for a
 * partition it holds none of), never at Kafka's group offsets; nothing is committed to Kafka. Dead letters are
 * written at least once (a restart may write a dead letter of a record it reads again a second time).
 *
 * <p>Entry point of {@code flink run -c io.flywheel.stream.flink.LabellingJob flywheel-stream-job.jar --lake URI
 * --bootstrap HOST:PORT [--rules FILE] [...]}; see {@link #usage()}.
 */
public final class LabellingJob {
    private LabellingJob() {}

    /** The job's accumulators that {@link #stats} reads. */
    private static final String[] COUNTERS = {"records", "replayed", "labels", "commits", "malformed",
        "unknown_episode", "late", "open_episodes"};

    /**
     * Adds the job to an environment and sets its checkpointing (exactly once, every
     * {@link LabellingJobOptions#checkpointInterval()}).
     *
     * @param env the environment (a MiniCluster's, a cluster's under {@code flink run}, or a remote one)
     * @param o the options
     * @throws io.flywheel.error.NotFoundException when there is no lake at {@link LabellingJobOptions#lake()}
     */
    public static void build(StreamExecutionEnvironment env, LabellingJobOptions o) {
        env.enableCheckpointing(o.checkpointInterval().toMillis());
        if (o.checkpointDir() != null) {
            org.apache.flink.configuration.Configuration c = new org.apache.flink.configuration.Configuration();
            c.set(org.apache.flink.configuration.CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
            c.set(org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTS_DIRECTORY, o.checkpointDir());
            env.configure(c);
        }
        env.getConfig().setAutoWatermarkInterval(Math.min(200, Math.max(10, o.checkpointInterval().toMillis() / 5)));
        PartitionOffsets held;
        try (Lake lake = Lake.open(o.lake())) {
            held = new LakeLabelSink(lake, o.group()).committedOffsets();
        }
        Map<TopicPartition, Long> start = new HashMap<>();
        held.next().forEach((key, off) -> {
            int slash = key.lastIndexOf('/');
            start.put(new TopicPartition(key.substring(0, slash), Integer.parseInt(key.substring(slash + 1))), off);
        });
        KafkaSourceBuilder<FleetRecord> b = KafkaSource.<FleetRecord>builder()
                .setBootstrapServers(o.bootstrap())
                .setTopics(FleetTopics.INPUTS)
                .setGroupId(o.group())
                .setClientIdPrefix("flywheel-labeller-" + o.group())
                .setDeserializer(new FleetRecordDeserializer())
                .setStartingOffsets(start.isEmpty() ? OffsetsInitializer.earliest()
                        : OffsetsInitializer.offsets(start, OffsetResetStrategy.EARLIEST))
                .setProperty("isolation.level", "read_committed")
                .setProperty("commit.offsets.on.checkpoint", "false");
        if (o.bounded()) {
            b.setBounded(OffsetsInitializer.latest());
        }
        SingleOutputStreamOperator<Progress> windows = env
                .fromSource(b.build(), FleetWatermarks.strategy(o.outOfOrderness(), o.idleness()), "fleet topics")
                .uid("fleet-topics").setParallelism(o.parallelism())
                .keyBy(r -> r.episodeId, Types.STRING)
                .process(new EpisodeWindows(o.lake(), o.group(), o.rules()), TypeInformation.of(Progress.class))
                .name("episode windows").uid("episode-windows").setParallelism(o.parallelism());
        windows.getSideOutput(EpisodeWindows.DEAD_LETTERS)
                .sinkTo(KafkaSink.<DeadLetter>builder().setBootstrapServers(o.bootstrap())
                        .setRecordSerializer(new DeadLetterSerializer())
                        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build())
                .name("dead letters").uid("dead-letters").setParallelism(1);
        windows.transform("lake commit", Types.VOID, new LakeCommitter(o.lake(), o.group()))
                .uid("lake-commit").setParallelism(1).setMaxParallelism(1)
                .sinkTo(new DiscardingSink<>()).name("end").setParallelism(1);
    }

    /**
     * Builds the job and submits it without waiting for it.
     *
     * @return the running job (cancel it to stop it: its labels up to the last completed checkpoint are in the lake)
     */
    public static JobClient start(StreamExecutionEnvironment env, LabellingJobOptions o) throws Exception {
        build(env, o);
        return env.executeAsync(jobName(o));
    }

    /**
     * Stops a running job with a savepoint (its last batch is committed to the lake as the savepoint completes) and
     * waits until it finished.
     *
     * @param job the job
     * @param savepoints where the savepoint goes (a folder)
     * @return the job's final counters (a running job reports them to the client only at heartbeats)
     */
    public static LabellerStats stop(JobClient job, Path savepoints) throws Exception {
        job.stopWithSavepoint(false, savepoints.toUri().toString(),
                org.apache.flink.core.execution.SavepointFormatType.CANONICAL).get();
        return stats(job.getJobExecutionResult().get().getAllAccumulatorResults());
    }

    /** @return the job's name: {@code flywheel-labelling GROUP} */
    public static String jobName(LabellingJobOptions o) {
        return "flywheel-labelling " + o.group();
    }

    /**
     * Reads the job's counters.
     *
     * @param accumulators the job's accumulators ({@link JobClient#getAccumulators()}, or a finished job's)
     * @return the counters, 0 for one not reported yet
     */
    public static LabellerStats stats(Map<String, Object> accumulators) {
        long[] v = new long[COUNTERS.length];
        for (int i = 0; i < COUNTERS.length; i++) {
            Object x = accumulators.get(COUNTERS[i]);
            v[i] = x instanceof Number n ? n.longValue() : 0;
        }
        return new LabellerStats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    }

    /** @return the command line's usage text */
    public static String usage() {
        return """
                usage: LabellingJob --lake URI --bootstrap HOST:PORT[,HOST:PORT...] [options]
                  --rules FILE                 labelling rules (YAML); default: the built-in rules
                  --group NAME                 consumer group whose positions the lake keeps (default flywheel-labeller)
                  --allowed-lateness-s N       overrides the rules' allowed lateness, seconds
                  --checkpoint-interval-ms N   checkpoint (and lake commit) interval (default 1000)
                  --out-of-orderness-ms N      watermark bound (default 2000)
                  --idleness-ms N              without records this long the watermark advances with the clock (default 1000);
                                               set it above the longest Kafka outage to ride through (a broker
                                               restart: 10-20 s), or episodes close before their held records come
                  --parallelism N              episode windows' parallelism (default 1)
                  --bounded                    read to the offsets found at start, label, commit, finish
                  --checkpoint-dir URI         checkpoint folder (file:///..., s3://...); default: the cluster's setting
                  --jobmanager HOST:PORT       submit to this cluster's REST endpoint (default: the environment of
                                               `flink run`, or a MiniCluster in this JVM)""";
    }

    /**
     * Parses the command line.
     *
     * @param args see {@link #usage()}
     * @return the options and the job manager's {@code HOST:PORT}, or null for the context environment
     * @throws IllegalArgumentException naming the argument and holding the usage when the arguments are wrong
     * @throws io.flywheel.error.BadInputException when the rules file is bad (naming file and position)
     */
    public static Parsed parse(String[] args) throws java.io.IOException {
        Map<String, String> m = new HashMap<>();
        boolean bounded = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--bounded")) {
                bounded = true;
            } else if (a.startsWith("--") && i + 1 < args.length
                    && java.util.Set.of("--lake", "--bootstrap", "--rules", "--group", "--allowed-lateness-s",
                            "--checkpoint-interval-ms", "--out-of-orderness-ms", "--idleness-ms", "--parallelism",
                            "--jobmanager", "--checkpoint-dir").contains(a)) {
                m.put(a, args[++i]);
            } else {
                throw new IllegalArgumentException("unknown or incomplete argument '" + a + "'\n" + usage());
            }
        }
        if (!m.containsKey("--lake") || !m.containsKey("--bootstrap")) {
            throw new IllegalArgumentException("--lake and --bootstrap are required\n" + usage());
        }
        if (!m.get("--bootstrap").matches("[^\\s:,]+:\\d{1,5}(,[^\\s:,]+:\\d{1,5})*")) {
            throw new IllegalArgumentException("--bootstrap must be HOST:PORT[,HOST:PORT...], got '"
                    + m.get("--bootstrap") + "'\n" + usage());
        }
        String jm = m.get("--jobmanager");
        if (jm != null && !jm.matches("[^\\s:,]+:\\d{1,5}")) {
            throw new IllegalArgumentException("--jobmanager must be HOST:PORT, got '" + jm + "'\n" + usage());
        }
        LabelRules rules = m.containsKey("--rules") ? LabelRules.load(Path.of(m.get("--rules"))) : LabelRules.defaults();
        if (m.containsKey("--allowed-lateness-s")) {
            long s = number(m, "--allowed-lateness-s", 0, 86_400);
            rules = LabelRules.parse("allowed_lateness_s: " + s + "\n", "--allowed-lateness-s", rules);
        }
        LabellingJobOptions.Builder b = LabellingJobOptions.builder(m.get("--lake"), m.get("--bootstrap")).rules(rules)
                .bounded(bounded);
        if (m.containsKey("--group")) {
            b.group(m.get("--group"));
        }
        if (m.containsKey("--checkpoint-interval-ms")) {
            b.checkpointInterval(Duration.ofMillis(number(m, "--checkpoint-interval-ms", 10, 3_600_000)));
        }
        if (m.containsKey("--out-of-orderness-ms")) {
            b.outOfOrderness(Duration.ofMillis(number(m, "--out-of-orderness-ms", 0, 3_600_000)));
        }
        if (m.containsKey("--idleness-ms")) {
            b.idleness(Duration.ofMillis(number(m, "--idleness-ms", 0, 3_600_000)));
        }
        if (m.containsKey("--checkpoint-dir")) {
            b.checkpointDir(m.get("--checkpoint-dir"));
        }
        if (m.containsKey("--parallelism")) {
            b.parallelism((int) number(m, "--parallelism", 1, 1024));
        }
        return new Parsed(b.build(), jm);
    }

    /**
     * A parsed command line.
     *
     * @param options the job's options
     * @param jobManager {@code HOST:PORT} of a cluster's REST endpoint, or null for the context environment
     */
    public record Parsed(LabellingJobOptions options, String jobManager) {
        /** @return the environment to run in: the remote cluster's, or the context's */
        public StreamExecutionEnvironment environment() {
            if (jobManager == null) {
                return StreamExecutionEnvironment.getExecutionEnvironment();
            }
            int colon = jobManager.lastIndexOf(':');
            return StreamExecutionEnvironment.createRemoteEnvironment(jobManager.substring(0, colon),
                    Integer.parseInt(jobManager.substring(colon + 1)));
        }
    }

    private static long number(Map<String, String> m, String key, long min, long max) {
        try {
            long v = Long.parseLong(m.get(key));
            if (v < min || v > max) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer in [" + min + ", " + max + "], got '"
                    + m.get(key) + "'\n" + usage());
        }
    }

    /**
     * Runs the job until it finishes ({@code --bounded}) or is cancelled.
     *
     * @param args see {@link #usage()}
     * @throws IllegalArgumentException on wrong usage (with the usage text)
     */
    public static void main(String[] args) throws Exception {
        Parsed p = parse(args);
        StreamExecutionEnvironment env = p.environment();
        build(env, p.options());
        var result = env.execute(jobName(p.options()));
        LabellerStats s = stats(result.getAllAccumulatorResults());
        System.out.printf(java.util.Locale.ROOT, "labelled %d episodes from %d records in %d lake commits; dead letters:"
                + " %d malformed, %d unknown episode, %d late; %d replays skipped%n", s.labels(), s.records(), s.commits(),
                s.malformed(), s.unknownEpisode(), s.late(), s.replayed());
    }
}
