package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.EpisodeGroupRow;
import io.flywheel.rows.FrameGroupRow;
import io.flywheel.rows.TrainsetEpisodeRow;
import io.flywheel.rows.TrainsetRow;
import io.flywheel.rows.TrainsetSampleRow;

/**
 * The curation tables of a lake, typed: their names and columns in one place, each a {@link TypedTable} of its row
 * record. Written by the curation stages through {@link LakeTransaction}, read with {@link LakeTable#rows}.
 *
 * <h2>trainsets</h2> The registry of committed training sets, one {@link TrainsetRow} per set (append-only; each
 * set's row is appended in the commit that creates its tag). tag utf8; created_at_ns (ns since epoch),
 * samples_version, episodes_version (-1 when written in the commit that made those versions: the set's lake tag pins
 * them), episode_count, sample_count, base_count, mined_count: int64; lineage: utf8 JSON. All not null.
 *
 * <h2>trainset_episodes</h2> The episodes of the newest set, one {@link TrainsetEpisodeRow} each (each set is its own
 * version, tagged with the set's tag). episode_index int32 (0-based, the order of the samples); episode_id utf8 not
 * null; robot_id, task, scene, object, outcome: utf8; in_base bool (taken by the uniform sample); mined_by
 * list&lt;struct&lt;query_episode_id utf8, distance float64 (cosine), rank int32&gt;&gt;; first_sample,
 * sample_count: int64.
 *
 * <h2>trainset_samples</h2> One row per training sample of the newest set ({@link TrainsetSampleRow}), in episode
 * order then time: {@value #SAMPLE_INDEX} int64 (0-based, = row position), {@value #EPISODE_INDEX} int32, then every
 * column of the {@code frames} row the sample is, as the frames version in the set's lineage holds it (state, action,
 * gripper, image locators, the enrichment and embedding model columns). Written by copying frames rows inside the
 * lake ({@link LakeTransaction#overwrite(String, RowCopy)}).
 *
 * <h2>episode_groups</h2> One {@link EpisodeGroupRow} per episode with an embedding, from the latest dedup (each run
 * overwrites the table as a new version): episode_id, representative_id (its own id for a representative) utf8;
 * distance float64 (cosine distance to the representative); group_size int32; threshold float64; embedding_model
 * utf8. All not null.
 *
 * <h2>frame_groups</h2> One {@link FrameGroupRow} per master-camera frame that is a near-duplicate of another frame
 * (representatives are not listed): episode_id utf8, frame_index int32, representative_episode_id utf8,
 * representative_frame_index int32, hamming int32 (bits), threshold int32. All not null.
 */
public final class CurationTables {
    private CurationTables() {}

    // Column names, each declared once (episode_id, frame_index, robot_id, task, scene and outcome as in
    // TableSchemas):
    /** {@code trainsets}: the set's tag. */
    public static final String TAG = "tag";
    public static final String CREATED_AT_NS = "created_at_ns";
    public static final String SAMPLES_VERSION = "samples_version";
    public static final String EPISODES_VERSION = "episodes_version";
    public static final String EPISODE_COUNT = "episode_count";
    /** {@code trainsets} and {@code trainset_episodes}: samples of the set, of the episode. */
    public static final String SAMPLE_COUNT = "sample_count";
    public static final String BASE_COUNT = "base_count";
    public static final String MINED_COUNT = "mined_count";
    public static final String LINEAGE = "lineage";
    /** {@code trainset_episodes} and {@code trainset_samples}: the 0-based index of the episode in its set. */
    public static final String EPISODE_INDEX = "episode_index";
    public static final String OBJECT = "object";
    public static final String IN_BASE = "in_base";
    public static final String MINED_BY = "mined_by";
    /** The fields of a {@code mined_by} entry. */
    public static final String MINED_BY_QUERY_EPISODE_ID = "query_episode_id";
    public static final String MINED_BY_DISTANCE = "distance";
    public static final String MINED_BY_RANK = "rank";
    public static final String FIRST_SAMPLE = "first_sample";
    /** {@code trainset_samples}: the sample's 0-based index in its set, = its row position. */
    public static final String SAMPLE_INDEX = "sample_index";
    /** {@code episode_groups}. */
    public static final String REPRESENTATIVE_ID = "representative_id";
    public static final String DISTANCE = "distance";
    public static final String GROUP_SIZE = "group_size";
    /** {@code episode_groups} (cosine) and {@code frame_groups} (bits): the dedup's threshold. */
    public static final String THRESHOLD = "threshold";
    public static final String EMBEDDING_MODEL = "embedding_model";
    /** {@code frame_groups}. */
    public static final String REPRESENTATIVE_EPISODE_ID = "representative_episode_id";
    public static final String REPRESENTATIVE_FRAME_INDEX = "representative_frame_index";
    public static final String HAMMING = "hamming";

    private static final ArrowType UTF8 = TableSchemas.UTF8;
    private static final ArrowType I64 = TableSchemas.I64;
    private static final ArrowType I32 = TableSchemas.I32;
    private static final ArrowType F64 = TableSchemas.F64;

