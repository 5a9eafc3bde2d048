package io.flywheel.stream.accuracy;

import static io.flywheel.stream.rules.Outcome.FAILURE;
import static io.flywheel.stream.rules.Outcome.NEEDS_REVIEW;
import static io.flywheel.stream.rules.Outcome.SUCCESS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.lake.Lake;
import io.flywheel.lake.StreamTables;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.stream.rules.Outcome;

/**
 * Ten episodes with known labels and truth. Truth: 5 success, 3 failure, 2 needs_review. Labels: the successes
 * s0..s3 right and s4 labelled failure; failures f0, f1 right, f2 labelled success; review r0 right, r1 labelled
 * failure. So success: tp 4 of 5 labelled (s0..s3 + f2) and 5 actual -&gt; precision 0.8, recall 0.8; failure: tp 2 of
 * 4 labelled (f0, f1, s4, r1), 3 actual (4 with an unlabelled one added) -&gt; 0.5 and 2/3 (0.5); needs_review: 1 of 1 labelled, 2 actual -&gt; 1.0 and 0.5.
 */
class LabelAccuracyTest {
    @TempDir
    Path dir;

    static Map<String, Outcome> truth() {
        Map<String, Outcome> t = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            t.put("r/s" + i, SUCCESS);
        }
        for (int i = 0; i < 3; i++) {
            t.put("r/f" + i, FAILURE);
        }
        t.put("r/r0", NEEDS_REVIEW);
        t.put("r/r1", NEEDS_REVIEW);
        return t;
    }

    static Map<String, Outcome> labels() {
        Map<String, Outcome> l = new LinkedHashMap<>();
        for (int i = 0; i < 4; i++) {
            l.put("r/s" + i, SUCCESS);
        }
        l.put("r/s4", FAILURE);
        l.put("r/f0", FAILURE);
        l.put("r/f1", FAILURE);
        l.put("r/f2", SUCCESS);
        l.put("r/r0", NEEDS_REVIEW);
        l.put("r/r1", FAILURE);
        return l;
    }

    @Test
    void precisionRecallAndConfusionPerClass() {
        Map<String, Outcome> labels = labels();
        labels.put("r/extra", SUCCESS); // labelled, no truth
        Map<String, Outcome> truth = truth();
        truth.put("r/missing", FAILURE); // truth, no label
        LabelAccuracy a = LabelAccuracy.of(labels, truth);
        assertEquals(10, a.compared());
        assertEquals(1, a.unlabelled());
        assertEquals(1, a.withoutTruth());
        assertEquals(new LabelAccuracy.ClassScore(SUCCESS, 4, 5, 5), a.score(SUCCESS));
        assertEquals(new LabelAccuracy.ClassScore(FAILURE, 2, 4, 4), a.score(FAILURE), "r/missing is a missed failure");
        assertEquals(new LabelAccuracy.ClassScore(NEEDS_REVIEW, 1, 1, 2), a.score(NEEDS_REVIEW));
        assertEquals(0.8, a.score(SUCCESS).precision(), 1e-12);
        assertEquals(0.8, a.score(SUCCESS).recall(), 1e-12);
        assertEquals(0.5, a.score(FAILURE).precision(), 1e-12);
        assertEquals(0.5, a.score(FAILURE).recall(), 1e-12);
        assertEquals(1.0, a.score(NEEDS_REVIEW).precision(), 1e-12);
        assertEquals(0.5, a.score(NEEDS_REVIEW).recall(), 1e-12);
        assertEquals(1, a.count(SUCCESS, FAILURE), "s4");
        assertEquals(1, a.count(FAILURE, SUCCESS), "f2");
        assertEquals(1, a.count(NEEDS_REVIEW, FAILURE), "r1");
        assertEquals(0, a.count(NEEDS_REVIEW, SUCCESS));
        assertEquals(0.7, a.accuracy(), 1e-12);
        assertEquals(Map.of(SUCCESS, 4, FAILURE, 1, NEEDS_REVIEW, 0), a.confusionMap().get(SUCCESS));
    }

    @Test
    void noLabelsGiveNaNPrecision() {
        LabelAccuracy a = LabelAccuracy.of(Map.of(), truth());
        assertTrue(Double.isNaN(a.score(SUCCESS).precision()));
        assertEquals(0.0, a.score(SUCCESS).recall());
        assertEquals(10, a.unlabelled());
        assertTrue(Double.isNaN(a.accuracy()));
    }

    @Test
    void theLakesCurrentLabelsAgainstATruthFile() throws IOException {
        Path truth = dir.resolve("truth.json");
        Files.writeString(truth, """
                {"episodes": [
                  {"robot_id": "r", "episode_id": "a", "outcome": "success"},
                  {"robot_id": "r", "episode_id": "b", "outcome": "failure: missed_grasp"},
                  {"robot_id": "r", "episode_id": "c", "outcome": "intervention"},
                  {"robot_id": "r", "episode_id": "d", "outcome": "success", "stream_outcome": "failure"}
                ]}""");
        Map<String, Outcome> t = LabelTruth.read(truth);
        assertEquals(Map.of("r/a", SUCCESS, "r/b", FAILURE, "r/c", NEEDS_REVIEW, "r/d", FAILURE), t);
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(
                    row("a", "success", 1), row("b", "success", 1), row("c", "needs_review", 1), row("d", "failure", 1),
                    row("b", "failure", 2)), java.util.Set.of()).commit(); // b relabelled later: failure counts
            LabelReport r = LabelReport.of(lake, t);
            assertEquals(4, r.labels());
            assertEquals(List.of("label-rules-1"), r.rulesVersions());
            assertEquals(4, r.accuracy().compared());
            assertEquals(1.0, r.accuracy().accuracy(), 1e-12);
            assertEquals(new LabelAccuracy.ClassScore(FAILURE, 2, 2, 2), r.accuracy().score(FAILURE));
        }
    }

    @Test
    void aBadTruthFileNamesTheEntry() throws IOException {
        Path truth = dir.resolve("bad.json");
        Files.writeString(truth, "{\"episodes\": [{\"robot_id\": \"r\", \"episode_id\": \"a\", \"outcome\": \"maybe\"}]}");
        BadInputException e = assertThrows(BadInputException.class, () -> LabelTruth.read(truth));
        assertEquals(truth + ": episodes[0] (r/a): outcome 'maybe' is not one of success, failure, needs_review,"
                + " intervention", e.getMessage());
        Files.writeString(truth, "[1, 2");
        assertTrue(assertThrows(BadInputException.class, () -> LabelTruth.read(truth)).getMessage()
                .startsWith(truth + ": not JSON"));
    }

    private static LabelHistoryRow row(String ep, String label, long at) {
        return new LabelHistoryRow(ep, "r", label, "rule", "label-rules-1", "fleet.episodes/0=1", -1, "g", at);
    }
}
