package io.flywheel.lake;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A child JVM running a main class of the test classpath, with its output lines queued for the test. */
final class ChildProcess implements AutoCloseable {
    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> seen = new ArrayList<>();

    private ChildProcess(Process p) {
        this.process = p;
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (Exception e) {
                lines.add("pump: " + e);
            }
            lines.add("EOF");
        });
        t.setDaemon(true);
        t.start();
    }

    /**
     * @param tmp scratch folder for the child's java.io.tmpdir
     * @param props system properties (e.g. the commit hooks)
     * @param env environment variables added
     */
    static ChildProcess start(Path tmp, Map<String, String> props, Map<String, String> env, Class<?> main,
            String... args) throws Exception {
        Files.createDirectories(tmp);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + tmp, "-Xmx512m"));
        props.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        return new ChildProcess(pb.start());
    }

    /** @return the first line starting with one of the prefixes (or "EOF"), waiting at most 120 s per line */
    String await(String... prefixes) throws InterruptedException {
        while (true) {
            String l = lines.poll(120, TimeUnit.SECONDS);
            if (l == null) {
                throw new AssertionError("child printed nothing for 120 s; so far: " + seen);
            }
            seen.add(l);
            if (l.equals("EOF")) {
                return l;
            }
            for (String p : prefixes) {
                if (l.startsWith(p)) {
                    return l;
                }
            }
        }
    }

    /** Kills the child with SIGKILL (no shutdown hook runs) and waits for it. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new AssertionError("child did not die");
        }
    }

    /** @return the exit code, waiting at most 300 s */
    int waitFor() throws InterruptedException {
        if (!process.waitFor(300, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("child did not finish in 300 s; output: " + seen);
        }
        String l;
        while ((l = lines.poll()) != null) {
            seen.add(l);
        }
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
