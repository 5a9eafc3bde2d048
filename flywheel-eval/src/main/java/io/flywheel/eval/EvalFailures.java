package io.flywheel.eval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.error.BadInputException;
import io.flywheel.lake.TableSchemas;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalEpisodeRow;

/**
 * The failed rollouts of an evaluation run that closing the loop mines for ({@code mine --failures-from-eval}): those of
 * the cells a filter names ({@code --cell object=glass_cup}), or of the cells a comparison with a baseline run flags
 * as regressions, or, with neither, every failure of the run.
 *
 * @param runId the run
 * @param cells the cells chosen, as dimension to value (the filter, or the regressed cells' keys); empty: all
 * @param failures the failed rollouts in them, in table order
 * @param baseline the baseline run when the cells are regressions, else null
 */
public record EvalFailures(String runId, List<Map<String, String>> cells, List<EvalEpisodeRow> failures,
        String baseline) {

    /**
     * @param filter dimension (task, object, lighting, scene, robot) to value: a rollout is chosen when it has every
     *     one; empty for all cells (or the regressed ones, with a baseline)
     * @param baseline a run to compare with ({@link EvalComparison}, BH at q over {@code by}): only the cells flagged
     *     as regressions; null for none
     * @throws io.flywheel.error.NotFoundException for an unknown run
     * @throws BadInputException for an unknown dimension
     */
    public static EvalFailures select(Lake lake, String runId, Map<String, String> filter, String baseline,
            List<String> by, double q) {
        Map<String, String> f = new LinkedHashMap<>();
        filter.forEach((k, v) -> f.put(Evaluations.dimensions(List.of(k)).get(0), v));
        List<EvalEpisodeRow> rows = Evaluations.episodes(lake, runId);
        List<Map<String, String>> cells = new ArrayList<>();
        List<List<String>> regressed = null;
        List<String> dims = null;
        if (baseline != null) {
            dims = Evaluations.dimensions(by);
            EvalComparison c = EvalComparison.of(lake, baseline, runId, by, q);
            regressed = new ArrayList<>();
            for (EvalComparison.Cell x : c.regressions()) {
                Map<String, String> key = new LinkedHashMap<>(x.key());
                if (matches(key, f)) {
                    cells.add(key);
                    regressed.add(List.copyOf(x.key().values()));
                }
            }
        } else if (!f.isEmpty()) {
            Map<String, String> shown = new LinkedHashMap<>();
            f.forEach((k, v) -> shown.put(EvalCube.label(k), v));
            cells.add(shown);
        }
        List<EvalEpisodeRow> out = new ArrayList<>();
        for (EvalEpisodeRow r : rows) {
            if (r.success() || !matchesRow(r, f)) {
                continue;
            }
            if (regressed != null) {
                List<String> key = new ArrayList<>();
                for (String d : dims) {
                    key.add(value(r, d));
                }
                if (!regressed.contains(key)) {
                    continue;
                }
            }
            out.add(r);
        }
        return new EvalFailures(runId, cells, out, baseline);
    }

    private static boolean matches(Map<String, String> shownKey, Map<String, String> filter) {
        for (Map.Entry<String, String> e : filter.entrySet()) {
            String v = shownKey.get(EvalCube.label(e.getKey()));
            if (v != null && !v.equals(e.getValue())) {
                return false;
            }
        }
        return true;
    }

    private static boolean matchesRow(EvalEpisodeRow r, Map<String, String> filter) {
        for (Map.Entry<String, String> e : filter.entrySet()) {
            if (!e.getValue().equals(value(r, e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    static String value(EvalEpisodeRow r, String dim) {
        return switch (dim) {
            case TableSchemas.TASK -> r.task();
            case "object" -> r.object();
            case "lighting" -> r.lighting();
            case TableSchemas.SCENE -> r.scene() == null ? "(none)" : r.scene();
            default -> r.robotId();
        };
    }
}
