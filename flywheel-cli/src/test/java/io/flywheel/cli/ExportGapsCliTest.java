package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * action or no image of a camera (also at an episode's first frame), and the master camera's dropped frames leave
 * gaps between samples. Without --resample the export is refused, naming the episodes (numbering the frames would put
 * every frame after a gap early). With it, every sample sits in the slot of its recorded time on the 30 fps grid, the
 * slots of dropped frames hold the previous sample and are marked; every camera of the lake is exported, every episode
 * is kept, and each missing state/action is the episode's previous value (or, at its start, the first later one), as
 * computed here from the loader's samples.
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
        CliRun refused = CliRun.of("export", "lerobot", lake, "all", out.toString(), "--fps", "30");
        assertEquals(1, refused.exitCode(), refused.err());
        assertTrue(refused.err().contains("episode(s) have dropped frames") && refused.err().contains("--resample")
                && refused.noStackTrace(), refused.err());
        assertFalse(java.nio.file.Files.exists(out), "nothing written");

        // the slots, from the samples' times: k = round((t - t0) / median interval) per episode
        List<Integer> rowSample = new ArrayList<>(); // per exported row, its sample's position in `samples`
        List<Boolean> rowFilled = new ArrayList<>();
        for (int from = 0; from < samples.size(); ) {
            int to = from;
            while (to < samples.size() && samples.get(to).episodeId().equals(samples.get(from).episodeId())) {
                to++;
            }
            long[] d = new long[to - from - 1];
            for (int i = from + 1; i < to; i++) {
                d[i - from - 1] = samples.get(i).timestampNs() - samples.get(i - 1).timestampNs();
            }
            java.util.Arrays.sort(d);
            double period = d[d.length / 2];
            long t0 = samples.get(from).timestampNs();
            int slots = (int) Math.round((samples.get(to - 1).timestampNs() - t0) / period) + 1;
            int[] src = new int[slots];
            java.util.Arrays.fill(src, -1);
            for (int i = from; i < to; i++) {
                int k = (int) Math.round((samples.get(i).timestampNs() - t0) / period);
                if (src[k] < 0) {
                    src[k] = i;
                }
            }
            for (int k = 0; k < slots; k++) {
                rowFilled.add(src[k] < 0);
                src[k] = src[k] < 0 ? src[k - 1] : src[k];
                rowSample.add(src[k]);
            }
            from = to;
        }
        long filledSlots = rowFilled.stream().filter(f -> f).count();
        assertTrue(filledSlots > 10, "dropped master frames leave empty slots: " + filledSlots);

        CliRun ex = CliRun.of("export", "lerobot", lake, "all", out.toString(), "--fps", "30", "--resample", "--json");
        assertEquals(0, ex.exitCode(), ex.err());
        JsonNode r = JSON.readTree(ex.out());
        assertEquals(3, r.get("cameras").size(), "every camera of the fleet: " + r.get("cameras"));
        assertEquals(0, r.get("left_out_episodes").size(), "one robot type: no episode left out " + r);
        assertEquals(rowSample.size(), r.get("frames").asLong());
        assertEquals(filledSlots, r.get("filled_slots").asLong());
        assertEquals(0, r.get("merged_samples").asLong());
        // a value is held once per row that needs it: filled slots repeat the sample's own (held) values
        long missingInRows = rowSample.stream().filter(i -> samples.get(i).state().length == 0).count()
                + rowSample.stream().filter(i -> samples.get(i).action().length == 0).count();
        assertEquals(missingInRows, r.get("filled_vectors").asLong());
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
        List<Long> filled = new ArrayList<>();
        List<Double> ts = new ArrayList<>();
        for (String f : files) {
            for (JsonNode row : tables.get(f).get("rows")) {
                state.add(doubles(row.get("observation.state")));
                action.add(doubles(row.get("action")));
                filled.add(row.get("flywheel.filled").asLong());
                ts.add(row.get("timestamp").asDouble());
            }
        }
        assertEquals(rowSample.size(), state.size());
        for (int k = 0; k < rowSample.size(); k++) {
            int i = rowSample.get(k);
            assertArrayEquals(expected(samples, i, true), state.get(k), 1e-6, "state of row " + k);
            assertArrayEquals(expected(samples, i, false), action.get(k), 1e-6, "action of row " + k);
            assertEquals(rowFilled.get(k) ? 1L : 0L, filled.get(k), "filled mark of row " + k);
        }
        // the last row of the first episode is at its real time on the grid, not early by the dropped frames
        int lastOfFirst = (int) rowSample.stream().filter(i -> samples.get(i).episodeId().equals(samples.get(0)
                .episodeId())).count() - 1;
        double real = (samples.get(rowSample.get(lastOfFirst)).timestampNs() - samples.get(0).timestampNs()) / 1e9;
        assertEquals(real, ts.get(lastOfFirst), 0.5 / 30, "timestamp of the first episode's last row");
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
