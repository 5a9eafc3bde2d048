package io.flywheel.lake;

import java.util.List;

import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.rows.PolicyRow;

/**
 * The evaluation tables of a lake, typed: written by {@code flywheel eval ingest} (one lake commit per results file;
 * for eval episodes recorded as MCAP, a rollout's rows in its recording's commit, {@code eval_runs} rewritten with the
 * run's count) through {@link LakeTransaction#append(TypedTable, Iterable, java.util.Set)}, read with
 * {@link LakeTable#rows} or, for OLAP, as an Arrow stream handed to DuckDB ({@link LakeTable#registerArrowStream}).
 * Each is created by the first commit that writes it (a lake without evaluations has none; readers treat that as
 * empty).
 *
 * <h2>policies</h2> One {@link PolicyRow} per policy version evaluated: policy_version utf8 not null (key),
 * registered_at_ns int64 not null (ns since epoch), metadata utf8 not null (JSON object).
 *
 * <h2>eval_runs</h2> One {@link EvalRunRow} per run: run_id utf8 not null (key), policy_version utf8 not null,
 * started_at_ns int64 not null, config utf8 not null (JSON object), episode_count int64 not null.
 *
 * <h2>eval_episodes</h2> One {@link EvalEpisodeRow} per rollout: run_id, episode_id, task, object, lighting utf8 not
 * null; scene utf8; robot_id utf8 not null; success bool not null; duration_ns int64 (null: not known); failure_mode
 * utf8 (null for a success); intervention bool not null. Key {@code (run_id, episode_id)}.
 */
public final class EvalTables {
    private EvalTables() {}

    public static final String POLICIES = "policies";
    public static final String EVAL_RUNS = "eval_runs";
    public static final String EVAL_EPISODES = "eval_episodes";

    // Columns (episode_id, robot_id, task and scene as in TableSchemas, object as in CurationTables):
    public static final String POLICY_VERSION = "policy_version";
    public static final String REGISTERED_AT_NS = "registered_at_ns";
    public static final String METADATA = "metadata";
    public static final String RUN_ID = "run_id";
    public static final String STARTED_AT_NS = "started_at_ns";
    public static final String CONFIG = "config";
    public static final String EPISODE_COUNT = "episode_count";
    public static final String OBJECT = CurationTables.OBJECT;
    public static final String LIGHTING = "lighting";
    public static final String SUCCESS = "success";
    public static final String DURATION_NS = TableSchemas.DURATION_NS;
    public static final String FAILURE_MODE = "failure_mode";
    public static final String INTERVENTION = "intervention";

    /** The dimensions a report can cross, as columns of {@code eval_episodes}. */
    public static final List<String> DIMENSIONS = List.of(TableSchemas.TASK, OBJECT, LIGHTING, TableSchemas.SCENE,
            TableSchemas.ROBOT_ID);

    static final Schema POLICIES_SCHEMA = new Schema(List.of(
            TableSchemas.field(POLICY_VERSION, TableSchemas.UTF8, false, "policy version name"),
            TableSchemas.field(REGISTERED_AT_NS, TableSchemas.I64, false, "when the lake first saw it, int64 ns since"
                    + " Unix epoch"),
            TableSchemas.field(METADATA, TableSchemas.UTF8, false, "JSON object describing the policy")));

    static final Schema EVAL_RUNS_SCHEMA = new Schema(List.of(
            TableSchemas.field(RUN_ID, TableSchemas.UTF8, false, "evaluation run id"),
            TableSchemas.field(POLICY_VERSION, TableSchemas.UTF8, false, "the policy evaluated"),
            TableSchemas.field(STARTED_AT_NS, TableSchemas.I64, false, "when the run started, int64 ns since Unix epoch"),
            TableSchemas.field(CONFIG, TableSchemas.UTF8, false, "JSON object: the run's configuration"),
            TableSchemas.field(EPISODE_COUNT, TableSchemas.I64, false, "rollouts in the run")));

    static final Schema EVAL_EPISODES_SCHEMA = new Schema(List.of(
            TableSchemas.field(RUN_ID, TableSchemas.UTF8, false, "evaluation run id"),
            TableSchemas.field(TableSchemas.EPISODE_ID, TableSchemas.UTF8, false, "rollout id (episodes.episode_id when"
                    + " recorded and ingested)"),
            TableSchemas.field(TableSchemas.TASK, TableSchemas.UTF8, false, "task type"),
            TableSchemas.field(OBJECT, TableSchemas.UTF8, false, "object class"),
            TableSchemas.field(LIGHTING, TableSchemas.UTF8, false, "lighting condition"),
            TableSchemas.field(TableSchemas.SCENE, TableSchemas.UTF8, true, "scene"),
            TableSchemas.field(TableSchemas.ROBOT_ID, TableSchemas.UTF8, false, "robot body or unit"),
            TableSchemas.field(SUCCESS, TableSchemas.BOOL, false, "whether the rollout succeeded"),
            TableSchemas.field(DURATION_NS, TableSchemas.I64, true, "rollout duration, int64 ns; null: not known"),
            TableSchemas.field(FAILURE_MODE, TableSchemas.UTF8, true, "why it failed; null for a success"),
            TableSchemas.field(INTERVENTION, TableSchemas.BOOL, false, "whether a person intervened")));

    /** The policies evaluated. */
    public static final TypedTable<PolicyRow> POLICIES_TABLE = new TypedTable<>(POLICIES, m -> POLICIES_SCHEMA,
            EvalRows::policies, EvalRows::policy);

    /** The evaluation runs. */
    public static final TypedTable<EvalRunRow> EVAL_RUNS_TABLE = new TypedTable<>(EVAL_RUNS, m -> EVAL_RUNS_SCHEMA,
            EvalRows::runs, EvalRows::run);

    /** The rollouts of every run. */
    public static final TypedTable<EvalEpisodeRow> EVAL_EPISODES_TABLE = new TypedTable<>(EVAL_EPISODES,
            m -> EVAL_EPISODES_SCHEMA, EvalRows::episodes, EvalRows::episode);
}
