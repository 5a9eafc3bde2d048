package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel qc report LAKE --rules FILE [--apply]} on the 25 real bridge episodes: the metrics stored at ingest
 * are re-evaluated with a stricter rule file, without re-ingesting. By hand: each bridge episode has 10 frames at
 * 5 Hz, so it lasts 9 x 200 ms = 1.8 s and each camera's largest gap is 200 ms; the default rules pass them all.
 */
class QcRulesCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final String STRICT = """
            rules:
              - {id: under_2s, metric: duration_s, op: "<", value: 2.0, severity: error, message: too short}
              - {id: camera_gap_150, metric: largest_gap_ms, role: camera, op: ">", value: 150, severity: warning}
              - {id: over_60s, metric: duration_s, op: ">", value: 60, severity: error}
            """;

    private static long[] versions(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable e = l.table("episodes"); LakeTable f = l.table("frames")) {
            return new long[] {e.version(), f.version()};
        }
    }

    @Test
    void aStricterRuleFileReevaluatesTheStoredMetricsReadOnlyThenApplyCommitsANewVersion(@TempDir Path tmp)
            throws IOException {
        Path lake = tmp.resolve("lake");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun in = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString());
        assertEquals(0, in.exitCode(), in.err());
        Path strict = tmp.resolve("strict.yaml");
        Files.writeString(strict, STRICT);
        long[] before = versions(lake);

        CliRun dry = CliRun.of("qc", "report", lake.toString(), "--rules", strict.toString(), "--json");
        assertEquals(0, dry.exitCode(), dry.err());
        JsonNode r = JSON.readTree(dry.out());
        assertEquals(25, r.get("episodes").size());
        assertEquals(25, r.get("changed").asLong());
        assertEquals(25, r.get("status_changes").get("pass -> fail").asLong());
        for (JsonNode e : r.get("episodes")) {
            assertEquals("pass", e.get("old_status").asText());
            assertEquals("fail", e.get("status").asText());
            assertEquals("[\"under_2s\",\"camera_gap_150\"]", e.get("flags").toString(), "over_60s does not fire");
            List<String> msgs = JSON.convertValue(e.get("messages"), JSON.getTypeFactory()
                    .constructCollectionType(List.class, String.class));
            assertEquals("under_2s: duration_s = 1.800 < 2: too short", msgs.get(0));
            assertEquals(4, msgs.size(), "duration + 3 cameras: " + msgs);
            for (int c = 0; c < 3; c++) {
                assertEquals("camera_gap_150: /camera" + c + "/image/compressed largest_gap_ms = 200 > 150", msgs.get(1 + c));
            }
        }
        assertEquals(false, r.get("applied").asBoolean());
        assertEquals(before[0], versions(lake)[0], "without --apply nothing is committed");
        CliRun stored = CliRun.of("qc", "report", lake.toString());
        assertTrue(stored.out().contains("25 episode(s): {pass=25}"), stored.out());

        CliRun text = CliRun.of("qc", "report", lake.toString(), "--rules", strict.toString());
        assertTrue(text.out().contains("25 episode(s) re-evaluated with " + strict + ": 25 changed; status changes"
                + " {pass -> fail=25}; now {fail=25}; read-only (--apply commits it)"), text.out());

        CliRun apply = CliRun.of("qc", "report", lake.toString(), "--rules", strict.toString(), "--apply");
        assertEquals(0, apply.exitCode(), apply.err());
        long[] after = versions(lake);
        assertEquals(before[0] + 1, after[0], "one new episodes version");
        assertEquals(before[1], after[1], "frames untouched");
        assertTrue(apply.out().contains("committed to episodes (version " + before[0] + " -> " + after[0] + ")"),
                apply.out());
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("episodes")) {
            List<EpisodeRow> rows = t.episodes(ScanRequest.all());
            assertEquals(25, rows.size(), "updated in place, no episode twice");
            for (EpisodeRow e : rows) {
                assertEquals("fail", e.qualityStatus());
                assertEquals(List.of("under_2s", "camera_gap_150"), e.qualityFlags());
                assertEquals(strict.toString(), JSON.readTree(e.qualityMetricsJson()).get("rules").asText());
                assertEquals(10, e.frameCount());
            }
        }
        CliRun failing = CliRun.of("qc", "report", lake.toString(), "--status", "fail", "--json");
        assertEquals(25, JSON.readTree(failing.out()).get("episodes").size());

        // the default rules bring them back: every episode changes again, and a second run with them changes nothing
        Path defaults = tmp.resolve("defaults.yaml");
        try (var s = io.flywheel.quality.RuleSet.class.getResourceAsStream(io.flywheel.quality.RuleSet.DEFAULT_RESOURCE)) {
            Files.write(defaults, s.readAllBytes());
        }
        CliRun back = CliRun.of("qc", "report", lake.toString(), "--rules", defaults.toString(), "--apply", "--json");
        assertEquals(25, JSON.readTree(back.out()).get("status_changes").get("fail -> pass").asLong());
        CliRun same = CliRun.of("qc", "report", lake.toString(), "--rules", defaults.toString(), "--json");
        assertEquals(0, JSON.readTree(same.out()).get("changed").asLong());
        long[] settled = versions(lake);
        CliRun noop = CliRun.of("qc", "report", lake.toString(), "--rules", defaults.toString(), "--apply");
        assertEquals(0, noop.exitCode(), noop.err());
        assertTrue(noop.out().contains("nothing to commit (episodes stay at version " + settled[0] + ")"), noop.out());
        assertEquals(settled[0], versions(lake)[0], "--apply with no change commits no empty version");

        CliRun usage = CliRun.of("qc", "report", lake.toString(), "--apply");
        assertEquals(2, usage.exitCode());
        assertTrue(usage.err().contains("--apply needs --rules"), usage.err());
        Path broken = tmp.resolve("broken.yaml");
        Files.writeString(broken, "rules:\n  - {id: x, metric: no_such_metric, op: \">\", value: 1}\n");
        CliRun bad = CliRun.of("qc", "report", lake.toString(), "--rules", broken.toString());
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("broken.yaml"), bad.err());
        assertTrue(bad.noStackTrace(), bad.err());
    }
}
