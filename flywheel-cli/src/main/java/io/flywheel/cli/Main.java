package io.flywheel.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code flywheel} command: one subcommand per pipeline stage. Exit codes: 0 success; 1 bad input or a failed
 * check: a damaged or unexpected file, a name the lake does not have (episode id, tag, topic, camera, table,
 * version), a conflicting or failed write, an unreachable store (every {@code io.flywheel.error} type, and any other
 * failure; the message says what and where); 2 wrong usage only: an unknown option, a missing parameter, an option
 * value that is not allowed, options that exclude or need each other (picocli's {@code ParameterException}, raised by
 * picocli or by a command through {@link Usage}).
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
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** @return the configured command line, shared by {@link #main} and tests */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + describe(ex));
            if (System.getenv("FLYWHEEL_DEBUG") != null) {
                ex.printStackTrace(commandLine.getErr());
            }
            return 1; // usage errors are ParameterExceptions: they reach the handler below, never this one
        });
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
            c.getErr().println("try: " + c.getCommandSpec().qualifiedName() + " --help");
            return 2;
        });
        return cl;
    }

    /**
     * A one-line description of a failure for the user: what and where, no stack trace and no Java class name (but for
     * a failure without a message, which is a bug: its class is named so that it can be reported).
     */
    static String describe(Throwable ex) {
        Throwable e = ex instanceof UncheckedIOException u ? u.getCause() : ex;
        if (e instanceof NoSuchFileException n) {
            return "no such file or folder: " + n.getFile();
        }
        if (e instanceof AccessDeniedException a) {
            return "permission denied: " + a.getFile();
        }
        if (e instanceof java.nio.file.FileAlreadyExistsException f && f.getFile() != null) {
            return f.getFile() + ": " + (java.nio.file.Files.isRegularFile(java.nio.file.Path.of(f.getFile()))
                    ? "is a file; a folder is expected here" : "already exists");
        }
        if (e instanceof java.nio.file.FileSystemException f && f.getFile() != null) {
            return f.getFile() + ": " + (f.getReason() == null ? f.getClass().getSimpleName() : f.getReason());
        }
        if (e instanceof IOException && "Is a directory".equals(e.getMessage())) {
            return "a folder was given where a file is expected";
        }
        if (e.getMessage() != null && !(e instanceof NullPointerException)) {
            return e.getMessage();
        }
        return "internal error (" + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage())
                + "); run with FLYWHEEL_DEBUG=1 for the stack trace and report it";
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
