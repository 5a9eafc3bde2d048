package io.flywheel.curate.trainset;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The training-set tables of a lake.
 *
 * <ul>
 *   <li>{@code trainsets}: one row per committed training set (append-only; the commit point).
 *       tag, created_at_ns (ns since epoch), samples_version and episodes_version (the versions
 *       of the two tables below holding the set), episode_count, sample_count, base_count,
 *       mined_count: int64, lineage: utf8 JSON.</li>
 *   <li>{@code trainset_episodes}: the episodes of the newest set (each set is its own version,
 *       tagged with the set's tag). episode_index int32 (0-based, order of the samples),
 *       episode_id, robot_id, task, scene, object, outcome: utf8; in_base bool (taken by the
 *       uniform sample); mined_by list&lt;struct&lt;query_episode_id utf8, distance float64
 *       (cosine), rank int32&gt;&gt;; first_sample, sample_count: int64.</li>
 *   <li>{@code trainset_samples}: one row per training sample, in episode order then time:
 *       sample_index int64 (0-based, = row position), episode_index int32, then every column of
 *       the {@code frames} row the sample is (state, action, gripper, image locators and the
 *       enrichment columns present at the frames version in the lineage).</li>
 * </ul>
 */
public final class TrainsetTables {
    private TrainsetTables() {}

    public static final String TRAINSETS = "trainsets";
    public static final String EPISODES = "trainset_episodes";
    public static final String SAMPLES = "trainset_samples";

    static final ArrowType UTF8 = ArrowType.Utf8.INSTANCE;
    static final ArrowType I64 = new ArrowType.Int(64, true);
    static final ArrowType I32 = new ArrowType.Int(32, true);
    static final ArrowType F64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);

    static Field f(String name, ArrowType type, boolean nullable) {
        return new Field(name, new FieldType(nullable, type, null), null);
    }

    static final Schema TRAINSETS_SCHEMA = new Schema(List.of(
            f("tag", UTF8, false), f("created_at_ns", I64, false), f("samples_version", I64, false),
            f("episodes_version", I64, false), f("episode_count", I64, false), f("sample_count", I64, false),
            f("base_count", I64, false), f("mined_count", I64, false), f("lineage", UTF8, false)));

    static final Schema EPISODES_SCHEMA = new Schema(List.of(
            f("episode_index", I32, false), f("episode_id", UTF8, false), f("robot_id", UTF8, true),
            f("task", UTF8, true), f("scene", UTF8, true), f("object", UTF8, true), f("outcome", UTF8, true),
            f("in_base", ArrowType.Bool.INSTANCE, false),
            new Field("mined_by", FieldType.nullable(ArrowType.List.INSTANCE), List.of(
                    new Field("item", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
                            f("query_episode_id", UTF8, false), f("distance", F64, false), f("rank", I32, false))))),
            f("first_sample", I64, false), f("sample_count", I64, false)));

    /** @return the samples schema for a frames schema: sample_index, episode_index, then the frames columns */
    static Schema samples(Schema frames) {
        List<Field> fields = new ArrayList<>();
        fields.add(f("sample_index", I64, false));
        fields.add(f("episode_index", I32, false));
        fields.addAll(frames.getFields());
        return new Schema(fields, Map.of());
    }
}
