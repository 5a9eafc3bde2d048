package io.flywheel.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.spark.sql.SparkSession;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The Spark dedup pair search as a program, for {@code spark-submit} or a child JVM of {@code flywheel spark dedup}:
 *
 * <pre>
 * SparkDedupMain --staging DIR [--master M] [--partitions N] [--conf KEY=VALUE]... [--frame-threshold BITS]
 *     [--episode-threshold D --dim N --rows N]
 * </pre>
 *
 * <p>Reads {@code DIR/hashes.bin} when {@code --frame-threshold} is given and {@code DIR/vectors.bin} when
 * {@code --episode-threshold} is, writes {@code frame_pairs.bin}, {@code episode_pairs.bin} ({@link SparkDedup}) and
 * {@code summary.json} (pairs found, seconds). Exit code 0 when the job ran, 1 when it could not, 2 for wrong usage.
 */
public final class SparkDedupMain {
    private SparkDedupMain() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String master = null;
        Path staging = null;
        Integer frameThreshold = null;
        Double episodeThreshold = null;
        int dim = -1;
        long rows = -1;
        int partitions = 8;
        Map<String, String> conf = new LinkedHashMap<>();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--master" -> master = args[++i];
                    case "--staging" -> staging = Path.of(args[++i]);
                    case "--frame-threshold" -> frameThreshold = Integer.parseInt(args[++i]);
                    case "--episode-threshold" -> episodeThreshold = Double.parseDouble(args[++i]);
                    case "--dim" -> dim = Integer.parseInt(args[++i]);
                    case "--rows" -> rows = Long.parseLong(args[++i]);
                    case "--partitions" -> partitions = Integer.parseInt(args[++i]);
                    case "--conf" -> {
                        String kv = args[++i];
                        int eq = kv.indexOf('=');
                        if (eq < 1) {
                            System.err.println("spark dedup: --conf expects KEY=VALUE, got '" + kv + "'");
                            return 2;
                        }
                        conf.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    default -> {
                        System.err.println("spark dedup: unknown option " + args[i]);
                        return 2;
                    }
                }
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            System.err.println("spark dedup: bad or missing option value (" + e.getMessage() + ")");
            return 2;
        }
        if (staging == null || (episodeThreshold != null && (dim < 1 || rows < 0)) || partitions < 1
                || (frameThreshold != null && (frameThreshold < 0 || frameThreshold > 63))) {
            System.err.println("usage: SparkDedupMain --staging DIR [--master M] [--partitions N] [--conf K=V]..."
                    + " [--frame-threshold 0..63] [--episode-threshold D --dim N --rows N]");
            return 2;
        }
        SparkSession.Builder b = SparkSession.builder().appName("flywheel spark dedup")
                .config("spark.ui.enabled", "false");
        if (master != null) {
            b.master(master);
        }
        conf.forEach(b::config);
        long t0 = System.nanoTime();
        try (SparkSession spark = b.getOrCreate()) {
            spark.sparkContext().setLogLevel("ERROR");
            Map<String, Object> summary = new LinkedHashMap<>();
            if (frameThreshold != null) {
                summary.put("frame_pairs", SparkDedup.framePairs(spark, staging.resolve("hashes.bin"), frameThreshold,
                        partitions, staging.resolve("frame_pairs.bin")));
            }
            if (episodeThreshold != null) {
                summary.put("episode_pairs", SparkDedup.episodePairs(spark, staging.resolve("vectors.bin"), dim, rows,
                        episodeThreshold, partitions, staging.resolve("episode_pairs.bin")));
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            summary.put("seconds", secs);
            Files.writeString(staging.resolve("summary.json"),
                    new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(summary));
            System.err.printf("spark dedup: %s in %.1f s%n", summary, secs);
            return 0;
        } catch (Exception e) {
            System.err.println("spark dedup: " + (e.getMessage() == null ? e.getClass().getName() : e.getMessage()));
            if (System.getenv("FLYWHEEL_DEBUG") != null) {
                e.printStackTrace();
            }
            return 1;
        }
    }
}
