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
}
