package io.flywheel.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code flywheel} command: one subcommand per pipeline stage. */
@Command(name = "flywheel", mixinStandardHelpOptions = true, version = "flywheel 0.1.0",
        description = "The data closed loop for robot recordings, on Lance.",
        subcommands = {CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** @return the configured command line, shared by {@link #main} and tests */
    public static CommandLine commandLine() {
        return new CommandLine(new Main());
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}