    private static Field f(String name, ArrowType type, boolean nullable) {
        return new Field(name, new FieldType(nullable, type, null), null);
    }

    static final Schema TRAINSETS_SCHEMA = new Schema(List.of(
            f(TAG, UTF8, false), f(CREATED_AT_NS, I64, false), f(SAMPLES_VERSION, I64, false),
            f(EPISODES_VERSION, I64, false), f(EPISODE_COUNT, I64, false), f(SAMPLE_COUNT, I64, false),
            f(BASE_COUNT, I64, false), f(MINED_COUNT, I64, false), f(LINEAGE, UTF8, false)));

    static final Schema TRAINSET_EPISODES_SCHEMA = new Schema(List.of(
            f(EPISODE_INDEX, I32, false), f(TableSchemas.EPISODE_ID, UTF8, false), f(TableSchemas.ROBOT_ID, UTF8, true),
            f(TableSchemas.TASK, UTF8, true), f(TableSchemas.SCENE, UTF8, true), f(OBJECT, UTF8, true),
            f(TableSchemas.OUTCOME, UTF8, true), f(IN_BASE, ArrowType.Bool.INSTANCE, false),
            new Field(MINED_BY, FieldType.nullable(ArrowType.List.INSTANCE), List.of(
                    new Field("item", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
                            f(MINED_BY_QUERY_EPISODE_ID, UTF8, false), f(MINED_BY_DISTANCE, F64, false),
                            f(MINED_BY_RANK, I32, false))))),
            f(FIRST_SAMPLE, I64, false), f(SAMPLE_COUNT, I64, false)));

    static final Schema EPISODE_GROUPS_SCHEMA = new Schema(List.of(f(TableSchemas.EPISODE_ID, UTF8, false),
            f(REPRESENTATIVE_ID, UTF8, false), f(DISTANCE, F64, false), f(GROUP_SIZE, I32, false),
            f(THRESHOLD, F64, false), f(EMBEDDING_MODEL, UTF8, false)));

    static final Schema FRAME_GROUPS_SCHEMA = new Schema(List.of(f(TableSchemas.EPISODE_ID, UTF8, false),
            f(TableSchemas.FRAME_INDEX, I32, false), f(REPRESENTATIVE_EPISODE_ID, UTF8, false),
            f(REPRESENTATIVE_FRAME_INDEX, I32, false), f(HAMMING, I32, false), f(THRESHOLD, I32, false)));

    /** @return the columns that lead every sample row, before the frames columns */
    static List<Field> samplePrefix() {
        return List.of(f(SAMPLE_INDEX, I64, false), f(EPISODE_INDEX, I32, false));
    }

    /** @return the samples schema over a frames schema: the two leading columns, then the frames columns */
    static Schema samples(Schema frames) {
        List<Field> fields = new ArrayList<>(samplePrefix());
        fields.addAll(frames.getFields());
        return new Schema(fields);
    }

    /** The registry of committed training sets. */
    public static final TypedTable<TrainsetRow> TRAINSETS = new TypedTable<>(TableSchemas.TRAINSETS,
            m -> TRAINSETS_SCHEMA, CurationRows::trainsets, CurationRows::trainset);

    /** The episodes of a training set (one version per set). */
    public static final TypedTable<TrainsetEpisodeRow> TRAINSET_EPISODES = new TypedTable<>(
            TableSchemas.TRAINSET_EPISODES, m -> TRAINSET_EPISODES_SCHEMA, CurationRows::trainsetEpisodes,
            CurationRows::trainsetEpisode);

    /** The samples of a training set (one version per set): frames rows with their place in the set. */
    public static final TypedTable<TrainsetSampleRow> TRAINSET_SAMPLES = new TypedTable<>(
            TableSchemas.TRAINSET_SAMPLES, m -> samples(TableSchemas.withModels(TableSchemas.FRAMES, m)),
            CurationRows::trainsetSamples, CurationRows::trainsetSample);

    /** The near-duplicate groups of episodes of the latest dedup. */
    public static final TypedTable<EpisodeGroupRow> EPISODE_GROUPS = new TypedTable<>(TableSchemas.EPISODE_GROUPS,
            m -> EPISODE_GROUPS_SCHEMA, CurationRows::episodeGroups, CurationRows::episodeGroup);

    /** The near-duplicate master-camera frames of the latest dedup. */
    public static final TypedTable<FrameGroupRow> FRAME_GROUPS = new TypedTable<>(TableSchemas.FRAME_GROUPS,
            m -> FRAME_GROUPS_SCHEMA, CurationRows::frameGroups, CurationRows::frameGroup);

    /** Every curation table, in {@link TableSchemas#KNOWN_TABLES} order. */
    public static final List<TypedTable<?>> ALL = List.of(EPISODE_GROUPS, FRAME_GROUPS, TRAINSETS, TRAINSET_EPISODES,
            TRAINSET_SAMPLES);
}
