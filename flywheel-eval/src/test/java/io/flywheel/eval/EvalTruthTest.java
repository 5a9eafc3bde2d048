package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.Lake;
import io.flywheel.sim.eval.EvalRollouts;

/**
 * Reports and comparisons checked against the truth the simulator drew from, not against themselves: over 20 seeds,
 * two runs each (a baseline policy, and a candidate whose true rate on glass cups fell by 0.35 and on backlit scenes
 * rose by 0.1), every rollout ingested through a results CSV into one lake and aggregated by DuckDB:
 * <ul>
 *   <li>the Wilson 95% intervals of {@code eval report} cover the cell's true rate in 90-99% of the 2 x 20 x 72
 *       cells;</li>
 *   <li>{@code eval compare} (z-test, Fisher's exact test for arm-3's cells of 7 rollouts, BH at q = 0.05) flags cells
 *       whose true rate did not change with an observed false-discovery rate (the mean over the seeds of the share
 *       of flagged cells whose true rate did not change: BH bounds its expectation, E[V/R], by q) of at most q,
 *       and finds at least 40% of the 18 glass-cup regressions per seed (those of arm-3, 7 rollouts a run, have
 *       little power).</li>
 * </ul>
 */
class EvalTruthTest {
    @TempDir
    Path dir;

    static final int SEEDS = 20;

    @Test
    void intervalsCoverTheTruthAndCompareControlsTheFalseDiscoveryRate() throws Exception {
        List<EvalRollouts.Shift> shifts = List.of(EvalRollouts.Shift.parse("object=glass_cup:-0.35"),
                EvalRollouts.Shift.parse("lighting=backlit:0.1"));
        long covered = 0;
        long intervals = 0;
        long flagged = 0;
        long falseFlags = 0;
        long regressionsFound = 0;
        long regressionsTrue = 0;
        long fisherCells = 0;
        double fdpSum = 0;
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            for (int seed = 1; seed <= SEEDS; seed++) {
                EvalRollouts.Result a = EvalRollouts.generate(new EvalRollouts.Options("base", "a" + seed, seed, 60,
                        List.of()));
                EvalRollouts.Result b = EvalRollouts.generate(new EvalRollouts.Options("cand", "b" + seed, seed, 60,
                        shifts));
                for (EvalRollouts.Result r : List.of(a, b)) {
                    Path csv = dir.resolve(r.options().runId() + ".csv");
                    EvalRollouts.writeCsv(r, csv);
                    Evaluations.ingest(lake, csv, null, null, null);
                    EvalReport rep = EvalReport.of(lake, r.options().runId(), List.of("task", "object", "lighting",
                            "robot"));
                    assertEquals(72, rep.cells().size());
                    Map<List<String>, Double> truth = truth(r);
                    for (EvalReport.Cell c : rep.cells()) {
                        double t = truth.get(List.copyOf(c.key().values()));
                        intervals++;
                        if (c.low() <= t && t <= c.high()) {
                            covered++;
                        }
                    }
                }
                Set<List<String>> changed = new HashSet<>();
                for (EvalRollouts.Cell c : b.shiftedCells()) {
                    changed.add(List.of(c.task(), c.object(), c.lighting(), c.robot()));
                }
                long seedFlagged = 0;
                long seedFalse = 0;
                EvalComparison cmp = EvalComparison.of(lake, "a" + seed, "b" + seed, List.of("task", "object",
                        "lighting", "robot"), 0.05);
                for (EvalComparison.Cell c : cmp.cells()) {
                    List<String> key = List.copyOf(c.key().values());
                    if ("fisher".equals(c.test())) {
                        fisherCells++;
                    }
                    if (key.get(1).equals("glass_cup")) {
                        regressionsTrue++;
                        if (c.regression()) {
                            regressionsFound++;
                        }
                    }
                    if (!c.verdict().equals("unchanged")) {
                        seedFlagged++;
                        if (!changed.contains(key)) {
                            seedFalse++;
                        }
                    }
                }
                flagged += seedFlagged;
                falseFlags += seedFalse;
                fdpSum += seedFlagged == 0 ? 0 : (double) seedFalse / seedFlagged; // the seed's false-discovery proportion
            }
        }
        double coverage = (double) covered / intervals;
        double fdr = fdpSum / SEEDS;
        System.out.printf("truth: Wilson coverage %.4f of %d cells; compare flagged %d cells, %d false: FDR (mean"
                        + " false-discovery proportion over seeds) %.4f, pooled %.4f; glass-cup regressions found %d"
                        + " of %d; %d cells by Fisher%n", coverage, intervals, flagged, falseFlags, fdr,
                (double) falseFlags / flagged, regressionsFound, regressionsTrue, fisherCells);
        assertEquals(2 * SEEDS * 72, intervals);
        assertTrue(coverage >= 0.90 && coverage <= 0.99, "coverage " + coverage);
        assertTrue(fdr <= 0.05, "observed FDR " + fdr + " (" + falseFlags + " of " + flagged + ")");
        assertTrue(regressionsFound >= regressionsTrue * 4 / 10, "found " + regressionsFound + " of " + regressionsTrue);
        assertEquals(SEEDS * 24L, fisherCells); // arm-3: 24 cells of 7 rollouts per seed
    }

    private static Map<List<String>, Double> truth(EvalRollouts.Result r) {
        Map<List<String>, Double> m = new HashMap<>();
        r.trueRates().forEach((c, v) -> m.put(List.of(c.task(), c.object(), c.lighting(), c.robot()), v));
        return m;
    }
}
