package io.flywheel.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.curate.pool.EpisodeVectors;
import io.flywheel.curate.pool.MiningJob;
import io.flywheel.error.BadInputException;
import io.flywheel.eval.EvalFailures;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalEpisodeRow;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code mine --failures-from-eval RUN}: the failed rollouts of an evaluation run ({@link EvalFailures}) as mining
 * queries. A rollout is minable when its episode id is an episode of the lake with a vector of the mined kind
 * (recorded, ingested and enriched like any episode); the others (results without a recording, or not enriched) are
 * reported by id and left out. The run, the cells and the queries go into the neighbours file's lineage, and from
 * there into the lineage of a training set built from it.
 */
final class MineFromEval {
    private MineFromEval() {}

    /** The queries and what was left out. */
    record Selection(EvalFailures failures, List<MiningJob.Query> queries, List<String> notMinable) {
        void addLineage(Map<String, Object> lineage) {
            lineage.put("eval_run", failures.runId());
            if (failures.baseline() != null) {
                lineage.put("eval_baseline_run", failures.baseline());
            }
            lineage.put("eval_cells", failures.cells());
            lineage.put("eval_query_episode_ids", queries.stream().map(MiningJob.Query::id).toList());
            lineage.put("eval_failures_not_minable", notMinable.size());
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("run_id", failures.runId());
            m.put("baseline_run_id", failures.baseline());
            m.put("cells", failures.cells());
            m.put("failures", failures.failures().size());
            m.put("queries", queries.stream().map(MiningJob.Query::id).toList());
            m.put("not_minable", notMinable);
            return m;
        }

        String summary() {
            return "eval run " + failures.runId() + (failures.baseline() == null ? "" : " (regressions against "
                    + failures.baseline() + ")") + (failures.cells().isEmpty() ? "" : ", cells " + failures.cells())
                    + ": " + failures.failures().size() + " failed rollout(s), " + queries.size() + " minable, "
                    + notMinable.size() + " not minable (no recording with an embedding in the lake)"
                    + (notMinable.isEmpty() ? "" : ": " + String.join(", ", notMinable.subList(0,
                    Math.min(10, notMinable.size()))) + (notMinable.size() > 10 ? ", ..." : ""));
        }
    }

    /** @return {@code --cell} values as dimension to value; malformed ones are usage errors */
    static Map<String, String> parseCells(CommandSpec spec, List<String> cells) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String c : cells) {
            int eq = c.indexOf('=');
            Usage.require(spec, eq > 0 && eq < c.length() - 1, "--cell '" + c + "': expected DIM=VALUE, e.g."
                    + " object=glass_cup");
            Usage.require(spec, out.put(c.substring(0, eq), c.substring(eq + 1)) == null, "--cell: dimension '"
                    + c.substring(0, eq) + "' is given twice");
        }
        return out;
    }

    /**
     * @throws BadInputException when no failed rollout of the cells is minable (naming the run and the counts)
     */
    static Selection select(Lake lake, EpisodeVectors ev, String run, Map<String, String> cells, String baseline) {
        EvalFailures f = EvalFailures.select(lake, run, cells, baseline, List.of("task", "object", "lighting",
                "robot"), 0.05);
        List<MiningJob.Query> queries = new ArrayList<>();
        List<String> notMinable = new ArrayList<>();
        for (EvalEpisodeRow r : f.failures()) {
            int i = ev.indexOf(r.episodeId());
            if (i < 0) {
                notMinable.add(r.episodeId());
            } else {
                queries.add(new MiningJob.Query(r.episodeId(), ev.vectors()[i], "eval " + run + " failure"));
            }
        }
        Selection s = new Selection(f, queries, notMinable);
        if (queries.isEmpty()) {
            throw new BadInputException("--failures-from-eval " + run + ": no minable failure: " + s.summary()
                    .substring(s.summary().indexOf(": ") + 2));
        }
        return s;
    }
}
