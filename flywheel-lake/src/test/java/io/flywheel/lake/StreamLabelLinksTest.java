package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.LabelHistoryRow;

/**
 * Stream labels applied to episodes: four episodes of robot-1 (recorded outcome success), labels for two of them
 * (one by the lake's episode id, one by the recording's own name in its metadata), one label of another robot with a
 * matching name (must not apply), and a relabel with a later labelled_at (the later one wins).
 */
class StreamLabelLinksTest {
    @TempDir
    Path dir;

    private static LabelHistoryRow label(String episode, String robot, String label, String rule, long at) {
        return new LabelHistoryRow(episode, robot, label, rule, "label-rules-1", "fleet.episodes/0=9", -1, "g", at);
    }

    @Test
    void labelsBecomeTheEffectiveOutcomeByIdOrBySourceName() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            for (int i = 0; i < 4; i++) {
                EpisodeRow e = Fixtures.episode(i, 3);
                if (i == 1) {
                    e = e.withMetadataJson("{\"source_episode_id\":\"robot-run-0001\"}");
                }
                lake.begin("ingest").putFrames(Fixtures.frames(i, 3)).putEpisodes(List.of(e)).commit();
            }
            // nothing to apply before the first label
            assertEquals(new StreamLabelLinks.Result(0, 0, 0, -1), StreamLabelLinks.apply(lake));
            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(
                    label(Fixtures.episodeId(0), "robot-1", "failure", "empty_grasp", 100),
                    label("robot-run-0001", "robot-1", "needs_review", "intervention", 100),
                    label("robot-run-0001", "robot-2", "failure", "e_stop", 100),
                    label("not-in-lake", "robot-1", "failure", "e_stop", 100)), java.util.Set.of()).commit();

            StreamLabelLinks.Result r = StreamLabelLinks.apply(lake);
            assertEquals(4, r.streamEpisodes(), "stream episodes with a label");
            assertEquals(2, r.matched(), "episodes 0 (by id) and 1 (by source name of robot-1)");
            assertEquals(2, r.written());
            assertTrue(r.lakeCommit() > 0);

            Map<String, EpisodeRow> byId = episodes(lake);
            EpisodeRow e0 = byId.get(Fixtures.episodeId(0));
            assertEquals("success", e0.outcome(), "the recording's outcome is kept");
            assertEquals("failure", e0.effectiveOutcome());
            assertEquals("stream", e0.outcomeSource());
            assertEquals("empty_grasp", e0.streamLabel().rule());
            assertEquals("label-rules-1", e0.streamLabel().rulesVersion());
            assertEquals(100, e0.streamLabel().labelledAtNs());
            assertEquals(Fixtures.episodeId(0), e0.streamLabel().streamEpisodeId());
            EpisodeRow e1 = byId.get(Fixtures.episodeId(1));
            assertEquals("needs_review", e1.effectiveOutcome(), "robot-1's label, not robot-2's e-stop");
            assertEquals("robot-run-0001", e1.streamLabel().streamEpisodeId());
            EpisodeRow e2 = byId.get(Fixtures.episodeId(2));
            assertNull(e2.streamLabel());
            assertEquals("success", e2.effectiveOutcome());
            assertEquals("recording", e2.outcomeSource());
            // the other columns keep their values
            assertEquals("pick 'cube'", e0.task());
            assertEquals(3L, e0.frameCount());

            // idempotent: a second run writes nothing
            long seq = lake.refresh().seq();
            StreamLabelLinks.Result again = StreamLabelLinks.apply(lake);
            assertEquals(0, again.written());
            assertEquals(-1, again.lakeCommit());
            assertEquals(seq, lake.refresh().seq(), "no commit");

            // a later label of episode 0 replaces the first; a re-ingest of episode 2 keeps working
            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(
                    label(Fixtures.episodeId(0), "robot-1", "success", "success_signal", 200)), java.util.Set.of()).commit();
            assertEquals(1, StreamLabelLinks.apply(lake).written());
            assertEquals("success_signal", episodes(lake).get(Fixtures.episodeId(0)).streamLabel().rule());
            List<FrameRow> f = Fixtures.frames(2, 3);
            lake.begin("ingest").putFrames(f).putEpisodes(List.of(Fixtures.episode(2, 3))).commit();
            assertNull(episodes(lake).get(Fixtures.episodeId(2)).streamLabel());
            assertEquals(4, episodes(lake).size());
        }
    }

    private static Map<String, EpisodeRow> episodes(Lake lake) {
        lake.refresh();
        Map<String, EpisodeRow> out = new TreeMap<>();
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            t.episodes(ScanRequest.all()).forEach(e -> out.put(e.episodeId(), e));
        }
        return out;
    }
}
