package io.flywheel.curate.pool;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.flywheel.lake.ColumnView;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeGroupRow;

/**
 * The near-duplicate tables a dedup run writes (each run overwrites them as a new version; declared, with their row
 * records, in {@link io.flywheel.lake.CurationTables}):
 * <ul>
 *   <li>{@code episode_groups}: one row per episode with an embedding. episode_id,
 *       representative_id (its own id for a representative) utf8; distance float64 (cosine
 *       distance to the representative); group_size int32; threshold float64; embedding_model utf8.</li>
 *   <li>{@code frame_groups}: one row per frame of the master camera that is a near-duplicate of
 *       another frame (representatives are not listed). episode_id utf8, frame_index int32,
 *       representative_episode_id utf8, representative_frame_index int32, hamming int32 (bits),
 *       threshold int32.</li>
 * </ul>
 */
public final class DedupTables {
    private DedupTables() {}

    public static final String EPISODE_GROUPS = TableSchemas.EPISODE_GROUPS;
    public static final String FRAME_GROUPS = TableSchemas.FRAME_GROUPS;

    // Column names (episode_id, frame_index and embedding_model as in episodes and frames):
    public static final String REPRESENTATIVE_ID = CurationTables.REPRESENTATIVE_ID;
    public static final String DISTANCE = CurationTables.DISTANCE;
    public static final String GROUP_SIZE = CurationTables.GROUP_SIZE;
    public static final String THRESHOLD = CurationTables.THRESHOLD;
    public static final String EMBEDDING_MODEL = CurationTables.EMBEDDING_MODEL;
    public static final String REPRESENTATIVE_EPISODE_ID = CurationTables.REPRESENTATIVE_EPISODE_ID;
    public static final String REPRESENTATIVE_FRAME_INDEX = CurationTables.REPRESENTATIVE_FRAME_INDEX;
    public static final String HAMMING = CurationTables.HAMMING;
    /**
     * An episode's representative in the latest dedup, as listings show it next to the episodes columns (the console
     * looks it up in {@code episode_groups}; an episodes column of this name, where a lake has one, is shown as is).
     */
    public static final String DUPLICATE_OF = "duplicate_of";

    /** @return episode id to representative id, from the latest dedup (empty when none ran) */
    public static Map<String, String> representatives(Lake lake) {
        return representatives(lake, null);
    }

    /**
     * @param episodeIds the episodes to look up (a page of a listing), or null for all
     * @return episode id to representative id for those episodes, from the latest dedup
     */
    public static Map<String, String> representatives(Lake lake, java.util.Collection<String> episodeIds) {
        Map<String, String> out = new HashMap<>();
        if (!lake.hasTable(EPISODE_GROUPS) || (episodeIds != null && episodeIds.isEmpty())) {
            return out;
        }
        ScanRequest.Builder req = ScanRequest.builder().columns(TableSchemas.EPISODE_ID, REPRESENTATIVE_ID);
        if (episodeIds != null) {
            req.filter(io.flywheel.lake.Sql.in(TableSchemas.EPISODE_ID, List.copyOf(episodeIds)));
        }
        try (LakeTable t = lake.table(EPISODE_GROUPS)) {
            t.scan(req.build(), b -> {
                ColumnView id = b.column(TableSchemas.EPISODE_ID);
                ColumnView rep = b.column(REPRESENTATIVE_ID);
                for (int i = 0; i < b.rowCount(); i++) {
                    out.put(id.getString(i), rep.getString(i));
                }
            });
        }
        return out;
    }

    /** @return the cosine threshold of the latest episode dedup, when one ran */
    public static Optional<Double> latestThreshold(Lake lake) {
        if (!lake.hasTable(EPISODE_GROUPS)) {
            return Optional.empty();
        }
        try (LakeTable table = lake.table(EPISODE_GROUPS)) {
            List<EpisodeGroupRow> first = table.rows(CurationTables.EPISODE_GROUPS,
                    ScanRequest.builder().limit(1).build());
            return first.isEmpty() ? Optional.empty() : Optional.of(first.get(0).threshold());
        }
    }

    /** @return the version of episode_groups, when a dedup ran */
    public static Optional<Long> latestVersion(Lake lake) {
        if (!lake.hasTable(EPISODE_GROUPS)) {
            return Optional.empty();
        }
        try (LakeTable t = lake.table(EPISODE_GROUPS)) {
            return Optional.of(t.version());
        }
    }
}
