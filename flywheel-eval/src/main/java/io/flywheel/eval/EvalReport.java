package io.flywheel.eval;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalRunRow;

/**
 * The success rates of one evaluation run by cell ({@code flywheel eval report}): per cell the rollouts, successes,
 * success rate with its Wilson 95% interval ({@link Proportions#wilson}), mean duration, interventions and failure
 * modes (most frequent first), and the same for the whole run.
 *
 * @param run the run
 * @param dimensions the dimensions crossed, as shown ({@code robot} for robot_id)
 * @param cells one per combination of values that has rollouts, in key order
 * @param total the whole run as one cell (its key empty)
 */
public record EvalReport(EvalRunRow run, List<String> dimensions, List<Cell> cells, Cell total) {
    /**
     * One cell.
     *
     * @param key dimension name (as shown) to value, in the order asked for
     * @param episodes rollouts
     * @param successes successful rollouts
     * @param successRate successes / episodes
     * @param low the Wilson 95% interval's lower end
     * @param high its upper end
     * @param meanDurationS mean duration in seconds of the rollouts with one, or null
     * @param interventions rollouts with an intervention
     * @param failureModes failure mode to count, most frequent first ({@code unknown}: failed without a mode)
     */
    public record Cell(Map<String, String> key, long episodes, long successes, double successRate, double low,
            double high, Double meanDurationS, long interventions, Map<String, Long> failureModes) {}

    /**
     * @param by dimension names ({@code task, object, lighting, scene, robot})
     * @throws io.flywheel.error.NotFoundException for an unknown run
     * @throws io.flywheel.error.BadInputException for an unknown dimension
     */
    public static EvalReport of(Lake lake, String runId, List<String> by) {
        List<String> dims = Evaluations.dimensions(by);
        EvalRunRow run = Evaluations.run(lake, runId);
        Map<List<String>, EvalCube.Acc> cube = EvalCube.compute(lake, List.of(runId), dims).get(runId);
        List<Cell> cells = new ArrayList<>();
        EvalCube.Acc all = new EvalCube.Acc();
        for (Map.Entry<List<String>, EvalCube.Acc> e : cube.entrySet()) {
            cells.add(cell(dims, e.getKey(), e.getValue()));
            EvalCube.Acc a = e.getValue();
            all.n += a.n;
            all.successes += a.successes;
            all.durationSumNs += a.durationSumNs;
            all.durationCount += a.durationCount;
            all.interventions += a.interventions;
            a.failureModes.forEach((k, v) -> all.failureModes.merge(k, v, Long::sum));
        }
        return new EvalReport(run, dims.stream().map(EvalCube::label).toList(), cells, cell(List.of(), List.of(), all));
    }

    static Cell cell(List<String> dims, List<String> key, EvalCube.Acc a) {
        Map<String, String> k = new LinkedHashMap<>();
        for (int i = 0; i < dims.size(); i++) {
            k.put(EvalCube.label(dims.get(i)), key.get(i));
        }
        Proportions.Interval w = Proportions.wilson(a.successes, a.n, Proportions.Z95);
        Map<String, Long> modes = new LinkedHashMap<>();
        a.failureModes.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())
                .thenComparing(Map.Entry.comparingByKey())).forEach(e -> modes.put(e.getKey(), e.getValue()));
        return new Cell(k, a.n, a.successes, a.n == 0 ? 0 : (double) a.successes / a.n, w.low(), w.high(),
                a.durationCount == 0 ? null : a.durationSumNs / a.durationCount / 1e9, a.interventions, modes);
    }
}
