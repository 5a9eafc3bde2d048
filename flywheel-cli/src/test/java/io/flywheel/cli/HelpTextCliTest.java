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
}
