package io.flywheel.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The motivating fleet's plan: sizes, hard-object share and failures, and its determinism. */
class MotivatingPlanTest {
    static SimOptions motivating(long seed) {
        return SimOptions.builder(Preset.MOTIVATING).seed(seed).episodeSeconds(3).resolution(160, 120)
                .outDir(Path.of("unused")).build();
    }

    @Test
    void motivatingFleetHas539Episodes20Robots22HardScenesAnd5GlassCupFailures() {
        for (long seed : new long[] {42, 1, 2024}) {
            FleetPlan plan = FleetPlan.plan(motivating(seed));
            List<EpisodeSpec> eps = plan.episodes();
            assertEquals(539, eps.size());
            assertEquals(20, plan.robots().size());
            Set<String> robots = new HashSet<>();
            eps.forEach(e -> robots.add(e.robotId()));
            assertEquals(20, robots.size(), "every robot records");
            long hard = eps.stream().filter(e -> e.object().hard()).count();
            long transparent = eps.stream().filter(e -> e.object().transparent()).count();
            long glass = eps.stream().filter(e -> e.object().name().equals("glass_cup")).count();
            assertEquals(22, hard, "4% of 539 = 21.6, rounded");
            // 22 hard scenes: ceil(0.6 * 22) = 14 glass cups; the other 8 alternate wine glass / steel tumbler.
            assertEquals(14, glass);
            assertEquals(18, transparent, "14 glass cups + 4 wine glasses (the 4 steel tumblers are reflective)");
            List<EpisodeSpec> failures = eps.stream().filter(EpisodeSpec::failed).toList();
            assertEquals(5, failures.size());
            for (EpisodeSpec f : failures) {
                assertEquals("glass_cup", f.object().name());
                assertEquals("gripper_closed_on_nothing", f.failureCause());
                assertEquals("failure", f.outcome());
            }
            long dupEpisodes = eps.stream().filter(e -> e.duplicateGroup() >= 0).count();
            assertTrue(dupEpisodes >= 2, "near-duplicates exist: " + dupEpisodes);
            for (EpisodeSpec e : eps) {
                assertTrue(e.durationNs() >= 2_250_000_000L && e.durationNs() <= 3_750_000_000L, e.episodeId());
            }
        }
    }

    @Test
    void planIsAFunctionOfTheSeed() {
        assertEquals(FleetPlan.plan(motivating(42)), FleetPlan.plan(motivating(42)));
        assertTrue(!FleetPlan.plan(motivating(42)).episodes().equals(FleetPlan.plan(motivating(43)).episodes()));
    }

    @Test
    void badOptionsAreRejectedWithTheReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SimOptions.builder(Preset.TINY).episodes(0).build());
        assertTrue(e.getMessage().contains("episodes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> SimOptions.builder(Preset.TINY).resolution(8, 8).build());
        assertTrue(e.getMessage().contains("resolution"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Preset.parse("huge"));
        assertTrue(e.getMessage().contains("tiny, motivating or bench"), e.getMessage());
    }
}
