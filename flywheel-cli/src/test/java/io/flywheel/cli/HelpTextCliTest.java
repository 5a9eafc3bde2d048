package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the commands' --help says, where it names another command's output. */
class HelpTextCliTest {

    @Test
    void trainsetBuildSaysTheMinedFileIsWhatMineOutWrites() {
        CliRun r = CliRun.of("trainset", "build", "--help");
        assertEquals(0, r.exitCode(), r.err());
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains("the file written by `flywheel mine --out FILE`"), help);
        assertFalse(help.contains("mine --json"), "mine --json prints to stdout; --out writes the file: " + help);
    }

    @Test
    void simEvalHelpShowsTheRolloutsPerCellDefault() {
        String help = CliRun.of("sim", "--help").out().replaceAll("\\s+", " ");
        assertTrue(help.contains("at least 4; default: 20)"), help);
        assertFalse(help.contains("default: null"), help);
    }

    /** No command's help makes picocli warn (e.g. a '%' in a description read as a format conversion). */
    @Test
    void noHelpPrintsAPicocliWarning() {
        java.util.List<java.util.List<String>> paths = new java.util.ArrayList<>();
        collect(Main.commandLine(), new java.util.ArrayList<>(), paths);
        assertTrue(paths.size() > 20, paths.toString());
        for (java.util.List<String> p : paths) {
            java.util.List<String> args = new java.util.ArrayList<>(p);
            args.add("--help");
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertEquals(0, r.exitCode(), p + ": " + r.err());
            assertFalse(r.err().contains("WARN") || r.out().contains("WARN"), p + ": " + r.err());
        }
    }

    private static void collect(picocli.CommandLine c, java.util.List<String> path,
            java.util.List<java.util.List<String>> out) {
        for (java.util.Map.Entry<String, picocli.CommandLine> e : c.getSubcommands().entrySet()) {
            if (!e.getValue().getCommandName().equals(e.getKey()) || e.getKey().equals("help")) {
                continue; // an alias, or the help command
            }
            java.util.List<String> p = new java.util.ArrayList<>(path);
            p.add(e.getKey());
            out.add(p);
            collect(e.getValue(), p, out);
        }
    }
}
