package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.StreamMatch;

import java.util.ArrayList;
import java.util.List;

/**
 * Generated lake rows with stated ground truth: episode {@code i} of "file" {@code i} has
 * {@code k} frames; frame {@code j} is at {@code t0(i) + j * 100 ms}, state = {i, j, i*j},
 * action = {j * 0.5}, gripper = j / k, two cameras (one plain range, one zstd chunk locator).
 */
final class Fixtures {
    private Fixtures() {}

    static final long T0 = 1_700_000_000_000_000_000L;

    static String sha(int i) {
        return String.format("%064x", 0xABCDEF00L + i);
    }

    static String episodeId(int i) {
        return "ep-" + sha(i).substring(56) + "-0";
    }

    static long t0(int i) {
        return T0 + i * 60_000_000_000L;
    }

    static RawFileRow rawFile(int i) {
        return new RawFileRow("/data/run" + i + ".mcap", 1000L + i, sha(i), "mcap", "rec-" + i, "robot-1",
                t0(i), "{\"topics\":2}", "ok", t0(i) + 1);
    }

    static EpisodeRow episode(int i, int k) {
        return new EpisodeRow(episodeId(i), "rec-" + i, "robot-1", "pick 'cube'", "lab", "op", "success", t0(i),
                t0(i) + (k - 1) * 100_000_000L, (k - 1) * 100_000_000L, "/cam0", (long) k, null, null, null,
                "{\"i\":" + i + "}", java.util.Map.of(), null, null, List.of("x", "left.y", "right.y"),
                List.of("gripper_cmd"));
    }

    static List<FrameRow> frames(int i, int k) {
        List<FrameRow> out = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            List<ImageLocator> images = List.of(
                    new ImageLocator("/cam0", "/data/run" + i + ".mcap", -1, 4096L * j, 1234, "", 0L),
                    new ImageLocator("/cam1", "/data/run" + i + ".mcap", 777L * i, 50L * j, 999, "zstd", 1_000_000L + j));
            List<StreamMatch> streams = List.of(new StreamMatch("/joint_states", true, 250_000L * j),
                    new StreamMatch("/gripper", j % 3 != 2, j % 3 != 2 ? 10L : null));
            out.add(new FrameRow(episodeId(i), j, t0(i) + j * 100_000_000L, new double[] {i, j, i * j},
                    new double[] {j * 0.5}, j % 3 != 2 ? (double) j / k : null, images, streams,
                    j % 3 == 2 ? List.of("unmatched:/gripper") : List.of()));
        }
        return out;
    }

    /** Writes file {@code i} as one transaction (frames, episodes, raw_files). */
    static CommitResult ingest(Lake lake, int i, int k) {
        return lake.begin("ingest").putFrames(frames(i, k)).putEpisodes(List.of(episode(i, k)))
                .putRawFiles(List.of(rawFile(i))).commit();
    }
}
