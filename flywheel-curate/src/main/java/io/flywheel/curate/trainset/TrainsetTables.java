package io.flywheel.curate.trainset;

import io.flywheel.lake.CurationTables;
import io.flywheel.lake.TableSchemas;

/**
 * The training-set tables of a lake (declared, with their columns and row records, in
 * {@link io.flywheel.lake.CurationTables}).
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

    public static final String TRAINSETS = TableSchemas.TRAINSETS;
    public static final String EPISODES = TableSchemas.TRAINSET_EPISODES;
    public static final String SAMPLES = TableSchemas.TRAINSET_SAMPLES;
    /** {@code trainset_samples.sample_index}. */
    public static final String SAMPLE_INDEX = CurationTables.SAMPLE_INDEX;
    /** {@code trainset_samples.episode_index}. */
    public static final String EPISODE_INDEX = CurationTables.EPISODE_INDEX;
}
