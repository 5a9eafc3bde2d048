package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.rows.PolicyRow;

/**
 * The evaluation tables written with typed rows and read back as records, and a table handed to DuckDB as an Arrow
 * stream ({@link LakeTable#registerArrowStream}): the engine's aggregates equal the counts written, at the version
 * asked for, and every Arrow buffer is released (the table's allocator closes without a leak).
 */
class EvalTablesTest {
    @TempDir
    Path dir;

    static List<EvalEpisodeRow> rows(String run, int n) {
        List<EvalEpisodeRow> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new EvalEpisodeRow(run, run + "-" + i, "pick", i % 2 == 0 ? "cup" : "glass_cup", "bright",
                    i % 3 == 0 ? null : "kitchen", "arm-" + (i % 4), i % 5 != 0, i % 7 == 0 ? null : 1_000_000_000L * i,
                    i % 5 == 0 ? "slip" : null, i == 3));
        }
        return out;
    }

    @Test
    void rowsRoundTripAndDuckDbReadsTheStream() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            lake.begin("eval ingest")
                    .append(EvalTables.POLICIES_TABLE, List.of(new PolicyRow("p1", 5L, "{}")), Set.of("p1"))
                    .append(EvalTables.EVAL_RUNS_TABLE, List.of(new EvalRunRow("r1", "p1", 7L, "{\"a\":1}", 20)),
                            Set.of("r1"))
                    .append(EvalTables.EVAL_EPISODES_TABLE, rows("r1", 20), Set.of("r1"))
                    .commit();
            long v1;
            try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES)) {
                assertEquals(rows("r1", 20), t.rows(EvalTables.EVAL_EPISODES_TABLE, ScanRequest.all()));
                v1 = t.version();
            }
            try (LakeTable t = lake.table(EvalTables.EVAL_RUNS)) {
                assertEquals(List.of(new EvalRunRow("r1", "p1", 7L, "{\"a\":1}", 20)),
                        t.rows(EvalTables.EVAL_RUNS_TABLE, ScanRequest.all()));
            }
            lake.begin("eval ingest").append(EvalTables.EVAL_EPISODES_TABLE, rows("r2", 30), Set.of("r2")).commit();

            // latest: 50 rows; at v1: 20 rows, 16 successes (i % 5 != 0 for i < 20)
            assertEquals(List.of(50L, 40L), duck(lake, TableRef.latest()));
            assertEquals(List.of(20L, 16L), duck(lake, TableRef.version(v1)));
            // twice over the same table handle: a fresh stream per registration
            try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES);
                 Connection c = DriverManager.getConnection("jdbc:duckdb:")) {
                for (int k = 0; k < 2; k++) {
                    try (ArrowStreamRegistration r = t.registerArrowStream(c, "e" + k, ScanRequest.builder()
                            .filter("object = 'cup'").build()); Statement s = c.createStatement();
                         ResultSet rs = s.executeQuery("SELECT count(*), count(duration_ns) FROM e" + k)) {
                        rs.next();
                        assertEquals(25, rs.getLong(1));
                    }
                }
            }
        }
    }

    @Test
    void aScanSplitIntoStreamsByFragmentGivesEveryRowOnce() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake3"))) {
            for (int k = 0; k < 3; k++) { // three commits: three fragments
                lake.begin("eval ingest").append(EvalTables.EVAL_EPISODES_TABLE, rows("r" + k, 10 + k),
                        Set.of("r" + k)).commit();
            }
            try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES)) {
                assertEquals(3, t.dataFiles().stream().map(DataFileRef::fragmentId).distinct().count());
                for (int parts : new int[] {1, 2, 3, 8}) {
                    try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                         ArrowStreamRegistration r = t.registerArrowStreams(c, "e", ScanRequest.builder()
                                 .columns(EvalTables.RUN_ID, TableSchemas.EPISODE_ID).build(), parts);
                         Statement s = c.createStatement();
                         ResultSet rs = s.executeQuery("SELECT count(*), count(DISTINCT episode_id) FROM e")) {
                        rs.next();
                        assertEquals(33, rs.getLong(1), "parts " + parts);
                        assertEquals(33, rs.getLong(2), "parts " + parts);
                    }
                }
            }
        }
    }

    @Test
    void aConnectionOfAnotherEngineIsRefusedByName() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake2"))) {
            lake.begin("eval ingest").append(EvalTables.EVAL_EPISODES_TABLE, rows("r1", 3), Set.of("r1")).commit();
            try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES)) {
                Connection notDuck = (Connection) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                        new Class<?>[] {Connection.class}, (p, m, a) -> {
                            if (m.getName().equals("unwrap")) {
                                throw new java.sql.SQLException("not a wrapper");
                            }
                            return null;
                        });
                var e = assertThrows(io.flywheel.error.BadInputException.class,
                        () -> t.registerArrowStream(notDuck, "x", ScanRequest.all()));
                org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("only DuckDB"), e.getMessage());
            }
        }
    }

    private static List<Long> duck(Lake lake, TableRef ref) throws Exception {
        try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES, ref)) {
            try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                 ArrowStreamRegistration r = t.registerArrowStream(c, "eval_episodes", ScanRequest.all());
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*), sum(CASE WHEN success THEN 1 ELSE 0 END)"
                         + " FROM eval_episodes")) {
                rs.next();
                return List.of(rs.getLong(1), rs.getLong(2));
            }
        }
    }
}
