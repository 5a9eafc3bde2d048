package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RawFileRow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real writer process at random moments (not only at the protocol's steps) and checks that every file is
 * in all three tables or in none, then that re-running the ingest completes the lake exactly.
 */
class CrashConsistencyTest {
    static final int FILES = 40;
    static final int FRAMES = 120;

    @TempDir
    Path dir;

    @Test
    void killedWriterLeavesEachFileInAllTablesOrNone() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            lake.snapshot();
        }
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int kills = 0;
        int last = 0;
        for (int round = 0; round < 3; round++) {
            try (ChildProcess p = ChildProcess.start(dir.resolve("tmp"), Map.of(), Map.of(), CommitWriter.class,
                    lakeDir.toString(), "0", Integer.toString(FILES), Integer.toString(FRAMES))) {
                String line = p.await("committed", "done");
                assertTrue(!line.equals("EOF"), "writer died on its own: " + p.seen);
                if (line.equals("done")) {
                    break;
                }
                Thread.sleep(random.nextInt(400));
                p.kill();
            }
            kills++;
            last = checkInvariants(lakeDir, "after kill " + kills + " (seed " + seed + ")");
        }
        assertTrue(kills >= 1, "no kill happened; the writer finished too fast");
        assertTrue(last < FILES, "the writer finished before the last kill");
        CommitWriter.run(lakeDir.toString(), 0, FILES, FRAMES, null);
        assertEquals(FILES, checkInvariants(lakeDir, "after the final run (seed " + seed + ")"));
    }

    /** @return r: files 0..r-1 are in all three tables, whole, once; nothing else is in any */
    private static int checkInvariants(Path lakeDir, String when) {
        try (Lake lake = Lake.open(lakeDir); LakeTable frames = lake.table("frames");
                LakeTable eps = lake.table("episodes"); LakeTable raw = lake.table("raw_files")) {
            List<RawFileRow> files = raw.rawFiles(ScanRequest.all());
            int r = files.size();
            TreeSet<String> shas = new TreeSet<>();
            files.forEach(f -> shas.add(f.sha256()));
            TreeSet<String> want = new TreeSet<>();
            TreeSet<String> wantEps = new TreeSet<>();
            for (int i = 0; i < r; i++) {
                want.add(Fixtures.sha(i));
                wantEps.add(Fixtures.episodeId(i));
            }
            assertEquals(want, shas, when + ": raw_files must be a prefix without duplicates");
            List<String> epIds = eps.episodes(ScanRequest.all()).stream().map(EpisodeRow::episodeId).toList();
            assertEquals(r, epIds.size(), when + ": an episode row for each raw file, no more");
            assertEquals(wantEps, new TreeSet<>(epIds), when);
            assertEquals((long) r * FRAMES, frames.countRows(), when + ": whole episodes' frames, no more");
            System.out.printf("%s: %d files, lake commit %d%n", when, r, lake.snapshot().seq());
            return r;
        }
    }
}
