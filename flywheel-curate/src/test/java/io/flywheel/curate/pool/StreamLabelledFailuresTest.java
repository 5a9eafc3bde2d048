package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.StreamLabelLinks;
import io.flywheel.lake.StreamTables;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.LabelHistoryRow;

/**
 * The loop closes: eight episodes of one robot, all recorded as successes except ep0 (recorded failure). The stream
 * labels ep3 a failure (matched by the recording's own name, {@code r1-0003}), ep5 needs_review and ep0 a success.
 * The failures mining queries are then exactly ep3: ep0's recorded failure is overridden by the stream. The training
 * set built from the mined neighbours names the labelling rules version and the label_history version it saw.
 */
class StreamLabelledFailuresTest {
    static final int DIM = 4;

    @Test
    void aFailureLabelledByTheStreamIsWhatMiningQueriesNext(@TempDir Path tmp) {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            lake.registerModel("test", DIM, "");
            List<EpisodeRow> rows = new ArrayList<>();
            List<FrameRow> frames = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String id = "ep" + i;
                float[] v = new float[DIM];
                v[0] = 1;
                v[1] = 0.1f * i; // ep3's nearest neighbours: ep2 and ep4
                float n = (float) Math.sqrt(v[0] * v[0] + v[1] * v[1]);
                v[0] /= n;
                v[1] /= n;
                long t0 = 1_700_000_000_000_000_000L + i * 60_000_000_000L;
                rows.add(new EpisodeRow(id, "rec-" + i, "robot-1", "pick", "lab", "op", i == 0 ? "failure" : "success",
                        t0, t0 + 900_000_000L, 900_000_000L, "/cam", 10L, "pass", List.of(), "{}",
                        "{\"source_episode_id\":\"r1-000" + i + "\"}").withEmbedding("test", v, 1L));
                for (int f = 0; f < 10; f++) {
                    frames.add(new FrameRow(id, f, t0 + f * 100_000_000L, new double[] {f}, new double[] {f}, 0.5,
                            List.of(), List.of(), List.of()));
                }
            }
            lake.begin("ingest").appendEpisodes(rows).appendFrames(frames).commit();
            assertEquals(List.of("ep0"), queryIds(lake), "before the stream: the recorded failure");

            lake.begin("stream-label").append(StreamTables.LABEL_HISTORY_TABLE, List.of(
                    new LabelHistoryRow("r1-0003", "robot-1", "failure", "empty_grasp", "label-rules-7", "x/0=1", -1, "g", 10),
                    new LabelHistoryRow("r1-0005", "robot-1", "needs_review", "intervention", "label-rules-7", "x/0=2", -1,
                            "g", 10),
                    new LabelHistoryRow("ep0", "robot-1", "success", "success_signal", "label-rules-7", "x/0=3", -1, "g", 10)),
                    Set.of()).commit();
            assertEquals(3, StreamLabelLinks.apply(lake).written());
            assertEquals(List.of("ep3"), queryIds(lake), "the stream's failure, not the recording's");

            EpisodeVectors ev = EpisodeVectors.read(lake);
            MiningJob.Result mined = MiningJob.run(lake, ev, MiningJob.failures(ev), MiningJob.Options.k(2));
            assertEquals(List.of("ep2", "ep4"), mined.neighbours().stream().map(m -> m.episodeId()).sorted().toList());
            long historyVersion;
            try (LakeTable h = lake.table(StreamTables.LABEL_HISTORY)) {
                historyVersion = h.version();
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> miningSources = (Map<String, Object>) mined.lineage().get("mining_source_versions");
            assertEquals(historyVersion, ((Number) miningSources.get("label_history")).longValue());

            TrainsetBuilder.Result set = TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.5)
                    .seed(1).sampleRateHz(0).mined(mined.neighbours()).build(), TrainsetBuilder.Progress.NONE);
            Map<String, Object> lineage = set.trainset().lineage();
            @SuppressWarnings("unchecked")
            Map<String, Object> labelling = (Map<String, Object>) lineage.get("labelling");
            assertNotNull(labelling, lineage.toString());
            assertEquals(List.of("label-rules-7"), labelling.get("rules_versions"));
            assertEquals(3L, ((Number) labelling.get("labelled_episodes")).longValue());
            assertEquals(Map.of("failure", 1L, "needs_review", 1L, "success", 1L), labelling.get("outcomes_from_stream"));
            assertEquals(historyVersion, ((Number) labelling.get("label_history_version")).longValue());
            @SuppressWarnings("unchecked")
            Map<String, Object> sources = (Map<String, Object>) lineage.get("source_versions");
            assertEquals(historyVersion, ((Number) sources.get("label_history")).longValue());
            assertTrue(lineage.get("query_episode_ids").toString().contains("ep3"), lineage.toString());
        }
    }

    private static List<String> queryIds(Lake lake) {
        return MiningJob.failures(EpisodeVectors.read(lake)).stream().map(MiningJob.Query::id).toList();
    }
}
