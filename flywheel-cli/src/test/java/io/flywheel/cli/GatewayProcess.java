package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code flywheel gateway} in a child JVM (-Xmx512m), its output in a file (a pipe read while the process dies can
 * lose its tail); {@code pauseAt} names a commit step where the lake's kill hook pauses it.
 */
record GatewayProcess(Process process, Path output) {
    static GatewayProcess start(Path tmp, String pauseAt, String... args) throws Exception {
        Files.createDirectories(tmp);
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + tmp, "-Xmx512m", "-XX:TieredStopAtLevel=1"));
        if (pauseAt != null) {
            cmd.add("-Dflywheel.lake.pause-at=" + pauseAt);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        Path out = tmp.resolve("gateway.out");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        return new GatewayProcess(p, out);
    }

    List<String> lines() {
        try {
            return Files.readAllLines(output, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            return List.of("cannot read " + output + ": " + e);
        }
    }

    String await(Predicate<String> line) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            boolean alive = process.isAlive();
            for (String l : lines()) {
                if (line.test(l)) {
                    return l;
                }
            }
            assertTrue(alive && System.currentTimeMillis() < deadline, "gateway: " + lines());
            Thread.sleep(50);
        }
    }

    void kill9() throws InterruptedException {
        process.destroyForcibly(); // SIGKILL
        assertTrue(process.waitFor(10, TimeUnit.SECONDS));
        assertEquals(137, process.exitValue());
    }
}
