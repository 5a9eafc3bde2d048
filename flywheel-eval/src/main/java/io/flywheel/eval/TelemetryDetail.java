package io.flywheel.eval;

import java.util.ArrayList;
import java.util.List;

import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.TelemetryRow;

/**
 * Fleet telemetry detail by robot and hour ({@code flywheel telemetry hourly}): per robot and UTC hour of {@code ts_ns}
 * (robot clock), the median and 99th percentile (DuckDB's {@code quantile_cont}: linear interpolation between the
 * closest ranks) of every reading of the joint-temperature messages ({@code kind = joint_temp}: one value per joint,
 * in the robot's unit, degrees Celsius by convention), how many readings that was, and the alerts
 * ({@code message_class = alert}) in the hour. Two Lance scans of {@code telemetry} (the temperatures and the alerts,
 * each with the robot and time filter pushed into Lance) handed to DuckDB as Arrow streams.
 *
 * @param hours one per robot-hour with a temperature or an alert, by robot then hour
 */
public record TelemetryDetail(List<Hour> hours) {
    /** The temperature kind read by default. */
    public static final String JOINT_TEMP = "joint_temp";

    /**
     * One robot-hour.
     *
     * @param robotId the robot
     * @param hourStartNs the hour's start, ns since the Unix epoch (UTC)
     * @param p50 median reading, or null without readings
     * @param p99 99th percentile, or null
     * @param readings joint readings in the hour
     * @param alerts alert messages in the hour
     */
    public record Hour(String robotId, long hourStartNs, Double p50, Double p99, long readings, long alerts) {}

    /** What to read: an optional robot and a time range [since, until) of ts_ns. */
    public record Query(String robotId, Long sinceNs, Long untilNs, String kind) {
        String filter(String extra) {
            List<String> w = new ArrayList<>();
            w.add(extra);
            if (robotId != null) {
                w.add(TableSchemas.ROBOT_ID + " = " + Sql.quote(robotId));
            }
            if (sinceNs != null) {
                w.add(FleetTables.TS_NS + " >= " + sinceNs);
            }
            if (untilNs != null) {
                w.add(FleetTables.TS_NS + " < " + untilNs);
            }
            return String.join(" AND ", w);
        }
    }

    private static final long HOUR_NS = 3_600_000_000_000L;

    /** @return the detail; empty for a lake without a telemetry table */
    public static TelemetryDetail of(Lake lake, Query q) {
        if (!lake.hasTable(FleetTables.TELEMETRY)) {
            return new TelemetryDetail(List.of());
        }
        String kind = q.kind() == null ? JOINT_TEMP : q.kind();
        String sql = "WITH temps AS (SELECT robot_id, ts_ns // " + HOUR_NS + " AS hour, quantile_cont(v.value, 0.5)"
                + " AS p50, quantile_cont(v.value, 0.99) AS p99, count(*) AS readings FROM (SELECT robot_id, ts_ns,"
                + " unnest(\"values\") AS v FROM temps_src) GROUP BY ALL),"
                + " alerts AS (SELECT robot_id, ts_ns // " + HOUR_NS + " AS hour, count(*) AS alerts FROM alerts_src"
                + " GROUP BY ALL)"
                + " SELECT robot_id, hour, p50, p99, coalesce(readings, 0), coalesce(alerts, 0) FROM temps"
                + " FULL JOIN alerts USING (robot_id, hour) ORDER BY robot_id, hour";
        LakeSql.Result r;
        try (LakeSql s = LakeSql.open(lake)) {
            s.table(FleetTables.TELEMETRY, "temps_src", TableRef.latest(), ScanRequest.builder()
                    .columns(TableSchemas.ROBOT_ID, FleetTables.TS_NS, FleetTables.VALUES)
                    .filter(q.filter(FleetTables.KIND + " = " + Sql.quote(kind))).batchSize(LakeSql.BATCH_ROWS).build());
            s.table(FleetTables.TELEMETRY, "alerts_src", TableRef.latest(), ScanRequest.builder()
                    .columns(TableSchemas.ROBOT_ID, FleetTables.TS_NS)
                    .filter(q.filter(FleetTables.MESSAGE_CLASS + " = " + Sql.quote(TelemetryRow.ALERT)))
                    .batchSize(LakeSql.BATCH_ROWS).build());
            r = s.query(sql);
        }
        List<Hour> out = new ArrayList<>();
        for (List<Object> row : r.rows()) {
            out.add(new Hour((String) row.get(0), ((Number) row.get(1)).longValue() * HOUR_NS,
                    row.get(2) == null ? null : ((Number) row.get(2)).doubleValue(),
                    row.get(3) == null ? null : ((Number) row.get(3)).doubleValue(),
                    ((Number) row.get(4)).longValue(), ((Number) row.get(5)).longValue()));
        }
        return new TelemetryDetail(out);
    }
}
