package io.flywheel.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import io.flywheel.eval.LakeSql;
import io.flywheel.lake.EvalTables;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;
import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.TelemetryRow;

/**
 * OLAP over the lake: DuckDB over Lance scans handed as Arrow streams (Flywheel's path: {@link LakeSql}, the columns
 * and the filter pushed into the Lance scan) against DuckDB over Parquet files of the same rows (written by DuckDB from
 * the lake, sorted, row groups of 1,000,000 rows), in the same run and JVM.
 * <ul>
 *   <li>cube: success count, rollouts and mean duration by task x object x lighting x robot over E eval rows;</li>
 *   <li>telemetry range scan: one robot over one day of T telemetry rows (100 robots, 30 days, one joint_temp message
 *       of 7 joints per row): per-hour p50/p99 of the readings.</li>
 * </ul>
 * Each query runs once to warm up, then R times; the median is printed. Arguments: folder (must not exist), E, T, R.
 * Prints one JSON line.
 */
public final class OlapBench {
    private OlapBench() {}

    static final String[] TASKS = {"pick_place", "stack", "wipe", "pour"};
    static final String[] OBJECTS = {"cup", "bowl", "glass_cup", "sponge", "bottle", "plate", "fork", "box"};
    static final String[] LIGHTINGS = {"bright", "dim", "backlit"};
    static final long DAY_NS = 86_400_000_000_000L;
    static final long T0 = 1_767_225_600_000_000_000L;
    static final int BATCH = Integer.getInteger("olap.batch", LakeSql.BATCH_ROWS);

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long evalRows = Long.parseLong(args[1]);
        long telemetryRows = Long.parseLong(args[2]);
        int repeats = Integer.parseInt(args[3]);
        Files.createDirectories(dir);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("eval_rows", evalRows);
        out.put("telemetry_rows", telemetryRows);
        out.put("cores", Runtime.getRuntime().availableProcessors());
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            long t = System.nanoTime();
            lake.begin("bench eval").append(EvalTables.EVAL_EPISODES_TABLE, () -> evalRows(evalRows), Set.of("bench"))
                    .commit();
            out.put("eval_write_s", secs(t));
            t = System.nanoTime();
            lake.begin("bench telemetry").append(FleetTables.TELEMETRY_TABLE, () -> telemetry(telemetryRows),
                    Set.of()).commit();
            out.put("telemetry_write_s", secs(t));

            Path evalPq = dir.resolve("eval_episodes.parquet");
            Path telPq = dir.resolve("telemetry.parquet");
            t = System.nanoTime();
            try (LakeSql s = LakeSql.open(lake)) {
                s.table(EvalTables.EVAL_EPISODES, TableRef.latest(), ScanRequest.all());
                s.copyToParquet("SELECT * FROM eval_episodes ORDER BY robot_id, run_id, episode_id", evalPq, 1_000_000);
            }
            try (LakeSql s = LakeSql.open(lake)) {
                s.table(FleetTables.TELEMETRY, TableRef.latest(), ScanRequest.all());
                s.copyToParquet("SELECT * FROM telemetry ORDER BY robot_id, ts_ns", telPq, 1_000_000);
            }
            out.put("parquet_write_s", secs(t));
            out.put("lake_bytes", size(dir.resolve("lake")));
            out.put("eval_parquet_bytes", Files.size(evalPq));
            out.put("telemetry_parquet_bytes", Files.size(telPq));

