package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** {@code flywheel sim} writes files that {@code flywheel mcap doctor} passes, and says what it wrote. */
class SimCliTest {
    @Test
    void tinyFleetPassesDoctor(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("fleet");
        CliRun r = CliRun.of("sim", "--preset", "tiny", "--out", out.toString(), "--jpeg", "imageio", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode summary = new ObjectMapper().readTree(r.out());
        assertEquals(6, summary.get("episodes").asInt());
        List<Path> files;
        try (Stream<Path> s = Files.walk(out)) {
            files = s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
        assertEquals(6, files.size());
        assertTrue(Files.exists(out.resolve("ground_truth.json")));
        long messages = 0;
        for (Path f : files) {
            CliRun d = CliRun.of("mcap", "doctor", f.toString(), "--json");
            assertEquals(0, d.exitCode(), d.out());
            JsonNode report = new ObjectMapper().readTree(d.out());
            assertEquals(0, report.get("findings").size(), d.out());
            messages += report.get("messages").asLong();
        }
        assertEquals(summary.get("messages").asLong(), messages);
    }

    @Test
    void badOptionsAreNamed(@TempDir Path tmp) {
        CliRun r = CliRun.of("sim", "--preset", "huge", "--out", tmp.toString());
        assertEquals(2, r.exitCode(), "a bad option value is a usage error");
        assertTrue(r.err().contains("unknown preset 'huge'"), r.err());
        CliRun res = CliRun.of("sim", "--resolution", "320by240", "--out", tmp.toString());
        assertEquals(2, res.exitCode());
        assertTrue(res.err().contains("WIDTHxHEIGHT"), res.err());
        assertTrue(r.noStackTrace() && res.noStackTrace());
    }

    @Test
    void rangeErrorsNameTheCliOptions(@TempDir Path tmp) {
        CliRun drop = CliRun.of("sim", "--frame-drop-rate", "0.9", "--out", tmp.resolve("a").toString());
        assertEquals(2, drop.exitCode());
        assertTrue(drop.err().contains("--frame-drop-rate must be in 0..0.5"), drop.err());
        CliRun dur = CliRun.of("sim", "--duration", "0", "--out", tmp.resolve("b").toString());
        assertEquals(2, dur.exitCode());
        assertTrue(dur.err().contains("--duration must be in 1..3600, got 0.0"), dur.err());
        CliRun robots = CliRun.of("sim", "--episodes", "2", "--robots", "3", "--out", tmp.resolve("c").toString());
        assertEquals(2, robots.exitCode());
        assertTrue(robots.err().contains("--robots must be in 1..2, got 3"), robots.err());
        assertTrue(drop.noStackTrace() && dur.noStackTrace() && robots.noStackTrace());
        assertTrue(Files.notExists(tmp.resolve("a")), "nothing is written when the options are bad");
    }

    @Test
    void outMustBeAFolderAndAnEarlierFleetIsReplacedOnlyWithForce(@TempDir Path tmp) throws IOException {
        Path file = Files.writeString(tmp.resolve("file.txt"), "x");
        // what is at --out is bad input (exit 1), as for init and export lerobot; a malformed option is usage (2)
        CliRun onFile = CliRun.of("sim", "--out", file.toString(), "--jpeg", "imageio");
        assertEquals(1, onFile.exitCode());
        assertTrue(onFile.err().contains("--out " + file + " is a file, not a folder"), onFile.err());

        Path other = Files.createDirectory(tmp.resolve("other"));
        Files.writeString(other.resolve("notes.txt"), "mine");
        CliRun onOther = CliRun.of("sim", "--out", other.toString(), "--jpeg", "imageio");
        assertEquals(1, onOther.exitCode());
        assertTrue(onOther.err().contains("is not empty and holds no fleet of ours"), onOther.err());

        Path fleet = tmp.resolve("fleet");
        CliRun first = CliRun.of("sim", "--out", fleet.toString(), "--jpeg", "imageio");
        assertEquals(0, first.exitCode(), first.err());
        assertTrue(first.err().contains("sim: 6/6 episodes (100%)"), "the last progress line: " + first.err());
        assertTrue(!first.err().contains("\r"), "no redrawn line when stderr is not a terminal");
        assertEquals(6, mcaps(fleet).size());
        Files.writeString(fleet.resolve("notes.txt"), "mine");

        CliRun again = CliRun.of("sim", "--out", fleet.toString(), "--jpeg", "imageio", "--episodes", "2");
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("holds an earlier fleet") && again.err().contains("--force"), again.err());
        assertEquals(6, mcaps(fleet).size(), "refused: nothing deleted");

        CliRun forced = CliRun.of("sim", "--out", fleet.toString(), "--jpeg", "imageio", "--episodes", "2", "--force");
        assertEquals(0, forced.exitCode(), forced.err());
        assertEquals(2, mcaps(fleet).size(), "the 6 old episodes are gone, the 2 new ones written");
        assertEquals("mine", Files.readString(fleet.resolve("notes.txt")), "other files are kept");
        JsonNode gt = new ObjectMapper().readTree(fleet.resolve("ground_truth.json").toFile());
        assertEquals(2, gt.get("episodes").size());
    }

    private static List<Path> mcaps(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
    }
}
