package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.rows.TelemetryRow;

/**
 * Per robot-hour joint-temperature percentiles and alert counts over generated telemetry rows of the gateway's schema,
 * with values chosen so that every number is checked by hand.
 */
class TelemetryDetailTest {
    @TempDir
    Path dir;

    static final long H = 3_600_000_000_000L;
    static final long T0 = 1_767_225_600_000_000_000L; // 2026-01-01T00:00Z, an hour boundary

    static TelemetryRow temp(String robot, long ts, double... joints) {
        Map<String, Double> v = new LinkedHashMap<>();
        for (int i = 0; i < joints.length; i++) {
            v.put("j" + i, joints[i]);
        }
        return new TelemetryRow(robot, ts, ts, "joint_temp", TelemetryRow.TELEMETRY, 0, null,
                "fleet/" + robot + "/telemetry/joint_temp", v, null, null);
    }

    static TelemetryRow alert(String robot, long ts, int id) {
        return new TelemetryRow(robot, ts, ts, "estop", TelemetryRow.ALERT, 1, robot + "-" + id,
                "fleet/" + robot + "/alert/estop", Map.of(), "stop", null);
    }

    @Test
    void percentilesAndAlertsPerRobotHour() {
        List<TelemetryRow> rows = new ArrayList<>();
        // r1, hour 0: 50 messages of two joints, readings 1..100: p50 = 50.5, p99 = 99 + 0.01 * (100 - 99) = 99.01
        for (int i = 0; i < 50; i++) {
            rows.add(temp("r1", T0 + i * 1_000_000_000L, 2 * i + 1, 2 * i + 2));
        }
        rows.add(alert("r1", T0 + 10, 1));
        rows.add(alert("r1", T0 + 20, 2));
        rows.add(alert("r1", T0 + 2 * H + 5, 3)); // hour 2: an alert and no temperature
        rows.add(temp("r2", T0 + H + 7, 30, 40)); // hour 1 of r2: p50 35, p99 30 + 0.99 * 10 = 39.9
        rows.add(new TelemetryRow("r2", T0 + H, T0 + H, "battery", TelemetryRow.TELEMETRY, 0, null,
                "fleet/r2/telemetry/battery", Map.of("voltage", 48.0), null, null)); // not a temperature
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            lake.begin("telemetry").append(FleetTables.TELEMETRY_TABLE, rows, Set.of()).commit();
            TelemetryDetail d = TelemetryDetail.of(lake, new TelemetryDetail.Query(null, null, null, null));
            assertEquals(List.of(
                    new TelemetryDetail.Hour("r1", T0, 50.5, 99.01, 100, 2),
                    new TelemetryDetail.Hour("r1", T0 + 2 * H, null, null, 0, 1),
                    new TelemetryDetail.Hour("r2", T0 + H, 35.0, 39.9, 2, 0)), round(d.hours()));
            TelemetryDetail only = TelemetryDetail.of(lake, new TelemetryDetail.Query("r1", T0 + H, T0 + 3 * H, null));
            assertEquals(List.of(new TelemetryDetail.Hour("r1", T0 + 2 * H, null, null, 0, 1)), only.hours());
        }
    }

    private static List<TelemetryDetail.Hour> round(List<TelemetryDetail.Hour> hs) {
        return hs.stream().map(h -> new TelemetryDetail.Hour(h.robotId(), h.hourStartNs(),
                h.p50() == null ? null : Math.round(h.p50() * 1e9) / 1e9,
                h.p99() == null ? null : Math.round(h.p99() * 1e9) / 1e9, h.readings(), h.alerts())).toList();
    }
}
