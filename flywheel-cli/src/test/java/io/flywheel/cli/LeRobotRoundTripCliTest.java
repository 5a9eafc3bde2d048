package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.ingest.ParquetRows;
import io.flywheel.testkit.SharedData;

/**
 * {@code export lerobot}, then {@code ingest} of the exported folder, then {@code export lerobot} again, on 5 real
 * BridgeData episodes (50 frames, 3 cameras): the second export has the same episodes, frame counts, tasks and
 * {@code observation.state} / {@code action} values as the first (the import copies the float32 values; the second
 * export's images are decoded by enrich from the first export's MP4 samples the import located, without a decode
 * error). The value names go both ways: the first export's info.json names the state values with the recording's
 * JointState names ({@code x y z roll pitch yaw gripper}) and the action values with their field paths
 * ({@code data[0..6]} of a Float32MultiArray), the import reads them back into the episodes' names, and the second
 * export names them the same.
 */
class LeRobotRoundTripCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void exportImportExportKeepsValuesAndFrameCounts(@TempDir Path tmp) throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun ingest = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString(), "--json");
        assertEquals(0, ingest.exitCode(), ingest.err());
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "t", "--ratio", "0.2", "--seed", "5",
                "--rate-hz", "0").exitCode());
        Path first = tmp.resolve("first");
        CliRun e1 = CliRun.of("export", "lerobot", lake, "t", first.toString(), "--json");
        assertEquals(0, e1.exitCode(), e1.err());

        String lake2 = tmp.resolve("lake2").toString();
        assertEquals(0, CliRun.of("init", lake2).exitCode());
        CliRun imp = CliRun.of("ingest", lake2, first.toString(), "--json");
        assertEquals(0, imp.exitCode(), imp.err());
        JsonNode ij = JSON.readTree(imp.out());
        assertEquals(5, ij.get("episodes").asLong(), imp.out());
        assertEquals(50, ij.get("frames").asLong(), imp.out());
        // the loader gives video frames from enrich's hot copies (one access unit does not decode alone)
        CliRun en = CliRun.of("enrich", lake2, "--model", "none", "--json");
        assertEquals(0, en.exitCode(), en.err());
        assertEquals(0, JSON.readTree(en.out()).get("decode_errors").asLong(), en.out());
        assertEquals(150, JSON.readTree(en.out()).get("images").asLong(), en.out());
        assertEquals(0, CliRun.of("trainset", "build", lake2, "--tag", "t2", "--ratio", "1", "--rate-hz", "0")
                .exitCode());
        Path second = tmp.resolve("second");
        CliRun e2 = CliRun.of("export", "lerobot", lake2, "t2", second.toString(), "--fps",
                JSON.readTree(e1.out()).get("fps").asText(), "--json");
        assertEquals(0, e2.exitCode(), e2.err());
        JsonNode j1 = JSON.readTree(e1.out());
        JsonNode j2 = JSON.readTree(e2.out());
        JsonNode f1 = JSON.readTree(first.resolve("meta/info.json").toFile()).get("features");
        JsonNode f2 = JSON.readTree(second.resolve("meta/info.json").toFile()).get("features");
        assertEquals("[\"x\",\"y\",\"z\",\"roll\",\"pitch\",\"yaw\",\"gripper\"]",
                f1.get("observation.state").get("names").toString());
        assertEquals("[\"data[0]\",\"data[1]\",\"data[2]\",\"data[3]\",\"data[4]\",\"data[5]\",\"data[6]\"]",
                f1.get("action").get("names").toString());
        assertEquals(f1.get("observation.state").get("names"), f2.get("observation.state").get("names"));
        assertEquals(f1.get("action").get("names"), f2.get("action").get("names"));
        assertEquals(j1.get("episodes"), j2.get("episodes"));
        assertEquals(j1.get("frames"), j2.get("frames"));
        assertEquals(j1.get("cameras").size(), j2.get("cameras").size());

        ParquetRows a = ParquetRows.read(first.resolve("data/chunk-000/file-000.parquet"), null);
        ParquetRows b = ParquetRows.read(second.resolve("data/chunk-000/file-000.parquet"), null);
        assertEquals(50, a.rows());
        assertEquals(a.rows(), b.rows());
        // episodes may come out in another order: compare each episode's rows by its first state vector
        java.util.Map<String, Integer> firstRowOf = new java.util.HashMap<>();
        for (int r = 0; r < a.rows(); r++) {
            if (a.integer("frame_index", r) == 0) {
                firstRowOf.put(java.util.Arrays.toString((double[]) a.column("observation.state")[r]), r);
            }
        }
        for (int r = 0; r < b.rows(); r++) {
            if (b.integer("frame_index", r) != 0) continue;
            Integer ra = firstRowOf.get(java.util.Arrays.toString((double[]) b.column("observation.state")[r]));
            assertTrue(ra != null, "episode at row " + r + " of the second export is in the first");
            long len = 0;
            while (r + len < b.rows() && b.integer("episode_index", (int) (r + len)) == b.integer("episode_index", r)) {
                for (String c : List.of("observation.state", "action")) {
                    assertArrayEquals((double[]) a.column(c)[(int) (ra + len)], (double[]) b.column(c)[(int) (r + len)],
                            0.0, c + " row " + (r + len));
                }
                assertEquals(a.integer("frame_index", (int) (ra + len)), b.integer("frame_index", (int) (r + len)));
                len++;
            }
            long lenA = 0;
            while (ra + lenA < a.rows() && a.integer("episode_index", (int) (ra + lenA)) == a.integer("episode_index", ra)) {
                lenA++;
            }
            assertEquals(lenA, len, "frames of the episode at row " + r);
        }
    }
}
