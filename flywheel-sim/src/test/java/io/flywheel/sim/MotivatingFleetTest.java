package io.flywheel.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The motivating fleet, generated whole at test size (539 episodes of ~2 s at 160x120): every file
 * is there, the ground truth states 20 robots, 22 hard-object scenes (18 transparent) and 5
 * failures, all on glass cups, and each failure file says so in its metadata.
 */
class MotivatingFleetTest {
    @TempDir
    Path out;

    @Test
    void motivatingFleetAtTestSize() throws IOException {
        SimOptions o = SimOptions.builder(Preset.MOTIVATING).episodeSeconds(2).resolution(160, 120).outDir(out)
                .threads(2).build();
        SimSummary s = FleetSimulator.run(o, ProgressListener.NONE);
        assertEquals(539, s.episodes());
        assertEquals(20, s.robots());
        GroundTruth t = FleetSimulator.readGroundTruth(s.groundTruth());
        assertEquals(539, t.episodes().size());
        assertEquals(20, t.robots().size());
        assertEquals(22, t.fleet().hardObjectEpisodes());
        assertEquals(18, t.fleet().transparentEpisodes());
        assertEquals(4, t.fleet().reflectiveEpisodes());
        assertEquals(5, t.fleet().failures());
        assertEquals(5, t.fleet().glassCupFailures());
        long bytes = 0;
        for (GroundTruth.Episode e : t.episodes()) {
            assertEquals(e.bytes(), Files.size(out.resolve(e.file())), e.file());
            bytes += e.bytes();
        }
        assertEquals(s.bytes(), bytes);
        List<GroundTruth.Episode> failures = t.episodes().stream().filter(e -> e.failureCause() != null).toList();
        assertEquals(5, failures.size());
        for (GroundTruth.Episode f : failures) {
            assertEquals("glass_cup", f.object());
            assertEquals("failure", Episodes.read(out.resolve(f.file())).metadata().get("episode").get("outcome"));
        }
        try (var files = Files.walk(out)) {
            assertEquals(539, files.filter(p -> p.toString().endsWith(".mcap")).count());
        }
        try (var files = Files.walk(out)) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().contains(".tmp")), "no temporary files left");
        }
    }
}
