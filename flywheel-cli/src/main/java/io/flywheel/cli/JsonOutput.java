package io.flywheel.cli;

import picocli.CommandLine.Option;

/**
 * {@code --json}: the command prints one JSON document on standard output instead of its text report (progress and
 * notes stay on standard error). A picocli {@code @Mixin} of every command with machine-readable output.
 */
final class JsonOutput {
    @Option(names = "--json", description = "machine-readable output: one JSON document on standard output")
    boolean enabled;

    /** @return whether --json was given */
    boolean enabled() {
        return enabled;
    }
}
