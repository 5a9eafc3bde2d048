package io.flywheel.curate.quality;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;

/**
 * Three episodes whose stored metrics say how long they last: a 1.8 s, b 3.0 s, c 1.0 s; all stored as passing but c,
 * already failed by the rule {@code under_2s}. A rule file failing episodes under 2 s changes a only.
 */
class QualityReevaluationTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STRICT = "rules:\n"
            + "  - {id: under_2s, metric: duration_s, op: \"<\", value: 2.0, severity: error, message: too short}\n";

    @TempDir
    Path dir;

    private static EpisodeRow episode(String id, double seconds, String status, List<String> flags, String metrics) {
        long ns = Math.round(seconds * 1e9);
        return new EpisodeRow(id, "rec-" + id, "robot-1", "pick the cup", "kitchen", "op", "success", 0L, ns, ns,
                "/cam", 10L, status, flags, metrics, "{\"source_files\": [\"file:/data/rec-" + id + ".mcap\"]}");
    }

    private static String metrics(String id, double seconds) {
        return "{\"metrics\": {\"episodeId\": \"" + id + "\", \"durationNs\": " + Math.round(seconds * 1e9)
                + ", \"streams\": [], \"missingRoles\": [], \"jointSamples\": 0, \"jointLimitViolations\": 0},"
                + " \"results\": []}";
    }

    private Lake lake(EpisodeRow... rows) {
        Lake lake = Lake.init(dir.resolve("lake"));
        lake.begin("ingest").appendEpisodes(List.of(rows)).commit();
        return lake;
    }

    private static Map<String, EpisodeRow> stored(Lake lake) {
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            Map<String, EpisodeRow> m = new java.util.TreeMap<>();
            t.episodes(ScanRequest.all()).forEach(r -> m.put(r.episodeId(), r));
            return m;
        }
    }

    @Test
    void storedMetricsUnderStricterRulesChangeOneEpisodeAndCommitOnlyTheQualityColumns() throws Exception {
        try (Lake lake = lake(episode("b", 3.0, "pass", List.of(), metrics("b", 3.0)),
                episode("a", 1.8, "pass", List.of(), metrics("a", 1.8)),
                episode("c", 1.0, "fail", List.of("under_2s"), metrics("c", 1.0)))) {
            Map<String, EpisodeRow> before = stored(lake);
            long version;
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                version = t.version();
            }
            QualityReevaluation q = QualityReevaluation.evaluate(lake, RuleSet.parse(STRICT, "strict.yaml"));
            assertEquals("strict.yaml", q.rules());
            assertEquals(List.of("a", "b", "c"), q.episodes().stream().map(QualityReevaluation.Episode::episodeId).toList());
            QualityReevaluation.Episode a = q.episodes().get(0);
            assertEquals(List.of("rec-a.mcap"), a.sourceFiles());
            assertEquals("pass", a.oldStatus());
            assertEquals("fail", a.status());
            assertEquals(List.of("under_2s"), a.flags());
            assertTrue(a.changed());
            assertEquals(1, a.messages().size());
            assertTrue(a.messages().get(0).contains("too short"), a.messages().toString());
            assertFalse(q.episodes().get(1).changed(), "b lasts 3 s");
            assertEquals("pass", q.episodes().get(1).status());
            assertFalse(q.episodes().get(2).changed(), "c already failed under_2s");
            assertEquals(1, q.changedCount());
            assertEquals(Map.of("fail", 2L, "pass", 1L), q.byStatus());
            assertEquals(Map.of("pass -> fail", 1L), q.statusChanges());
            assertEquals(version, q.episodesVersion());
            assertEquals(before, stored(lake), "evaluate is read-only");

            OptionalLong committed = q.commit(lake);
            assertEquals(OptionalLong.of(version + 1), committed);
            Map<String, EpisodeRow> after = stored(lake);
            EpisodeRow na = after.get("a");
            assertEquals("fail", na.qualityStatus());
            assertEquals(List.of("under_2s"), na.qualityFlags());
            JsonNode qm = JSON.readTree(na.qualityMetricsJson());
            assertEquals(JSON.readTree(metrics("a", 1.8)).get("metrics"), qm.get("metrics"), "the metrics are kept");
            assertEquals("strict.yaml", qm.get("rules").asText());
            assertEquals("under_2s", qm.get("results").get(0).get("ruleId").asText());
            assertEquals("FAIL", qm.get("results").get(0).get("outcome").asText());
            for (String id : List.of("a", "b", "c")) { // every column but the quality ones keeps its value
                EpisodeRow was = before.get(id);
                EpisodeRow now = after.get(id);
                assertEquals(List.of(was.recordingId(), was.task(), was.scene(), was.durationNs(), was.metadataJson()),
                        List.of(now.recordingId(), now.task(), now.scene(), now.durationNs(), now.metadataJson()), id);
            }

            // the same rules again change nothing, and commit nothing
            QualityReevaluation again = QualityReevaluation.evaluate(lake, RuleSet.parse(STRICT, "strict.yaml"));
            assertEquals(0, again.changedCount());
            assertEquals(OptionalLong.empty(), again.commit(lake));
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                assertEquals(version + 1, t.version());
            }
        }
    }

    @Test
    void storedQualityListsOneStatusWithCountsPerStatusAndRule() {
        try (Lake lake = lake(episode("b", 3.0, "pass", List.of(), metrics("b", 3.0)),
                episode("c", 1.0, "fail", List.of("under_2s"), metrics("c", 1.0)),
                episode("a", 1.8, "warn", List.of("camera_gap"), metrics("a", 1.8)))) {
            StoredQuality all = StoredQuality.read(lake, null);
            assertEquals(List.of("a", "b", "c"), all.episodes().stream().map(EpisodeRow::episodeId).toList());
            assertEquals(Map.of("fail", 1L, "pass", 1L, "warn", 1L), all.byStatus());
            assertEquals(Map.of("camera_gap", 1L, "under_2s", 1L), all.byRule());
            StoredQuality failed = StoredQuality.read(lake, "fail");
            assertEquals(List.of("c"), failed.episodes().stream().map(EpisodeRow::episodeId).toList());
            assertEquals(Map.of("under_2s", 1L), failed.byRule());
            assertThrows(IllegalArgumentException.class, () -> StoredQuality.read(lake, "bad"));
        }
    }

    @Test
    void unreadableStoredMetricsNameTheLakeAndTheEpisode() {
        try (Lake lake = lake(episode("a", 1.8, "pass", List.of(), "{\"results\": []}"))) {
            BadInputException e = assertThrows(BadInputException.class,
                    () -> QualityReevaluation.evaluate(lake, RuleSet.parse(STRICT, "strict.yaml")));
            assertEquals(lake.location() + ": episode a: stored quality_metrics cannot be read as episode metrics (no"
                    + " \"metrics\" object); re-ingest it", e.getMessage());
        }
    }
}
