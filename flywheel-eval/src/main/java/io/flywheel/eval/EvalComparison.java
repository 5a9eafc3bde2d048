package io.flywheel.eval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalRunRow;

/**
 * Two evaluation runs compared cell by cell ({@code flywheel eval compare}): per cell both success rates, their
 * difference (B - A), a two-sided test of equal rates (the pooled two-proportion z-test, or Fisher's exact test when
 * either run has fewer than {@value #FISHER_BELOW} rollouts in the cell) and, across the cells both runs have, the
 * Benjamini-Hochberg procedure at {@code q}: a cell whose adjusted p-value is at most q and whose rate fell is a
 * regression, one whose rate rose an improvement. Cells only one run has are listed, not tested.
 *
 * @param a the baseline run
 * @param b the run compared with it
 * @param dimensions as shown
 * @param q the false-discovery rate
 * @param cells every cell of either run, in key order
 */
public record EvalComparison(EvalRunRow a, EvalRunRow b, List<String> dimensions, double q, List<Cell> cells) {
    /** Below this many rollouts of a cell in either run, Fisher's exact test instead of the z-test. */
    public static final int FISHER_BELOW = 10;

    /**
     * One cell of the comparison.
     *
     * @param key dimension to value
     * @param episodesA rollouts of run A in the cell (0: none)
     * @param successesA its successes
     * @param episodesB rollouts of run B
     * @param successesB its successes
     * @param rateA successes / episodes of A, or null without rollouts
     * @param rateB the same for B
     * @param difference rateB - rateA, or null
     * @param test {@code z}, {@code fisher}, or null (not tested: one run lacks the cell)
     * @param p the test's two-sided p-value, or null
     * @param adjustedP the Benjamini-Hochberg adjusted p-value, or null
     * @param verdict {@code regression}, {@code improvement}, {@code unchanged}, {@code only_a} or {@code only_b}
     */
    public record Cell(Map<String, String> key, long episodesA, long successesA, long episodesB, long successesB,
            Double rateA, Double rateB, Double difference, String test, Double p, Double adjustedP, String verdict) {
        /** @return whether the cell is flagged as a regression */
        public boolean regression() {
            return "regression".equals(verdict);
        }
    }

    /** @return the cells flagged as regressions */
    public List<Cell> regressions() {
        return cells.stream().filter(Cell::regression).toList();
    }

    /** @return the cells flagged as improvements */
    public List<Cell> improvements() {
        return cells.stream().filter(c -> "improvement".equals(c.verdict())).toList();
    }

    /**
     * @throws io.flywheel.error.NotFoundException for an unknown run
     * @throws io.flywheel.error.BadInputException for an unknown dimension
     * @throws IllegalArgumentException when q is not in (0, 1)
     */
    public static EvalComparison of(Lake lake, String runA, String runB, List<String> by, double q) {
        if (!(q > 0 && q < 1)) {
            throw new IllegalArgumentException("q must be in (0, 1), got " + q);
        }
        List<String> dims = Evaluations.dimensions(by);
        EvalRunRow a = Evaluations.run(lake, runA);
        EvalRunRow b = Evaluations.run(lake, runB);
        Map<String, Map<List<String>, EvalCube.Acc>> cube = EvalCube.compute(lake, List.of(runA, runB), dims);
        Map<List<String>, EvalCube.Acc> ca = cube.get(runA);
        Map<List<String>, EvalCube.Acc> cb = runA.equals(runB) ? ca : cube.get(runB);
        Set<List<String>> keys = new TreeSet<>(EvalCube::compareKeys);
        keys.addAll(ca.keySet());
        keys.addAll(cb.keySet());
        List<List<String>> tested = new ArrayList<>();
        List<Double> ps = new ArrayList<>();
        List<String> tests = new ArrayList<>();
        for (List<String> k : keys) {
            EvalCube.Acc x = ca.get(k);
            EvalCube.Acc y = cb.get(k);
            if (x != null && y != null) {
                boolean fisher = x.n < FISHER_BELOW || y.n < FISHER_BELOW;
                tested.add(k);
                tests.add(fisher ? "fisher" : "z");
                ps.add(fisher ? Proportions.fisherExact(x.successes, x.n, y.successes, y.n)
                        : Proportions.twoProportionZTest(x.successes, x.n, y.successes, y.n));
            }
        }
        double[] p = ps.stream().mapToDouble(Double::doubleValue).toArray();
        double[] adj = FalseDiscovery.adjusted(p);
        boolean[] rejected = FalseDiscovery.benjaminiHochberg(p, q);
        List<Cell> cells = new ArrayList<>();
        int t = 0;
        for (List<String> k : keys) {
            Map<String, String> key = new LinkedHashMap<>();
            for (int i = 0; i < dims.size(); i++) {
                key.put(EvalCube.label(dims.get(i)), k.get(i));
            }
            EvalCube.Acc x = ca.get(k);
            EvalCube.Acc y = cb.get(k);
            Double ra = x == null ? null : (double) x.successes / x.n;
            Double rb = y == null ? null : (double) y.successes / y.n;
            if (x != null && y != null) {
                String verdict = !rejected[t] ? "unchanged" : rb < ra ? "regression" : rb > ra ? "improvement"
                        : "unchanged";
                cells.add(new Cell(key, x.n, x.successes, y.n, y.successes, ra, rb, rb - ra, tests.get(t), p[t],
                        adj[t], verdict));
                t++;
            } else {
                cells.add(new Cell(key, x == null ? 0 : x.n, x == null ? 0 : x.successes, y == null ? 0 : y.n,
                        y == null ? 0 : y.successes, ra, rb, null, null, null, null, x == null ? "only_b" : "only_a"));
            }
        }
        return new EvalComparison(a, b, dims.stream().map(EvalCube::label).toList(), q, cells);
    }
}
