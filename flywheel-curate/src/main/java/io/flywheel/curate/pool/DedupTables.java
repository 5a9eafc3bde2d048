package io.flywheel.curate.pool;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.VarCharVector;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;

/**
 * The near-duplicate tables a dedup run writes (each run overwrites them as a new version):
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

    public static final String EPISODE_GROUPS = "episode_groups";
    public static final String FRAME_GROUPS = "frame_groups";

    // Column names (episode_id, frame_index and embedding_model as in episodes and frames):
    public static final String REPRESENTATIVE_ID = "representative_id";
    public static final String DISTANCE = "distance";
    public static final String GROUP_SIZE = "group_size";
    public static final String THRESHOLD = "threshold";
    public static final String EMBEDDING_MODEL = "embedding_model";
    public static final String REPRESENTATIVE_EPISODE_ID = "representative_episode_id";
    public static final String REPRESENTATIVE_FRAME_INDEX = "representative_frame_index";
    public static final String HAMMING = "hamming";
    /**
     * An episode's representative in the latest dedup, as listings show it next to the episodes columns (the console
     * looks it up in {@code episode_groups}; an episodes column of this name, where a lake has one, is shown as is).
     */
    public static final String DUPLICATE_OF = "duplicate_of";

    private static Field f(String name, ArrowType t) {
        return new Field(name, FieldType.notNullable(t), null);
    }

    private static final ArrowType UTF8 = ArrowType.Utf8.INSTANCE;
    private static final ArrowType I32 = new ArrowType.Int(32, true);
    private static final ArrowType F64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

    static final Schema EPISODE_SCHEMA = new Schema(List.of(f(TableSchemas.EPISODE_ID, UTF8),
            f(REPRESENTATIVE_ID, UTF8), f(DISTANCE, F64), f(GROUP_SIZE, I32), f(THRESHOLD, F64),
            f(EMBEDDING_MODEL, UTF8)));

    static final Schema FRAME_SCHEMA = new Schema(List.of(f(TableSchemas.EPISODE_ID, UTF8),
            f(TableSchemas.FRAME_INDEX, I32), f(REPRESENTATIVE_EPISODE_ID, UTF8), f(REPRESENTATIVE_FRAME_INDEX, I32),
            f(HAMMING, I32), f(THRESHOLD, I32)));

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
                VarCharVector id = (VarCharVector) b.getVector(TableSchemas.EPISODE_ID);
                VarCharVector rep = (VarCharVector) b.getVector(REPRESENTATIVE_ID);
                for (int i = 0; i < b.getRowCount(); i++) {
                    out.put(new String(id.get(i), StandardCharsets.UTF_8), new String(rep.get(i), StandardCharsets.UTF_8));
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
        double[] t = {Double.NaN};
        try (LakeTable table = lake.table(EPISODE_GROUPS)) {
            table.scan(ScanRequest.builder().columns(THRESHOLD).limit(1).build(), b -> {
                if (b.getRowCount() > 0) {
                    t[0] = ((org.apache.arrow.vector.Float8Vector) b.getVector(THRESHOLD)).get(0);
                }
            });
        }
        return Double.isNaN(t[0]) ? Optional.empty() : Optional.of(t[0]);
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
