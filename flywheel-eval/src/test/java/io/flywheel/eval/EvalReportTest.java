package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.Lake;

/**
 * Report and compare over DuckDB on a hand-made run pair whose every number can be checked by hand: counts, rates,
 * Wilson ends (SciPy), mean durations, failure modes, the test chosen per cell and the BH verdicts.
 */
class EvalReportTest {
    @TempDir
    Path dir;

    /** Run A: cup 40 rollouts (36 ok), glass 40 (30 ok), bowl 6 (5 ok). Run B: cup 40 (35), glass 40 (14), bowl 6 (1), sponge 5 (5). */
    static String results(String run, String policy, int[][] cells) {
        StringBuilder b = new StringBuilder("run_id,policy_version,episode_id,task,object,lighting,robot_id,success,"
                + "duration_s,failure_mode\n");
        String[] objects = {"cup", "glass", "bowl", "sponge"};
        for (int o = 0; o < cells.length; o++) {
            int n = cells[o][0];
            int ok = cells[o][1];
            for (int i = 0; i < n; i++) {
                boolean s = i < ok;
                b.append(run).append(',').append(policy).append(',').append(objects[o]).append('-').append(i)
                        .append(",pick,").append(objects[o]).append(",bright,arm-1,").append(s).append(',')
                        .append(s ? "10" : "20").append(',').append(s ? "" : i % 3 == 0 ? "drop" : "slip").append('\n');
            }
        }
        return b.toString();
    }

    @Test
    void reportAndCompareGiveHandCheckedNumbers() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Evaluations.ingest(lake, Files.writeString(dir.resolve("a.csv"), results("A", "p1",
                    new int[][] {{40, 36}, {40, 30}, {6, 5}})), null, null, null);
            Evaluations.ingest(lake, Files.writeString(dir.resolve("b.csv"), results("B", "p2",
                    new int[][] {{40, 35}, {40, 14}, {6, 1}, {5, 5}})), null, null, null);

            EvalReport r = EvalReport.of(lake, "A", List.of("object", "robot"));
            assertEquals(List.of("object", "robot"), r.dimensions());
            assertEquals(3, r.cells().size());
            EvalReport.Cell bowl = r.cells().get(0); // key order: bowl, cup, glass
            assertEquals(Map.of("object", "bowl", "robot", "arm-1"), bowl.key());
            assertEquals(6, bowl.episodes());
            assertEquals(5, bowl.successes());
            EvalReport.Cell glass = r.cells().get(2);
            assertEquals(0.75, glass.successRate(), 1e-12);
            // SciPy: binomtest(30, 40).proportion_ci(method='wilson') = (0.5980..., 0.8581...)
            Proportions.Interval w = Proportions.wilson(30, 40, Proportions.Z95);
            assertEquals(w.low(), glass.low(), 1e-15);
            assertEquals(w.high(), glass.high(), 1e-15);
            assertEquals(0.5980, glass.low(), 1e-4);
            assertEquals(0.8581, glass.high(), 1e-4);
            // 30 at 10 s, 10 at 20 s: 12.5 s; failures i = 30..39: i % 3 == 0 for 30, 33, 36, 39 -> 4 drop, 6 slip
            assertEquals(12.5, glass.meanDurationS(), 1e-9);
            assertEquals(List.of(Map.entry("slip", 6L), Map.entry("drop", 4L)), List.copyOf(glass.failureModes()
                    .entrySet()));
            assertEquals(86, r.total().episodes());
            assertEquals(71, r.total().successes());

            EvalComparison c = EvalComparison.of(lake, "A", "B", List.of("object"), 0.05);
            assertEquals(4, c.cells().size());
            EvalComparison.Cell cBowl = c.cells().get(0);
            assertEquals("fisher", cBowl.test()); // 6 rollouts < 10 in each run
            assertEquals(Proportions.fisherExact(5, 6, 1, 6), cBowl.p(), 1e-15);
            EvalComparison.Cell cCup = c.cells().get(1);
            assertEquals("z", cCup.test());
            assertEquals(Proportions.twoProportionZTest(36, 40, 35, 40), cCup.p(), 1e-15);
            assertEquals("unchanged", cCup.verdict());
            EvalComparison.Cell cGlass = c.cells().get(2);
            assertEquals(-0.4, cGlass.difference(), 1e-12);
            // 30/40 vs 14/40: pooled 0.55, z = 0.4 / sqrt(0.55 * 0.45 / 20) = 3.596, p = 3.2e-4; BH over 3: 9.7e-4
            assertEquals(3.596, Proportions.zStatistic(30, 40, 14, 40), 1e-3);
            assertEquals("regression", cGlass.verdict());
            assertEquals("only_b", c.cells().get(3).verdict());
            assertNull(c.cells().get(3).p());
            // bowl: Fisher p = 0.0801 (SciPy), adjusted 3/2 * 0.0801 = 0.12 > 0.05: not flagged with 6 rollouts
            assertEquals(0.08008658008658008, cBowl.p(), 1e-12);
            assertEquals("unchanged", cBowl.verdict());
            assertEquals(1, c.regressions().size());

            Path png = dir.resolve("h.png");
            Heatmap.write(r, png);
            Heatmap.write(c, dir.resolve("c.png"));
            assertTrue(Files.size(png) > 1000);
            assertTrue(javax.imageio.ImageIO.read(dir.resolve("c.png").toFile()).getWidth() > 200);

            assertThrows(NotFoundException.class, () -> EvalReport.of(lake, "Z", List.of("object")));
            BadInputException e = assertThrows(BadInputException.class, () -> EvalReport.of(lake, "A",
                    List.of("colour")));
            assertEquals("unknown dimension 'colour'; dimensions: task, object, lighting, scene, robot",
                    e.getMessage());
        }
    }
}
