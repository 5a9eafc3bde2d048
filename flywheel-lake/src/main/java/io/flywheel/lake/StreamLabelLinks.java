package io.flywheel.lake;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.LabelHistoryRow;
import io.flywheel.rows.StreamLabel;

/**
 * Applies the stream's labels ({@code label_history}) to {@code episodes}: each episode gets, in its
 * {@link TableSchemas#STREAM_LABEL_COLUMNS}, the current label of the stream episode it is. The episode's effective
 * outcome is then the stream's ({@link EpisodeRow#effectiveOutcome}).
 *
 * <p>Which stream episode an episode is: of the same {@code robot_id}, the one with the same {@code episode_id} (a
 * robot that names its episodes with the lake's ids), else the one whose id is the recording's own name of the episode, the
 * {@value #SOURCE_EPISODE_ID} key of the episode's metadata JSON (ingest takes it from the recording's
 * {@code episode_id} metadata: the MCAP Metadata record {@code episode} of the simulator, {@code flywheel.live} of a
 * live-streamed episode). A stream episode's current label is its {@code label_history} row with the highest
 * {@code labelled_at_ns} (the later row on a tie).
 *
 * <p>A projection of {@code label_history}, rebuilt idempotently: run it after labels are committed (the labeller
 * does) and after episodes are ingested (the gateway does), in either order; a run with nothing to change commits
 * nothing. The first run that has a label to write adds the columns (nullable, null in every other row; a commit of
 * its own, {@code stream-columns}); each run's writes are one column-scoped update ({@code stream-labels}) that
 * keeps every other column's bytes. A commit conflict with a concurrent writer is planned again and retried.
 */
public final class StreamLabelLinks {
    /** The metadata JSON key of the recording's own name of the episode ({@link StreamLabel#SOURCE_EPISODE_ID}). */
    public static final String SOURCE_EPISODE_ID = StreamLabel.SOURCE_EPISODE_ID;
    private static final ObjectMapper JSON = new ObjectMapper();

    private StreamLabelLinks() {}

    /**
     * What a run did.
     *
     * @param streamEpisodes stream episodes with a label in {@code label_history}
     * @param matched episodes of the lake that are one of them
     * @param written episodes whose stream columns this run wrote (new or changed labels)
     * @param lakeCommit the update's commit sequence number, or -1 when nothing was written
     */
    public record Result(int streamEpisodes, int matched, int written, long lakeCommit) {}

