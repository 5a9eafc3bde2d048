package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real writer process at random moments and checks that every table opens at a valid
 * version with no partial rows, and that re-running the ingest repairs the lake exactly.
 */
class CrashConsistencyTest {
    static final int FILES = 40;
    static final int FRAMES = 120;

    @TempDir
    Path dir;

    @Test
    void killedWriterLeavesEveryTableAtACommittedVersion() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            lake.catalog();
        }
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int kills = 0;
        int lastCommitted = 0;
        for (int round = 0; round < 3; round++) {
            Process p = start(lakeDir);
            BlockingQueue<String> lines = pump(p);
            // wait for the child to be inside its ingest loop (one commit done this round, or it finished)
            String line;
            List<String> seen = new ArrayList<>();
            do {
                line = lines.poll(120, TimeUnit.SECONDS);
                seen.add(line);
            } while (line != null && !line.startsWith("committed") && !line.equals("done") && !line.equals("EOF"));
            assertTrue(line != null && !line.equals("EOF"), "writer died on its own: " + seen);
            if ("done".equals(line)) {
                p.waitFor(60, TimeUnit.SECONDS);
                break;
            }
            Thread.sleep(random.nextInt(400));
            p.destroyForcibly();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not die");
            kills++;
            lastCommitted = checkInvariants(lakeDir, "after kill " + kills + " (seed " + seed + ")");
        }
        assertTrue(kills >= 1, "no kill happened; the writer finished too fast");
        assertTrue(lastCommitted < FILES, "the writer finished before the last kill");

        // re-run to completion (in this JVM: a child costs seconds of native-library loading): the lake
        // must end up exact, with no duplicates from the crashed attempts
        CrashWriter.run(lakeDir.toString(), FILES, FRAMES);
        assertEquals(FILES, checkInvariants(lakeDir, "after the final run (seed " + seed + ")"));
        try (Lake lake = Lake.open(lakeDir); LakeTable frames = lake.table("frames");
                LakeTable eps = lake.table("episodes"); LakeTable raw = lake.table("raw_files")) {
            assertEquals((long) FILES * FRAMES, frames.countRows());
            assertEquals(FILES, eps.countRows());
            assertEquals(FILES, raw.countRows());
        }
    }

    /**
     * Checks the crash invariants and returns r, the number of files in raw_files.
     * raw_files holds exactly files 0..r-1; episodes holds 0..r-1 and maybe r (killed between
     * tables); frames holds whole episodes only (exactly FRAMES rows, indices 0..FRAMES-1, the
     * generated values) for 0..r-1 and maybe r.
     */
    private static int checkInvariants(Path lakeDir, String when) {
        try (Lake lake = Lake.open(lakeDir); LakeTable frames = lake.table("frames");
                LakeTable eps = lake.table("episodes"); LakeTable raw = lake.table("raw_files")) {
            List<RawFileRow> files = raw.rawFiles(ScanRequest.all());
            int r = files.size();
            TreeSet<String> rawShas = new TreeSet<>();
            files.forEach(f -> rawShas.add(f.sha256()));
            TreeSet<String> expectShas = new TreeSet<>();
            for (int i = 0; i < r; i++) {
                expectShas.add(Fixtures.sha(i));
            }
            assertEquals(expectShas, rawShas, when + ": raw_files must be a prefix without duplicates");

            List<String> epIds = eps.episodes(ScanRequest.all()).stream().map(EpisodeRow::episodeId).toList();
            assertEquals(epIds.size(), new TreeSet<>(epIds).size(), when + ": duplicate episodes " + epIds);
            assertTrue(epIds.size() == r || epIds.size() == r + 1, when + ": " + epIds.size() + " episodes for " + r
                    + " files");
            for (int i = 0; i < epIds.size(); i++) {
                assertTrue(epIds.contains(Fixtures.episodeId(i)), when + ": missing episode " + i);
            }

            Map<String, List<FrameRow>> byEpisode = new TreeMap<>();
            for (FrameRow f : frames.frames(ScanRequest.all())) {
                byEpisode.computeIfAbsent(f.episodeId(), k -> new ArrayList<>()).add(f);
            }
            assertTrue(byEpisode.size() == r || byEpisode.size() == r + 1,
                    when + ": frames of " + byEpisode.size() + " episodes for " + r + " files");
            for (int i = 0; i < byEpisode.size(); i++) {
                List<FrameRow> got = byEpisode.get(Fixtures.episodeId(i));
                assertTrue(got != null, when + ": no frames for episode " + i);
                got.sort((a, b) -> Integer.compare(a.frameIndex(), b.frameIndex()));
                assertEquals(Fixtures.frames(i, FRAMES), got, when + ": frames of episode " + i);
            }
            assertTrue(epIds.size() <= byEpisode.size(), when + ": episodes are committed after frames");
            System.out.printf("%s: raw_files %d, episodes %d, episodes with frames %d (versions %d/%d/%d)%n", when, r,
                    epIds.size(), byEpisode.size(), frames.version(), eps.version(), raw.version());
            return r;
        }
    }

    private Process start(Path lakeDir) throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("child-tmp"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + tmp, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                CrashWriter.class.getName(), lakeDir.toString(), Integer.toString(FILES), Integer.toString(FRAMES));
        pb.redirectErrorStream(true);
        return pb.start();
    }

    private static BlockingQueue<String> pump(Process p) {
        BlockingQueue<String> q = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    q.add(l);
                }
            } catch (Exception e) {
                q.add("pump: " + e);
            }
            q.add("EOF");
        });
        t.setDaemon(true);
        t.start();
        return q;
    }
}
