package io.flywheel.lake;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The recording spans of episodes per robot, from {@code episodes} (robot_id, start_ns, end_ns): which episode a
 * robot was recording at a time. An alert at {@code t} belongs to the episode with {@code start_ns <= t <= end_ns};
 * where a robot's episodes overlap (two recordings at once), the one that started last. Episodes without a robot or
 * times are left out.
 */
public final class EpisodeSpans {
    private record Span(long start, long end, String episodeId) {}

    private final Map<String, Span[]> byRobot;

    private EpisodeSpans(Map<String, Span[]> byRobot) {
        this.byRobot = byRobot;
    }

    /**
     * Reads the spans of the given robots' episodes from the lake's current snapshot (one filtered scan).
     *
     * @param lake the lake
     * @param robots the robots; empty reads none
     * @return the spans; empty when the lake has no episodes table
     */
    public static EpisodeSpans load(Lake lake, Collection<String> robots) {
        Map<String, List<Span>> spans = new HashMap<>();
        if (!robots.isEmpty() && lake.hasTable(TableSchemas.EPISODES)) {
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                String filter = "(" + Sql.in(TableSchemas.ROBOT_ID, new ArrayList<>(robots)) + ") AND "
                        + TableSchemas.START_NS + " IS NOT NULL AND " + TableSchemas.END_NS + " IS NOT NULL";
                t.scan(ScanRequest.builder().columns(TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID,
                        TableSchemas.START_NS, TableSchemas.END_NS).filter(filter).build(), b -> {
                            ColumnView id = b.column(TableSchemas.EPISODE_ID);
                            ColumnView robot = b.column(TableSchemas.ROBOT_ID);
                            ColumnView start = b.column(TableSchemas.START_NS);
                            ColumnView end = b.column(TableSchemas.END_NS);
                            for (int i = 0; i < b.rowCount(); i++) {
                                spans.computeIfAbsent(robot.getString(i), k -> new ArrayList<>())
                                        .add(new Span(start.getLong(i), end.getLong(i), id.getString(i)));
                            }
                        });
            }
        }
        Map<String, Span[]> out = new HashMap<>();
        spans.forEach((robot, l) -> {
            Span[] a = l.toArray(new Span[0]);
            Arrays.sort(a, Comparator.comparingLong(Span::start).thenComparing(Span::episodeId));
            out.put(robot, a);
        });
        return new EpisodeSpans(out);
    }

    /**
     * @param robotId the robot
     * @param tNs a time on the robot's clock, int64 ns since epoch
     * @return the episode it was recording then, or null
     */
    public String episodeAt(String robotId, long tNs) {
        Span[] a = byRobot.get(robotId);
        if (a == null) {
            return null;
        }
        // the last span starting at or before t, walking back over earlier ones that may still cover t
        int lo = 0;
        int hi = a.length - 1;
        int last = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid].start() <= tNs) {
                last = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        for (int i = last; i >= 0; i--) {
            if (a[i].end() >= tNs) {
                return a[i].episodeId();
            }
        }
        return null;
    }

    /** @return the number of episodes read */
    public int size() {
        return byRobot.values().stream().mapToInt(a -> a.length).sum();
    }
}
