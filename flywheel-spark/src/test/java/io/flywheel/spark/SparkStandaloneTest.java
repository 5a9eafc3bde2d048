package io.flywheel.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.HammingSearch;
import io.flywheel.curate.NearPairs;

/**
 * A standalone Spark cluster on this machine: a master and two workers (one core each) in child JVMs started from
 * the Spark jars on this classpath, stopped by process at the end. The dedup pair search with
 * {@code spark://127.0.0.1:PORT} runs its tasks in the workers' executors and finds the pairs the one-machine search
 * finds.
 */
class SparkStandaloneTest {
    @TempDir
    Path tmp;

    @Test
    void framePairsOnAMasterAndTwoWorkers() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String url = "spark://127.0.0.1:" + port;
        List<Process> started = new ArrayList<>();
        try {
            started.add(jvm("org.apache.spark.deploy.master.Master", "master", "--host", "127.0.0.1", "--port",
                    String.valueOf(port), "--webui-port", "0"));
            for (int w = 0; w < 2; w++) {
                started.add(jvm("org.apache.spark.deploy.worker.Worker", "worker" + w, "--host", "127.0.0.1",
                        "--cores", "1", "--memory", "1g", "--webui-port", "0", "--work-dir",
                        Files.createDirectories(tmp.resolve("work" + w)).toString(), url));
            }
            long[] v = hashes();
            Path file = tmp.resolve("hashes.bin");
            try (DataOutputStream o = new DataOutputStream(Files.newOutputStream(file))) {
                for (long x : v) {
                    o.writeLong(x);
                }
            }
            Path out = tmp.resolve("frame_pairs.bin");
            long n;
            int executors;
            try (SparkSession spark = SparkSession.builder().master(url).appName("SparkStandaloneTest")
                    .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                    .config("spark.executor.memory", "512m")
                    .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
                    .config("spark.executor.extraJavaOptions", System.getProperty("flywheel.spark.jvm.flags", ""))
                    .getOrCreate()) {
                spark.sparkContext().setLogLevel("ERROR");
                n = SparkDedup.framePairs(spark, file, 4, 4, out);
                // the executors the master gave this application (the driver is listed as well)
                executors = spark.sparkContext().getExecutorMemoryStatus().size() - 1;
            }
            NearPairs want = HammingSearch.pairs(v, 4);
            assertTrue(want.size() > 100, "pairs within 4 bits: " + want.size());
            assertEquals(want.size(), n);
            assertEquals(want.size() * 12L, Files.size(out));
            assertTrue(executors >= 1, "executors in the workers: " + executors);
            // a worker that ran an executor keeps its folder: WORK_DIR/app-.../EXECUTOR_ID/stderr
            int used = 0;
            for (int w = 0; w < 2; w++) {
                try (var apps = Files.list(tmp.resolve("work" + w))) {
                    used += apps.anyMatch(a -> a.getFileName().toString().startsWith("app-")) ? 1 : 0;
                }
            }
            assertTrue(used >= 1, "a worker's executor ran the tasks");
        } finally {
            for (Process p : started) {
                p.destroy();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    /** 1000 random values and 200 copies with 1 to 6 bits flipped, distinct and ascending. */
    private static long[] hashes() {
        Random rnd = new Random(3);
        TreeSet<Long> values = new TreeSet<>();
        for (int i = 0; i < 1000; i++) {
            long base = rnd.nextLong();
            values.add(base);
            if (i % 5 == 0) {
                long copy = base;
                for (int k = 0, flips = 1 + rnd.nextInt(6); k < flips; k++) {
                    copy ^= 1L << rnd.nextInt(64);
                }
                values.add(copy);
            }
        }
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    private Process jvm(String mainClass, String name, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String f : System.getProperty("flywheel.spark.jvm.flags", "").split(" ")) {
            if (!f.isBlank()) {
                cmd.add(f);
            }
        }
        cmd.addAll(List.of("-Xmx512m", "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(tmp.resolve(name + ".log").toFile());
        // the worker builds its executors' command from a Spark home: none here, the classpath comes from the
        // application (spark.executor.extraClassPath)
        Path home = Files.createDirectories(tmp.resolve("spark-home"));
        pb.environment().put("SPARK_HOME", home.toString());
        pb.environment().put("SPARK_SCALA_VERSION", "2.12");
        pb.environment().put("SPARK_TESTING", "1");
        return pb.start();
    }
}
