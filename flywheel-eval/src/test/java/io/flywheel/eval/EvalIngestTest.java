package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.error.ConflictException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalEpisodeRow;

/**
 * {@code eval ingest}: the same results as CSV, JSON (array and lines) and Parquet give the same rows; bad input is
 * refused naming file, line and column, and leaves the lake as it was; a run is immutable.
 */
class EvalIngestTest {
    @TempDir
    Path dir;

    static final String CSV = "run_id,policy_version,episode_id,task,object,lighting,robot,success,duration_s,"
            + "failure_mode,intervention,scene\n"
            + "r1,p1,e1,pick,cup,bright,arm-1,true,12.5,,false,kitchen\n"
            + "r1,p1,e2,pick,cup,bright,arm-1,0,8,slip,yes,\n"
            + "r1,p1,e3,pick,\"glass, cup\",dim,arm-2,1,,\"\",0,lab\n";

    static final List<EvalEpisodeRow> EXPECTED = List.of(
            new EvalEpisodeRow("r1", "e1", "pick", "cup", "bright", "kitchen", "arm-1", true, 12_500_000_000L, null, false),
            new EvalEpisodeRow("r1", "e2", "pick", "cup", "bright", null, "arm-1", false, 8_000_000_000L, "slip", true),
            new EvalEpisodeRow("r1", "e3", "pick", "glass, cup", "dim", "lab", "arm-2", true, null, null, false));

