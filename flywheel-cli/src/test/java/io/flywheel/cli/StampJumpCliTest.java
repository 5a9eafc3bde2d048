package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.ingest.StampJumpRecording;

/**
 * {@code ingest} and {@code align report} on a recording whose camera's header stamps jump back 2 s: {@code /joint_states}
 * at 100 Hz (message k at T0 + 10k ms), {@code /cam} at 20 Hz (frame i logged at T0 + 50i + 3 ms, stamped with its
 * capture time T0 + 50i ms until frame 40 and 2 s earlier from there), 4 s. The report prints the residuals of the
 * stored pairing (3 ms for every frame) and the discontinuity (message 40, 2.003 s after the start, stamps back 2 s,
 * timeline log times), in text and JSON; {@code --timeline stamps} brings back the stamp order and says so.
 */
class StampJumpCliTest {
    static final long T0 = StampJumpRecording.T0;
    static final long MS = StampJumpRecording.MS;
    static final ObjectMapper JSON = new ObjectMapper();

    static Path write(Path file) throws IOException {
        return StampJumpRecording.write(file);
    }

    @Test
    void alignReportNamesTheDiscontinuityAndTheStoredResiduals(@TempDir Path tmp) throws IOException {
        Path mcap = write(tmp.resolve("jump.mcap"));
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun in = CliRun.of("ingest", lake.toString(), mcap.toString());
        assertEquals(0, in.exitCode(), in.err());
        assertTrue(in.out().contains("timestamps: /cam: stamp discontinuities in 1 episode(s)"), in.out());

        CliRun text = CliRun.of("align", "report", lake.toString());
        assertEquals(0, text.exitCode(), text.err());
        String[] row = text.out().lines().filter(l -> l.startsWith("/joint_states")).findFirst().orElseThrow()
                .trim().split("\\s+");
        assertEquals(List.of("/joint_states", "80", "80", "0", "3.000", "3.000", "3.000", "3.000"), List.of(row));
        assertTrue(text.out().contains("stamp discontinuities (header stamps against log times): 1"), text.out());
        assertTrue(text.out().contains("/cam message 40 at 2.003 s (log time " + (T0 + 2_003 * MS)
                + "): stamps backward 2.000 s, timeline log times"), text.out());

        CliRun json = CliRun.of("align", "report", lake.toString(), "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode d = JSON.readTree(json.out()).path("stamp_discontinuities");
        assertEquals(1, d.size(), json.out());
        assertEquals("/cam", d.get(0).path("topic").asText());
        assertEquals(40, d.get(0).path("index").asInt());
        assertEquals(T0 + 2_003 * MS, d.get(0).path("log_time_ns").asLong());
        assertEquals(2.003, d.get(0).path("at_s").asDouble(), 1e-12);
        assertEquals(-2000.0, d.get(0).path("jump_ms").asDouble(), 1e-9);
        assertEquals("backward", d.get(0).path("direction").asText());
        assertEquals("log_time", d.get(0).path("timeline").asText());

        // the run-wide option: on the stamps, frames 40.. are paired with the states of 2 s before their capture
        Path lake2 = tmp.resolve("lake2");
        assertEquals(0, CliRun.of("init", lake2.toString()).exitCode());
        assertEquals(0, CliRun.of("ingest", lake2.toString(), mcap.toString(), "--timeline", "stamps").exitCode());
        JsonNode j2 = JSON.readTree(CliRun.of("align", "report", lake2.toString(), "--json").out());
        assertEquals("stamps", j2.path("stamp_discontinuities").get(0).path("timeline").asText());
        assertEquals("/joint_states", j2.path("streams").get(0).get("stream").asText());
        assertEquals(0.0, j2.path("streams").get(0).get("p99_ms").asDouble(), 1e-12);
        assertEquals(2, CliRun.of("ingest", lake2.toString(), mcap.toString(), "--timeline", "sorted").exitCode());
    }
}
