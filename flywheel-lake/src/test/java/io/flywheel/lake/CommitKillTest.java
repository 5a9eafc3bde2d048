package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lance.Dataset;

/**
 * Kills a real writer process with SIGKILL at each named step of the commit protocol ({@link CommitProtocol}) and
 * checks that the lake shows the transaction whole or not at all: killed before its commit point, none of its
 * tables, rows or tag is visible (though its table versions may exist); killed after, all of them. A re-run then
 * completes the work exactly once, rolling back the dead writer's table versions.
 */
class CommitKillTest {
    static final int K = 50;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"begin", "staged", "locked", "validated", "table-committed:frames",
            "table-committed:episodes", "table-committed:raw_files", "tagged", "published"})
    void killedAtEachStepTheLakeShowsTheTransactionWholeOrNotAtAll(String step) throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, K);
            Fixtures.ingest(lake, 1, K);
        }
        long before;
        try (Lake lake = Lake.open(lakeDir)) {
            before = lake.snapshot().seq();
        }
        try (ChildProcess child = ChildProcess.start(dir.resolve("tmp"), Map.of("flywheel.lake.pause-at", step),
                Map.of(), CommitWriter.class, lakeDir.toString(), "2", "3", Integer.toString(K), "t")) {
            String line = child.await("PAUSED", "done");
            assertEquals("PAUSED " + step, line, "the writer did not stop at " + step + ": " + child.seen);
            child.kill();
        }
        boolean committed = step.equals("published");
        try (Lake lake = Lake.open(lakeDir)) {
            LakeSnapshot s = lake.snapshot();
            assertEquals(committed ? before + 1 : before, s.seq(), step);
            assertFiles(lake, committed ? 3 : 2, step);
            assertEquals(committed, s.tags().containsKey("t-2"), step + ": tag");
            if (step.startsWith("table-committed:")) {
                // the dead writer's table version exists, but no commit point names it
                String table = step.substring("table-committed:".length());
                assertTrue(latestLanceVersion(lake, table) > s.version(table), step + ": orphan version of " + table);
            }
        }
        // the re-run completes the work exactly once
        CommitWriter.run(lakeDir.toString(), 0, 4, K, "t");
        try (Lake lake = Lake.open(lakeDir)) {
            assertFiles(lake, 4, step + ", after the re-run");
            LakeSnapshot s = lake.snapshot();
            assertEquals(new TreeSet<>(List.of("t-2", "t-3")), new TreeSet<>(s.tags().keySet()));
            for (String t : TableSchemas.CORE_TABLES) {
                assertEquals(s.version(t), latestLanceVersion(lake, t), step + ": " + t
                        + " has no version beyond the last commit point");
            }
            if (step.startsWith("table-committed:") || step.equals("tagged")) {
                boolean rolledBack = false;
                for (long q = 1; q <= s.seq(); q++) {
                    rolledBack |= lake.snapshot(q).changes().stream().anyMatch(c -> c.kind().equals("rollback"));
                }
                assertTrue(rolledBack, step + ": the re-run rolled back the dead writer's versions");
            }
            try (LakeTable frames = lake.table("frames", TableRef.tag("t-2"))) {
                assertEquals(3L * K, frames.countRows(), "tag t-2 pins frames with files 0..2");
            }
        }
    }

    static void assertFiles(Lake lake, int n, String when) {
        CommitKillTestSupport.assertFiles(lake, n, K, when);
    }

    static long latestLanceVersion(Lake lake, String table) {
        try (BufferAllocator a = lake.newAllocator("probe"); Dataset ds = lake.openLatestOrNull(table, a)) {
            return ds.version();
        }
    }
}
