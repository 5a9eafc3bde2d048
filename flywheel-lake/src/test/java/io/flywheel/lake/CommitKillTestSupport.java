package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/** Checks shared by the commit tests. */
final class CommitKillTestSupport {
    private CommitKillTestSupport() {}

    /** Files 0..n-1 of {@link Fixtures} with k frames each are in all three tables, whole and exactly once. */
    static void assertFiles(Lake lake, int n, int k, String when) {
        try (LakeTable frames = lake.table("frames"); LakeTable eps = lake.table("episodes");
                LakeTable raw = lake.table("raw_files")) {
            TreeSet<String> want = new TreeSet<>();
            TreeSet<String> wantShas = new TreeSet<>();
            for (int i = 0; i < n; i++) {
                want.add(Fixtures.episodeId(i));
                wantShas.add(Fixtures.sha(i));
            }
            List<RawFileRow> files = raw.rawFiles(ScanRequest.all());
            assertEquals(n, files.size(), when + ": raw_files rows");
            assertEquals(wantShas, new TreeSet<>(files.stream().map(RawFileRow::sha256).toList()), when);
            List<EpisodeRow> e = eps.episodes(ScanRequest.all());
            assertEquals(n, e.size(), when + ": episodes rows");
            assertEquals(want, new TreeSet<>(e.stream().map(EpisodeRow::episodeId).toList()), when);
            assertEquals((long) n * k, frames.countRows(), when + ": frames rows");
            for (int i = 0; i < n; i++) {
                List<FrameRow> got = new ArrayList<>(frames.frames(ScanRequest.builder()
                        .filter("episode_id = '" + Fixtures.episodeId(i) + "'").build()));
                got.sort((a, b) -> Integer.compare(a.frameIndex(), b.frameIndex()));
                assertEquals(Fixtures.frames(i, k), got, when + ": frames of file " + i);
            }
        }
    }
}
