package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.testkit.SharedData;

/**
 * The pipeline's stages as concurrent processes on one lake: {@code enrich} while {@code ingest} adds a simulated
 * fleet, then {@code trainset build} while {@code enrich} embeds the new episodes. Every process exits 0, their
 * commit windows overlap (from the commit protocol's trace), and the lake holds every episode once, each enriched
 * once, with the training set committed whole.
 */
class ConcurrentStagesCliTest {
    /** A {@code flywheel} command in a child JVM, with its output lines. */
    record Child(Process process, List<String> lines, Thread pump) {
        static Child start(Path tmp, String... args) throws Exception {
            Files.createDirectories(tmp);
            String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "-Djava.io.tmpdir=" + tmp, "-Dflywheel.lake.trace=true", "-Xmx1g", "-cp",
                    System.getProperty("java.class.path"), Main.class.getName()));
            cmd.addAll(List.of(args));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (Exception e) {
                    lines.add("pump: " + e);
                }
            });
            t.setDaemon(true);
            t.start();
            return new Child(p, lines, t);
        }

        int exit() throws Exception {
            assertTrue(process.waitFor(600, TimeUnit.SECONDS), "still running: " + lines);
            pump.join(10_000);
            return process.exitValue();
        }

        /** Waits for the first commit to begin (at most 300 s). */
        void awaitCommitting() throws InterruptedException {
            long deadline = System.currentTimeMillis() + 300_000;
            while (new ArrayList<>(lines).stream().noneMatch(l -> l.startsWith("STEP ") && l.endsWith(" begin"))) {
                assertTrue(process.isAlive() && System.currentTimeMillis() < deadline, "no commit began: " + lines);
                Thread.sleep(50);
            }
        }

        /** @return the time (epoch microseconds) of the first {@code begin} and the last {@code published} step */
        long[] window() {
            long first = Long.MAX_VALUE;
            long last = Long.MIN_VALUE;
            for (String l : new ArrayList<>(lines)) {
                String[] f = l.split(" ");
                if (f.length == 4 && f[0].equals("STEP")) {
                    long t = Long.parseLong(f[1]);
                    if (f[3].equals("begin")) {
                        first = Math.min(first, t);
                    } else if (f[3].equals("published")) {
                        last = Math.max(last, t);
                    }
                }
            }
            return new long[] {first, last};
        }

        long commits() {
            return new ArrayList<>(lines).stream().filter(l -> l.startsWith("STEP ") && l.endsWith(" published")).count();
        }
    }

    @Test
    void enrichWhileIngestingThenATrainingSetWhileEnriching(@TempDir Path tmp) throws Exception {
        Path lake = EnrichCliTest.bridgeLake(tmp);
        Path fleet = tmp.resolve("fleet");
        CliRun sim = CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio",
                "--threads", "1");
        assertEquals(0, sim.exitCode(), sim.err());
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();

        Child enrich = Child.start(tmp.resolve("tmp-enrich"), "enrich", lake.toString(), "--model", model,
                "--threads", "1", "--batch-episodes", "2");
        enrich.awaitCommitting(); // its model loaded and its first batch committing: the ingest runs meanwhile
        Child ingest = Child.start(tmp.resolve("tmp-ingest"), "ingest", lake.toString(), fleet.toString());
        assertEquals(0, ingest.exit(), "ingest: " + ingest.lines());
        assertEquals(0, enrich.exit(), "enrich: " + enrich.lines());
        assertOverlap(enrich, ingest);
        assertTrue(enrich.commits() >= 13, "one commit per batch of 2 of the 25 bridge episodes");

        Child build = Child.start(tmp.resolve("tmp-build"), "trainset", "build", lake.toString(), "--tag", "t1",
                "--ratio", "1", "--seed", "3");
        Child enrich2 = Child.start(tmp.resolve("tmp-enrich2"), "enrich", lake.toString(), "--model", model,
                "--threads", "1", "--batch-episodes", "1");
        assertEquals(0, build.exit(), "trainset build: " + build.lines());
        assertEquals(0, enrich2.exit(), "enrich: " + enrich2.lines());

        try (Lake l = Lake.open(lake.toString()); LakeTable eps = l.table("episodes");
                LakeTable frames = l.table("frames"); LakeTable raw = l.table("raw_files")) {
            List<EpisodeRow> all = eps.episodes(ScanRequest.all());
            assertEquals(31, all.size(), "25 bridge + 6 simulated episodes");
            assertEquals(31, new TreeSet<>(all.stream().map(EpisodeRow::episodeId).toList()).size(), "none twice");
            assertTrue(all.stream().allMatch(e -> e.enrichedAtNs() != null), "every episode enriched");
            assertEquals(all.stream().mapToLong(EpisodeRow::frameCount).sum(), frames.countRows(),
                    "every episode's frames, once");
            assertEquals(25 + 6, raw.countRows());
            assertTrue(l.snapshot().tags().containsKey("t1"), "the training set's tag");
        }
        CliRun show = CliRun.of("trainset", "show", lake.toString(), "t1", "--json");
        assertEquals(0, show.exitCode(), show.err());
    }

    private static void assertOverlap(Child a, Child b) {
        long[] x = a.window();
        long[] y = b.window();
        assertTrue(x[0] < y[1] && y[0] < x[1], "the two processes' commit windows overlap: " + java.util.Arrays.toString(x)
                + " and " + java.util.Arrays.toString(y));
    }
}
