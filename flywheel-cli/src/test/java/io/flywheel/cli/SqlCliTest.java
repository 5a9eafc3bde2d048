package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableSchemas;
import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel sql}: DuckDB over the lake's tables (episodes and frames of one BridgeData recording, the eval
 * tables), counts equal to the lake's own; {@code --at TABLE=TAG} and {@code --at TABLE=VERSION} read the pinned
 * versions; --json and --parquet; bad SQL and an unknown tag are exit 1, a malformed --at exit 2.
 */
class SqlCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;
    static String lake;
    static long frames;
    static long evalV1;

    @BeforeAll
    static void build() throws Exception {
        lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap/bridge_ep00.mcap").toString());
        assertEquals(0, in.exitCode(), in.err());
        Files.writeString(tmp.resolve("a.csv"), EvalCliTest.csv("a", 30, 36, 3));
        assertEquals(0, CliRun.of("eval", "ingest", lake, tmp.resolve("a.csv").toString(), "--run", "A", "--policy",
                "p1").exitCode());
        try (Lake l = Lake.open(lake)) {
            l.begin("tag").tag("eval-v1", List.of(EvalTables.EVAL_EPISODES)).commit();
            try (LakeTable t = l.table(TableSchemas.FRAMES)) {
                frames = t.countRows();
            }
            try (LakeTable t = l.table(EvalTables.EVAL_EPISODES)) {
                evalV1 = t.version();
            }
        }
        assertEquals(0, CliRun.of("eval", "ingest", lake, tmp.resolve("a.csv").toString(), "--run", "B", "--policy",
                "p1").exitCode());
        try (Lake l = Lake.open(lake)) { // telemetry rows of the gateway's schema: two hours of robot r1
            java.util.List<io.flywheel.rows.TelemetryRow> rows = new java.util.ArrayList<>();
            long t0 = 1_767_225_600_000_000_000L;
            for (int i = 0; i < 10; i++) {
                rows.add(new io.flywheel.rows.TelemetryRow("r1", t0 + i * 720_000_000_000L, t0, "joint_temp",
                        "telemetry", 0, null, "fleet/r1/telemetry/joint_temp", java.util.Map.of("j0", 40.0 + i), null,
                        null));
            }
            rows.add(new io.flywheel.rows.TelemetryRow("r1", t0 + 1, t0, "estop", "alert", 1, "a1",
                    "fleet/r1/alert/estop", java.util.Map.of(), null, null));
            l.begin("telemetry").append(io.flywheel.lake.FleetTables.TELEMETRY_TABLE, rows, java.util.Set.of())
                    .commit();
        }
    }

    @Test
    void telemetryHourly() throws Exception {
        // every 12 minutes: hour 0 holds readings 40..44 (p50 42), hour 1 45..49 (p50 47); one alert in hour 0
        CliRun r = CliRun.of("telemetry", "hourly", lake);
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("r1     2026-01-01T00:00:00Z  42.00"), r.out());
        assertTrue(r.out().contains("2 robot-hour(s) of 1 robot(s): 10 joint_temp reading(s), 1 alert(s)"), r.out());
        JsonNode j = JSON.readTree(CliRun.of("telemetry", "hourly", lake, "--since", "2026-01-01T01:00:00Z", "--json")
                .out());
        assertEquals(1, j.get("hours").size());
        assertEquals(47.0, j.get("hours").get(0).get("p50").asDouble(), 1e-9);
        assertEquals(48.96, j.get("hours").get(0).get("p99").asDouble(), 1e-9);
        JsonNode tel = JSON.readTree(CliRun.of("sql", lake, "SELECT count(*) FROM telemetry", "--json").out());
        assertEquals(11, tel.get("rows").get(0).get(0).asLong());
    }

    @Test
    void queriesOverLakeTablesAtVersions() throws Exception {
        CliRun r = CliRun.of("sql", lake, "SELECT e.episode_id, count(*) AS n FROM frames f JOIN episodes e"
                + " USING (episode_id) GROUP BY ALL");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains(" " + frames + "\n"), r.out());
        assertTrue(r.out().contains("1 row(s) in ") && r.out().contains("read frames v"), r.out());

        JsonNode latest = JSON.readTree(CliRun.of("sql", lake, "SELECT count(*) AS n, count(DISTINCT run_id) AS runs"
                + " FROM eval_episodes", "--json").out());
        assertEquals(168, latest.get("rows").get(0).get(0).asLong());
        JsonNode tagged = JSON.readTree(CliRun.of("sql", lake, "SELECT count(*) FROM eval_episodes", "--at",
                "eval_episodes=eval-v1", "--json").out());
        assertEquals(84, tagged.get("rows").get(0).get(0).asLong());
        assertEquals(evalV1, tagged.get("table_versions").get("eval_episodes").asLong());
        JsonNode byNumber = JSON.readTree(CliRun.of("sql", lake, "SELECT count(*) FROM eval_episodes", "--at",
                "eval_episodes=" + evalV1, "--json").out());
        assertEquals(84, byNumber.get("rows").get(0).get(0).asLong());

        Path pq = tmp.resolve("out.parquet");
        CliRun p = CliRun.of("sql", lake, "SELECT object, avg(success::INT) AS rate FROM eval_episodes GROUP BY object",
                "--parquet", pq.toString());
        assertEquals(0, p.exitCode(), p.err());
        assertTrue(p.out().startsWith("wrote 3 row(s) to "), p.out());
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT rate FROM read_parquet('" + pq + "') WHERE object = 'glass'")) {
            rs.next();
            assertEquals(0.9, rs.getDouble(1), 1e-12);
        }
        // a table read twice, through a materialized CTE
        CliRun self = CliRun.of("sql", lake, "WITH e AS MATERIALIZED (SELECT * FROM eval_episodes) SELECT count(*)"
                + " FROM e a JOIN e b USING (run_id, episode_id)", "--json");
        assertEquals(0, self.exitCode(), self.err());
        assertEquals(168, JSON.readTree(self.out()).get("rows").get(0).get(0).asLong());
    }

    @Test
    void blobsStructsAndListsAreShownWithoutJavaClassNames() throws Exception {
        String q = "SELECT 'ab'::BLOB AS b, {'x': 1, 'y': 'q'} AS s, [1, 2] AS l, [{'k': 'v'}] AS ls";
        CliRun text = CliRun.of("sql", lake, q);
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("<blob 2 bytes>"), text.out());
        assertTrue(text.out().contains("{x: 1, y: 'q'}") && text.out().contains("[1, 2]")
                && text.out().contains("[{k: 'v'}]"), text.out());
        assertTrue(!text.out().contains("DuckDB") && !text.out().contains("java."), text.out());
        CliRun json = CliRun.of("sql", lake, q, "--json");
        assertEquals(0, json.exitCode(), json.err());
        JsonNode row = JSON.readTree(json.out()).get("rows").get(0);
        assertEquals("YWI=", row.get(0).get("base64").asText());
        assertEquals(2, row.get(0).get("bytes").asInt());
        assertEquals(1, row.get(1).get("x").asInt());
        assertEquals("q", row.get(1).get("y").asText());
        assertEquals(2, row.get(2).get(1).asInt());
        assertEquals("v", row.get(3).get(0).get("k").asText());
    }

    @Test
    void statementsWithoutAResultSetRunAndSaySo() throws Exception {
        CliRun create = CliRun.of("sql", lake, "CREATE TABLE x AS SELECT 1 AS a");
        assertEquals(0, create.exitCode(), create.err());
        assertTrue(create.out().startsWith("statement ran; no rows"), create.out());
        Path csv = tmp.resolve("copied.csv");
        CliRun copy = CliRun.of("sql", lake, "COPY (SELECT 42 AS answer) TO '" + csv + "' (HEADER)", "--json");
        assertEquals(0, copy.exitCode(), copy.err());
        assertTrue(JSON.readTree(copy.out()).get("statement").asBoolean(), copy.out());
        assertTrue(Files.readString(csv).contains("42"));
    }

    /** As most commands: a success's --json has no "ok" (a failure's has "ok": false, README). */
    @Test
    void successfulJsonHasNoOkFieldAsMostCommands() throws Exception {
        String other = tmp.resolve("lake-ok").toString();
        assertEquals(0, CliRun.of("init", other).exitCode());
        CliRun in = CliRun.of("eval", "ingest", other, tmp.resolve("a.csv").toString(), "--run", "C", "--policy", "p1",
                "--json");
        assertEquals(0, in.exitCode(), in.err());
        for (CliRun r : List.of(in, CliRun.of("eval", "runs", other, "--json"), CliRun.of("sql", other, "SELECT 1",
                "--json"))) {
            assertTrue(!JSON.readTree(r.out()).has("ok"), r.out());
        }
    }

    @Test
    void errors() throws Exception {
        CliRun bad = CliRun.of("sql", lake, "SELEKT 1", "--json");
        assertEquals(1, bad.exitCode());
        assertEquals("bad_input", JSON.readTree(bad.out()).get("error").get("kind").asText());
        CliRun col = CliRun.of("sql", lake, "SELECT no_such_column FROM episodes");
        assertEquals(1, col.exitCode());
        assertTrue(col.err().contains("no_such_column"), col.err());
        CliRun table = CliRun.of("sql", lake, "SELECT * FROM no_such_table");
        assertEquals(1, table.exitCode());
        assertTrue(table.err().contains("no_such_table") && table.err().contains("the lake's tables: ")
                && table.err().contains("eval_episodes, eval_runs"), table.err());
        CliRun tag = CliRun.of("sql", lake, "SELECT count(*) FROM episodes", "--at", "episodes=nope");
        assertEquals(1, tag.exitCode());
        assertTrue(tag.err().contains("nope"), tag.err());
        assertEquals(2, CliRun.of("sql", lake, "SELECT 1", "--at", "episodes").exitCode());
        CliRun twice = CliRun.of("sql", lake, "SELECT count(*) FROM eval_episodes a JOIN eval_episodes b USING"
                + " (run_id, episode_id)", "--json");
        assertEquals(0, twice.exitCode(), twice.err()); // a self-join: each table materialized once
        CliRun once = CliRun.of("sql", lake, "SELECT count(*) FROM eval_episodes", "--json");
        long n = JSON.readTree(once.out()).get("rows").get(0).get(0).asLong();
        assertTrue(n > 0, once.out());
        assertEquals(n, JSON.readTree(twice.out()).get("rows").get(0).get(0).asLong(), twice.out());
        assertTrue(bad.noStackTrace() && col.noStackTrace() && tag.noStackTrace());
    }
}
