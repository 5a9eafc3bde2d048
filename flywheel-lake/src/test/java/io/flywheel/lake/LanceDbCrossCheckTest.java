package io.flywheel.lake;

import io.flywheel.rows.FrameRow;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.Node;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lake's tables open in {@code @lancedb/lancedb} (npm) with the same versions, counts and values. */
class LanceDbCrossCheckTest {
    @TempDir
    Path dir;

    private static JsonNode read(Path lake, String table, String version, int limit) throws Exception {
        Node.Result r = Node.run("lance-read.mjs", lake.toString(), table, version, Integer.toString(limit));
        assertEquals(0, r.exitCode(), r.stderr());
        return new ObjectMapper().readTree(r.stdout());
    }

    @Test
    void lancedbSeesTheSameVersionsCountsAndValues() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, 3); // every table at version 2
            lake.begin("tag").tag("first", List.of("frames")).commit(); // a lake tag is a Lance tag too
            Fixtures.ingest(lake, 1, 4); // every table at version 3
        }
        JsonNode latest = read(lakeDir, "frames", "latest", 10);
        assertEquals(3, latest.get("version").asLong());
        assertEquals(List.of(1L, 2L, 3L), longs(latest.get("versions")));
        assertEquals(7, latest.get("count").asLong());
        assertEquals(List.of("episode_id", "frame_index", "timestamp_ns", "state", "action", "gripper", "images",
                "streams", "flags", "gripper_state", "phase"), strings(latest.get("schema")));

        JsonNode v2 = read(lakeDir, "frames", "2", 3);
        assertEquals(2, v2.get("version").asLong());
        assertEquals(3, v2.get("count").asLong());
        JsonNode tagged = read(lakeDir, "frames", "first", 3);
        assertEquals(3, tagged.get("count").asLong());
        JsonNode v1 = read(lakeDir, "frames", "1", 3);
        assertEquals(0, v1.get("count").asLong());

        // values of frame 2 of episode 0 (row 2 of version 2), against the generated truth
        FrameRow want = Fixtures.frames(0, 3).get(2);
        JsonNode got = v2.get("rows").get(2);
        assertEquals(want.episodeId(), got.get("episode_id").asText());
        assertEquals(2, got.get("frame_index").asInt());
        assertEquals(Long.toString(want.timestampNs()), got.get("timestamp_ns").asText());
        assertEquals(List.of(0.0, 2.0, 0.0), doubles(got.get("state")));
        assertEquals(List.of(1.0), doubles(got.get("action")));
        assertEquals(true, got.get("gripper").isNull());
        JsonNode cam1 = got.get("images").get(1);
        assertEquals("/cam1", cam1.get("topic").asText());
        assertEquals("zstd", cam1.get("compression").asText());
        assertEquals("100", cam1.get("offset").asText());
        assertEquals("999", cam1.get("length").asText());
        assertEquals("-1", got.get("images").get(0).get("chunk_offset").asText());
        assertEquals(false, got.get("streams").get(1).get("matched").asBoolean());
        assertEquals(true, got.get("streams").get(1).get("residual_ns").isNull());
        assertEquals(List.of("unmatched:/gripper"), strings(got.get("flags")));

        JsonNode eps = read(lakeDir, "episodes", "latest", 5);
        assertEquals(2, eps.get("count").asLong());
        JsonNode e1 = eps.get("rows").get(1);
        assertEquals(Fixtures.episodeId(1), e1.get("episode_id").asText());
        assertEquals("pick 'cube'", e1.get("task").asText());
        assertEquals("300000000", e1.get("duration_ns").asText());
        assertEquals("4", e1.get("frame_count").asText());
        JsonNode raw = read(lakeDir, "raw_files", "2", 5);
        assertEquals(1, raw.get("count").asLong());
        assertEquals(Fixtures.sha(0), raw.get("rows").get(0).get("sha256").asText());
    }

    private static List<Long> longs(JsonNode a) {
        List<Long> out = new ArrayList<>();
        a.forEach(n -> out.add(n.asLong()));
        return out;
    }

    private static List<Double> doubles(JsonNode a) {
        List<Double> out = new ArrayList<>();
        a.forEach(n -> out.add(n.asDouble()));
        return out;
    }

    private static List<String> strings(JsonNode a) {
        List<String> out = new ArrayList<>();
        a.forEach(n -> out.add(n.asText()));
        return out;
    }
}
