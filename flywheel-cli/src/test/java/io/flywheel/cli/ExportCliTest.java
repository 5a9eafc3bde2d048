package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel export lerobot} and {@code flywheel export iceberg} on the 25 real BridgeData episodes (that the
 * LeRobot export's Parquet writing runs without Hadoop is shown by flywheel-serve's own tests: this class path has
 * Hadoop's client, for Iceberg).
 */
class ExportCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void exportsALeRobotFolderAndRefusesBadInputWithOneLine(@TempDir Path tmp) throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun ingest = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString(), "--json");
        assertEquals(0, ingest.exitCode(), ingest.err());
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "0").exitCode());
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "half", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "2.5").exitCode());

        Path out = tmp.resolve("lerobot");
        CliRun ok = CliRun.of("export", "lerobot", lake, "train-v1", out.toString(), "--json");
        assertEquals(0, ok.exitCode(), ok.err());
        JsonNode r = JSON.readTree(ok.out());
        assertEquals("v3.0", r.get("codebase_version").asText());
        assertEquals(5, r.get("episodes").asInt());
        assertEquals(50, r.get("frames").asInt());
        assertEquals(5, r.get("fps").asInt());
        assertEquals(3, r.get("cameras").size());
        JsonNode info = JSON.readTree(out.resolve("meta/info.json").toFile());
        assertEquals(50, info.get("total_frames").asInt());
        assertTrue(Files.isRegularFile(out.resolve("data/chunk-000/file-000.parquet")));
        assertTrue(Files.isRegularFile(out.resolve("meta/tasks.parquet")));

        CliRun exists = CliRun.of("export", "lerobot", lake, "train-v1", out.toString());
        assertEquals(1, exists.exitCode());
        assertTrue(exists.err().contains("--force") && exists.noStackTrace() && exists.err().strip().lines().count() == 1,
                exists.err());
        CliRun forced = CliRun.of("export", "lerobot", lake, "train-v1", out.toString(), "--force");
        assertEquals(0, forced.exitCode(), forced.err());
        assertTrue(forced.out().contains("50 frames at 5 fps"), forced.out());

        CliRun unknown = CliRun.of("export", "lerobot", lake, "nope", tmp.resolve("x").toString());
        assertEquals(1, unknown.exitCode(), "an unknown tag is bad input (exit 1), as for show, diff, load and warm");
        assertTrue(unknown.err().contains("no training set 'nope'") && unknown.noStackTrace(), unknown.err());

        CliRun fractional = CliRun.of("export", "lerobot", lake, "half", tmp.resolve("h").toString());
        assertEquals(1, fractional.exitCode());
        assertTrue(fractional.err().contains("2.5 Hz") && fractional.err().contains("--fps"), fractional.err());
        CliRun relabelled = CliRun.of("export", "lerobot", lake, "half", tmp.resolve("h").toString(), "--fps", "2", "--json");
        assertEquals(0, relabelled.exitCode(), relabelled.err());
        assertEquals(25, JSON.readTree(relabelled.out()).get("frames").asInt()); // 5 of 10 frames per episode

        assertEquals(2, CliRun.of("export", "lerobot", lake).exitCode()); // usage

        // 10 Hz asked of 5 Hz frames: the set has the frames' 5 Hz, and so has its export (no gaps, nothing filled)
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "asked10", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "10").exitCode());
        CliRun sparse = CliRun.of("export", "lerobot", lake, "asked10", tmp.resolve("a10").toString(), "--json");
        assertEquals(0, sparse.exitCode(), sparse.err());
        assertEquals(5, JSON.readTree(sparse.out()).get("fps").asInt());
        assertEquals(50, JSON.readTree(sparse.out()).get("frames").asInt());

        // Iceberg: a tag per call, the second call of a tag a no-op
        String wh = tmp.resolve("warehouse").toString();
        CliRun ice = CliRun.of("export", "iceberg", lake, "train-v1", "--warehouse", wh, "--json");
        assertEquals(0, ice.exitCode(), ice.err());
        JsonNode ij = JSON.readTree(ice.out());
        assertFalse(ij.get("already_exported").asBoolean());
        assertEquals("flywheel.samples", ij.get("tables").get(0).get("table").asText());
        assertEquals(50, ij.get("tables").get(0).get("rows").asInt());
        assertEquals(5, ij.get("tables").get(1).get("rows").asInt());
        CliRun half = CliRun.of("export", "iceberg", lake, "half", "--warehouse", wh);
        assertEquals(0, half.exitCode(), half.err());
        assertTrue(half.out().contains("the catalog holds [half, train-v1]"), half.out());
        CliRun again = CliRun.of("export", "iceberg", lake, "train-v1", "--warehouse", wh, "--json");
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(JSON.readTree(again.out()).get("already_exported").asBoolean());
        assertEquals(ij.get("tables").get(0).get("snapshot_id"), JSON.readTree(again.out()).get("tables").get(0)
                .get("snapshot_id"));
        CliRun noTag = CliRun.of("export", "iceberg", lake, "nope", "--warehouse", wh);
        assertEquals(1, noTag.exitCode());
        assertTrue(noTag.err().contains("no training set 'nope'") && noTag.noStackTrace(), noTag.err());
        CliRun badCatalog = CliRun.of("export", "iceberg", lake, "train-v1", "--warehouse", wh, "--catalog", "sqlite:x");
        assertEquals(2, badCatalog.exitCode());
        assertTrue(badCatalog.err().contains("expected a JDBC URI") && badCatalog.noStackTrace(), badCatalog.err());
        Path fresh = tmp.resolve("fresh-warehouse");
        CliRun noDriver = CliRun.of("export", "iceberg", lake, "train-v1", "--warehouse", fresh.toString(), "--catalog",
                "jdbc:nosuch://x");
        assertEquals(1, noDriver.exitCode());
        assertFalse(Files.exists(fresh), "a failed export leaves no warehouse folder behind");
        CliRun unreachable = CliRun.of("export", "iceberg", lake, "train-v1", "--warehouse", wh, "--catalog",
                "jdbc:sqlite:" + tmp.resolve("no/such/folder/c.db"));
        assertEquals(1, unreachable.exitCode());
        assertTrue(unreachable.err().contains("cannot open the Iceberg catalog") && unreachable.noStackTrace(),
                unreachable.err());
        assertEquals(2, CliRun.of("export", "iceberg", lake, "train-v1").exitCode()); // --warehouse is required
    }
}
