package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.error.FlywheelException;

/**
 * A lake whose metadata was damaged outside Flywheel: a truncated commit point, a commit point naming a table
 * version whose Lance manifest is gone or garbage, a garbage head hint. Each is refused with an error naming the
 * file, or the table and version; nothing is written.
 */
class DamagedLakeTest {
    @TempDir
    Path dir;

    private Path lakeWithTwoCommits() {
        Path at = dir.resolve("lake");
        try (Lake lake = Lake.init(at)) {
            Fixtures.ingest(lake, 0, 3);
            Fixtures.ingest(lake, 1, 3);
        }
        return at;
    }

    @Test
    void aTruncatedCommitPointIsRefusedByItsFileAndNothingIsWritten() throws IOException {
        Path at = lakeWithTwoCommits();
        Path newest = at.resolve("_lake/commits/" + String.format("%020d", 3) + ".json");
        assertTrue(Files.isRegularFile(newest), "init, then two ingests: commit 3 is the newest");
        byte[] whole = Files.readAllBytes(newest);
        Files.write(newest, java.util.Arrays.copyOf(whole, whole.length / 2));
        List<Path> before = listing(at);
        BadInputException e = assertThrows(BadInputException.class, () -> Lake.open(at).close());
        assertTrue(e.getMessage().contains(newest.toString()) && e.getMessage().contains("damaged"), e.getMessage());
        assertEquals(before, listing(at), "refusing the lake writes nothing");
        Files.write(newest, whole); // put back, the lake is whole again
        try (Lake lake = Lake.open(at); LakeTable frames = lake.table("frames")) {
            assertEquals(6, frames.countRows());
        }
    }

    @Test
    void aCommitPointNamingAGoneTableVersionNamesTheTableAndTheVersion() throws IOException {
        Path at = lakeWithTwoCommits();
        long v;
        try (Lake lake = Lake.open(at)) {
            v = lake.snapshot().tables().get("frames");
        }
        try (Stream<Path> s = Files.list(at.resolve("frames.lance/_versions"))) {
            for (Path m : s.toList()) {
                Files.write(m, "not a manifest".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        try (Lake lake = Lake.open(at)) {
            FlywheelException e = assertThrows(FlywheelException.class, () -> lake.table("frames").close());
            assertTrue(e.getMessage().contains("frames") && e.getMessage().contains("version " + v), e.getMessage());
            try (LakeTable episodes = lake.table("episodes")) {
                assertEquals(2, episodes.countRows(), "the other tables still read");
            }
        }
    }

    @Test
    void aGarbageHeadHintOnlyCostsAListing() throws IOException {
        Path at = lakeWithTwoCommits();
        Files.writeString(at.resolve("_lake/HEAD"), "garbage\u0000");
        try (Lake lake = Lake.open(at)) {
            assertEquals(3, lake.snapshot().seq());
            Fixtures.ingest(lake, 2, 3);
            assertEquals(4, lake.snapshot().seq());
        }
        try (Lake lake = Lake.open(at); LakeTable frames = lake.table("frames")) {
            assertEquals(9, frames.countRows());
        }
    }

    private static List<Path> listing(Path at) throws IOException {
        try (Stream<Path> s = Files.walk(at)) {
            return s.sorted().toList();
        }
    }
}
