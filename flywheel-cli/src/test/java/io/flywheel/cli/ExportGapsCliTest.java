package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import io.flywheel.testkit.Node;

/**
 * Export of a training set whose frames have gaps: a simulated fleet with 30% of the joint and command messages and
 * 20% of the camera frames dropped, aligned with tight tolerances and flagged, so some samples have no state, no
 * action or no image of a camera (also at an episode's first frame). Every camera of the lake is exported, every
 * episode is kept, and each missing state/action is the episode's previous value (or, at its start, the first later
 * one), as computed here from the loader's samples.
 */
class ExportGapsCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void camerasMissingAtTheFirstFrameAndMissingStatesAreFilledNotDropped(@TempDir Path tmp) throws IOException {
        Path fleet = tmp.resolve("fleet");
        assertEquals(0, CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio", "--threads", "1",
                "--message-drop-rate", "0.3", "--frame-drop-rate", "0.2", "--seed", "3").exitCode());
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("ingest", lake, fleet.toString(), "--policy", "/joint_states=asof:7",
                "--policy", "/teleop/command=nearest:11", "--json");
        assertEquals(0, in.exitCode(), in.err());
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "all", "--ratio", "1", "--seed", "1",
                "--rate-hz", "0").exitCode());

        List<Sample> samples = new ArrayList<>();
        try (Lake l = Lake.open(lake); TrainsetLoader t = TrainsetLoader.open(l, "all",
                LoaderOptions.builder().images(LoaderOptions.Images.NONE).build())) {
            long[] all = new long[(int) t.size()];
            for (int i = 0; i < all.length; i++) {
                all[i] = i;
            }
            samples.addAll(t.get(all));
        }
        long missingVectors = samples.stream().filter(s -> s.state().length == 0).count()
                + samples.stream().filter(s -> s.action().length == 0).count();
        assertTrue(missingVectors > 10, "the drops leave samples without state or action: " + missingVectors);

        Path out = tmp.resolve("lerobot");
        CliRun ex = CliRun.of("export", "lerobot", lake, "all", out.toString(), "--fps", "30", "--json");
        assertEquals(0, ex.exitCode(), ex.err());
        JsonNode r = JSON.readTree(ex.out());
        assertEquals(3, r.get("cameras").size(), "every camera of the fleet: " + r.get("cameras"));
        assertEquals(0, r.get("left_out_episodes").size(), "one robot type: no episode left out " + r);
        assertEquals(samples.size(), r.get("frames").asLong());
        assertEquals(missingVectors, r.get("filled_vectors").asLong());
        assertTrue(r.get("filled_images").asLong() > 0, "dropped camera frames are filled: " + r);

        // data rows, in sample order: a missing value is the previous sample's of the episode, else the next one's
        // (read with hyparquet, an independent Parquet reader; the files in chunk/file order hold the samples in order)
        List<String> files;
        try (var w = java.nio.file.Files.walk(out.resolve("data"))) {
            files = w.filter(f -> f.toString().endsWith(".parquet")).map(Path::toString).sorted().toList();
        }
        Node.Result pq;
        try {
            pq = Node.run("parquet-read.mjs", files.toArray(String[]::new));
        } catch (InterruptedException e) {
            throw new IOException(e);
        }
        assertEquals(0, pq.exitCode(), pq.stderr());
        JsonNode tables = JSON.readTree(pq.stdout());
        List<double[]> state = new ArrayList<>();
        List<double[]> action = new ArrayList<>();
        for (String f : files) {
            for (JsonNode row : tables.get(f).get("rows")) {
                state.add(doubles(row.get("observation.state")));
                action.add(doubles(row.get("action")));
            }
        }
        assertEquals(samples.size(), state.size());
        for (int i = 0; i < samples.size(); i++) {
            assertArrayEquals(expected(samples, i, true), state.get(i), 1e-6, "state of sample " + i);
            assertArrayEquals(expected(samples, i, false), action.get(i), 1e-6, "action of sample " + i);
        }
    }

    /** The value the export must hold: the sample's own, else the episode's previous, else its next non-empty one. */
    private static double[] expected(List<Sample> samples, int i, boolean state) {
        String ep = samples.get(i).episodeId();
        for (int j = i; j >= 0 && samples.get(j).episodeId().equals(ep); j--) {
            double[] v = state ? samples.get(j).state() : samples.get(j).action();
            if (v.length > 0) {
                return asFloat(v);
            }
        }
        for (int j = i + 1; j < samples.size() && samples.get(j).episodeId().equals(ep); j++) {
            double[] v = state ? samples.get(j).state() : samples.get(j).action();
            if (v.length > 0) {
                return asFloat(v);
            }
        }
        throw new AssertionError("episode " + ep + " has no value at all");
    }

    private static double[] asFloat(double[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = (float) v[i];
        }
        return d;
    }

    private static double[] doubles(JsonNode list) {
        double[] d = new double[list.size()];
        for (int i = 0; i < d.length; i++) {
            d[i] = list.get(i).asDouble();
        }
        return d;
    }
}
