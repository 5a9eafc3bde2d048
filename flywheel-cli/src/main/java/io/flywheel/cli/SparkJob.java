package io.flywheel.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.flywheel.error.NotFoundException;

/**
 * A Spark job of flywheel-spark run in a child JVM: the connector there brings lance-core 4.0, which cannot share a
 * JVM with the lake's lance-core 7.0. The child runs on this JVM's java ({@code java.home}) with Spark's JDK 17
 * flags, on the classpath of the built flywheel-spark module.
 */
final class SparkJob {
    /** Spark 3.5 on JDK 17: its usual --add-opens list, and the two properties Arrow and Netty need. */
    static final List<String> JVM_FLAGS = List.of(
            "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED", "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
            "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED", "-Djdk.reflect.useDirectMethodHandle=false",
            "-Dio.netty.tryReflectionSetAccessible=true");

    private SparkJob() {}

    /**
     * The job's classpath: {@code flywheel.spark.classpath} (system property) or {@code FLYWHEEL_SPARK_CLASSPATH}
     * when set, else the built module under the project root ({@code flywheel.home}, else {@code FLYWHEEL_ROOT}):
     * {@code flywheel-spark/target/classes} and the dependencies listed in {@code target/spark-classpath.txt}.
     *
     * @throws NotFoundException when the module is not built
     */
    static String classpath() throws IOException {
        String given = System.getProperty("flywheel.spark.classpath", System.getenv("FLYWHEEL_SPARK_CLASSPATH"));
        if (given != null && !given.isBlank()) {
            return given;
        }
        String home = System.getProperty("flywheel.home", System.getenv("FLYWHEEL_ROOT"));
        Path root = Path.of(home == null ? "." : home).toAbsolutePath().normalize();
        Path module = root.resolve("flywheel-spark/target");
        Path listed = module.resolve("spark-classpath.txt");
        if (!Files.isRegularFile(listed) || !Files.isDirectory(module.resolve("classes"))) {
            throw new NotFoundException("the Spark job is not built: " + listed + " is missing (build it with"
                    + " mvn -pl flywheel-spark -am package -DskipTests, or set FLYWHEEL_SPARK_CLASSPATH)");
        }
        return module.resolve("classes") + java.io.File.pathSeparator + Files.readString(listed).strip();
    }

    /**
     * @param master a {@code --master} value: {@code local}, {@code local[N]}, {@code local[*]}, {@code spark://...},
     *     {@code yarn} or {@code k8s://...}
     * @throws picocli.CommandLine.ParameterException (wrong usage, exit 2) for anything else
     */
    static void checkMaster(picocli.CommandLine.Model.CommandSpec spec, String master) {
        if (!master.matches("local(\\[(\\d+|\\*)])?|spark://\\S+|yarn|k8s://\\S+")) {
            throw Usage.error(spec, "--master: expected local[N], local[*] or spark://HOST:PORT, got '" + master + "'");
        }
    }

    /**
     * Runs {@code mainClass} with {@code args} in a child JVM and copies its output, line by line, to {@code log}.
     *
     * @return the child's exit code
     */
    static int run(String mainClass, List<String> args, PrintStream log) throws IOException, InterruptedException {
        return run(mainClass, args, log, java.util.Map.of());
    }

    /**
     * As {@link #run(String, List, PrintStream)}, with {@code env} added to the child's environment (credentials,
     * which never go on its command line).
     */
    static int run(String mainClass, List<String> args, PrintStream log, java.util.Map<String, String> env)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(JVM_FLAGS);
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        String heap = System.getenv("FLYWHEEL_SPARK_HEAP");
        cmd.add("-Xmx" + (heap == null || heap.isBlank() ? "2g" : heap));
        cmd.add("-cp");
        cmd.add(classpath());
        cmd.add(mainClass);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                log.println(line);
            }
            return p.waitFor();
        } finally {
            if (p.isAlive()) { // this JVM was interrupted: the job goes with it
                p.destroy();
            }
        }
    }
}
