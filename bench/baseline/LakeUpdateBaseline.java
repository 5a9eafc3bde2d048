// The workload of io.flywheel.bench.LakeUpdateBench, written against the lake API of the code before the lake's
// column-scoped updates (commit 80f5774): the update is the whole-row merge-insert upsert that enrich and qc --apply
// used. bench/lake-update.sh compiles it against a build of that commit. Not part of the Maven build.
package io.flywheel.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.flywheel.lake.CommitResult;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.EpisodeRow;
import io.flywheel.lake.FrameRow;
import io.flywheel.lake.ImageLocator;
import io.flywheel.lake.StreamMatch;

/**
 * One column of every frame updated: a column-scoped update ({@code LakeTransaction.updateFrames} with
 * {@code phase} only) on a lake of EPISODES x FRAMES frames. {@code bench/lake-update.sh} runs the same workload
 * through the whole-row merge-insert upsert of the code before the lake's column-scoped updates
 * ({@code bench/baseline/LakeUpdateBaseline.java}) in the same run.
 *
 * <p>Rows: episode e, frame j: three camera locators (one plain range, two chunk locators), a 14-d state, a 7-d
 * action, a gripper value, two stream matches. Prints one JSON line: frames, build and update seconds, bytes the
 * update added to the frames table, and the check (every frame has the new phase, other columns unchanged).
 *
 * <p>Arguments: lake folder (must not exist), episodes, frames per episode.
 */
public final class LakeUpdateBaseline {
    private LakeUpdateBaseline() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int episodes = Integer.parseInt(args[1]);
        int perEpisode = Integer.parseInt(args[2]);
        long t0 = System.nanoTime();
        try (Lake lake = Lake.init(dir)) {
            for (int e = 0; e < episodes; e += 20) {
                List<FrameRow> rows = new ArrayList<>();
                List<EpisodeRow> eps = new ArrayList<>();
                for (int i = e; i < Math.min(episodes, e + 20); i++) {
                    rows.addAll(frames(i, perEpisode, null));
                    eps.add(episode(i, perEpisode));
                }
                lake.begin().putFrames(rows).putEpisodes(eps).commit();
            }
            double build = (System.nanoTime() - t0) / 1e9;
            List<FrameRow> updated = new ArrayList<>(episodes * perEpisode);
            for (int i = 0; i < episodes; i++) {
                updated.addAll(frames(i, perEpisode, "grasp"));
            }
            long before = size(dir.resolve("frames.lance"));
            long t1 = System.nanoTime();
            CommitResult r = lake.begin().upsertFrames(updated).commit();
            double update = (System.nanoTime() - t1) / 1e9;
            long written = size(dir.resolve("frames.lance")) - before;
            updated = null;
            long grasp;
            FrameRow sample;
            try (LakeTable t = lake.table("frames")) {
                grasp = t.countRows("phase = 'grasp'");
                sample = t.frames(io.flywheel.lake.ScanRequest.builder().filter("episode_id = '" + id(episodes / 2)
                        + "' AND frame_index = 7").build()).get(0);
            }
            boolean ok = grasp == (long) episodes * perEpisode
                    && sample.equals(frames(episodes / 2, perEpisode, "grasp").get(7));
            System.out.printf(java.util.Locale.ROOT, "{\"mode\":\"whole_row_upsert\",\"frames\":%d,\"build_s\":%.2f,"
                    + "\"update_s\":%.2f,\"bytes_written\":%d,\"rows_written\":%d,\"check\":%b}%n",
                    (long) episodes * perEpisode, build, update, written, r.table("frames").rowsWritten(), ok);
        }
    }

    static String id(int e) {
        return String.format("ep-%05d", e);
    }

    static EpisodeRow episode(int e, int k) {
        long t0 = 1_700_000_000_000_000_000L + e * 3_600_000_000_000L;
        return new EpisodeRow(id(e), "rec-" + e, "robot-" + (e % 8), "pick", "lab", "op", "success", t0,
                t0 + (k - 1) * 33_333_333L, (k - 1) * 33_333_333L, "/cam0", (long) k, "pass", List.of(), "{}", "{}");
    }

    static List<FrameRow> frames(int e, int k, String phase) {
        long t0 = 1_700_000_000_000_000_000L + e * 3_600_000_000_000L;
        String uri = "/data/recordings/run-" + e + ".mcap";
        List<FrameRow> out = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            double[] state = new double[14];
            for (int s = 0; s < state.length; s++) {
                state[s] = Math.sin(0.01 * j + s);
            }
            double[] action = new double[7];
            for (int s = 0; s < action.length; s++) {
                action[s] = Math.cos(0.01 * j + s);
            }
            List<ImageLocator> images = List.of(
                    new ImageLocator("/cam0", uri, -1, 4096L * j, 18_000, "", 1000L),
                    new ImageLocator("/cam1", uri, 1_000_000L + j / 50 * 65_536L, 1200L * (j % 50), 9_000, "zstd", 2000L),
                    new ImageLocator("/cam2", uri, 2_000_000L + j / 50 * 65_536L, 1300L * (j % 50), 9_500, "zstd", 3000L));
            List<StreamMatch> streams = List.of(new StreamMatch("/joint_states", true, 100_000L),
                    new StreamMatch("/command", true, 250_000L));
            FrameRow f = new FrameRow(id(e), j, t0 + j * 33_333_333L, state, action, 0.04 * (j % 25), images, streams,
                    List.of());
            out.add(phase == null ? f : f.withEnrichment(images, List.of(), null, phase));
        }
        return out;
    }

    static long size(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }
}
