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
        assertTrue(e.getMessage().contains("it ends early") && e.getMessage().contains("move this file"),
                e.getMessage());
        assertNoJavaNames(e.getMessage());
        Files.write(newest, new byte[0]);
        assertNoJavaNames(assertThrows(BadInputException.class, () -> Lake.open(at).close()).getMessage());
        Files.writeString(newest, new String(whole, java.nio.charset.StandardCharsets.UTF_8)
                .replaceFirst("\"episodes\"\\s*:\\s*\\d+", "\"episodes\" : \"x\""));
        BadInputException wrongType = assertThrows(BadInputException.class, () -> Lake.open(at).close());
        assertTrue(wrongType.getMessage().contains("field 'episodes'"), wrongType.getMessage());
        assertNoJavaNames(wrongType.getMessage());

        // what the message says to do: move the damaged commit point aside; the lake opens at the commit before
        Files.move(newest, dir.resolve("damaged.json"));
        try (Lake lake = Lake.open(at)) {
            assertEquals(2, lake.snapshot().seq());
            try (LakeTable frames = lake.table("frames")) {
                assertEquals(3, frames.countRows(), "episode 0 only: commit 3 is gone");
            }
            Fixtures.ingest(lake, 1, 3); // the next commit rolls back the versions commit 3 named and commits again
            assertEquals(3, lake.snapshot().seq());
        }
        try (Lake lake = Lake.open(at); LakeTable frames = lake.table("frames")) {
            assertEquals(6, frames.countRows());
            assertEquals(3, frames.countRows("episode_id = '" + Fixtures.episodeId(1) + "'"), "not doubled");
        }
    }

    @Test
    void aMissingTableFolderNamesTheTableTheCommitAndTheVersion() throws IOException {
        Path at = lakeWithTwoCommits();
        LocalFiles.deleteTree(at.resolve("frames.lance"));
        try (Lake lake = Lake.open(at)) {
            io.flywheel.error.NotFoundException e = assertThrows(io.flywheel.error.NotFoundException.class,
                    () -> lake.table("frames").close());
            long v = lake.snapshot().tables().get("frames");
            assertTrue(e.getMessage().contains("frames.lance") && e.getMessage().contains("is missing")
                    && e.getMessage().contains("lake commit 3 names its version " + v), e.getMessage());
            assertTrue(!e.getMessage().contains(".rs:"), "no positions in Lance's sources: " + e.getMessage());
        }
    }

    @Test
    void aFileIsNoLakeAndALakeOfSchemaVersion1IsNotOfferedAMigration() throws IOException {
        Path file = Files.writeString(dir.resolve("afile"), "x");
        io.flywheel.error.NotFoundException notLake = assertThrows(io.flywheel.error.NotFoundException.class,
                () -> Lake.open(file).close());
        assertTrue(notLake.getMessage().contains("it is a file, not a folder"), notLake.getMessage());
        Path at = lakeWithTwoCommits();
        Path newest = at.resolve("_lake/commits/" + String.format("%020d", 3) + ".json");
        Files.writeString(newest, Files.readString(newest).replaceFirst("\"flywheel.schema_version\"\\s*:\\s*\"4\"",
                "\"flywheel.schema_version\" : \"1\""));
        LakeFormatException old = assertThrows(LakeFormatException.class, () -> Lake.open(at).close());
        assertTrue(old.getMessage().contains("version 1") && old.getMessage().contains("cannot be migrated")
                && !old.getMessage().contains("lake migrate"), old.getMessage());
    }

    private static void assertNoJavaNames(String message) {
        for (String java : List.of("com.fasterxml", "java.lang", "class ", "Exception", "REDACTED")) {
            assertTrue(!message.contains(java), "'" + java + "' in: " + message);
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
    void aCommitPointRemovedFromTheMiddleOfTheLogIsReported() throws IOException {
        Path at = lakeWithTwoCommits();
        try (Lake lake = Lake.open(at)) {
            assertEquals(List.of(), lake.missingCommits());
        }
        Files.delete(at.resolve("_lake/commits/" + String.format("%020d", 2) + ".json"));
        try (Lake lake = Lake.open(at)) {
            assertEquals(List.of(2L), lake.missingCommits());
            assertEquals(List.of(3L, 1L), lake.log(10).stream().map(LakeSnapshot::seq).toList());
            assertEquals(2, lake.log(10).get(0).parentSeq(), "commit 3 still names 2 as its parent");
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
