package io.flywheel.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the Node.js peers used to cross-check our output ({@code @mcap/core},
 * {@code @foxglove/rosmsg2-serialization}, later {@code @lancedb/lancedb}).
 *
 * <p>Scripts live in {@code tools/node} with a committed package.json and lockfile; {@code .ci/run}
 * runs {@code npm ci} there. Without {@code node} or the installed modules, the calling test is
 * skipped, except under {@code CI=true}, where that is a failure.
 */
public final class Node {
    private Node() {}

    /** @return the {@code tools/node} folder with node_modules installed */
    public static Path toolsDir() {
        Path dir = SharedData.repoRoot().resolve("tools/node");
        if (!Files.isDirectory(dir.resolve("node_modules"))) {
            unavailable("tools/node/node_modules missing: run `npm ci` in " + dir);
        }
        if (!onPath("node")) {
            unavailable("node is not on PATH");
        }
        return dir;
    }

    /** Result of one node run. */
    public record Result(int exitCode, String stdout, String stderr) {}

    /**
     * Runs {@code node SCRIPT ARGS...} in {@code tools/node}.
     *
     * @param script file name inside tools/node, e.g. {@code "mcap-read.mjs"}
     * @param args arguments
     * @return exit code and both output streams (UTF-8)
     */
    public static Result run(String script, String... args) throws IOException, InterruptedException {
        Path dir = toolsDir();
        List<String> cmd = new ArrayList<>();
        cmd.add("node");
        cmd.add(dir.resolve(script).toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).start();
        p.getOutputStream().close();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread errPump = new Thread(() -> copy(p.getErrorStream(), err));
        errPump.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        copy(p.getInputStream(), out);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            Assertions.fail("node " + script + " did not finish within 5 minutes");
        }
        errPump.join();
        return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static boolean onPath(String exe) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, exe))) {
                return true;
            }
        }
        return false;
    }

    private static void unavailable(String msg) {
        if (SharedData.isCi()) {
            Assertions.fail(msg + "; CI=true, so this is a failure");
        }
        Assumptions.abort(msg);
    }
}
