package io.flywheel.eval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.lake.EvalTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.TableSchemas;

/**
 * The evaluation cube: per run and cell (one value of each dimension asked for), the rollouts, successes, summed
 * durations, interventions and failure modes, computed by DuckDB over the {@code eval_episodes} Arrow stream (the run
 * filter and the columns pushed into the Lance scan), one query for every run asked for.
 */
final class EvalCube {
    /** The aggregates of one cell of one run. */
    static final class Acc {
        long n;
        long successes;
        double durationSumNs;
        long durationCount;
        long interventions;
        final Map<String, Long> failureModes = new LinkedHashMap<>();
    }

    private EvalCube() {}

    /**
     * @param runs run ids, each in the lake (checked by the caller)
     * @param dims eval_episodes dimension columns
     * @return run -> cell key (the dims' values, in order) -> aggregates; cells in key order
     */
    static Map<String, Map<List<String>, Acc>> compute(Lake lake, List<String> runs, List<String> dims) {
        List<String> cols = new ArrayList<>(List.of(EvalTables.RUN_ID, EvalTables.SUCCESS, EvalTables.DURATION_NS,
                EvalTables.FAILURE_MODE, EvalTables.INTERVENTION));
        cols.addAll(dims);
        String dimList = String.join(", ", dims.stream().map(d -> "coalesce(" + d + ", '(none)')").toList());
        String sql = "SELECT run_id, " + dimList + ", CASE WHEN success THEN NULL ELSE coalesce(failure_mode,"
                + " 'unknown') END AS fm, count(*) AS n, sum(CASE WHEN success THEN 1 ELSE 0 END) AS k,"
                + " sum(duration_ns)::DOUBLE AS dsum, count(duration_ns) AS dn,"
                + " sum(CASE WHEN intervention THEN 1 ELSE 0 END) AS iv FROM eval_episodes GROUP BY ALL ORDER BY ALL";
        Map<String, Map<List<String>, Acc>> out = new LinkedHashMap<>();
        for (String r : runs) {
            out.put(r, new java.util.TreeMap<>(EvalCube::compareKeys));
        }
        LakeSql.Result res;
        try (LakeSql s = LakeSql.open(lake)) {
            s.table(EvalTables.EVAL_EPISODES, TableRef.latest(), ScanRequest.builder().columns(cols.toArray(String[]::new))
                    .filter(Sql.in(EvalTables.RUN_ID, runs)).batchSize(LakeSql.BATCH_ROWS).build());
            res = s.query(sql);
        }
        int d = dims.size();
        for (List<Object> row : res.rows()) {
            String run = (String) row.get(0);
            List<String> key = new ArrayList<>(d);
            for (int i = 0; i < d; i++) {
                key.add((String) row.get(1 + i));
            }
            Acc a = out.get(run).computeIfAbsent(List.copyOf(key), k -> new Acc());
            String fm = (String) row.get(1 + d);
            long n = ((Number) row.get(2 + d)).longValue();
            a.n += n;
            a.successes += ((Number) row.get(3 + d)).longValue();
            Object dsum = row.get(4 + d);
            if (dsum != null) {
                a.durationSumNs += ((Number) dsum).doubleValue();
            }
            a.durationCount += ((Number) row.get(5 + d)).longValue();
            a.interventions += ((Number) row.get(6 + d)).longValue();
            if (fm != null) {
                a.failureModes.merge(fm, n, Long::sum);
            }
        }
        return out;
    }

    static int compareKeys(List<String> a, List<String> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = a.get(i).compareTo(b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }

    /** @return dimension columns as shown to people: robot_id as robot */
    static String label(String dim) {
        return dim.equals(TableSchemas.ROBOT_ID) ? "robot" : dim;
    }
}
