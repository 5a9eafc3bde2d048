package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.enrich.model.NsfwjsPackage;
import io.flywheel.testkit.Node;

/**
 * The curation loop's motivating result through the CLI, on a simulated fleet whose ground truth says which episodes
 * hold a hard (transparent or reflective) object: 300 two-second episodes, 15 of them hard, 5 of those glass-cup
 * field failures; enriched with the MAC model on keyframes; mined with the wrist cameras' approach and grasp frames,
 * PCA-whitened, the 5 failures searched as one joint query, 8 neighbours each. The hard-case share of a uniform 30%
 * set and of the same set plus the mined episodes come from {@code trainset diff --hard-case} (the failures are in
 * neither set). The fleet, model, sample and search are deterministic; BENCHMARKS.md (mining quality) lists the same
 * run through {@code bench/mining-quality.sh} and the settings it was compared with.
 */
class MotivatingResultCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HARD = "object=glass_cup,wine_glass,steel_tumbler";
    private static final String WRISTS = "/left_wrist_camera/image_raw/compressed,/right_wrist_camera/image_raw/compressed";

    @Test
    void miningTheFailuresLiftsTheHardCaseShareOfTheTrainingSet(@TempDir Path tmp) throws Exception {
        Path model = new ModelCache(tmp.resolve("models")).install(BuiltinModel.MOBILENET_V2_BLOCK10_MAC,
                NsfwjsPackage.fromDirectory(Node.toolsDir().resolve("node_modules/nsfwjs"))).file();
        String fleet = tmp.resolve("fleet").toString();
        String lake = tmp.resolve("lake").toString();
        ok(CliRun.of("sim", "--preset", "motivating", "--episodes", "300", "--hard-objects", "15", "--glass-failures", "5",
                "--duration", "2", "--resolution", "320x240", "--seed", "7", "--out", fleet));
        ok(CliRun.of("init", lake));
        ok(CliRun.of("ingest", lake, fleet, "--json"));
        ok(CliRun.of("enrich", lake, "--model", model.toString(), "--stride", "keyframes", "--json"));
        ok(CliRun.of("dedup", lake, "--json"));
        String mined = tmp.resolve("mined.json").toString();
        String perQuery = tmp.resolve("per-query.json").toString();
        ok(CliRun.of("mine", lake, "--failures", "-k", "8", "--cameras", WRISTS, "--phases", "approach,grasp", "--whiten",
                "--joint", "--out", mined, "--json"));
        ok(CliRun.of("mine", lake, "--failures", "-k", "8", "--cameras", WRISTS, "--phases", "approach,grasp", "--whiten",
                "--out", perQuery, "--json"));
        ok(CliRun.of("trainset", "build", lake, "--tag", "uniform", "--ratio", "0.3", "--seed", "1"));
        ok(CliRun.of("trainset", "build", lake, "--tag", "mined", "--ratio", "0.3", "--seed", "1", "--mined", mined));
        ok(CliRun.of("trainset", "build", lake, "--tag", "mined-only", "--ratio", "0", "--seed", "1", "--mined", mined));
        ok(CliRun.of("trainset", "build", lake, "--tag", "per-query-only", "--ratio", "0", "--seed", "1", "--mined",
                perQuery));
        ok(CliRun.of("trainset", "build", lake, "--tag", "pool", "--ratio", "1", "--seed", "1"));
        JsonNode lift = diff(lake, "uniform", "mined");
        JsonNode joint = diff(lake, "uniform", "mined-only");
        JsonNode each = diff(lake, "uniform", "per-query-only");
        JsonNode pool = diff(lake, "uniform", "pool");

        double population = pool.get("hard_share_to").asDouble();
        double uniform = lift.get("hard_share_from").asDouble();
        double withMined = lift.get("hard_share_to").asDouble();
        String numbers = "population " + population + ", uniform " + uniform + ", uniform + mined " + withMined
                + ", precision joint " + joint.get("hard_share_to") + " per query " + each.get("hard_share_to");
        // the pool: 300 episodes minus the 5 failures and the near-duplicates; 10 hard episodes, ~3.5%
        assertEquals(10, Math.round(population * pool.get("to_episodes").asInt()), numbers);
        // a uniform 30% sample holds about the population share (2 or 3 of its ~85 episodes)
        assertTrue(uniform > 0 && uniform < 2 * population, numbers);
        // adding the 40 mined episodes lifts it at least 2.5x (measured: 2 / 85 -> 8 / 115, 2.96x)
        assertTrue(withMined >= 2.5 * uniform, numbers);
        // the mined episodes: hard at 5x the population share (7 of 40), more than k neighbours per failure (5 of 34)
        assertEquals(40, joint.get("to_episodes").asInt(), numbers);
        assertTrue(joint.get("hard_share_to").asDouble() >= 4 * population, numbers);
        assertTrue(joint.get("hard_share_to").asDouble() > each.get("hard_share_to").asDouble(), numbers);
    }

    private static JsonNode diff(String lake, String from, String to) throws Exception {
        CliRun r = CliRun.of("trainset", "diff", lake, from, to, "--hard-case", HARD, "--no-chart", "--json");
        ok(r);
        return JSON.readTree(r.out());
    }

    private static void ok(CliRun r) {
        assertEquals(0, r.exitCode(), r.err());
    }
}
