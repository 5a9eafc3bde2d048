package io.flywheel.cli;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
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

import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.EpisodeEnricher;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.OnnxEmbedder;
import io.flywheel.enrich.model.Preprocessing;
import io.flywheel.ingest.StagedRows;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.EmbeddingModel;
import io.flywheel.lake.Lake;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code flywheel spark enrich LAKE}: the enrichment of {@code flywheel enrich}, computed on Spark. The lake side
 * selects the episodes {@code flywheel enrich} would enrich ({@link EnrichJob#pending}) and stages them with their
 * frames rows as JSON lines; the job ({@code io.flywheel.spark.SparkEnrichMain}, one task per episode) runs the same
 * computation ({@link EpisodeEnricher}, same options, the model file shipped to the executors); the enriched rows
 * come back staged and are committed here with the commit of {@code flywheel enrich} ({@link EnrichJob#commit}), in
 * ONE lake transaction. An episode whose task fails is named with the reason and left out (exit code 1).
 */
@Command(name = "enrich", mixinStandardHelpOptions = true, description = "The enrichment of flywheel enrich (image"
        + " metrics, pHash, hot JPEG, gripper phase, embeddings with a model) computed on Spark, one task per episode;"
        + " the enriched rows are committed into the lake in ONE transaction with the commit of flywheel enrich. An"
        + " episode that cannot be enriched fails its own task only: it is named with the reason and not committed,"
        + " and the exit code is 1. Episodes enriched already and only missing the model's embeddings are enriched"
        + " again in full (same values).")
final class SparkEnrichCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    LakeLocation lake;

    @Option(names = "--master", paramLabel = "URL", defaultValue = "local[2]", description = "Spark master: local[N],"
            + " local[*] or spark://HOST:PORT (default: ${DEFAULT-VALUE}); on a cluster --staging and the raw files"
            + " must be paths every executor sees")
    String master;

    @Option(names = "--staging", paramLabel = "DIR", description = "folder for the staged work and enriched rows"
            + " (default: a new folder in the temporary directory, removed at the end; a given folder is kept)")
    Path staging;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "0",
            description = "tasks (0: one per episode, the default)")
    int partitions;

    @Option(names = "--conf", paramLabel = "KEY=VALUE", description = "a Spark setting for the job, repeatable")
    List<String> conf = new ArrayList<>();

    @Option(names = "--stride", paramLabel = "K|keyframes", defaultValue = "5",
            description = "frames to embed: every K-th plus phase changes, or keyframes only (default ${DEFAULT-VALUE})")
    String stride;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "1",
            description = "decode threads per task (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--blur-threshold", paramLabel = "VAR", defaultValue = "12",
            description = "as flywheel enrich (default ${DEFAULT-VALUE})")
    double blur;

    @Option(names = "--blur-ratio", paramLabel = "R", defaultValue = "0.35",
            description = "as flywheel enrich (default ${DEFAULT-VALUE})")
    double blurRatio;

    @Option(names = "--static-threshold", paramLabel = "LEVELS", defaultValue = "1.0",
            description = "as flywheel enrich (default ${DEFAULT-VALUE})")
    double staticThreshold;

    @Option(names = "--hot-size", paramLabel = "PX", defaultValue = "320",
            description = "longest side of the hot JPEG copy (default ${DEFAULT-VALUE})")
    int hotSize;

    @Option(names = "--hot-quality", paramLabel = "Q", defaultValue = "90",
            description = "JPEG quality of the hot copy, 1-100 (default ${DEFAULT-VALUE})")
    int hotQuality;

    @Option(names = "--model", paramLabel = "NAME|FILE|none", defaultValue = "mobilenet_v2",
            description = "embedding model, as flywheel enrich: a built-in, an ONNX file, or none"
                    + " (default ${DEFAULT-VALUE})")
    String model;

    @Option(names = "--preprocessing", paramLabel = "unit|clip", defaultValue = "unit",
            description = "input scaling of an ONNX file given by --model (default ${DEFAULT-VALUE})")
    String preprocessing;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() throws IOException, InterruptedException {
        SparkJob.checkMaster(spec, master);
        for (String kv : conf) {
            Usage.require(spec, kv.indexOf('=') > 0, "--conf: expected KEY=VALUE, got '" + kv + "'");
        }
        Usage.atLeast(spec, "--partitions", partitions, 0);
        Usage.atLeast(spec, "--threads", threads, 1);
        Usage.atLeast(spec, "--blur-threshold", blur, 0.0);
        Usage.require(spec, blurRatio >= 0 && blurRatio < 1, "--blur-ratio must be in [0, 1), got " + blurRatio);
        Usage.atLeast(spec, "--static-threshold", staticThreshold, 0.0);
        Usage.atLeast(spec, "--hot-size", hotSize, 8);
        Usage.inRange(spec, "--hot-quality", hotQuality, 1, 100);
        Stride s = Usage.check(spec, "--stride", () -> Stride.parse(stride));
        Usage.check(spec, null, () -> EnrichOptions.builder().stride(s).threads(threads).blurThreshold(blur)
                .blurRatio(blurRatio).staticThreshold(staticThreshold)
                .image(FrameAnalyzer.Options.defaults().withHot(hotSize, hotQuality)).build());
        boolean onnxFile = !"none".equals(model) && (model.endsWith(".onnx") || Files.isRegularFile(Path.of(model)));
        BuiltinModel builtin = "none".equals(model) || onnxFile ? null
                : Usage.check(spec, "--model", () -> BuiltinModel.byName(model));
        Preprocessing pre = Usage.check(spec, "--preprocessing", () -> Preprocessing.byName(preprocessing));
        Usage.require(spec, onnxFile || !spec.commandLine().getParseResult().hasMatchedOption("--preprocessing"),
                "--preprocessing applies to an ONNX file given by --model, not to " + model);
        PrintWriter err = spec.commandLine().getErr();
        Path modelFile = null;
        OnnxEmbedder.Builder eb = null;
        if (onnxFile) {
            modelFile = Path.of(model).toAbsolutePath();
            eb = OnnxEmbedder.builder(modelFile).preprocessing(pre);
        } else if (builtin != null) {
            modelFile = EnrichCommand.pulled(builtin, "spark enrich", err).find(builtin).orElseThrow();
            pre = Preprocessing.UNIT;
            eb = OnnxEmbedder.builder(modelFile).modelId(builtin.id()).preprocessing(pre);
        }

        Path dir = staging != null ? Files.createDirectories(staging.toAbsolutePath())
                : Files.createTempDirectory("flywheel-spark-enrich");
        long t0 = System.nanoTime();
        try (Lake l = lake.open()) {
            EmbeddingModel registered = null;
            String modelId = null;
            if (eb != null) {
                try (OnnxEmbedder e = eb.build()) {
                    modelId = e.modelId();
                    registered = l.registerModel(e.modelId(), e.dimension(), e.sha256());
                }
            }
            EnrichJob.Pending pending = EnrichJob.pending(l, registered);
            List<EpisodeRow> work = pending.all();
            Map<String, List<FrameRow>> frames = EnrichJob.frames(l, work);
            try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("work.jsonl"), StandardCharsets.UTF_8)) {
                for (EpisodeRow e : work) {
                    List<String> docs = new ArrayList<>();
                    docs.add(StagedRows.encode(e));
                    frames.get(e.episodeId()).forEach(f -> docs.add(StagedRows.encode(f)));
                    w.write(Json.MAPPER.writeValueAsString(docs));
                    w.newLine();
                }
            }
            frames = null;
            long nowNs = System.currentTimeMillis() * 1_000_000L;
            List<String> args = new ArrayList<>(List.of("--master", master, "--staging", dir.toString(),
                    "--now-ns", String.valueOf(nowNs), "--partitions", String.valueOf(partitions),
                    "--stride", stride, "--threads", String.valueOf(threads),
                    "--blur-threshold", String.valueOf(blur), "--blur-ratio", String.valueOf(blurRatio),
                    "--static-threshold", String.valueOf(staticThreshold), "--hot-size", String.valueOf(hotSize),
                    "--hot-quality", String.valueOf(hotQuality)));
            if (registered != null) {
                args.addAll(List.of("--model", modelFile.toString(), "--model-id", modelId, "--model-key",
                        registered.id(), "--preprocessing", pre.name().toLowerCase(Locale.ROOT)));
            }
            for (String kv : conf) {
                args.addAll(List.of("--conf", kv));
            }
            long j0 = System.nanoTime();
            int rc = 0;
            if (work.isEmpty()) { // nothing to enrich: no Spark job to start
                Files.writeString(dir.resolve("episodes.jsonl"), "");
                Files.writeString(dir.resolve("frames.jsonl"), "");
                Files.writeString(dir.resolve("summary.json"), "{\"failed\": []}");
            } else {
                rc = SparkJob.run("io.flywheel.spark.SparkEnrichMain", args, System.err);
            }
            double jobSecs = (System.nanoTime() - j0) / 1e9;
            if (rc != 0 || !Files.isRegularFile(dir.resolve("summary.json"))) {
                throw new io.flywheel.error.StorageUnavailableException("the Spark job failed (exit " + rc
                        + "; its output is above); nothing was committed");
            }
            JsonNode summary = Json.MAPPER.readTree(dir.resolve("summary.json").toFile());
            List<EpisodeRow> episodes = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("episodes.jsonl"), StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    episodes.add(StagedRows.episode(line));
                }
            }
            List<FrameRow> enriched = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("frames.jsonl"), StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    enriched.add(StagedRows.frame(line));
                }
            }
            EpisodeEnricher.Tally tally = new EpisodeEnricher.Tally(summary.path("frames").asLong(),
                    summary.path("images").asLong(), summary.path("decode_errors").asLong(),
                    summary.path("blurry").asLong(), summary.path("static").asLong(),
                    summary.path("embedded").asLong());
            long c0 = System.nanoTime();
            CommitResult commit = episodes.isEmpty() ? null
                    : EnrichJob.commit(l, registered, new EpisodeEnricher.Output(enriched, episodes, tally));
            if (registered != null && commit != null) {
                l.refreshVectorIndex(registered, VectorIndexOptions.builder().build());
            }
            double commitSecs = (System.nanoTime() - c0) / 1e9;
            List<Map<String, String>> failed = new ArrayList<>();
            for (JsonNode f : summary.path("failed")) {
                Map<String, String> m = new LinkedHashMap<>();
                m.put("episode", f.path("episode").asText());
                m.put("reason", f.path("reason").asText());
                failed.add(m);
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ok", failed.isEmpty());
                m.put("master", master);
                m.put("episodes_pending", work.size());
                m.put("episodes_already_enriched", pending.total() - work.size());
                m.put("episodes_enriched", episodes.size());
                m.put("frames", tally.frames());
                m.put("images", tally.images());
                m.put("decode_errors", tally.decodeErrors());
                m.put("blurry", tally.blurry());
                m.put("static", tally.staticImages());
                m.put("embedded", tally.embedded());
                m.put("embedding_model", modelId);
                m.put("embedding_column", registered == null ? null : registered.column());
                m.put("lake_seq", commit == null ? null : commit.snapshot().seq());
                m.put("failed", failed);
                m.put("job_seconds", jobSecs);
                m.put("commit_seconds", commitSecs);
                m.put("seconds", secs);
                Json.print(System.out, m);
            } else {
                System.out.printf(Locale.ROOT, "spark enrich on %s: %d episode(s) enriched (%d frames, %d images, %d"
                                + " decode errors, %d blurry, %d static, %d embedded, %s)%s; %d already enriched; %d"
                                + " failed; job %.1f s, commit %.1f s%n", master, episodes.size(), tally.frames(),
                        tally.images(), tally.decodeErrors(), tally.blurry(), tally.staticImages(), tally.embedded(),
                        modelId == null ? "no model" : modelId,
                        commit == null ? "" : " in one lake commit (#" + commit.snapshot().seq() + ")",
                        pending.total() - work.size(), failed.size(), jobSecs, commitSecs);
                for (Map<String, String> f : failed) {
                    System.out.println("  failed " + f.get("episode") + ": " + f.get("reason"));
                }
            }
            return failed.isEmpty() ? 0 : 1;
        } finally {
            if (staging == null) {
                deleteTree(dir);
            }
        }
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
