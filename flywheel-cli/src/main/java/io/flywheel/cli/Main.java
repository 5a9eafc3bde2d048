package io.flywheel.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import io.flywheel.error.ErrorKind;
import io.flywheel.error.FileErrors;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code flywheel} command: one subcommand per pipeline stage. Exit codes: 0 success; 1 bad input or a failed
 * check: a damaged or unexpected file, a name the lake does not have (episode id, tag, topic, camera, table,
 * version), a conflicting or failed write, an unreachable store (every {@code io.flywheel.error} type, and any other
 * failure; the message says what and where); 2 wrong usage only: an unknown option, a missing parameter, an option
 * value that is not allowed, options that exclude or need each other (picocli's {@code ParameterException}, raised by
 * picocli or by a command through {@link Usage}; a parent command such as {@code flywheel lake} without a subcommand
 * is one too, and prints its usage). A failure of a command run with {@code --json} also prints one JSON document on
 * standard output, {@code {"ok": false, "error": {"kind": ..., "message": ...}}} ({@link #failureJson}); a usage error
 * prints text on standard error only.
 */
@Command(name = "flywheel", mixinStandardHelpOptions = true, version = "flywheel 0.1.0",
        description = "The data closed loop for robot recordings, on Lance.",
        subcommands = {
                InitCommand.class,
                IngestCommand.class,
                QcCommand.class,
                AlignCommand.class,
                McapCommand.class,
                SimCommand.class,
                ModelsCommand.class,
                EnrichCommand.class,
                DedupCommand.class,
                MineCommand.class,
                TrainsetCommand.class,
                LoadCommand.class,
                ServeCommand.class,
                MapCommand.class,
                ExportCommand.class,
                WarmCommand.class,
                QuickstartCommand.class,
                LakeCommand.class,
                GatewayCommand.class,
                UploadCommand.class,
                EvalCommand.class,
                SqlCommand.class,
                TelemetryCommand.class,
                StreamCommand.class,
                SparkCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    /** @return the configured command line, shared by {@link #main} and tests */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            String message = describe(ex);
            commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + message);
            if (System.getenv("FLYWHEEL_DEBUG") != null) {
                ex.printStackTrace(commandLine.getErr());
            }
            if (jsonRequested(commandLine)) { // --json promises one JSON document on standard output, failure or not
                System.out.flush();
                Json.print(System.out, failureJson(ex, message));
                System.out.flush();
            }
            return 1; // usage errors are ParameterExceptions: they reach the handler below, never this one
        });
        cl.setParameterExceptionHandler((ex, args) -> {
            // usage errors stay text on standard error even with --json (the command line was not understood): exit 2
            CommandLine c = ex.getCommandLine();
            c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
            if (ex instanceof Usage.MissingSubcommand) {
                c.usage(c.getErr());
            } else {
                c.getErr().println("try: " + c.getCommandSpec().qualifiedName() + " --help");
            }
            return 2;
        });
        return cl;
    }

    /** @return whether the command that failed was given {@code --json} */
    static boolean jsonRequested(CommandLine commandLine) {
        CommandLine.ParseResult pr = commandLine.getParseResult();
        return pr != null && commandLine.getCommandSpec().findOption("--json") != null && pr.hasMatchedOption("--json");
    }

    /**
     * @return the JSON document of a failed command:
     *     {@code {"ok": false, "error": {"kind": "not_found", "message": "no Flywheel lake at /x"}}}, the kind from
     *     {@link ErrorKind#of} ({@code bad_input}, {@code not_found}, {@code conflict}, {@code storage_unavailable},
     *     {@code internal})
     */
    static Map<String, Object> failureJson(Throwable ex, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("kind", ErrorKind.of(ex).id());
        error.put("message", message);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", error);
        return m;
    }

    /**
     * A one-line description of a failure for the user: what and where, no stack trace and no Java class name. A file
     * system error, whose message is only the path, is put in words ("no such file or folder: /x", "permission denied:
     * /x"), also where a message ends with one (e.g. "cannot init lake at /proc/nope/lake: /proc/nope").
     */
    static String describe(Throwable ex) {
        Throwable e = ex instanceof UncheckedIOException u && u.getCause() != null ? u.getCause() : ex;
        if (e instanceof FileSystemException f && f.getFile() != null) {
            return FileErrors.words(f);
        }
        if (e instanceof IOException && "Is a directory".equals(e.getMessage())) {
            return "a folder was given where a file is expected";
        }
        if (e.getMessage() != null && !(e instanceof NullPointerException)) {
            String m = e.getMessage();
            for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                if (c instanceof FileSystemException f && f.getFile() != null && f.getReason() == null
                        && f.getMessage() != null && m.endsWith(": " + f.getMessage())
                        && !m.endsWith(FileErrors.words(f))) { // not said in words where it was thrown already
                    return m.substring(0, m.length() - f.getMessage().length()) + FileErrors.words(f);
                }
            }
            return m;
        }
        return "internal error" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")") + ", which is a bug; run"
                + " with FLYWHEEL_DEBUG=1 for the stack trace and report it";
    }


    public static void main(String[] args) {
        NativeCache.install(); // first: before any class loads a native library
        String scratch = System.getProperty("flywheel.scratch");
        if (scratch != null) { // the launcher's per-run temporary folder: removed however the JVM ends (but a kill -9)
            java.nio.file.Path own = java.nio.file.Path.of(scratch).toAbsolutePath();
            if (own.getParent() != null) { // ... so the folders of killed runs beside it are removed here
                ScratchFolders.removeStale(own.getParent(), own);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> ScratchFolders.delete(own)));
        }
        System.exit(commandLine().execute(args));
    }
}
