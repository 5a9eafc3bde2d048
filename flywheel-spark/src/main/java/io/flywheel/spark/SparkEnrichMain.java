package io.flywheel.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.SparkSession;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.model.Preprocessing;

/**
 * The Spark enrich job as a program, for {@code spark-submit} or a child JVM of {@code flywheel spark enrich}:
 *
 * <pre>
 * SparkEnrichMain --staging DIR --now-ns NS [--master M] [--conf KEY=VALUE]... [--partitions N]
 *     [--model FILE.onnx --model-id ID --model-key KEY [--preprocessing unit|clip]] [--stride K|keyframes] [--threads N]
 *     [--blur-threshold V] [--blur-ratio R] [--static-threshold L] [--hot-size PX] [--hot-quality Q]
 * </pre>
 *
 * <p>Reads {@code DIR/work.jsonl}, writes {@code episodes.jsonl}, {@code frames.jsonl}, {@code failed.jsonl}
 * ({@link SparkEnrich}) and {@code summary.json} (counts, failed episodes with their reasons, seconds). Exit code 0
 * when the job ran (also with failed episodes: they are listed), 1 when it could not, 2 for wrong usage.
 */
public final class SparkEnrichMain {
    private SparkEnrichMain() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String master = null;
        Path staging = null;
        Path model = null;
        String modelKey = null;
        String modelId = null;
        String pre = "unit";
        String stride = "5";
        int threads = 1;
        double blur = 12;
        double blurRatio = 0.35;
        double staticThreshold = 1.0;
        int hotSize = 320;
        int hotQuality = 90;
        int partitions = 0;
        Long nowNs = null;
        Map<String, String> conf = new LinkedHashMap<>();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--master" -> master = args[++i];
                    case "--staging" -> staging = Path.of(args[++i]);
                    case "--model" -> model = Path.of(args[++i]);
                    case "--model-key" -> modelKey = args[++i];
                    case "--model-id" -> modelId = args[++i];
                    case "--preprocessing" -> pre = args[++i];
                    case "--stride" -> stride = args[++i];
                    case "--threads" -> threads = Integer.parseInt(args[++i]);
                    case "--blur-threshold" -> blur = Double.parseDouble(args[++i]);
                    case "--blur-ratio" -> blurRatio = Double.parseDouble(args[++i]);
                    case "--static-threshold" -> staticThreshold = Double.parseDouble(args[++i]);
                    case "--hot-size" -> hotSize = Integer.parseInt(args[++i]);
                    case "--hot-quality" -> hotQuality = Integer.parseInt(args[++i]);
                    case "--partitions" -> partitions = Integer.parseInt(args[++i]);
                    case "--now-ns" -> nowNs = Long.parseLong(args[++i]);
                    case "--conf" -> {
                        String kv = args[++i];
                        int eq = kv.indexOf('=');
                        if (eq < 1) {
                            System.err.println("spark enrich: --conf expects KEY=VALUE, got '" + kv + "'");
                            return 2;
                        }
                        conf.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    default -> {
                        System.err.println("spark enrich: unknown option " + args[i]);
                        return 2;
                    }
                }
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            System.err.println("spark enrich: bad or missing option value (" + e.getMessage() + ")");
            return 2;
        }
        SparkEnrich.Settings settings = new SparkEnrich.Settings(stride, threads, blur, blurRatio, staticThreshold,
                hotSize, hotQuality);
        Preprocessing preprocessing;
        try {
            settings.options();
            preprocessing = Preprocessing.byName(pre);
        } catch (IllegalArgumentException e) {
            System.err.println("spark enrich: " + e.getMessage());
            return 2;
        }
        if (staging == null || nowNs == null || (model == null) != (modelKey == null)
                || (model == null) != (modelId == null) || partitions < 0) {
            System.err.println("usage: SparkEnrichMain --staging DIR --now-ns NS [--master M] [--conf K=V]..."
                    + " [--partitions N] [--model FILE.onnx --model-id ID --model-key KEY"
                    + " [--preprocessing unit|clip]] [enrich options]");
            return 2;
        }
        SparkSession.Builder b = SparkSession.builder().appName("flywheel spark enrich")
                .config("spark.ui.enabled", "false");
        if (master != null) {
            b.master(master);
        }
        conf.forEach(b::config);
        long t0 = System.nanoTime();
        try (SparkSession spark = b.getOrCreate()) {
            spark.sparkContext().setLogLevel("ERROR");
            SparkEnrich.Result r = SparkEnrich.run(spark, staging, settings, model, modelId, modelKey, preprocessing, nowNs,
                    partitions);
            double secs = (System.nanoTime() - t0) / 1e9;
            Map<String, Object> summary = new LinkedHashMap<>();
            summary.put("episodes", r.episodes());
            summary.put("frames", r.frames());
            summary.put("images", r.images());
            summary.put("decode_errors", r.decodeErrors());
            summary.put("blurry", r.blurry());
            summary.put("static", r.staticImages());
            summary.put("embedded", r.embedded());
            List<Map<String, String>> failed = new ArrayList<>();
            r.failed().forEach((e, why) -> failed.add(Map.of("episode", e, "reason", why)));
            summary.put("failed", failed);
            summary.put("seconds", secs);
            Files.writeString(staging.resolve("summary.json"),
                    new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(summary));
            System.err.printf("spark enrich: %d episode(s), %d frame(s), %d failed in %.1f s%n", r.episodes(),
                    r.frames(), failed.size(), secs);
            return 0;
        } catch (Exception e) {
            System.err.println("spark enrich: " + (e.getMessage() == null ? e.getClass().getName() : e.getMessage()));
            if (System.getenv("FLYWHEEL_DEBUG") != null) {
                e.printStackTrace();
            }
            return 1;
        }
    }
}