    /**
     * Applies the current stream labels as of the lake's newest snapshot.
     *
     * @param lake the lake
     * @return counts and the commit
     * @throws CommitConflictException when concurrent writers conflict five times in a row
     */
    public static Result apply(Lake lake) {
        for (int attempt = 1; ; attempt++) {
            lake.refresh();
            if (!lake.hasTable(StreamTables.LABEL_HISTORY) || !lake.hasTable(TableSchemas.EPISODES)) {
                return new Result(0, 0, 0, -1);
            }
            Map<String, LabelHistoryRow> byRobotAndId = current(lake);
            List<EpisodeRow> updates = new ArrayList<>();
            int matched = 0;
            boolean hasColumns;
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                hasColumns = t.hasColumn(TableSchemas.STREAM_OUTCOME);
                List<String> columns = new ArrayList<>(List.of(TableSchemas.EPISODE_ID, TableSchemas.ROBOT_ID,
                        TableSchemas.METADATA));
                if (hasColumns) {
                    columns.addAll(TableSchemas.STREAM_LABEL_COLUMNS);
                }
                int[] m = {0};
                t.scan(ScanRequest.builder().columns(columns).build(), b -> {
                    ColumnView id = b.column(TableSchemas.EPISODE_ID);
                    ColumnView robot = b.column(TableSchemas.ROBOT_ID);
                    ColumnView meta = b.column(TableSchemas.METADATA);
                    for (int i = 0; i < b.rowCount(); i++) {
                        String r = robot.getString(i);
                        if (r == null) {
                            continue;
                        }
                        LabelHistoryRow l = byRobotAndId.get(key(r, id.getString(i)));
                        if (l == null) {
                            String source = sourceEpisodeId(meta.getString(i));
                            if (source != null) {
                                l = byRobotAndId.get(key(r, source));
                            }
                        }
                        if (l == null) {
                            continue;
                        }
                        m[0]++;
                        StreamLabel want = new StreamLabel(l.label(), l.rule(), l.rulesVersion(), l.labelledAtNs(),
                                l.episodeId());
                        StreamLabel have = null;
                        if (hasColumns && !b.column(TableSchemas.STREAM_OUTCOME).isNull(i)) {
                            ColumnView at = b.column(TableSchemas.STREAM_LABELLED_AT_NS);
                            have = new StreamLabel(b.column(TableSchemas.STREAM_OUTCOME).getString(i),
                                    orEmpty(b.column(TableSchemas.STREAM_RULE).getString(i)),
                                    orEmpty(b.column(TableSchemas.STREAM_RULES_VERSION).getString(i)),
                                    at.isNull(i) ? 0 : at.getLong(i),
                                    orEmpty(b.column(TableSchemas.STREAM_EPISODE_ID).getString(i)));
                        }
                        if (!Objects.equals(want, have)) {
                            updates.add(new EpisodeRow(id.getString(i), null, null, null, null, null, null, null, null,
                                    null, null, null, null, null, null, null).withStreamLabel(want));
                        }
                    }
                });
                matched = m[0];
            }
            if (updates.isEmpty()) {
                return new Result(byRobotAndId.size(), matched, 0, -1);
            }
            try {
                if (!hasColumns) {
                    lake.begin("stream-columns").addColumns(TableSchemas.EPISODES, TableSchemas.streamLabelFields())
                            .commit();
                    continue; // plan again on the new schema
                }
                CommitResult done = lake.begin("stream-labels").summary("labels", Integer.toString(updates.size()))
                        .updateEpisodes(TableSchemas.STREAM_LABEL_COLUMNS, updates).commit();
                return new Result(byRobotAndId.size(), matched, updates.size(), done.snapshot().seq());
            } catch (CommitConflictException e) {
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /**
     * @return each stream episode's current label (its {@code label_history} row with the highest
     *     {@code labelled_at_ns}, the later row on a tie), sorted by robot then stream episode id; empty when the lake
     *     has no {@code label_history}
     */
    public static List<LabelHistoryRow> currentLabels(Lake lake) {
        lake.refresh();
        if (!lake.hasTable(StreamTables.LABEL_HISTORY)) {
            return List.of();
        }
        List<LabelHistoryRow> out = new ArrayList<>(current(lake).values());
        out.sort(java.util.Comparator.comparing(LabelHistoryRow::robotId).thenComparing(LabelHistoryRow::episodeId));
        return out;
    }

    private static String key(String robot, String streamEpisodeId) {
        return robot + "\u0000" + streamEpisodeId;
    }

    /**
     * @return each stream episode's current label (highest labelled_at_ns, the later row on a tie), by robot and
     *     stream episode id ({@link #key})
     */
    static Map<String, LabelHistoryRow> current(Lake lake) {
        Map<String, LabelHistoryRow> out = new HashMap<>();
        try (LakeTable t = lake.table(StreamTables.LABEL_HISTORY)) {
            for (LabelHistoryRow r : t.rows(StreamTables.LABEL_HISTORY_TABLE, ScanRequest.all())) {
                out.merge(key(r.robotId(), r.episodeId()), r, (a, b) -> b.labelledAtNs() >= a.labelledAtNs() ? b : a);
            }
        }
        return out;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** @return the metadata's {@value #SOURCE_EPISODE_ID}, or null when absent or the metadata is not JSON */
    static String sourceEpisodeId(String metadataJson) {
        if (metadataJson == null || metadataJson.isEmpty()) {
            return null;
        }
        try {
            JsonNode n = JSON.readTree(metadataJson).get(SOURCE_EPISODE_ID);
            return n != null && n.isTextual() && !n.asText().isEmpty() ? n.asText() : null;
        } catch (IOException e) {
            return null;
        }
    }
}
