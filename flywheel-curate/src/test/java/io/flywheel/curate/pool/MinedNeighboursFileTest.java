package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.error.BadInputException;

class MinedNeighboursFileTest {
    @TempDir
    Path dir;

    private static final List<MinedEpisode> TWO = List.of(new MinedEpisode("ep_00042", "ep_00007", 0.0125, 1),
            new MinedEpisode("ep_00013", "ep_00007", 0.5, 2));

    private BadInputException bad(String json) throws IOException {
        Path f = Files.writeString(dir.resolve("bad.json"), json);
        return assertThrows(BadInputException.class, () -> MinedNeighboursFile.read(f));
    }

    @Test
    void whatIsWrittenReadsBackWithItsLineage() throws IOException {
        Map<String, Object> lineage = new LinkedHashMap<>();
        lineage.put("k", 8);
        lineage.put("cameras", List.of("/left_wrist_camera/image_raw/compressed"));
        lineage.put("whiten", true);
        Path f = dir.resolve("sub/mined.json");
        MinedNeighboursFile.write(f, new MinedNeighboursFile.Contents(TWO, lineage));
        MinedNeighboursFile.Contents back = MinedNeighboursFile.read(f);
        assertEquals(TWO, back.neighbours());
        assertEquals(lineage, back.lineage());
        assertTrue(Files.readString(f).startsWith("{\n  \"neighbours\" : [ {\n    \"episode_id\" : \"ep_00042\","),
                Files.readString(f));
        try (var s = Files.list(f.getParent())) {
            assertEquals(List.of(f), s.toList(), "no temporary file left");
        }
        BadInputException folder = assertThrows(BadInputException.class,
                () -> MinedNeighboursFile.write(dir, new MinedNeighboursFile.Contents(TWO, Map.of())));
        assertEquals(dir + " is a folder; expected the path of the neighbours file to write", folder.getMessage());
    }

    @Test
    void aBareListAndAnObjectWithOtherKeysRead() throws IOException {
        Path list = Files.writeString(dir.resolve("list.json"),
                "[{\"episode_id\": \"a\", \"query_episode_id\": \"q\", \"distance\": 0.25, \"rank\": 3}]");
        assertEquals(List.of(new MinedEpisode("a", "q", 0.25, 3)), MinedNeighboursFile.read(list).neighbours());
        assertEquals(Map.of(), MinedNeighboursFile.read(list).lineage());
        // what `mine --json` prints: the file's keys and more
        Path json = Files.writeString(dir.resolve("out.json"), "{\"index\": \"FLAT\", \"pool_size\": 12,"
                + " \"neighbours\": [{\"episode_id\": \"a\", \"query_episode_id\": \"q\", \"distance\": 1, \"rank\": 1,"
                + " \"note\": {\"x\": [1]}}], \"lineage\": {\"k\": 1}, \"seconds\": 0.5}");
        MinedNeighboursFile.Contents c = MinedNeighboursFile.read(json);
        assertEquals(List.of(new MinedEpisode("a", "q", 1.0, 1)), c.neighbours());
        assertEquals(Map.of("k", 1), c.lineage());
    }

    @Test
    void errorsNameTheFileLineColumnAndWhatWasExpected() throws IOException {
        Path f = dir.resolve("bad.json");
        assertEquals(f + ": not JSON at line 2, column 1: Unexpected end-of-input: expected close marker for Array;"
                + " expected the neighbours file `flywheel mine --out` writes",
                bad("{\"neighbours\": [\n").getMessage());
        assertEquals(f + ": expected a JSON list of neighbours or an object with 'neighbours'; write it with"
                + " `flywheel mine --out`", bad("{\"lineage\": {}}").getMessage());
        assertEquals(f + ": line 1, column 16: 'neighbours' must be a list, got an object",
                bad("{\"neighbours\": {}}").getMessage());
        assertEquals(f + ": line 3, column 3: neighbour 1 has no 'rank'", bad("{\"neighbours\": [\n"
                + "  {\"episode_id\": \"a\", \"query_episode_id\": \"q\", \"distance\": 0.1, \"rank\": 1},\n"
                + "  {\"episode_id\": \"b\", \"query_episode_id\": \"q\", \"distance\": 0.2}]}").getMessage());
        assertEquals(f + ": line 1, column 72: neighbour 0: expected a 'rank' >= 1 (an integer), got 0",
                bad("[{\"episode_id\": \"a\", \"query_episode_id\": \"q\", \"distance\": 0.1, \"rank\": 0}]").getMessage());
        assertEquals(f + ": line 1, column 59: neighbour 0: expected a number 'distance', got \"near\"",
                bad("[{\"episode_id\": \"a\", \"query_episode_id\": \"q\", \"distance\": \"near\", \"rank\": 1}]")
                        .getMessage());
        assertEquals(f + ": line 1, column 17: neighbour 0: expected 'episode_id' to be an episode id (text), got 7",
                bad("[{\"episode_id\": 7, \"query_episode_id\": \"q\", \"distance\": 0.1, \"rank\": 1}]").getMessage());
        assertEquals(f + ": line 1, column 2: neighbour 0 must be an object with [episode_id, query_episode_id,"
                + " distance, rank], got text", bad("[\"ep_1\"]").getMessage());
        assertEquals(dir + " is a folder; expected the neighbours file `flywheel mine --out` writes",
                assertThrows(BadInputException.class, () -> MinedNeighboursFile.read(dir)).getMessage());
        assertThrows(NoSuchFileException.class, () -> MinedNeighboursFile.read(dir.resolve("none.json")));
    }
}
