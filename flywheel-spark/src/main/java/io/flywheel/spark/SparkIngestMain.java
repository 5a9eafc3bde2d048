package io.flywheel.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.SparkSession;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The Spark ingest job as a program, for {@code spark-submit} or a child JVM of {@code flywheel spark ingest}:
 *
 * <pre>
 * SparkIngestMain --staging DIR [--master local[2]|spark://HOST:7077] [--robot ID] [--profile FILE] [--rules FILE]
 *     [--policy TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]]... [--on-miss flag|drop] [--master-rate HZ]
 *     [--timeline auto|stamps|log_time] [--allow-missing-master] [--s3-endpoint URL] [--s3-region REGION] PATH|s3://...
 * </pre>
 *
 * <p>The alignment options mean what they mean for {@code flywheel ingest}. {@code s3://bucket/prefix} inputs are read
 * from the endpoint given (default AWS), with the credentials of each JVM's environment ({@code AWS_ACCESS_KEY_ID},
 * {@code AWS_SECRET_ACCESS_KEY}).
 *
 * <p>Writes the staging datasets ({@link SparkIngest}) and {@code DIR/summary.json} (recordings, rows staged, and the
 * failed recordings with file, reason and kind). Without {@code --master} the master comes from {@code spark-submit}.
 * Exit code 0 when the job ran (failed recordings are listed in the summary, not an error), 1 when it could not run
 * (nothing usable is staged then), 2 for wrong usage.
 */
public final class SparkIngestMain {
    private SparkIngestMain() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String master = null;
        Path staging = null;
        String robot = null;
        Path profile = null;
        Path rules = null;
        List<String> inputs = new ArrayList<>();
        List<String> policies = new ArrayList<>();
        String onMiss = null;
        Double masterRate = null;
        String timeline = null;
        boolean allowMissingMaster = false;
        String s3Endpoint = null;
        String s3Region = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--master" -> master = args[++i];
                    case "--staging" -> staging = Path.of(args[++i]);
                    case "--robot" -> robot = args[++i];
                    case "--profile" -> profile = Path.of(args[++i]);
                    case "--rules" -> rules = Path.of(args[++i]);
                    case "--policy" -> policies.add(args[++i]);
                    case "--on-miss" -> onMiss = args[++i];
                    case "--master-rate" -> masterRate = Double.valueOf(args[++i]);
                    case "--timeline" -> timeline = args[++i];
                    case "--allow-missing-master" -> allowMissingMaster = true;
                    case "--s3-endpoint" -> s3Endpoint = args[++i];
                    case "--s3-region" -> s3Region = args[++i];
                    default -> {
                        if (args[i].startsWith("--")) {
                            System.err.println("spark ingest: unknown option " + args[i]);
                            return 2;
                        }
                        inputs.add(args[i]);
                    }
                }
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            System.err.println("spark ingest: option " + args[args.length - 1] + " needs a value");
            return 2;
        } catch (NumberFormatException e) {
            System.err.println("spark ingest: --master-rate: expected a number of Hz (" + e.getMessage() + ")");
            return 2;
        }
        SparkIngest.Align align = new SparkIngest.Align(masterRate, onMiss, policies, timeline, allowMissingMaster);
        try {
            align.config();
        } catch (IllegalArgumentException e) {
            System.err.println("spark ingest: " + e.getMessage());
            return 2;
        }
        if (staging == null || inputs.isEmpty()) {
            System.err.println("usage: SparkIngestMain --staging DIR [--master M] [--robot ID] [--profile FILE]"
                    + " [--rules FILE] [--policy SPEC]... [--on-miss flag|drop] [--master-rate HZ] [--timeline T]"
                    + " [--allow-missing-master] [--s3-endpoint URL] [--s3-region R] PATH|s3://...");
            return 2;
        }
        SparkSession.Builder b = SparkSession.builder().appName("flywheel spark ingest")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "4");
        if (master != null) {
            b.master(master);
        }
        try (SparkSession spark = b.getOrCreate()) {
            spark.sparkContext().setLogLevel("ERROR");
            SparkIngest.Summary s = SparkIngest.run(spark, new SparkIngest.Options(inputs, staging, robot, profile, rules,
                    align, new S3Store.Settings(s3Endpoint, s3Region)));
            Files.writeString(staging.resolve("summary.json"),
                    new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(SparkIngest.json(s)));
            System.err.printf("spark ingest: %d recording(s), %d staged, %d failed; %d episode(s), %d frame(s) in %.1f s%n",
                    s.recordings(), s.ingested(), s.failed().size(), s.episodes(), s.frames(), s.seconds());
            return 0;
        } catch (Exception e) {
            System.err.println("spark ingest: " + (e.getMessage() == null ? e.getClass().getName() : e.getMessage()));
            if (System.getenv("FLYWHEEL_DEBUG") != null) {
                e.printStackTrace();
            }
            return 1;
        }
    }
}
