package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

/** The lake-init policy of {@link Lake#init}: a folder of its own, hidden files and the lake's own names aside. */
class LakeInitTest {
    @TempDir
    Path dir;

    private static List<String> names(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aFolderHoldingOtherFilesIsRefusedNamingThreeOfThemAndLeftAsItWas() throws IOException {
        Path fleet = Files.createDirectories(dir.resolve("fleet"));
        for (String n : List.of("ep_00003.mcap", "ep_00001.mcap", "ground_truth.json", "ep_00002.mcap", ".hidden")) {
            Files.writeString(fleet.resolve(n), "x");
        }
        BadInputException e = assertThrows(BadInputException.class, () -> Lake.init(fleet));
        assertEquals("cannot init lake at " + fleet + ": the folder is not empty (4 entries, e.g. ep_00001.mcap,"
                + " ep_00002.mcap, ep_00003.mcap); a lake needs a folder of its own: give a new or empty one",
                e.getMessage());
        assertEquals(List.of(".hidden", "ep_00001.mcap", "ep_00002.mcap", "ep_00003.mcap", "ground_truth.json"),
                names(fleet), "nothing written into the folder");

        Path one = Files.createDirectories(dir.resolve("one"));
        Files.createDirectories(one.resolve("recordings"));
        BadInputException single = assertThrows(BadInputException.class, () -> Lake.init(one));
        assertTrue(single.getMessage().contains("(1 entry, e.g. recordings)"), single.getMessage());
    }

    @Test
    void hiddenEntriesAndTheLakesOwnNamesDoNotCount() throws IOException {
        Path hidden = Files.createDirectories(dir.resolve("hidden"));
        Files.writeString(hidden.resolve(".DS_Store"), "x");
        Files.createDirectories(hidden.resolve(".git"));
        try (Lake lake = Lake.init(hidden)) {
            assertTrue(lake.created());
            assertEquals(1, lake.snapshot().seq());
        }
        // a config file placed before init, and the tables of an init killed before its commit point
        Path own = Files.createDirectories(dir.resolve("own"));
        Files.writeString(own.resolve(Lake.CONFIG_FILE), "storage:\n  region: eu-west-1\n");
        try (Lake lake = Lake.init(own)) {
            assertTrue(lake.created());
        }
        LocalFiles.deleteTree(own.resolve(Lake.META)); // no commit point: the tables are a dead init's leftovers
        assertFalse(Lake.exists(own.toString(), Lake.Options.defaults()));
        try (Lake lake = Lake.init(own)) {
            assertTrue(lake.created());
            assertEquals(1, lake.snapshot().seq());
            try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
                assertEquals(0, t.countRows());
            }
        }
        assertEquals(List.of("_lake", "episodes.lance", "flywheel.yaml", "frames.lance", "raw_files.lance"), names(own));
    }

    @Test
    void anExistingLakeIsRefusedUnlessExistOkWhichOpensItAndWritesNothing() throws IOException {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            assertTrue(lake.created());
            lake.begin("props").property("note", "kept").commit();
        }
        BadInputException e = assertThrows(BadInputException.class, () -> Lake.init(lakeDir));
        assertTrue(e.getMessage().startsWith("a lake already exists at " + lakeDir), e.getMessage());
        List<String> commits = names(lakeDir.resolve(Lake.META).resolve("commits"));
        try (Lake lake = Lake.init(lakeDir.toString(), Lake.Options.defaults().withExistOk(true))) {
            assertFalse(lake.created());
            assertEquals(2, lake.snapshot().seq());
            assertEquals("kept", lake.catalog().get("note"));
        }
        assertEquals(commits, names(lakeDir.resolve(Lake.META).resolve("commits")), "no commit point written");
        try (Lake fresh = Lake.init(dir.resolve("fresh").toString(), Lake.Options.defaults().withExistOk(true))) {
            assertTrue(fresh.created(), "existOk creates a lake where there is none");
        }
        try (Lake opened = Lake.open(lakeDir)) {
            assertFalse(opened.created());
        }
    }
}
