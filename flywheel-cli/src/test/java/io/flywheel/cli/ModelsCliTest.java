package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.enrich.model.NsfwjsPackage;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code flywheel models list|pull} on a temporary cache folder (no network). */
class ModelsCliTest {
    @TempDir
    Path tmp;

    @Test
    void listShowsCachedModelWithDimensionAndHash() throws Exception {
        Path cache = tmp.resolve("models");
        Files.createDirectories(cache);
        Files.copy(SharedData.shared("models/mobilenet_v2_block10_gap.onnx"), cache.resolve("mobilenet_v2_block10_gap.onnx"));
        CliRun run = CliRun.of("models", "list", "--cache-dir", cache.toString(), "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode json = Json.MAPPER.readTree(run.out());
        assertEquals(1, json.get("models").size());
        JsonNode m = json.get("models").get(0);
        assertEquals("mobilenet_v2_block10_gap", m.get("id").asText());
        assertEquals(96, m.get("dimension").asInt());
        assertEquals("[-1,3,224,224]", m.get("input_shape").toString());
        assertEquals("average", m.get("pooling").asText(), "the built-in id gives the pooling");
        assertEquals("644ae04d2c22f385bb75383204931a6f1e179114b31994052ea0b6ffe8939bf6", m.get("sha256").asText());
        CliRun text = CliRun.of("models", "list", "--cache-dir", cache.toString());
        assertTrue(text.out().contains("1 model(s) in " + cache), text.out());
    }

    /** The MAC model, converted into a cache from the installed nsfwjs package, is listed with 384-d and max pooling. */
    @Test
    void listShowsTheMacModel() throws Exception {
        Path cache = tmp.resolve("models");
        new ModelCache(cache).install(BuiltinModel.MOBILENET_V2_BLOCK10_MAC,
                NsfwjsPackage.fromDirectory(Node.toolsDir().resolve("node_modules/nsfwjs")));
        Files.copy(SharedData.shared("models/mobilenet_v2_block10_gap.onnx"), cache.resolve("mobilenet_v2_block10_gap.onnx"));
        CliRun run = CliRun.of("models", "list", "--cache-dir", cache.toString(), "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode json = Json.MAPPER.readTree(run.out());
        assertEquals("mobilenet_v2_block10_gap", json.get("default_model").asText());
        assertEquals(2, json.get("models").size());
        JsonNode m = json.get("models").get(1);
        assertEquals("mobilenet_v2_block10_mac", m.get("id").asText());
        assertEquals(384, m.get("dimension").asInt());
        assertEquals("max", m.get("pooling").asText());
        assertEquals("[-1,3,224,224]", m.get("input_shape").toString());
        assertEquals("unit", m.get("preprocessing").asText());
        CliRun text = CliRun.of("models", "list", "--cache-dir", cache.toString());
        assertTrue(text.out().lines().anyMatch(l -> l.startsWith("mobilenet_v2_block10_mac") && l.contains(" 384-d  max ")),
                text.out());
        assertTrue(text.out().contains("2 model(s) in " + cache), text.out());
    }

    @Test
    void pullRejectsWrongTarballAndUnknownModel() throws Exception {
        Path tgz = tmp.resolve("nsfwjs-4.4.0.tgz");
        Files.writeString(tgz, "not a tarball");
        CliRun bad = CliRun.of("models", "pull", "--from", tgz.toString(), "--cache-dir", tmp.resolve("c").toString());
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().startsWith("flywheel models pull: " + tgz + ": not the nsfwjs 4.4.0 tarball: expected integrity sha512-"),
                bad.err());
        assertEquals(1, bad.err().strip().lines().count());
        assertTrue(bad.noStackTrace());
        assertTrue(!Files.exists(tmp.resolve("c")), "nothing written to the cache");

        CliRun usage = CliRun.of("models", "pull", "--model", "resnet");
        assertEquals(2, usage.exitCode());
        assertTrue(usage.err().startsWith("flywheel models pull: Invalid value for option '--model': expected mobilenet_v2,"
                + " inception_v3, mobilenet_v2_mac, all (or a model id), found 'resnet'"), usage.err());
        // A full model id is a name too: the run gets as far as the (bad) tarball.
        CliRun byId = CliRun.of("models", "pull", "--model", "mobilenet_v2_block10_mac", "--from", tgz.toString(),
                "--cache-dir", tmp.resolve("c").toString());
        assertEquals(1, byId.exitCode(), byId.err());
        assertTrue(byId.err().contains("not the nsfwjs 4.4.0 tarball"), byId.err());
    }
}
