package io.flywheel.fleet.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.RowBatch;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.TelemetryRow;

/**
 * Checks a {@link LiveFleet} run against the gateway's lake: every episode the gateway took is in {@code raw_files}
 * exactly once under its SHA-256 with exactly one {@code episodes} row of its recording, every QoS 1 and QoS 2 message
 * the robots published is in {@code telemetry} exactly once by {@code (robot_id, message_id)} with its {@code ts_ns}
 * (injected duplicates and redeliveries after reconnects collapsed; a row of another message under the same id does
 * not count), and every alert linked to an episode is linked to the one its robot was
 * recording. Telemetry arrives in micro-batches and episodes through the ingest queue, so the check waits for them
 * (at most {@code wait}) before it counts; alerts not linked yet are counted, not failed (the gateway links them within
 * seconds of their episode's ingest).
 */
public final class LiveCheck {
    private static final int IN_LIST = 500;

    private LiveCheck() {}

    /**
     * What the lake holds of a run.
     *
     * @param episodes episodes the gateway took (landed in this run or before)
     * @param episodesOnce of those, in raw_files once with one episodes row
     * @param messages QoS 1 and 2 messages published
     * @param messagesOnce of those, in telemetry exactly once
     * @param alerts alerts (QoS 1 class alert) published
     * @param alertsLinked of those, linked to the right episode
     * @param problems what is wrong, one line each (at most 20 named, then a count); empty when all is well
     */
    public record Result(int episodes, int episodesOnce, int messages, int messagesOnce, int alerts, int alertsLinked,
            List<String> problems) {
        /** @return whether every episode and message is in the lake exactly once and no alert is linked wrongly */
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    /**
     * @param lake the gateway's lake (local or S3)
     * @param report the run
     * @param wait how long to wait for the last telemetry batches, ingests and alert links
     * @return the result
     */
    public static Result check(Lake lake, LiveFleetReport report, Duration wait) throws InterruptedException {
        List<LiveFleetReport.Episode> episodes = report.episodeList().stream()
                .filter(e -> !e.state().equals("REFUSED")).toList();
        long end = System.nanoTime() + wait.toNanos();
        Counts c;
        while (true) {
            c = counts(lake, report, episodes);
            boolean arrived = c.raw.keySet().containsAll(c.wantedSha) && c.rows.keySet().containsAll(c.wantedIds)
                    && c.recordingsWithEpisode() >= c.recordingOf.size();
            if (arrived && c.linked + c.wrongLinks.size() >= c.alerts || System.nanoTime() > end) {
                break;
            }
            Thread.sleep(250);
        }
        List<String> problems = new ArrayList<>();
        int episodesOnce = 0;
        for (LiveFleetReport.Episode e : episodes) {
            int n = c.raw.getOrDefault(e.sha256(), 0);
            String rec = c.recordingOf.get(e.sha256());
            int eps = rec == null ? 0 : c.episodesOf.getOrDefault(rec, 0);
            if (n == 1 && eps == 1) {
                episodesOnce++;
            } else {
                problems.add(e.robotId() + "/" + e.episodeId() + " (" + e.sha256().substring(0, 12) + "): " + n
                        + " raw_files row(s), " + eps + " episodes row(s); expected 1 and 1");
            }
        }
        int messagesOnce = 0;
        for (LiveFleetReport.Message m : report.messages()) {
            int n = c.rows.getOrDefault(key(m.robotId(), m.messageId()), 0);
            if (n == 1) {
                messagesOnce++;
            } else {
                problems.add(m.topic() + " " + m.messageId() + " (QoS " + m.qos() + (m.duplicated() ? ", published"
                        + " twice" : "") + "): " + n + " telemetry row(s); expected 1"
                        + (c.reused.contains(key(m.robotId(), m.messageId())) ? " (a row of another message has its id)"
                        : ""));
            }
        }
        problems.addAll(c.wrongLinks);
        if (problems.size() > 20) {
            int more = problems.size() - 20;
            problems = new ArrayList<>(problems.subList(0, 20));
            problems.add("... and " + more + " more");
        }
        return new Result(episodes.size(), episodesOnce, report.messages().size(), messagesOnce, c.alerts, c.linked,
                List.copyOf(problems));
    }

    private static String key(String robot, String messageId) {
        return robot + "\n" + messageId;
    }

    /** What one look at the lake found. */
    private static final class Counts {
        final Set<String> wantedSha = new TreeSet<>();
        final Set<String> wantedIds = new TreeSet<>();
        final Map<String, Long> wantedTs = new HashMap<>();
        final Set<String> reused = new TreeSet<>();
        final Map<String, Integer> raw = new HashMap<>();
        final Map<String, String> recordingOf = new HashMap<>();
        final Map<String, Integer> episodesOf = new HashMap<>();
        final Map<String, String> episodeIdOf = new HashMap<>();
        final Map<String, Integer> rows = new HashMap<>();
        final List<String> wrongLinks = new ArrayList<>();
        int alerts;
        int linked;

        long recordingsWithEpisode() {
            return recordingOf.values().stream().filter(episodesOf::containsKey).count();
        }
    }

    private static Counts counts(Lake lake, LiveFleetReport report, List<LiveFleetReport.Episode> episodes) {
        lake.refresh();
        Counts c = new Counts();
        episodes.forEach(e -> c.wantedSha.add(e.sha256()));
        for (LiveFleetReport.Message m : report.messages()) {
            c.wantedIds.add(key(m.robotId(), m.messageId()));
            c.wantedTs.put(key(m.robotId(), m.messageId()), m.tsNs());
        }
        try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
            scanIn(t, TableSchemas.SHA256, List.copyOf(c.wantedSha), List.of(TableSchemas.SHA256,
                    TableSchemas.RECORDING_ID), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            String sha = b.column(TableSchemas.SHA256).getString(i);
                            c.raw.merge(sha, 1, Integer::sum);
                            if (!b.column(TableSchemas.RECORDING_ID).isNull(i)) {
                                c.recordingOf.put(sha, b.column(TableSchemas.RECORDING_ID).getString(i));
                            }
                        }
                    });
        }
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            scanIn(t, TableSchemas.RECORDING_ID, List.copyOf(new TreeSet<>(c.recordingOf.values())),
                    List.of(TableSchemas.RECORDING_ID, TableSchemas.EPISODE_ID), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            String rec = b.column(TableSchemas.RECORDING_ID).getString(i);
                            c.episodesOf.merge(rec, 1, Integer::sum);
                            c.episodeIdOf.put(rec, b.column(TableSchemas.EPISODE_ID).getString(i));
                        }
                    });
        }
        // the lake's episode id of each (robot, simulator episode id)
        Map<String, String> lakeEpisode = new HashMap<>();
        for (LiveFleetReport.Episode e : episodes) {
            String rec = c.recordingOf.get(e.sha256());
            if (rec != null && c.episodeIdOf.containsKey(rec)) {
                lakeEpisode.put(key(e.robotId(), e.episodeId()), c.episodeIdOf.get(rec));
            }
        }
        Map<String, LiveFleetReport.Message> alertsById = new LinkedHashMap<>();
        for (LiveFleetReport.Message m : report.messages()) {
            if (m.topic().contains("/" + TelemetryRow.ALERT + "/")) {
                alertsById.put(key(m.robotId(), m.messageId()), m);
            }
        }
        c.alerts = alertsById.size();
        if (lake.hasTable(FleetTables.TELEMETRY) && !report.messages().isEmpty()) {
            List<String> robots = report.messages().stream().map(LiveFleetReport.Message::robotId).distinct().toList();
            try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
                t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID, FleetTables.MESSAGE_ID,
                        FleetTables.TS_NS, TableSchemas.EPISODE_ID).filter(FleetTables.QOS + " > 0 AND " + Sql.in(TableSchemas.ROBOT_ID,
                                robots)).build(), b -> {
                                    for (int i = 0; i < b.rowCount(); i++) {
                                        String k = key(b.column(TableSchemas.ROBOT_ID).getString(i),
                                                b.column(FleetTables.MESSAGE_ID).getString(i));
                                        Long ts = c.wantedTs.get(k);
                                        if (ts == null) {
                                            continue; // another run's
                                        }
                                        if (ts != b.column(FleetTables.TS_NS).getLong(i)) {
                                            c.reused.add(k); // the same id for another message: not this one
                                            continue;
                                        }
                                        c.rows.merge(k, 1, Integer::sum);
                                        LiveFleetReport.Message a = alertsById.get(k);
                                        if (a == null || b.column(TableSchemas.EPISODE_ID).isNull(i)) {
                                            continue;
                                        }
                                        String got = b.column(TableSchemas.EPISODE_ID).getString(i);
                                        String want = lakeEpisode.get(key(a.robotId(), a.episodeId()));
                                        if (got.equals(want)) {
                                            c.linked++;
                                        } else {
                                            c.wrongLinks.add(a.topic() + " " + a.messageId() + " is linked to episode "
                                                    + got + ", but " + a.robotId() + " was recording " + a.episodeId()
                                                    + " (lake episode " + want + ")");
                                        }
                                    }
                                });
            }
        }
        return c;
    }

    private static void scanIn(LakeTable t, String column, List<String> values, List<String> columns,
            Consumer<RowBatch> consumer) {
        for (int i = 0; i < values.size(); i += IN_LIST) {
            List<String> part = values.subList(i, Math.min(values.size(), i + IN_LIST));
            t.scan(ScanRequest.builder().columns(columns).filter(Sql.in(column, part)).build(), consumer);
        }
    }
}
