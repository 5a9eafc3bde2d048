package io.flywheel.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.StagedRows;
import io.flywheel.lake.Lake;
import io.flywheel.lake.StagedDataset;
import io.flywheel.rows.RecordingRows;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel spark ingest}: batch stages on Apache Spark, committed into the lake in one transaction. */
@Command(name = "spark", mixinStandardHelpOptions = true, description = "Batch stages on Apache Spark (local mode or"
        + " a cluster): the job runs in its own JVM and stages its rows as Lance datasets; this process commits them"
        + " into the lake in one transaction.", subcommands = {SparkCommand.Ingest.class, SparkDedupCommand.class,
        SparkEnrichCommand.class})
final class SparkCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec);
    }

    @Command(name = "ingest", mixinStandardHelpOptions = true, description = "Ingest recordings on Spark, one task"
            + " per recording, with the readers, alignment options and quality rules of flywheel ingest; inputs may be"
            + " s3://bucket/prefix (S3 settings as for an s3:// lake: --endpoint, --region, AWS_* environment); the rows of every recording read are committed into the lake in ONE transaction (same"
            + " content as in the lake is skipped). A recording that cannot be read fails its own task only: it is"
            + " named with the reason, leaves no rows, the others are committed, and the exit code is 1.")
    static final class Ingest implements Callable<Integer> {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "INPUT", description = "files or folders, or"
                + " s3://bucket/prefix")
        List<String> inputs;

        @Option(names = "--master", paramLabel = "URL", defaultValue = "local[2]", description = "Spark master:"
                + " local[N], local[*] or spark://HOST:PORT (default: ${DEFAULT-VALUE}); on a cluster the inputs and"
                + " --staging must be paths every executor sees")
        String master;

        @Option(names = "--staging", paramLabel = "DIR", description = "folder for the job's staging datasets"
                + " (default: a new folder in the temporary directory); removed after the commit")
        Path staging;

        @Option(names = "--keep-staging", description = "leave the staging datasets after the commit")
        boolean keepStaging;

        @Option(names = "--profile", paramLabel = "YAML", description = "robot profile (default: roles detected)")
        Path profile;

        @Option(names = "--robot", paramLabel = "ID", description = "robot id for recordings that do not name one")
        String robot;

        @Option(names = "--rules", paramLabel = "YAML", description = "quality rules (default: the built-in set)")
        Path rules;

        @Option(names = "--master-rate", paramLabel = "HZ", description = "as flywheel ingest: a fixed-rate master"
                + " clock instead of the master camera")
        Double masterRate;

        @Option(names = "--policy", paramLabel = "TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]", description = "as"
                + " flywheel ingest: one stream's alignment policy (repeatable)")
        List<String> policies;

        @Option(names = "--on-miss", paramLabel = "flag|drop", description = "as flywheel ingest: what a frame"
                + " without a message within tolerance gets (default: flag)")
        String onMiss;

        @Option(names = "--timeline", paramLabel = "auto|stamps|log_time", description = "as flywheel ingest")
        String timeline;

        @Option(names = "--allow-missing-master", description = "as flywheel ingest")
        boolean allowMissingMaster;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws Exception {
            SparkJob.checkMaster(spec, master);
            // the alignment options are checked here as flywheel ingest checks them: a wrong one is a usage error
            IngestJob.AlignConfig align = IngestJob.AlignConfig.defaults();
            if (onMiss != null) {
                align = align.withOnMiss(Usage.check(spec, null,
                        () -> IngestJob.AlignConfig.parseMiss("--on-miss", onMiss)));
            }
            if (masterRate != null) {
                Usage.check(spec, "--master-rate", () -> io.flywheel.align.MasterClock.fixedRate(masterRate));
            }
            for (String p : policies == null ? List.<String>of() : policies) {
                IngestJob.AlignConfig before = align;
                Usage.check(spec, null, () -> before.withPolicySpec(p));
            }
            if (timeline != null) {
                Usage.check(spec, "--timeline", () -> io.flywheel.align.StreamTimeline.parse(timeline));
            }
            PrintStream err = System.err;
            boolean json = jsonOutput.enabled();
            try (Lake l = lake.open()) {
                Path dir = staging != null ? staging.toAbsolutePath()
                        : Files.createTempDirectory("flywheel-spark-staging");
                List<String> args = new ArrayList<>(List.of("--master", master, "--staging", dir.toString()));
                if (robot != null) {
                    args.addAll(List.of("--robot", robot));
                }
                if (profile != null) {
                    args.addAll(List.of("--profile", profile.toAbsolutePath().toString()));
                }
                if (rules != null) {
                    args.addAll(List.of("--rules", rules.toAbsolutePath().toString()));
                }
                for (String p : policies == null ? List.<String>of() : policies) {
                    args.addAll(List.of("--policy", p));
                }
                if (onMiss != null) {
                    args.addAll(List.of("--on-miss", onMiss));
                }
                if (masterRate != null) {
                    args.addAll(List.of("--master-rate", Double.toString(masterRate)));
                }
                if (timeline != null) {
                    args.addAll(List.of("--timeline", timeline));
                }
                if (allowMissingMaster) {
                    args.add("--allow-missing-master");
                }
                Map<String, String> env = new LinkedHashMap<>();
                if (inputs.stream().anyMatch(i -> i.startsWith("s3://"))) {
                    // the S3 settings of an s3:// lake, for the inputs; the credentials go by the environment only
                    Lake.Options o = lake.options();
                    Map<String, String> s3 = io.flywheel.lake.StorageConfig.resolve(o.storage(),
                            o.environment().get("FLYWHEEL_CONFIG") == null ? io.flywheel.lake.StorageConfig.none()
                                    : io.flywheel.lake.StorageConfig.fromYaml(Path.of(o.environment().get("FLYWHEEL_CONFIG"))),
                            io.flywheel.lake.StorageConfig.fromEnvironment(o.environment())).options();
                    if (s3.get(io.flywheel.lake.StorageConfig.ENDPOINT) != null) {
                        args.addAll(List.of("--s3-endpoint", s3.get(io.flywheel.lake.StorageConfig.ENDPOINT)));
                    }
                    if (s3.get(io.flywheel.lake.StorageConfig.REGION) != null) {
                        args.addAll(List.of("--s3-region", s3.get(io.flywheel.lake.StorageConfig.REGION)));
                    }
                    if (s3.get(io.flywheel.lake.StorageConfig.ACCESS_KEY_ID) != null) {
                        env.put("AWS_ACCESS_KEY_ID", s3.get(io.flywheel.lake.StorageConfig.ACCESS_KEY_ID));
                    }
                    if (s3.get(io.flywheel.lake.StorageConfig.SECRET_ACCESS_KEY) != null) {
                        env.put("AWS_SECRET_ACCESS_KEY", s3.get(io.flywheel.lake.StorageConfig.SECRET_ACCESS_KEY));
                    }
                }
                for (String p : inputs) {
                    args.add(p.startsWith("s3://") ? p : Path.of(p).toAbsolutePath().toString());
                }
                long t0 = System.nanoTime();
                int rc = SparkJob.run("io.flywheel.spark.SparkIngestMain", args, err, env);
                double jobSecs = (System.nanoTime() - t0) / 1e9;
                Path summaryFile = dir.resolve("summary.json");
                if (rc != 0 || !Files.isRegularFile(summaryFile)) {
                    throw new io.flywheel.error.StorageUnavailableException("the Spark job failed (exit " + rc
                            + "; its output is above); nothing was committed" + (staging == null ? "" : ", staging"
                            + " folder " + dir + " left as it is"));
                }
                JsonNode summary = Json.MAPPER.readTree(summaryFile.toFile());
                long t1 = System.nanoTime();
                List<RecordingRows> recs = StagedRows.assemble(staged(dir, "raw_files.lance"),
                        staged(dir, "episodes.lance"), staged(dir, "frames.lance"));
                Lake.RecordingsCommit c = l.commitRecordings(recs);
                double commitSecs = (System.nanoTime() - t1) / 1e9;
                if (!keepStaging) {
                    deleteTree(dir);
                }
                long episodes = 0;
                long frames = 0;
                java.util.Set<String> written = new java.util.HashSet<>(c.committed());
                for (RecordingRows r : recs) {
                    if (written.contains(r.recordingId())) {
                        episodes += r.episodes().size();
                        frames += r.frames().size();
                    }
                }
                List<Map<String, String>> failed = new ArrayList<>();
                for (JsonNode f : summary.path("failed")) {
                    Map<String, String> m = new LinkedHashMap<>();
                    m.put("input", f.path("input").asText());
                    m.put("message", f.path("message").asText());
                    m.put("kind", f.path("kind").asText());
                    failed.add(m);
                    err.println("flywheel spark ingest: " + m.get("message"));
                }
                if (json) {
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("ok", failed.isEmpty());
                    out.put("master", master);
                    out.put("recordings", summary.path("recordings").asInt());
                    out.put("committed", c.committed());
                    out.put("skipped", c.skipped());
                    out.put("episodes", episodes);
                    out.put("frames", frames);
                    out.put("commit", c.seq().isPresent() ? c.seq().getAsLong() : null);
                    out.put("failed", failed);
                    out.put("job_seconds", jobSecs);
                    out.put("commit_seconds", commitSecs);
                    Json.print(System.out, out);
                } else {
                    System.out.printf(Locale.ROOT, "spark ingest on %s: %d recording(s), %d committed (%d episode(s),"
                                    + " %d frame(s))%s; %d skipped as already in the lake; %d failed; job %.1f s,"
                                    + " commit %.1f s%n", master, summary.path("recordings").asInt(),
                            c.committed().size(), episodes, frames,
                            c.seq().isPresent() ? " in lake commit " + c.seq().getAsLong() : "", c.skipped().size(),
                            failed.size(), jobSecs, commitSecs);
                }
                return failed.isEmpty() ? 0 : 1;
            }
        }

        /** @return {@code {recording_id, row}} per staged row; none when the job staged no such rows */
        private static List<Object[]> staged(Path dir, String name) {
            Path ds = dir.resolve(name);
            if (!Files.exists(ds)) {
                return List.of();
            }
            return StagedDataset.read(ds, List.of("recording_id", "row"));
        }

        private static void deleteTree(Path dir) throws IOException {
            if (!Files.exists(dir)) {
                return;
            }
            try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }
}
