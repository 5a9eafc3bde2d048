package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.error.ConflictException;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.sim.EvalRecordings;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.eval.EvalRollouts;

/**
 * {@code eval ingest} of recorded eval episodes: 12 simulated glass-cup rollouts of arm-1 (2 tasks x 3 lightings x 2),
 * each a 1 s MCAP with its outcome in a {@code flywheel.eval} Metadata record. The rows are checked against the
 * simulator's rollouts (its truth), each eval row names the lake episode of its own recording, a second ingest adds
 * nothing, a recording ingested before with {@code ingest} gets its eval row, and bad metadata is refused naming the
 * file and key with nothing committed.
 */
class RecordedRolloutsTest {
    @TempDir
    static Path shared;

    static EvalRollouts.Result sim;
    static Path episodes;

    @TempDir
    Path dir;

    @BeforeAll
    static void simulate() throws Exception {
        sim = EvalRollouts.generate(new EvalRollouts.Options("pick-v3", "ev-mcap", 11, 2, List.of(),
                Map.of("robot", "arm-1", "object", "glass_cup")));
        episodes = shared.resolve("episodes");
        EvalRecordings.write(sim, episodes, JpegEncoder.Kind.IMAGEIO);
    }

    @Test
    void eachRecordingIsAnEpisodeWithItsEvalRowAndASecondIngestAddsNothing() throws Exception {
        assertEquals(12, sim.rollouts().size());
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            // one recording ingested before, by plain ingest: it gets its eval row at the end, in one more commit
            Path first = episodes.resolve("arm-1").resolve(sim.rollouts().get(0).episodeId() + ".mcap");
            IngestJob.run(lake, List.of(first), IngestOptions.builder().build(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            long before = lake.refresh().seq();

            RecordedRollouts.Summary s = RecordedRollouts.ingest(lake, episodes, line -> { });
            assertEquals(12, s.files().size());
            assertTrue(s.ingest().failed().isEmpty(), s.ingest().failed().toString());
            assertEquals(11, s.ingest().episodes());
            assertEquals(1, s.ingest().skipped());
            assertEquals(12, s.rowsAdded());
            assertEquals(0, s.rowsPresent());
            assertEquals(List.of("pick-v3"), s.newPolicies());
            assertEquals(before + 12, lake.refresh().seq()); // one commit per new recording, one for the one there

            // the rows are the simulator's rollouts, each linked to the episode of its own recording
            Map<String, String> episodeOfFile = new HashMap<>(); // file name -> lake episode id
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                for (EpisodeRow e : t.episodes(ScanRequest.all())) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("/(ev-mcap-\\d+)\\.mcap")
                            .matcher(e.metadataJson()); // source_files: the recording's file
                    assertTrue(m.find(), e.metadataJson());
                    episodeOfFile.put(m.group(1), e.episodeId());
                }
            }
            assertEquals(12, episodeOfFile.size());
            List<EvalEpisodeRow> rows = Evaluations.episodes(lake, "ev-mcap");
            assertEquals(12, rows.size());
            Map<String, EvalEpisodeRow> byEpisode = new HashMap<>();
            rows.forEach(r -> byEpisode.put(r.episodeId(), r));
            for (EvalRollouts.Rollout x : sim.rollouts()) {
                EvalEpisodeRow r = byEpisode.get(episodeOfFile.get(x.episodeId()));
                assertEquals(x.cell().task(), r.task(), x.episodeId());
                assertEquals("glass_cup", r.object());
                assertEquals(x.cell().lighting(), r.lighting());
                assertEquals("arm-1", r.robotId());
                assertEquals("sim_table", r.scene());
                assertEquals(x.success(), r.success());
                assertEquals(Math.round(x.durationS() * 1e9), r.durationNs());
                assertEquals(x.failureMode(), r.failureMode());
                assertEquals(x.intervention(), r.intervention());
                assertEquals(episodeOfFile.get(x.episodeId()), s.episodeIds().get(
                        episodes.resolve("arm-1").resolve(x.episodeId() + ".mcap").toRealPath()));
            }
            EvalRunRow run = Evaluations.run(lake, "ev-mcap");
            assertEquals("pick-v3", run.policyVersion());
            assertEquals(12, run.episodeCount());
            assertTrue(run.configJson().contains("\"format\":\"mcap\""), run.configJson());
            // the report's cells are the truth's cells: 2 tasks x 3 lightings, 2 rollouts each
            EvalReport rep = EvalReport.of(lake, "ev-mcap", List.of("task", "object", "lighting", "robot"));
            assertEquals(sim.trueRates().size(), rep.cells().size());
            for (EvalReport.Cell c : rep.cells()) {
                EvalRollouts.Cell cell = new EvalRollouts.Cell(c.key().get("task"), c.key().get("object"),
                        c.key().get("lighting"), c.key().get("robot"));
                assertTrue(sim.trueRates().containsKey(cell), cell.toString());
                assertEquals(2, c.episodes());
                assertEquals(sim.rollouts().stream().filter(x -> x.cell().equals(cell) && x.success()).count(),
                        c.successes(), cell.toString());
            }
            long successes = sim.rollouts().stream().filter(EvalRollouts.Rollout::success).count();
            assertEquals(successes, rows.stream().filter(EvalEpisodeRow::success).count());

            // a second ingest: nothing new, no commit
            long seq = lake.refresh().seq();
            RecordedRollouts.Summary again = RecordedRollouts.ingest(lake, episodes, line -> { });
            assertEquals(0, again.rowsAdded());
            assertEquals(12, again.rowsPresent());
            assertEquals(12, again.ingest().skipped());
            assertEquals(seq, lake.refresh().seq());
            assertEquals(12, Evaluations.episodes(lake, "ev-mcap").size());
            assertEquals(12, Evaluations.run(lake, "ev-mcap").episodeCount());
        }
    }

    @Test
    void badMetadataNamesFileAndKeyAndCommitsNothing() throws Exception {
        Map<String, String> good = EvalRollouts.metadata(sim, sim.rollouts().get(0));
        assertBad(null, "no Metadata record named 'flywheel.eval'");
        assertBad(with(good, "success", "maybe"), "key success: 'maybe' is not a boolean");
        assertBad(with(good, "duration_s", "ten"), "key duration_s: 'ten' is not a number");
        assertBad(with(good, "sucess", "true"), "unknown key 'sucess'");
        Map<String, String> noTask = new LinkedHashMap<>(good);
        noTask.remove("task");
        assertBad(noTask, "missing key 'task'");
        assertBad(with(good, "policy_version", "other"), "key policy_version: run 'ev-mcap' has policy 'pick-v3'");
    }

    @Test
    void aTruncatedRecordingIsReportedByTheIngestStageAndTheOthersAreCommitted() throws Exception {
        Path in = Files.createDirectories(dir.resolve("in-truncated"));
        for (int i = 0; i < 2; i++) {
            String name = sim.rollouts().get(i).episodeId() + ".mcap";
            Files.copy(episodes.resolve("arm-1").resolve(name), in.resolve(name));
        }
        byte[] whole = Files.readAllBytes(episodes.resolve("arm-1").resolve(sim.rollouts().get(2).episodeId() + ".mcap"));
        Path cut = Files.write(in.resolve("zz-truncated.mcap"), java.util.Arrays.copyOf(whole, whole.length / 2));
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            RecordedRollouts.Summary s = RecordedRollouts.ingest(lake, in, line -> { });
            assertEquals(1, s.ingest().failed().size(), s.ingest().failed().toString());
            assertTrue(s.ingest().failed().get(0).damagedMcap(), s.ingest().failed().toString());
            assertTrue(s.ingest().failed().get(0).input().contains(cut.getFileName().toString()),
                    s.ingest().failed().toString());
            assertEquals(2, s.rowsAdded());
            assertEquals(2, Evaluations.episodes(lake, "ev-mcap").size());
            // the summary counts what landed only
            assertEquals(1, s.runs().size());
            assertEquals(2, s.runs().get(0).episodes());
            assertEquals(2, s.runs().get(0).minable());
        }
        // a folder whose only recording is unreadable: no run is reported as landed
        Path only = Files.createDirectories(dir.resolve("in-only-truncated"));
        Files.copy(cut, only.resolve("zz-truncated.mcap"));
        try (Lake lake = Lake.init(dir.resolve("lake-only"))) {
            RecordedRollouts.Summary s = RecordedRollouts.ingest(lake, only, line -> { });
            assertEquals(1, s.ingest().failed().size());
            assertEquals(0, s.rowsAdded());
            assertTrue(s.runs().isEmpty(), s.runs().toString());
        }
    }

    @Test
    void aRunFromAResultsFileIsImmutable() throws Exception {
        Path csv = Files.writeString(dir.resolve("r.csv"), "run_id,policy_version,episode_id,task,object,lighting,"
                + "robot,success\nev-mcap,pick-v3,x1,stack,cup,dim,arm-1,true\n");
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Evaluations.ingest(lake, csv, null, null, null);
            ConflictException e = assertThrows(ConflictException.class, () -> RecordedRollouts.ingest(lake,
                    episodes.resolve("arm-1").resolve(sim.rollouts().get(0).episodeId() + ".mcap"), line -> { }));
            assertTrue(e.getMessage().contains("run 'ev-mcap' is in the lake already from a results file"),
                    e.getMessage());
            assertFalse(lake.hasTable(TableSchemas.EPISODES) && lake.table(TableSchemas.EPISODES).countRows() > 0);
        }
    }

    private static Map<String, String> with(Map<String, String> m, String key, String value) {
        Map<String, String> out = new LinkedHashMap<>(m);
        out.put(key, value);
        return out;
    }

    /** A folder with two good recordings and one MCAP with {@code metadata} (null: none): refused, nothing written. */
    private void assertBad(Map<String, String> metadata, String expected) throws Exception {
        Path in = Files.createDirectories(dir.resolve("in-" + expected.hashCode()));
        for (int i = 0; i < 2; i++) {
            String name = sim.rollouts().get(i).episodeId() + ".mcap";
            Files.copy(episodes.resolve("arm-1").resolve(name), in.resolve(name));
        }
        Path bad = in.resolve("zz-bad.mcap");
        try (McapWriter w = McapWriter.builder().build(bad)) {
            w.writeMetadata("episode", Map.of("task", "pick"));
            if (metadata != null) {
                w.writeMetadata(RecordedRollouts.METADATA, metadata);
            }
        }
        try (Lake lake = Lake.init(dir.resolve("lake-" + expected.hashCode()))) {
            long seq = lake.refresh().seq();
            BadInputException e = assertThrows(BadInputException.class, () -> RecordedRollouts.ingest(lake, in,
                    line -> { }));
            assertTrue(e.getMessage().startsWith(bad.toString() + ": "), e.getMessage());
            assertTrue(e.getMessage().contains(expected), e.getMessage());
            assertEquals(seq, lake.refresh().seq()); // nothing committed, not even the good recordings
            assertFalse(lake.hasTable(EvalTables.EVAL_EPISODES));
        }
    }
}
