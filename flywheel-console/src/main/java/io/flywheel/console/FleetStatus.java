package io.flywheel.console;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.upload.StagedUpload;
import io.flywheel.fleet.upload.Staging;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.TelemetryRow;

/**
 * The fleet as the lake and its gateway's folders show it, for the console's fleet page: the robots (those with a
 * token, a folder of uploads or staged uploads, episodes, or telemetry among the newest {@value #RECENT_ROWS} rows),
 * each with its last heartbeat (gateway clock, and its age), last battery reading, episodes, files landed by the
 * gateway in {@code raw/<robot>/} and how many of them are ingested or waiting for ingest, uploads whose ingest failed
 * (moved out of the raw layer); the newest alerts; and the uploads in progress (staged bytes of the declared size).
 * Read only: the staging folder is read as it is ({@link Staging#list}), never repaired. The gateway of an
 * {@code s3://} lake stages in a spool folder of its own, which the console does not see: no uploads are listed.
 */
final class FleetStatus {
    /** Telemetry rows looked at for robots that have nothing else in the lake. */
    static final int RECENT_ROWS = 10_000;
    /** Alerts listed. */
    static final int ALERTS = 20;

    private FleetStatus() {}

    static Map<String, Object> of(Lake lake) {
        long now = System.currentTimeMillis() * 1_000_000L;
        Map<String, Robot> robots = new TreeMap<>();
        for (RobotTokens.TokenInfo t : RobotTokens.of(lake).list()) {
            robot(robots, t.robotId()).tokens++;
        }
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            String robotGiven = TableSchemas.ROBOT_ID + " IS NOT NULL AND " + TableSchemas.ROBOT_ID + " <> ''"; // no robot: ''
            t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID).filter(robotGiven).build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            robot(robots, b.column(TableSchemas.ROBOT_ID).getString(i)).episodes++;
                        }
                    });
        }
        Set<String> ingested = new TreeSet<>();
        try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
            t.scan(ScanRequest.builder().columns(TableSchemas.SHA256).build(), b -> {
                for (int i = 0; i < b.rowCount(); i++) {
                    ingested.add(b.column(TableSchemas.SHA256).getString(i));
                }
            });
        }
        boolean local = !lake.location().startsWith("s3://");
        List<Map<String, Object>> uploads = new ArrayList<>();
        if (local) {
            Staging staging = new Staging(Path.of(lake.location()));
            List<Staging.Staged> staged = staging.list();
            Set<String> failed = new TreeSet<>();
            for (Staging.Staged st : staged) {
                if (StagedUpload.INGEST_FAILED.equals(st.upload().state())) {
                    robot(robots, st.upload().robotId()).ingestFailed++;
                    failed.add(st.upload().sha256());
                }
            }
            for (Staging.Landed f : staging.landed()) {
                if (f.sidecar()) {
                    continue;
                }
                Robot r = robot(robots, f.robotId());
                r.landed++;
                if (f.sha256() != null && ingested.contains(f.sha256())) {
                    r.ingested++;
                } else if (f.sha256() == null || !failed.contains(f.sha256())) {
                    r.waiting++;
                }
            }
            for (Staging.Staged s : staged) {
                StagedUpload u = s.upload();
                Robot r = robot(robots, u.robotId());
                if (!StagedUpload.STAGING.equals(u.state())) {
                    continue;
                }
                r.uploading++;
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("robot_id", u.robotId());
                m.put("upload_id", u.uploadId());
                m.put("file_name", u.fileName());
                m.put("episode_id", u.episodeId());
                m.put("kind", u.kind());
                m.put("sha256", u.sha256());
                m.put("staged_bytes", s.stagedBytes());
                m.put("size_bytes", u.sizeBytes());
                m.put("percent", u.sizeBytes() == 0 ? 100.0
                        : Math.round(1000.0 * s.stagedBytes() / u.sizeBytes()) / 10.0);
                m.put("started_ns", u.createdAtNs());
                m.put("updated_ns", u.updatedAtNs());
                m.put("idle_s", Math.max(0, now - u.updatedAtNs()) / 1e9);
                uploads.add(m);
            }
        }
        List<Map<String, Object>> alerts = new ArrayList<>();
        long telemetryRows = 0;
        if (lake.hasTable(FleetTables.TELEMETRY)) {
            try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
                telemetryRows = t.countRows();
                t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID, FleetTables.RECEIVED_NS).limit(RECENT_ROWS)
                        .orderBy(ScanRequest.SortKey.desc(FleetTables.RECEIVED_NS)).build(), b -> {
                            for (int i = 0; i < b.rowCount(); i++) {
                                robot(robots, b.column(TableSchemas.ROBOT_ID).getString(i));
                            }
                        });
                for (Robot r : robots.values()) {
                    r.heartbeat = last(t, r.id, "heartbeat");
                    r.battery = last(t, r.id, "battery");
                }
                for (TelemetryRow a : t.rows(FleetTables.TELEMETRY_TABLE, ScanRequest.builder().limit(ALERTS)
                        .filter(FleetTables.MESSAGE_CLASS + " = " + Sql.quote(TelemetryRow.ALERT))
                        .orderBy(ScanRequest.SortKey.desc(FleetTables.TS_NS)).build())) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("robot_id", a.robotId());
                    m.put("kind", a.kind());
                    m.put("ts_ns", a.tsNs());
                    m.put("received_ns", a.receivedNs());
                    m.put("message_id", a.messageId());
                    m.put("text", a.text());
                    m.put("values", a.values());
                    m.put("episode_id", a.episodeId());
                    alerts.add(m);
                }
            }
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        long landed = 0;
        long ingestedTotal = 0;
        for (Robot r : robots.values()) {
            rows.add(r.json(now));
            landed += r.landed;
            ingestedTotal += r.ingested;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("now_ns", now);
        out.put("local_staging", local);
        Map<String, Object> totals = new LinkedHashMap<>();
        totals.put("robots", robots.size());
        totals.put("landed", landed);
        totals.put("ingested", ingestedTotal);
        totals.put("waiting_for_ingest", robots.values().stream().mapToLong(r -> r.waiting).sum());
        totals.put("uploading", uploads.size());
        totals.put("telemetry_rows", telemetryRows);
        out.put("totals", totals);
        out.put("robots", rows);
        out.put("alerts", alerts);
        out.put("uploads", uploads);
        return out;
    }

    private static TelemetryRow last(LakeTable t, String robot, String kind) {
        List<TelemetryRow> r = t.rows(FleetTables.TELEMETRY_TABLE, ScanRequest.builder().limit(1)
                .filter(TableSchemas.ROBOT_ID + " = " + Sql.quote(robot) + " AND " + FleetTables.KIND + " = "
                        + Sql.quote(kind))
                .orderBy(ScanRequest.SortKey.desc(FleetTables.RECEIVED_NS)).build());
        return r.isEmpty() ? null : r.get(0);
    }

    private static Robot robot(Map<String, Robot> robots, String id) {
        return robots.computeIfAbsent(id, Robot::new);
    }

    /** What is known of one robot. */
    private static final class Robot {
        final String id;
        int tokens;
        long episodes;
        long landed;
        long ingested;
        long ingestFailed;
        long waiting;
        long uploading;
        TelemetryRow heartbeat;
        TelemetryRow battery;

        Robot(String id) {
            this.id = id;
        }

        Map<String, Object> json(long now) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("robot_id", id);
            m.put("tokens", tokens);
            m.put("last_heartbeat_ts_ns", heartbeat == null ? null : heartbeat.tsNs());
            m.put("last_heartbeat_received_ns", heartbeat == null ? null : heartbeat.receivedNs());
            m.put("heartbeat_age_s", heartbeat == null ? null : Math.max(0, now - heartbeat.receivedNs()) / 1e9);
            m.put("battery", battery == null ? null : battery.values());
            m.put("episodes", episodes);
            m.put("landed", landed);
            m.put("ingested", ingested);
            m.put("ingest_failed", ingestFailed);
            m.put("waiting_for_ingest", waiting);
            m.put("uploading", uploading);
            return m;
        }
    }
}
