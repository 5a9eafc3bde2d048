package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** {@link Lake#versions()} and {@link Lake#log(int)}: what a reader outside Flywheel opens, and the commit history. */
class LakeVersionsTest {
    @TempDir
    Path dir;

    @Test
    void versionsNameTheNewestCommitsTablesAndSayWhenLanceIsAhead() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 5);
            Fixtures.ingest(lake, 1, 5);
            lake.begin("tag").tag("first-two", List.of("frames", "episodes")).commit();
            CompactionTest.appendOutsideTheProtocol(lake, 90); // a dead writer's frames version 4

            LakeVersions v = lake.versions();
            assertEquals(lake.snapshot().seq(), v.commitSeq());
            assertEquals("tag", v.operation());
            assertEquals(Map.of("raw_files", 3L, "episodes", 3L, "frames", 3L), v.tableVersions());
            LakeVersions.TableVersions frames = v.table("frames");
            assertEquals(3, frames.committedVersion());
            assertEquals(4, frames.latestVersion());
            assertTrue(frames.ahead());
            assertEquals(4, frames.versions());
            assertEquals(1, frames.oldestVersion());
            assertEquals(Map.of("first-two", 3L), frames.tags());
            assertEquals(10, frames.rows(), "at the committed version: the dead writer's 5 rows are not counted");
            assertEquals(2, frames.fragments());
            try (LakeTable t = lake.table("frames")) {
                assertEquals(t.dataFiles().stream().mapToLong(DataFileRef::sizeBytes).sum(), frames.dataBytes());
            }
            assertTrue(frames.dataBytes() > 0);
            LakeVersions.TableVersions raw = v.table("raw_files");
            assertFalse(raw.ahead());
            assertEquals(Map.of(), raw.tags());
            assertEquals(List.of(), raw.indexes());
        }
    }

    @Test
    void theLogListsCommitsNewestFirstWithTheirSummaryLinesAsStored() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, 5);
            lake.begin("ingest").summary("recording", "rec-1").putFrames(Fixtures.frames(1, 3)).commit();
        }
        // a commit point as an earlier Flywheel wrote it: no summary
        Path first = lakeDir.resolve("_lake/commits/00000000000000000001.json");
        ObjectMapper json = new ObjectMapper();
        ObjectNode n = (ObjectNode) json.readTree(first.toFile());
        n.remove("summary");
        Files.write(first, json.writeValueAsBytes(n));
        try (Lake lake = Lake.open(lakeDir)) {
            List<LakeSnapshot> log = lake.log(10);
            assertEquals(List.of(3L, 2L, 1L), log.stream().map(LakeSnapshot::seq).toList());
            assertEquals(Map.of("recording", "rec-1"), log.get(0).summary());
            LakeSnapshot.TableChange c = log.get(0).changes().get(0);
            assertEquals("frames", c.table());
            assertEquals("put", c.kind());
            assertEquals(2, c.fromVersion());
            assertEquals(3, c.toVersion());
            assertEquals(3, c.rowsAdded());
            assertEquals(Map.of(), log.get(2).summary(), "an old commit point reads with no summary");
            assertEquals("init", log.get(2).operation());
            assertEquals(List.of(3L), lake.log(1).stream().map(LakeSnapshot::seq).toList());
            assertThrows(IllegalArgumentException.class, () -> lake.log(0));
        }
    }
}
