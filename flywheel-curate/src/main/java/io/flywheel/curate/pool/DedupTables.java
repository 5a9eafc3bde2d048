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

    private static Field f(String name, ArrowType t) {
        return new Field(name, FieldType.notNullable(t), null);
    }

    private static final ArrowType UTF8 = ArrowType.Utf8.INSTANCE;
    private static final ArrowType I32 = new ArrowType.Int(32, true);
    private static final ArrowType F64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

    static final Schema EPISODE_SCHEMA = new Schema(List.of(f("episode_id", UTF8), f("representative_id", UTF8),
            f("distance", F64), f("group_size", I32), f("threshold", F64), f("embedding_model", UTF8)));

    static final Schema FRAME_SCHEMA = new Schema(List.of(f("episode_id", UTF8), f("frame_index", I32),
            f("representative_episode_id", UTF8), f("representative_frame_index", I32), f("hamming", I32),
            f("threshold", I32)));

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
        ScanRequest.Builder req = ScanRequest.builder().columns("episode_id", "representative_id");
        if (episodeIds != null) {
            req.filter(io.flywheel.lake.Sql.in("episode_id", List.copyOf(episodeIds)));
        }
        try (LakeTable t = lake.table(EPISODE_GROUPS)) {
            t.scan(req.build(), b -> {
                VarCharVector id = (VarCharVector) b.getVector("episode_id");
                VarCharVector rep = (VarCharVector) b.getVector("representative_id");
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
            table.scan(ScanRequest.builder().columns("threshold").limit(1).build(), b -> {
                if (b.getRowCount() > 0) {
                    t[0] = ((org.apache.arrow.vector.Float8Vector) b.getVector("threshold")).get(0);
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
