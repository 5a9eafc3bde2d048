package io.flywheel.cli;

import picocli.CommandLine.Command;

/** {@code flywheel mcap ...}: inspect, print, check and repair MCAP files. */
@Command(name = "mcap", description = "Inspect, print, check and repair MCAP recordings.",
        mixinStandardHelpOptions = true,
        subcommands = {McapInfoCommand.class, McapCatCommand.class, McapDoctorCommand.class, McapRecoverCommand.class})
final class McapCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }
}
