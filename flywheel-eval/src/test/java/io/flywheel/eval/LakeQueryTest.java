package io.flywheel.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.Lake;
import io.flywheel.lake.TableRef;

/**
 * {@code flywheel sql}'s parts: which lake tables a query names, which of their columns the Lance scan reads, and the
 * {@code --at} syntax.
 */
class LakeQueryTest {
    @TempDir
    Path dir;

    @Test
    void tablesColumnsAndAt() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Evaluations.ingest(lake, Files.writeString(dir.resolve("a.csv"), EvalIngestTest.CSV), null, null, null);
            assertEquals(List.of("eval_episodes", "eval_runs"), LakeQuery.tablesNamed("SELECT * FROM eval_episodes e"
                    + " JOIN eval_runs USING (run_id) WHERE e.task <> 'episodes' AND x.eval_runs = 1",
                    java.util.Set.of("eval_episodes", "eval_runs", "episodes")));
            TableRef latest = TableRef.latest();
            assertEquals(List.of("object", "success"), LakeQuery.projection("SELECT object, avg(success::INT) FROM"
                    + " eval_episodes WHERE 'task' <> '' GROUP BY object", lake, "eval_episodes", latest));
            assertEquals(List.of("run_id"), LakeQuery.projection("SELECT count(*) FROM eval_episodes", lake,
                    "eval_episodes", latest));
            assertNull(LakeQuery.projection("SELECT * FROM eval_episodes", lake, "eval_episodes", latest));
            assertNull(LakeQuery.projection("SELECT e.* FROM eval_episodes e", lake, "eval_episodes", latest));
            assertNull(LakeQuery.projection("SELECT count(*) FROM eval_episodes NATURAL JOIN eval_runs", lake,
                    "eval_episodes", latest));
            assertEquals(List.of(List.of("cup", 2L), List.of("glass, cup", 1L)), LakeQuery.run(lake, "SELECT object,"
                    + " count(*) FROM eval_episodes GROUP BY object ORDER BY object", Map.of(), null).result().rows());

            Map<String, TableRef> at = LakeQuery.parseAt(List.of("episodes=train-v2", "frames=12"));
            assertEquals(TableRef.tag("train-v2"), at.get("episodes"));
            assertEquals(TableRef.version(12), at.get("frames"));
            assertThrows(IllegalArgumentException.class, () -> LakeQuery.parseAt(List.of("frames")));
            assertThrows(IllegalArgumentException.class, () -> LakeQuery.parseAt(List.of("frames=0")));
            assertThrows(IllegalArgumentException.class, () -> LakeQuery.parseAt(List.of("a=1", "a=2")));
        }
    }
}
