package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;

/** {@code flywheel trainset build|list|show|diff} on the 25 real BridgeData episodes. */
class TrainsetCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void buildListShowDiffAndRefuseAnExistingTag(@TempDir Path tmp) throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun ingest = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString(), "--json");
        assertEquals(0, ingest.exitCode(), ingest.err());

        CliRun v1 = CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "0", "--json");
        assertEquals(0, v1.exitCode(), v1.err());
        JsonNode s1 = JSON.readTree(v1.out());
        assertEquals(5, s1.get("episodes").asInt()); // round(0.2 * 25)
        assertEquals(50, s1.get("samples").asInt()); // 10 frames each, every frame
        assertEquals(25, s1.get("pool_size").asInt());

        // mine "by hand": two episodes outside the base, as `flywheel mine --json` would list them
        JsonNode shown = JSON.readTree(CliRun.of("trainset", "show", lake, "train-v1", "--json").out());
        java.util.Set<String> base = new java.util.HashSet<>();
        shown.get("episodes").forEach(e -> base.add(e.get("episode_id").asText()));
        JsonNode all = JSON.readTree(CliRun.of("qc", "report", lake, "--json").out()).get("episodes");
        java.util.List<String> outside = new java.util.ArrayList<>();
        all.forEach(e -> {
            if (!base.contains(e.get("episode_id").asText())) {
                outside.add(e.get("episode_id").asText());
            }
        });
        Path mined = tmp.resolve("mined.json");
        Files.writeString(mined, "{\"neighbours\": [{\"episode_id\": \"" + outside.get(1) + "\", \"query_episode_id\": \""
                + outside.get(0) + "\", \"distance\": 0.02, \"rank\": 1}], \"lineage\": {\"embedding_model\": \"m\"}}");
        CliRun v2 = CliRun.of("trainset", "build", lake, "--tag", "train-v2", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "2.5", "--mined", mined.toString(), "--json");
        assertEquals(0, v2.exitCode(), v2.err());
        JsonNode s2 = JSON.readTree(v2.out());
        assertEquals(6, s2.get("episodes").asInt());
        assertEquals(30, s2.get("samples").asInt()); // 5 of 10 frames at 2.5 Hz from 5 Hz
        assertEquals("m", s2.get("lineage").get("embedding_model").asText());
        assertTrue(s2.get("lineage").get("command_line").asText().startsWith("flywheel trainset build"));

        CliRun list = CliRun.of("trainset", "list", lake);
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().contains("train-v1") && list.out().contains("train-v2") && list.out().contains("2 training set(s)"),
                list.out());

        Path png = tmp.resolve("diff.png");
        CliRun diff = CliRun.of("trainset", "diff", lake, "train-v1", "train-v2", "--chart", png.toString(),
                "--hard-case", "task=put carrot on plate", "--json");
        assertEquals(0, diff.exitCode(), diff.err());
        JsonNode d = JSON.readTree(diff.out());
        assertEquals(1, d.get("added").size());
        assertEquals(outside.get(1), d.get("added").get(0).asText());
        assertEquals(0, d.get("removed").size());
        assertEquals(5, d.get("kept").asInt());
        assertTrue(Files.size(png) > 1000);
        assertEquals(0, d.get("hard_case_values_unmatched").size());
        CliRun typo = CliRun.of("trainset", "diff", lake, "train-v1", "train-v2", "--no-chart",
                "--hard-case", "task=put carot on plate,put carrot on plate", "--json");
        assertEquals(0, typo.exitCode(), typo.err());
        assertEquals("put carot on plate", JSON.readTree(typo.out()).get("hard_case_values_unmatched").get(0).asText());
        assertTrue(typo.err().contains("note: --hard-case task value(s) put carot on plate match no episode of train-v1"
                + " or train-v2"), typo.err());
        CliRun twoFields = CliRun.of("trainset", "diff", lake, "train-v1", "train-v2", "--no-chart",
                "--hard-case", "object=a,object=b");
        assertEquals(2, twoFields.exitCode());
        assertTrue(twoFields.err().contains("one FIELD= followed by comma-separated values")
                && twoFields.err().contains("got the value 'object=b'"), twoFields.err());

        CliRun folder = CliRun.of("trainset", "build", lake, "--tag", "train-bad", "--mined", tmp.toString());
        assertEquals(1, folder.exitCode());
        assertTrue(folder.err().contains("--mined " + tmp + " is a folder"), folder.err());
        // a damaged neighbours file is named, with the line and column where it stops being JSON
        Path cut = tmp.resolve("cut.json");
        Files.writeString(cut, Files.readString(mined).substring(0, 40));
        CliRun bad = CliRun.of("trainset", "build", lake, "--tag", "train-bad", "--mined", cut.toString());
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().startsWith("flywheel trainset build: --mined " + cut + ": not JSON at line 1,")
                && bad.err().contains("expected the neighbours file `flywheel mine --out` writes")
                && bad.noStackTrace(), bad.err());

        CliRun again = CliRun.of("trainset", "build", lake, "--tag", "train-v1");
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("already exists") && again.noStackTrace(), again.err());
        CliRun missing = CliRun.of("trainset", "show", lake, "nope");
        assertEquals(1, missing.exitCode(), "an unknown tag exits 1");
        assertTrue(missing.err().contains("train-v1"), missing.err());
    }
}
