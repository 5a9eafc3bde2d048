package io.flywheel.serve.cache;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.lake.Lake;
import io.flywheel.rows.RawFileRow;

/**
 * A generated lake with known truth: {@code episodes} episodes of {@code frames} frames, one camera.
 * Frame j of episode i: state = {i, j, i + j / 1000}, action = {j * 0.25, -i}; its image is
 * {@code imageBytes} seeded random bytes stored in raw file {@code run<i>.bin} at offset
 * {@code j * imageBytes} (a plain-range locator); frames with even j also carry the same bytes
 * reversed as the hot copy, so the loader reads hot copies for even frames and raw ranges for odd
 * ones. The set {@code tag} takes every episode.
 */
final class SyntheticLake {
    private SyntheticLake() {}

    static final long T0 = 1_700_000_000_000_000_000L;

    static byte[] image(int i, int j, int n) {
        byte[] b = new byte[n];
        new SplittableRandom(i * 100_003L + j).nextBytes(b);
        return b;
    }

    static byte[] hot(int i, int j, int n) {
        byte[] b = image(i, j, n);
        byte[] r = new byte[n];
        for (int k = 0; k < n; k++) {
            r[k] = b[n - 1 - k];
        }
        return r;
    }

    static void build(Lake lake, Path rawDir, int episodes, int frames, int imageBytes, String tag)
            throws IOException {
        Files.createDirectories(rawDir);
        for (int i = 0; i < episodes; i++) {
            Path raw = rawDir.resolve("run" + i + ".bin");
            try (OutputStream o = Files.newOutputStream(raw)) {
                for (int j = 0; j < frames; j++) {
                    o.write(image(i, j, imageBytes));
                }
            }
            String id = "ep-" + i;
            long t0 = T0 + i * 60_000_000_000L;
            List<FrameRow> rows = new ArrayList<>();
            for (int j = 0; j < frames; j++) {
                ImageLocator loc = new ImageLocator("/cam0", raw.toUri().toString(), -1, (long) j * imageBytes, imageBytes,
                        "", 0L, "jpeg", 32, 24);
                ImageEnrichment e = new ImageEnrichment(1.0, false, 0.0, false, 0L,
                        j % 2 == 0 ? hot(i, j, imageBytes) : null, null, null);
                rows.add(new FrameRow(id, j, t0 + j * 100_000_000L, new double[] {i, j, i + j / 1000.0},
                        new double[] {j * 0.25, -i}, 0.5, List.of(loc), List.of(), List.of(), List.of(e), null, null));
            }
            EpisodeRow ep = new EpisodeRow(id, "rec-" + i, "robot-1", "pick", "lab", "op", "success", t0,
                    t0 + (frames - 1) * 100_000_000L, (frames - 1) * 100_000_000L, "/cam0", (long) frames, "pass", List.of(),
                    null, "{}");
            RawFileRow rf = new RawFileRow(raw.toString(), Files.size(raw), String.format("%064x", i + 1), "mcap",
                    "rec-" + i, "robot-1", t0, "{}", "ok", t0 + 1);
            lake.begin("ingest").putFrames(rows).putEpisodes(List.of(ep)).putRawFiles(List.of(rf)).commit();
        }
        TrainsetBuilder.build(lake, TrainsetSpec.builder(tag).baseRatio(1.0).seed(1).sampleRateHz(0).build(),
                TrainsetBuilder.Progress.NONE);
    }
}