            String cube = "SELECT task, object, lighting, robot_id, count(*) AS n, sum(CASE WHEN success THEN 1 ELSE 0"
                    + " END) AS k, avg(duration_ns) AS d FROM %s GROUP BY ALL";
            List<String> cubeCols = List.of("task", "object", "lighting", "robot_id", "success", "duration_ns");
            long[] rows = new long[1];
            double lanceCube = median(repeats, () -> {
                try (LakeSql s = LakeSql.open(lake)) {
                    s.table(EvalTables.EVAL_EPISODES, TableRef.latest(), ScanRequest.builder()
                            .columns(cubeCols.toArray(String[]::new)).batchSize(BATCH).build());
                    rows[0] = s.query(String.format(Locale.ROOT, cube, "eval_episodes")).rows().size();
                }
            });
            out.put("cube_cells", rows[0]);
            double parquetCube = median(repeats, () -> duck(String.format(Locale.ROOT, cube,
                    "read_parquet('" + evalPq + "')")));
            String robot = "r042";
            long from = T0 + 10 * DAY_NS;
            long to = from + DAY_NS;
            String hourly = "SELECT ts_ns // 3600000000000 AS hour, quantile_cont(v.value, 0.5) AS p50,"
                    + " quantile_cont(v.value, 0.99) AS p99, count(*) AS readings FROM (SELECT ts_ns, unnest(\"values\")"
                    + " AS v FROM %s%s) GROUP BY ALL ORDER BY hour";
            String where = " WHERE robot_id = '" + robot + "' AND ts_ns >= " + from + " AND ts_ns < " + to;
            double lanceScan = median(repeats, () -> {
                try (LakeSql s = LakeSql.open(lake)) {
                    s.table(FleetTables.TELEMETRY, TableRef.latest(), ScanRequest.builder().columns("robot_id",
                            "ts_ns", "values").filter(where.substring(7)).batchSize(BATCH).build());
                    rows[0] = s.query(String.format(Locale.ROOT, hourly, "telemetry", "")).rows().size();
                }
            });
            out.put("scan_hours", rows[0]);
            double parquetScan = median(repeats, () -> duck(String.format(Locale.ROOT, hourly,
                    "read_parquet('" + telPq + "')", where)));
            out.put("cube_lance_s", lanceCube);
            out.put("cube_parquet_s", parquetCube);
            out.put("scan_lance_s", lanceScan);
            out.put("scan_parquet_s", parquetScan);
        }
        System.out.println(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(out));
    }

    private static long duck(String sql) {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            long n = 0;
            while (rs.next()) {
                n++;
            }
            return n;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static double median(int repeats, Runnable r) {
        r.run();
        double[] t = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            long t0 = System.nanoTime();
            r.run();
            t[i] = secs(t0);
        }
        Arrays.sort(t);
        return t[repeats / 2];
    }

    private static double secs(long t0) {
        return Math.round((System.nanoTime() - t0) / 1e6) / 1000.0;
    }

    private static long size(Path dir) throws Exception {
        try (var s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static Iterator<EvalEpisodeRow> evalRows(long n) {
        SplittableRandom rnd = new SplittableRandom(7);
        return new Iterator<>() {
            long i;

            public boolean hasNext() {
                return i < n;
            }

            public EvalEpisodeRow next() {
                long k = i++;
                boolean ok = rnd.nextDouble() < 0.8;
                return new EvalEpisodeRow("run-" + (k / 100_000), "ep-" + k, TASKS[rnd.nextInt(TASKS.length)],
                        OBJECTS[rnd.nextInt(OBJECTS.length)], LIGHTINGS[rnd.nextInt(LIGHTINGS.length)], "lab",
                        "arm-" + rnd.nextInt(100), ok, 8_000_000_000L + rnd.nextLong(12_000_000_000L),
                        ok ? null : "slip", false);
            }
        };
    }

    /** Rows in robot-then-time order of 100 robots over 30 days, evenly spaced: the order a gateway's table has. */
    private static Iterator<TelemetryRow> telemetry(long n) {
        SplittableRandom rnd = new SplittableRandom(11);
        long perRobot = Math.max(1, n / 100);
        long step = 30 * DAY_NS / perRobot;
        return new Iterator<>() {
            long i;

            public boolean hasNext() {
                return i < n;
            }

            public TelemetryRow next() {
                long k = i++;
                int robot = (int) Math.min(99, k / perRobot);
                long ts = T0 + (k % perRobot) * step;
                Map<String, Double> v = new LinkedHashMap<>();
                for (int j = 0; j < 7; j++) {
                    v.put("j" + j, 35 + 10 * rnd.nextDouble());
                }
                String id = String.format(Locale.ROOT, "r%03d", robot);
                return new TelemetryRow(id, ts, ts, "joint_temp", TelemetryRow.TELEMETRY, 0, null,
                        "fleet/" + id + "/telemetry/joint_temp", v, null, null);
            }
        };
    }
}