    @Test
    void csvJsonAndParquetGiveTheSameRows() throws Exception {
        Path csv = Files.writeString(dir.resolve("r.csv"), CSV);
        Path json = Files.writeString(dir.resolve("r.json"), "[\n"
                + "{\"run_id\": \"r1\", \"policy_version\": \"p1\", \"episode_id\": \"e1\", \"task\": \"pick\", \"object\": \"cup\","
                + " \"lighting\": \"bright\", \"robot_id\": \"arm-1\", \"success\": true, \"duration_s\": 12.5, \"scene\": \"kitchen\"},\n"
                + "{\"run_id\": \"r1\", \"policy_version\": \"p1\", \"episode_id\": \"e2\", \"task\": \"pick\", \"object\": \"cup\","
                + " \"lighting\": \"bright\", \"robot_id\": \"arm-1\", \"success\": false, \"duration_ns\": 8000000000,"
                + " \"failure_mode\": \"slip\", \"intervention\": true},\n"
                + "{\"run_id\": \"r1\", \"policy_version\": \"p1\", \"episode_id\": \"e3\", \"task\": \"pick\", \"object\": \"glass, cup\","
                + " \"lighting\": \"dim\", \"robot_id\": \"arm-2\", \"success\": 1, \"scene\": \"lab\", \"failure_mode\": null}\n]\n");
        Path parquet = dir.resolve("r.parquet");
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement()) {
            s.execute("COPY (SELECT * FROM read_csv('" + csv + "', header = true, all_varchar = true)) TO '" + parquet
                    + "' (FORMAT parquet)");
        }
        for (Path f : List.of(csv, json, parquet)) {
            List<EvalResultsFile.Run> runs = EvalResultsFile.read(f, null, null);
            assertEquals(1, runs.size(), f.toString());
            assertEquals("p1", runs.get(0).policyVersion());
            assertEquals(EXPECTED, runs.get(0).episodes(), f.toString());
        }
        Path lines = Files.writeString(dir.resolve("r.jsonl"), "{\"episode_id\": \"a\", \"task\": \"t\", \"object\": \"o\","
                + " \"lighting\": \"l\", \"robot\": \"x\", \"success\": \"no\"}\n{\"episode_id\": \"b\", \"task\": \"t\","
                + " \"object\": \"o\", \"lighting\": \"l\", \"robot\": \"x\", \"success\": \"yes\"}\n");
        List<EvalResultsFile.Run> runs = EvalResultsFile.read(lines, "given", "p9");
        assertEquals("given", runs.get(0).runId());
        assertEquals(2, runs.get(0).episodes().size());
        assertFalse(runs.get(0).episodes().get(0).success());
    }

    @Test
    void badInputNamesFileLineAndColumn() throws Exception {
        assertMessage("r.csv: line 3, column 8 (success): 'maybe' is not a boolean",
                CSV.replace("r1,p1,e2,pick,cup,bright,arm-1,0,", "r1,p1,e2,pick,cup,bright,arm-1,maybe,"), "r.csv");
        assertMessage("r.csv: line 1: missing column 'lighting'", CSV.replace(",lighting,", ",light,"), "r.csv");
        assertMessage("r.csv: line 2, column 9 (duration_s): 'x' is not a number", CSV.replace(",12.5,", ",x,"), "r.csv");
        assertMessage("r.csv: line 4, column 2 (policy_version): run 'r1' has policy 'p1' on an earlier line, not 'p2'",
                CSV.replace("r1,p1,e3", "r1,p2,e3"), "r.csv");
        assertMessage("r.csv: line 4, column 3 (episode_id): episode 'e1' of run 'r1' is there already (line 2)",
                CSV.replace("r1,p1,e3", "r1,p1,e1"), "r.csv");
        assertMessage("r.csv: line 3, column 5 (object): empty value", CSV.replace("e2,pick,cup", "e2,pick,"), "r.csv");
        assertMessage("r.csv: line 3: 11 values, the header has 12 columns", CSV.replace(",slip,yes,", ",slip,yes"),
                "r.csv");
        assertMessage("r.json: line 2, field success: 'sure' is not a boolean", "[{\"run_id\": \"r\","
                + " \"policy_version\": \"p\",\n\"episode_id\": \"e\", \"task\": \"t\", \"object\": \"o\", \"lighting\": \"l\","
                + " \"robot\": \"x\", \"success\": \"sure\"}]", "r.json");
        assertMessage("r.json: line 1: missing column 'success'", "[{\"run_id\": \"r\", \"policy_version\": \"p\","
                + " \"episode_id\": \"e\", \"task\": \"t\", \"object\": \"o\", \"lighting\": \"l\", \"robot\": \"x\"}]",
                "r.json");
        assertMessage("r.json: line 2, column", "[{\"run_id\": \"r\",\n \"x\" 1}]", "r.json");
        assertMessage("r.txt: not a results file", "a,b", "r.txt");
        assertMessage("r.csv: line 1, column 13 (object): column 'object' is given twice",
                CSV.replace(",scene\n", ",scene,object\n").replace("kitchen\n", "kitchen,x\n").replace(",\n", ",,x\n")
                        .replace("lab\n", "lab,x\n"), "r.csv");
        assertMessage("r.csv: line 1, column 13 (robot_id): both 'robot' and 'robot_id' are given",
                CSV.replace(",scene\n", ",scene,robot_id\n"), "r.csv");
        assertMessage("r.csv: line 1, column 13 (duration_ns): both 'duration_s' and 'duration_ns' are given",
                CSV.replace(",scene\n", ",scene,duration_ns\n"), "r.csv");
        String one = "{\"run_id\": \"r\", \"policy_version\": \"p\", \"episode_id\": \"e\", \"task\": \"t\","
                + " \"object\": \"o\", \"lighting\": \"l\", \"robot\": \"x\", \"success\": true";
        assertMessage("r.json: line 1, column 135 (field task): column 'task' is given twice", one + ", \"task\": \"u\"}",
                "r.json");
        assertMessage("r.jsonl: line 1, column 135 (field robot_id): both 'robot' and 'robot_id' are given",
                one + ", \"robot_id\": \"u\"}", "r.jsonl");
        assertMessage("r.json: line 1, column 135 (field object): column 'object' is given twice",
                one + ", \"object\": [\"cup\"]}", "r.json");
        assertMessage("r.json: line 1, column 17 (field policy_version): expected a string, got an object",
                one.replace("\"p\"", "{\"v\": 1}") + "}", "r.json");
        assertMessage("r.json: line 1, column 135 (field duration_s): expected a number, got an array",
                one + ", \"duration_s\": [1]}", "r.json");
        // --run / --policy beside a file's own run_id / policy_version with other values
        Path f = Files.writeString(dir.resolve("runs.csv"), CSV);
        BadInputException run = assertThrows(BadInputException.class, () -> EvalResultsFile.read(f, "r9", null));
        assertTrue(run.getMessage().startsWith(f + ": line 2, column 1 (run_id): run_id 'r1' but --run 'r9' was given"),
                run.getMessage());
        BadInputException pol = assertThrows(BadInputException.class, () -> EvalResultsFile.read(f, null, "p9"));
        assertTrue(pol.getMessage().startsWith(f + ": line 2, column 2 (policy_version): policy_version 'p1' but"
                + " --policy 'p9' was given"), pol.getMessage());
        assertEquals(3, EvalResultsFile.read(f, "r1", "p1").get(0).episodes().size(), "the same values are fine");
        // Latin-1 'é' (0xe9) on line 3: named with file, line and byte offset, not "Input length = 1"
        byte[] latin1 = CSV.replace("e2,pick,cup", "e2,pick,caf\u00e9").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        Path bytes = Files.write(dir.resolve("latin1.csv"), latin1);
        BadInputException e = assertThrows(BadInputException.class, () -> EvalResultsFile.read(bytes, null, null));
        int offset = CSV.indexOf("e2,pick,cup") + "e2,pick,caf".length();
        assertTrue(e.getMessage().startsWith(bytes + ": line 3, byte offset " + offset + ": not valid UTF-8"),
                e.getMessage());
    }

    private void assertMessage(String expected, String content, String name) throws Exception {
        Path f = Files.writeString(dir.resolve(name), content);
        BadInputException e = assertThrows(BadInputException.class, () -> EvalResultsFile.read(f, null, null));
        assertTrue(e.getMessage().startsWith(f.getParent() + "/" + expected), e.getMessage());
    }

    @Test
    void oneCommitPerFileNothingOnErrorAndRunsAreImmutable() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Path csv = Files.writeString(dir.resolve("r.csv"), CSV);
            long before = lake.snapshot().seq();
            Evaluations.IngestSummary s = Evaluations.ingest(lake, csv, null, null, null);
            assertEquals(before + 1, lake.refresh().seq());
            assertEquals(3, s.rows());
            assertEquals(List.of("p1"), s.newPolicies());
            assertEquals(EXPECTED, Evaluations.episodes(lake, "r1"));
            assertEquals(3, Evaluations.run(lake, "r1").episodeCount());

            Path bad = Files.writeString(dir.resolve("bad.csv"), CSV.replace("r1", "r2").replace(",12.5,", ",x,"));
            assertThrows(BadInputException.class, () -> Evaluations.ingest(lake, bad, null, null, null));
            assertEquals(before + 1, lake.refresh().seq());
            assertThrows(NotFoundException.class, () -> Evaluations.run(lake, "r2"));

            ConflictException c = assertThrows(ConflictException.class,
                    () -> Evaluations.ingest(lake, csv, null, null, null));
            assertTrue(c.getMessage().contains("run 'r1' is in the lake already"), c.getMessage());
            NotFoundException nf = assertThrows(NotFoundException.class, () -> Evaluations.run(lake, "nope"));
            assertEquals("no eval run 'nope' in the lake; runs there: r1", nf.getMessage());

            Path noRun = Files.writeString(dir.resolve("no-run.csv"), CSV.replace("run_id,policy_version,", "")
                    .replace("r1,p1,", ""));
            Evaluations.ingest(lake, noRun, "r1-again", "p2", null);
            assertEquals(2, Evaluations.runs(lake).size());
            try (var t = lake.table(EvalTables.POLICIES)) {
                assertEquals(2, t.countRows());
            }
            assertNull(Evaluations.episodes(lake, "r1-again").get(0).failureMode());
        }
    }
}
