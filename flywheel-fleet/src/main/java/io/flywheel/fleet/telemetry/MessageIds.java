package io.flywheel.fleet.telemetry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.flywheel.lake.ColumnView;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;

/**
 * The {@code (robot_id, message_id)} of the telemetry rows committed recently, for recognising redeliveries: the ids
 * of rows received within the window (before the table's newest row at start, before now afterwards), at most
 * {@code maxIds} of them (the oldest are forgotten first). Used by one thread.
 */
final class MessageIds {
    private final long windowNs;
    private final int maxIds;
    private final LinkedHashMap<String, Long> seen = new LinkedHashMap<>();

    MessageIds(long windowNs, int maxIds) {
        this.windowNs = windowNs;
        this.maxIds = maxIds;
    }

    static String key(String robotId, String messageId) {
        return robotId + '\u0000' + messageId;
    }

    /**
     * Loads the ids of the table's rows received in the window before its newest row (one filtered scan).
     *
     * @return how many were loaded
     */
    int load(Lake lake) {
        if (!lake.hasTable(FleetTables.TELEMETRY)) {
            return 0;
        }
        try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
            long n = t.countRows();
            if (n == 0) {
                return 0;
            }
            long[] newest = new long[1];
            t.take(new long[] {n - 1}, List.of(FleetTables.RECEIVED_NS),
                    b -> newest[0] = b.column(FleetTables.RECEIVED_NS).getLong(0));
            long from = newest[0] - windowNs;
            List<Object[]> rows = new ArrayList<>();
            t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID, FleetTables.MESSAGE_ID, FleetTables.RECEIVED_NS)
                    .filter(FleetTables.RECEIVED_NS + " >= " + from + " AND " + FleetTables.MESSAGE_ID + " IS NOT NULL")
                    .build(), b -> {
                        ColumnView r = b.column(TableSchemas.ROBOT_ID);
                        ColumnView m = b.column(FleetTables.MESSAGE_ID);
                        ColumnView at = b.column(FleetTables.RECEIVED_NS);
                        for (int i = 0; i < b.rowCount(); i++) {
                            rows.add(new Object[] {key(r.getString(i), m.getString(i)), at.getLong(i)});
                        }
                    });
            rows.sort((a, b) -> Long.compare((Long) a[1], (Long) b[1]));
            for (Object[] r : rows) {
                add((String) r[0], (Long) r[1]);
            }
            return seen.size();
        }
    }

    boolean contains(String key) {
        return seen.containsKey(key);
    }

    void add(String key, long receivedNs) {
        seen.remove(key);
        seen.put(key, receivedNs);
        while (seen.size() > maxIds) {
            Iterator<String> it = seen.keySet().iterator();
            it.next();
            it.remove();
        }
    }

    /** Forgets the ids received before {@code nowNs - window}. */
    void expire(long nowNs) {
        for (Iterator<Map.Entry<String, Long>> it = seen.entrySet().iterator(); it.hasNext(); ) {
            if (it.next().getValue() >= nowNs - windowNs) {
                return;
            }
            it.remove();
        }
    }

    int size() {
        return seen.size();
    }

    /**
     * @param keys {@link #key}s
     * @return those whose rows the table holds (a scan per call: for a commit retried after a failure whose outcome
     *     is unknown)
     */
    static Set<String> present(Lake lake, Collection<String[]> keys) {
        Set<String> out = new HashSet<>();
        lake.refresh();
        if (keys.isEmpty() || !lake.hasTable(FleetTables.TELEMETRY)) {
            return out;
        }
        Map<String, List<String>> byRobot = new LinkedHashMap<>();
        for (String[] k : keys) {
            byRobot.computeIfAbsent(k[0], r -> new ArrayList<>()).add(k[1]);
        }
        List<String> parts = new ArrayList<>();
        byRobot.forEach((r, ids) -> parts.add("(" + TableSchemas.ROBOT_ID + " = " + Sql.quote(r) + " AND ("
                + Sql.in(FleetTables.MESSAGE_ID, ids) + "))"));
        try (LakeTable t = lake.table(FleetTables.TELEMETRY)) {
            t.scan(ScanRequest.builder().columns(TableSchemas.ROBOT_ID, FleetTables.MESSAGE_ID)
                    .filter(String.join(" OR ", parts)).build(), b -> {
                        ColumnView r = b.column(TableSchemas.ROBOT_ID);
                        ColumnView m = b.column(FleetTables.MESSAGE_ID);
                        for (int i = 0; i < b.rowCount(); i++) {
                            out.add(key(r.getString(i), m.getString(i)));
                        }
                    });
        }
        return out;
    }
}
