package io.flywheel.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;

import io.flywheel.error.ErrorKind;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RawFiles;
import io.flywheel.ingest.Sources;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.ingest.StagedRows;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * {@code flywheel spark ingest}, the Spark side: recordings become staging Lance datasets of ingest rows, one Spark
 * task per recording, each running the one-machine ingest ({@link IngestJob}: the same readers, alignment and quality
 * rules) on its recording.
 *
 * <p>The driver finds the recordings of the inputs ({@link IngestJob#discover}); the list is the job's input RDD, one
 * partition per recording. A task that cannot read its recording (truncated, corrupt, not a recording) gives a
 * failure (file, reason) and no rows; the job goes on. The rows are written with the lance-spark connector in Lance
 * file format 2.1 under the staging folder:
 *
 * <ul>
 *   <li>{@code raw_files.lance}: recording_id, uri, sha256, row (string each)</li>
 *   <li>{@code episodes.lance}: recording_id, episode_id, frame_count (int64), row</li>
 *   <li>{@code frames.lance}: recording_id, episode_id, frame_index (int32), timestamp_ns (int64, master clock, ns
 *       since the Unix epoch), row</li>
 * </ul>
 *
 * where {@code row} is the whole lake row as a {@link StagedRows} document. A dataset with no rows is not written.
 * Nothing here speaks to the lake: the lake side reads the staging datasets and commits them in one transaction.
 */
public final class SparkIngest {
    /** Format version of the staging datasets: lance-core 4.0 (the connector) writes it, 7.0 (the lake) reads it. */
    public static final String FILE_FORMAT_VERSION = "2.1";

    static final StructType RAW_FILES = new StructType()
            .add("recording_id", DataTypes.StringType, false)
            .add("uri", DataTypes.StringType, false)
            .add("sha256", DataTypes.StringType, false)
            .add("row", DataTypes.StringType, false);
    static final StructType EPISODES = new StructType()
            .add("recording_id", DataTypes.StringType, false)
            .add("episode_id", DataTypes.StringType, false)
            .add("frame_count", DataTypes.LongType, false)
            .add("row", DataTypes.StringType, false);
    static final StructType FRAMES = new StructType()
            .add("recording_id", DataTypes.StringType, false)
            .add("episode_id", DataTypes.StringType, false)
            .add("frame_index", DataTypes.IntegerType, false)
            .add("timestamp_ns", DataTypes.LongType, false)
            .add("row", DataTypes.StringType, false);

    /**
     * The job's settings.
     *
     * @param inputs files or folders of recordings (a folder is scanned as {@code flywheel ingest} scans it), or
     *     {@code s3://bucket/key} objects and prefixes ({@link S3Discovery})
     * @param staging the folder the staging datasets go to; must not hold any of them yet
     * @param robotId robot id for recordings that name none, or null
     * @param profile robot profile YAML, or null (roles detected); read by each task
     * @param rules quality rules YAML, or null for the defaults; read by each task
     * @param align the alignment options, as {@code flywheel ingest} takes them
     * @param s3 where {@code s3://} inputs are read from (credentials from each JVM's environment); null: AWS defaults
     */
    public record Options(List<String> inputs, Path staging, String robotId, Path profile, Path rules, Align align,
                          S3Store.Settings s3) {
        public Options {
            inputs = List.copyOf(inputs);
            Objects.requireNonNull(staging, "staging");
            align = align == null ? Align.DEFAULTS : align;
            s3 = s3 == null ? new S3Store.Settings(null, null) : s3;
        }

        /** Local inputs, default alignment. */
        public Options(List<Path> inputs, Path staging, String robotId, Path profile, Path rules) {
            this(inputs.stream().map(Path::toString).toList(), staging, robotId, profile, rules, null, null);
        }
    }

    /**
     * The alignment options of {@code flywheel ingest}, as given (each task parses them again).
     *
     * @param masterRateHz {@code --master-rate}: fixed master clock, Hz; null for the master camera
     * @param onMiss {@code --on-miss}: flag or drop; null for the role defaults
     * @param policies {@code --policy} specs, {@code TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]}
     * @param timeline {@code --timeline}: auto, stamps or log_time; null for auto
     * @param allowMissingMaster {@code --allow-missing-master} (implied by a master rate)
     */
    public record Align(Double masterRateHz, String onMiss, List<String> policies, String timeline,
                        boolean allowMissingMaster) implements java.io.Serializable {
        static final Align DEFAULTS = new Align(null, null, List.of(), null, false);

        public Align {
            policies = List.copyOf(policies);
        }

        /**
         * @return the settings as the one-machine ingest builds them
         * @throws IllegalArgumentException naming the option when one is malformed
         */
        public IngestJob.AlignConfig config() {
            IngestJob.AlignConfig a = IngestJob.AlignConfig.defaults().withMasterRate(masterRateHz)
                    .withOnMiss(onMiss == null ? null : IngestJob.AlignConfig.parseMiss("--on-miss", onMiss));
            for (String p : policies) {
                a = a.withPolicySpec(p);
            }
            return a;
        }

        void apply(IngestOptions.Builder ob) {
            if (timeline != null) {
                ob.timestampRule(io.flywheel.align.TimestampRule.builder()
                        .timeline(io.flywheel.align.StreamTimeline.parse(timeline)).build());
            }
            ob.allowMissingMaster(allowMissingMaster || masterRateHz != null); // a fixed-rate clock needs no master
        }
    }

    /**
     * What the job did.
     *
     * @param recordings recordings found
     * @param ingested recordings read into staged rows
     * @param episodes episode rows staged
     * @param frames frame rows staged
     * @param rawFiles raw_files rows staged
     * @param failed the recordings (and inputs) that could not be read, with the reason; none of them left rows
     * @param seconds wall time of the job, s
     */
    public record Summary(int recordings, int ingested, long episodes, long frames, long rawFiles,
                          List<TaskResult.Failure> failed, double seconds) {
        public Summary {
            failed = List.copyOf(failed);
        }
    }

    private SparkIngest() {}

    /**
     * Runs the job.
     *
     * @param spark the session (local or a cluster; the tasks read the recordings' paths, so on a cluster they must be
     *     on storage every executor sees)
     * @param o the settings
     * @return what was staged and what failed
     * @throws IOException when the staging folder cannot be made or a dataset cannot be written
     */
    public static Summary run(SparkSession spark, Options o) throws IOException {
        long t0 = System.nanoTime();
        for (String name : List.of("raw_files.lance", "episodes.lance", "frames.lance")) {
            if (Files.exists(o.staging().resolve(name))) {
                throw new io.flywheel.error.ConflictException("staging dataset " + o.staging().resolve(name)
                        + " exists already; give an empty staging folder");
            }
        }
        Files.createDirectories(o.staging());
        IngestJob.AlignConfig alignConfig = o.align().config(); // a malformed option fails here, before any task
        List<Path> local = o.inputs().stream().filter(i -> !i.startsWith("s3://")).map(Path::of).toList();
        List<String> remote = o.inputs().stream().filter(i -> i.startsWith("s3://")).toList();
        List<TaskResult.Failure> failed = new ArrayList<>();
        List<RecordingTask> tasks = new ArrayList<>();
        if (!local.isEmpty()) {
            IngestJob.Discovery found = IngestJob.discover(local);
            for (IngestJob.Failure f : found.failed()) {
                failed.add(new TaskResult.Failure(f.input(), f.message(), f.kind()));
            }
            found.sources().stream().map(RecordingTask::of).forEach(tasks::add);
        }
        if (!remote.isEmpty()) {
            S3Discovery.Found found = S3Discovery.discover(S3Store.of(o.s3()), remote);
            failed.addAll(found.failed());
            tasks.addAll(found.tasks());
        }
        if (tasks.isEmpty()) {
            return new Summary(0, 0, 0, 0, 0, failed, (System.nanoTime() - t0) / 1e9);
        }
        String robot = o.robotId();
        String profile = o.profile() == null ? null : o.profile().toAbsolutePath().toString();
        String rules = o.rules() == null ? null : o.rules().toAbsolutePath().toString();
        Align align = o.align();
        S3Store.Settings s3 = o.s3();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<TaskResult> results = jsc.parallelize(tasks, tasks.size())
                .map(t -> ingest(t, robot, profile, rules, align, s3))
                .persist(StorageLevel.MEMORY_AND_DISK());
        try {
            // the summaries first: this runs the tasks once; the writes below read the persisted results
            List<TaskResult> summaries = results.map(r -> new TaskResult(r.input(), r.recordingId(), r.format(),
                    List.of(), List.of(), List.of(), r.failure(), r.topics())).collect();
            // every --policy / profile topic must be in some recording read, as in the one-machine ingest
            java.util.Set<String> topics = new java.util.TreeSet<>();
            summaries.forEach(r -> topics.addAll(r.topics()));
            if (summaries.stream().anyMatch(r -> r.failure() == null)) {
                IngestJob.checkPolicyTopics(alignConfig, profile == null ? null : RobotProfile.load(Path.of(profile)),
                        topics);
            }
            long[] counts = results.map(r -> new long[] {r.rawFiles().size(), r.episodes().size(), r.frames().size()})
                    .reduce((a, b) -> new long[] {a[0] + b[0], a[1] + b[1], a[2] + b[2]});
            int ingested = 0;
            for (TaskResult r : summaries) {
                if (r.failure() != null) {
                    failed.add(r.failure());
                } else {
                    ingested++;
                }
            }
            write(spark, results.flatMap(r -> r.rawFiles().stream().map(f -> RowFactory.create(f.recordingId(),
                    f.uri(), f.sha256(), f.json())).iterator()), RAW_FILES, counts[0], o.staging().resolve("raw_files.lance"));
            write(spark, results.flatMap(r -> r.episodes().stream().map(e -> RowFactory.create(e.recordingId(),
                    e.episodeId(), e.frameCount(), e.json())).iterator()), EPISODES, counts[1],
                    o.staging().resolve("episodes.lance"));
            write(spark, results.flatMap(r -> r.frames().stream().map(f -> RowFactory.create(f.recordingId(),
                    f.episodeId(), f.frameIndex(), f.timestampNs(), f.json())).iterator()), FRAMES, counts[2],
                    o.staging().resolve("frames.lance"));
            return new Summary(tasks.size(), ingested, counts[1], counts[2], counts[0], failed,
                    (System.nanoTime() - t0) / 1e9);
        } finally {
            results.unpersist(false);
        }
    }

    private static void write(SparkSession spark, JavaRDD<Row> rows, StructType schema, long count, Path to) {
        if (count == 0) {
            return;
        }
        spark.createDataFrame(rows, schema).write().format("lance")
                .option("file_format_version", FILE_FORMAT_VERSION)
                .mode(SaveMode.ErrorIfExists)
                .save(to.toAbsolutePath().toString());
    }

    /**
     * The task: one recording through the one-machine ingest, its rows kept as staged documents. Any failure of the
     * recording, expected (a damaged file) or not, becomes the task's failure, with no rows.
     */
    static TaskResult ingest(RecordingTask task, String robotId, String profile, String rules, Align align,
                             S3Store.Settings s3) {
        Path mirror = null;
        try {
            IngestOptions.Builder ob = IngestOptions.builder();
            align.apply(ob);
            Sources.Source source;
            if (task.remote()) {
                // the objects that need a local file are copied first; the others are read by byte range
                mirror = Files.createTempDirectory("flywheel-s3-task");
                S3Store store = S3Store.of(s3);
                RawFiles raw = RawFiles.mirror(mirror, "s3://", store::open);
                for (String uri : task.copies()) {
                    store.download(uri, raw.pathOf(uri));
                }
                ob.rawFiles(raw);
                source = task.source(raw);
            } else {
                source = task.source();
            }
            if (profile != null) {
                ob.profile(RobotProfile.load(Path.of(profile)));
            }
            if (robotId != null) {
                ob.robotId(robotId);
            }
            RuleSet ruleSet = rules == null ? RuleSet.defaults() : RuleSet.load(Path.of(rules));
            List<RecordingRows> got = new ArrayList<>();
            RowSink sink = new RowSink() {
                @Override
                public Set<String> committedRawFiles() {
                    return Set.of(); // the lake side skips what it has; the task knows no lake
                }

                @Override
                public OptionalLong commit(RecordingRows rows) {
                    got.add(rows);
                    return OptionalLong.of(got.size());
                }
            };
            IngestJob.Result r = IngestJob.run(sink, IngestJob.Discovery.of(source),
                    ob.build(), align.config(), ruleSet, line -> { }, false);
            if (!r.failed().isEmpty()) {
                IngestJob.Failure f = r.failed().get(0);
                return TaskResult.failed(task.name(), task.format(), new TaskResult.Failure(task.name(),
                        unmirror(f.message(), mirror), f.kind()));
            }
            java.util.Set<String> topics = new java.util.TreeSet<>();
            List<TaskResult.StagedRawFile> raw = new ArrayList<>();
            List<TaskResult.StagedEpisode> eps = new ArrayList<>();
            List<TaskResult.StagedFrame> frames = new ArrayList<>();
            String id = null;
            for (RecordingRows rows : got) {
                id = rows.recordingId();
                for (RawFileRow f : rows.rawFiles()) {
                    raw.add(new TaskResult.StagedRawFile(id, f.uri(), f.sha256(), StagedRows.encode(f)));
                    if (f.topicsJson() != null) {
                        TOPICS.readTree(f.topicsJson()).fieldNames().forEachRemaining(topics::add);
                    }
                }
                for (EpisodeRow e : rows.episodes()) {
                    eps.add(new TaskResult.StagedEpisode(id, e.episodeId(), e.frameCount() == null ? 0 : e.frameCount(),
                            StagedRows.encode(e)));
                }
                for (FrameRow f : rows.frames()) {
                    frames.add(new TaskResult.StagedFrame(id, f.episodeId(), f.frameIndex(), f.timestampNs(),
                            StagedRows.encode(f)));
                }
            }
            return new TaskResult(task.name(), id, task.format(), raw, eps, frames, null, List.copyOf(topics));
        } catch (IOException | RuntimeException | LinkageError e) {
            String msg = unmirror(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(), mirror);
            if (!msg.contains(Path.of(task.name()).getFileName().toString())) {
                msg = task.name() + ": " + msg;
            }
            return TaskResult.failed(task.name(), task.format(), new TaskResult.Failure(task.name(), msg,
                    ErrorKind.of(e).id()));
        } finally {
            if (mirror != null) {
                deleteTree(mirror);
            }
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper TOPICS = new com.fasterxml.jackson.databind.ObjectMapper();

    /** @return the message with the task's local copies named by their s3:// URIs */
    private static String unmirror(String msg, Path mirror) {
        return mirror == null ? msg : msg.replace(mirror.toAbsolutePath().normalize() + "/", "s3://");
    }

    private static void deleteTree(Path dir) {
        try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a temporary folder left behind; the task's result stands
        }
    }

    /** @return the summary as the JSON object the lake side reads ({@code summary.json} of the staging folder) */
    static Map<String, Object> json(Summary s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("recordings", s.recordings());
        m.put("ingested", s.ingested());
        m.put("episodes", s.episodes());
        m.put("frames", s.frames());
        m.put("raw_files", s.rawFiles());
        m.put("file_format_version", FILE_FORMAT_VERSION);
        List<Map<String, String>> failed = new ArrayList<>();
        for (TaskResult.Failure f : s.failed()) {
            Map<String, String> e = new LinkedHashMap<>();
            e.put("input", f.input());
            e.put("message", f.message());
            e.put("kind", f.kind());
            failed.add(e);
        }
        m.put("failed", failed);
        m.put("seconds", s.seconds());
        return m;
    }
}
