package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StreamTables;
import io.flywheel.rows.LabelHistoryRow;

/**
 * {@code stream report}: four stream labels against a truth of five episodes. Labels: a success (right), b failure
 * (right), c success (truth failure), d needs_review (right); e has no label. So failure: 1 correct of 1 labelled, 2
 * actual (precision 100%, recall 50%); success: 1 of 2 labelled, 2 actual (a, and e
 * unlabelled: 50%, 50%).
 */
class StreamReportCliTest {
    @Test
    void reportsPrecisionRecallAndConfusion(@TempDir Path dir) throws Exception {
        Path lakeDir = dir.resolve("lake");
        assertEquals(0, CliRun.of("init", lakeDir.toString()).exitCode());
        try (Lake lake = Lake.open(lakeDir)) {
            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(row("a", "success"),
                    row("b", "failure"), row("c", "success"), row("d", "needs_review")), Set.of()).commit();
        }
        Path truth = dir.resolve("truth.json");
        Files.writeString(truth, "{\"episodes\": [" + String.join(",", ep("a", "success"), ep("b", "failure"),
                ep("c", "failure"), ep("d", "intervention"), ep("e", "success")) + "]}");
        CliRun r = CliRun.of("stream", "report", lakeDir.toString(), "--truth", truth.toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(4, j.get("labels").asInt());
        assertEquals(4, j.get("compared").asInt());
        assertEquals(1, j.get("unlabelled").asInt());
        assertEquals("label-rules-1", j.get("rules_versions").get(0).asText());
        JsonNode failure = j.get("classes").get(1);
        assertEquals("failure", failure.get("label").asText());
        assertEquals(1.0, failure.get("precision").asDouble(), 1e-12);
        assertEquals(0.5, failure.get("recall").asDouble(), 1e-12);
        JsonNode success = j.get("classes").get(0);
        assertEquals(0.5, success.get("precision").asDouble(), 1e-12);
        assertEquals(0.5, success.get("recall").asDouble(), 1e-12, "e has no label: a missed success");
        assertEquals(1, j.get("confusion").get("failure").get("success").asInt(), "c");
        assertEquals(0.75, j.get("accuracy").asDouble(), 1e-12);

        CliRun text = CliRun.of("stream", "report", lakeDir.toString(), "--truth", truth.toString());
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("4 of 5 truth episodes compared (accuracy 75.0%), 1 without a label"), text.out());

        Files.writeString(truth, "{\"episodes\": [{\"robot_id\": \"r\"}]}");
        CliRun bad = CliRun.of("stream", "report", lakeDir.toString(), "--truth", truth.toString());
        assertEquals(1, bad.exitCode(), bad.err());
        assertTrue(bad.err().contains("episodes[0]: robot_id and episode_id must be non-empty"), bad.err());
        assertEquals(2, CliRun.of("stream", "report", lakeDir.toString()).exitCode(), "--truth is required");
    }

    private static LabelHistoryRow row(String ep, String label) {
        return new LabelHistoryRow(ep, "robot_01", label, "rule", "label-rules-1", "fleet.episodes/0=1", -1, "g", 1);
    }

    private static String ep(String id, String outcome) {
        return "{\"robot_id\": \"robot_01\", \"episode_id\": \"" + id + "\", \"outcome\": \"" + outcome + "\"}";
    }
}
