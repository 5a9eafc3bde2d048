package io.flywheel.eval;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.error.ConflictException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.rows.PolicyRow;

/** The evaluation runs of a lake: ingest of results files (one lake commit each) and lookups. */
public final class Evaluations {
    private Evaluations() {}

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What one ingest committed. */
    public record IngestSummary(Path file, List<RunSummary> runs, List<String> newPolicies, long rows,
            long minable, long lakeCommit) {}

    /** One run of an ingest: its rows and how many of them have a recording in the lake's episodes. */
    public record RunSummary(String runId, String policyVersion, long episodes, long successes, long minable) {}

    /**
     * Reads a results file ({@link EvalResultsFile}) and commits its runs, their new policies and their rollouts as one
     * lake transaction ({@code eval ingest}): all of it or, on any error, nothing.
     *
     * @param run the run id of every row, or null (each row's run_id)
     * @param policy the policy of every run, or null (each row's policy_version)
     * @param config extra run configuration (JSON object fields), or null
     * @throws BadInputException naming file, line and column
     * @throws ConflictException when a run is in the lake already (runs are immutable)
     */
    public static IngestSummary ingest(Lake lake, Path file, String run, String policy, Map<String, Object> config) {
        List<EvalResultsFile.Run> runs = EvalResultsFile.read(file, run, policy);
        Set<String> existingRuns = new HashSet<>();
        for (EvalRunRow r : runs(lake)) {
            existingRuns.add(r.runId());
        }
        for (EvalResultsFile.Run r : runs) {
            if (existingRuns.contains(r.runId())) {
                throw new ConflictException(file + ": run '" + r.runId() + "' is in the lake already; eval runs are"
                        + " immutable: give the results another run id (--run)");
            }
        }
        Set<String> policies = new HashSet<>();
        if (lake.hasTable(EvalTables.POLICIES)) {
            try (LakeTable t = lake.table(EvalTables.POLICIES)) {
                t.rows(EvalTables.POLICIES_TABLE, ScanRequest.all()).forEach(p -> policies.add(p.policyVersion()));
            }
        }
        Set<String> lakeEpisodes = lakeEpisodeIds(lake, runs);
        long now = System.currentTimeMillis() * 1_000_000L;
        List<PolicyRow> newPolicies = new ArrayList<>();
        List<EvalRunRow> runRows = new ArrayList<>();
        List<EvalEpisodeRow> episodes = new ArrayList<>();
        List<RunSummary> summaries = new ArrayList<>();
        long minable = 0;
        for (EvalResultsFile.Run r : runs) {
            if (policies.add(r.policyVersion())) {
                newPolicies.add(new PolicyRow(r.policyVersion(), now, "{}"));
            }
            Map<String, Object> cfg = new LinkedHashMap<>();
            cfg.put("source", file.toAbsolutePath().toString());
            if (config != null) {
                cfg.putAll(config);
            }
            String cfgJson;
            try {
                cfgJson = JSON.writeValueAsString(cfg);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            runRows.add(new EvalRunRow(r.runId(), r.policyVersion(), r.startedAtNs() != null ? r.startedAtNs() : now,
                    cfgJson, r.episodes().size()));
            episodes.addAll(r.episodes());
            long ok = r.episodes().stream().filter(EvalEpisodeRow::success).count();
            long m = r.episodes().stream().filter(e -> lakeEpisodes.contains(e.episodeId())).count();
            minable += m;
            summaries.add(new RunSummary(r.runId(), r.policyVersion(), r.episodes().size(), ok, m));
        }
        Set<String> keys = new HashSet<>();
        runs.forEach(r -> keys.add(r.runId()));
        LakeTransaction tx = lake.begin("eval ingest");
        if (!newPolicies.isEmpty()) {
            tx.append(EvalTables.POLICIES_TABLE, newPolicies, Set.copyOf(newPolicies.stream()
                    .map(PolicyRow::policyVersion).toList()));
        }
        tx.append(EvalTables.EVAL_RUNS_TABLE, runRows, keys)
                .append(EvalTables.EVAL_EPISODES_TABLE, episodes, keys)
                .summary("file", file.toString())
                .summary("runs", String.join(",", keys));
        CommitResult c = tx.commit();
        return new IngestSummary(file, summaries, newPolicies.stream().map(PolicyRow::policyVersion).toList(),
                episodes.size(), minable, c.snapshot().seq());
    }

    private static Set<String> lakeEpisodeIds(Lake lake, List<EvalResultsFile.Run> runs) {
        Set<String> out = new HashSet<>();
        if (!lake.hasTable(TableSchemas.EPISODES)) {
            return out;
        }
        List<String> ids = new ArrayList<>();
        runs.forEach(r -> r.episodes().forEach(e -> ids.add(e.episodeId())));
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            t.scan(ScanRequest.builder().columns(TableSchemas.EPISODE_ID).filter(Sql.in(TableSchemas.EPISODE_ID, ids))
                    .build(), b -> {
                        for (int i = 0; i < b.rowCount(); i++) {
                            out.add(String.valueOf(b.value(TableSchemas.EPISODE_ID, i)));
                        }
                    });
        }
        return out;
    }

    /** @return every run in the lake, in commit order (empty for a lake without evaluations) */
    public static List<EvalRunRow> runs(Lake lake) {
        if (!lake.hasTable(EvalTables.EVAL_RUNS)) {
            return List.of();
        }
        try (LakeTable t = lake.table(EvalTables.EVAL_RUNS)) {
            return t.rows(EvalTables.EVAL_RUNS_TABLE, ScanRequest.all());
        }
    }

    /**
     * @return the run
     * @throws NotFoundException naming the run and the runs there are
     */
    public static EvalRunRow run(Lake lake, String runId) {
        List<EvalRunRow> all = runs(lake);
        for (EvalRunRow r : all) {
            if (r.runId().equals(runId)) {
                return r;
            }
        }
        List<String> names = all.stream().map(EvalRunRow::runId).toList();
        throw new NotFoundException("no eval run '" + runId + "' in the lake; runs there: "
                + (names.isEmpty() ? "none (eval ingest adds them)" : names.size() > 20
                ? String.join(", ", names.subList(0, 20)) + ", ... (" + names.size() + ")" : String.join(", ", names)));
    }

    /** @return the rollouts of a run, in table order */
    public static List<EvalEpisodeRow> episodes(Lake lake, String runId) {
        run(lake, runId);
        try (LakeTable t = lake.table(EvalTables.EVAL_EPISODES)) {
            return t.rows(EvalTables.EVAL_EPISODES_TABLE, ScanRequest.builder()
                    .filter(EvalTables.RUN_ID + " = " + Sql.quote(runId)).build());
        }
    }

    /**
     * @param by dimension names as a user gives them ({@code task, object, lighting, scene, robot} or
     *     {@code robot_id})
     * @return the eval_episodes columns
     * @throws BadInputException naming an unknown dimension and the dimensions there are
     */
    public static List<String> dimensions(List<String> by) {
        List<String> out = new ArrayList<>();
        for (String d : by) {
            String c = d.trim().equals("robot") ? TableSchemas.ROBOT_ID : d.trim();
            if (!EvalTables.DIMENSIONS.contains(c)) {
                throw new BadInputException("unknown dimension '" + d.trim() + "'; dimensions: task, object, lighting,"
                        + " scene, robot");
            }
            if (out.contains(c)) {
                throw new BadInputException("dimension '" + d.trim() + "' is given twice");
            }
            out.add(c);
        }
        if (out.isEmpty()) {
            throw new BadInputException("no dimension given; dimensions: task, object, lighting, scene, robot");
        }
        return out;
    }
}
