package io.flywheel.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs the {@code flywheel} command in-process with captured standard output and error. */
record CliRun(int exitCode, String out, String err) {

    static synchronized CliRun of(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(o);
            System.setErr(e);
            int code = Main.commandLine().execute(args);
            o.flush();
            e.flush();
            return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    /** @return standard error holds no Java stack trace */
    boolean noStackTrace() {
        return !err.contains("\tat ") && !err.contains("Exception in thread") && !out.contains("\tat ");
    }
}
