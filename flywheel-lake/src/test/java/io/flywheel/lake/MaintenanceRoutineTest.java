package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.BTreeIndexParams;

/**
 * The routine after a commit: a table with more than N commits since its last compaction is compacted by the
 * committing process (N a lake property, 100 by default, 0 = off), and its indexes are refreshed where appends left
 * rows unindexed; the commit that ran it stands whatever the routine does.
 */
class MaintenanceRoutineTest {
    @TempDir
    Path dir;

    @Test
    void aTableIsCompactedByTheCommitThatTakesItPastNCommitsAndTheRoutineCanBeTurnedOff() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            assertEquals(100, MaintenanceRoutine.everyCommits(lake.snapshot().properties()), "the default");
            MaintenanceRoutine.configure(lake, 5);
            lake.begin("configure").property(CompactionPolicy.MIN_SMALL_FRAGMENTS_PROPERTY, "2").commit();
            for (int i = 0; i < 5; i++) {
                CommitResult r = Fixtures.ingest(lake, i, 5);
                assertNull(r.maintenance(), "commit " + (i + 1) + " of 5");
                assertEquals(i + 1, MaintenanceRoutine.commitsSinceCompaction(r.snapshot(), "frames"));
            }
            CommitResult sixth = Fixtures.ingest(lake, 5, 5);
            CompactionResult m = sixth.maintenance();
            assertNotNull(m, "the sixth commit is more than 5");
            assertNull(m.failure());
            assertEquals(List.of("frames", "episodes", "raw_files"),
                    m.tables().stream().map(CompactionResult.TableCompaction::table).toList());
            assertEquals(6, m.table("frames").before().fragments());
            assertEquals(1, m.table("frames").after().fragments());
            LakeSnapshot s = lake.snapshot();
            assertEquals(sixth.snapshot().seq() + 1, s.seq(), "the routine's commit follows the one that ran it");
            assertEquals("compact", s.operation());
            assertEquals(s.seq(), m.compactCommit());
            assertEquals(0, MaintenanceRoutine.commitsSinceCompaction(s, "frames"));
            CommitKillTestSupport.assertFiles(lake, 6, 5, "after the routine's compaction");

            MaintenanceRoutine.configure(lake, 0);
            for (int i = 6; i < 14; i++) {
                assertNull(Fixtures.ingest(lake, i, 5).maintenance(), "the routine is off");
            }
            assertEquals(8, MaintenanceRoutine.commitsSinceCompaction(lake.snapshot(), "frames"));

            lake.begin("configure").property(MaintenanceRoutine.EVERY_COMMITS_PROPERTY, "often").commit();
            CommitResult bad = Fixtures.ingest(lake, 14, 5);
            assertTrue(bad.maintenance().failure().contains("flywheel.maintenance.compact_every_commits is 'often'"),
                    bad.maintenance().failure());
            CommitKillTestSupport.assertFiles(lake, 15, 5, "the commit stands");
        }
    }

    @Test
    void indexesAreRefreshedAfterAppendsAndRemappedByCompaction() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 3; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            lake.begin("index").add(new CreateBTree("frames", "episode_id")).commit();
            assertEquals(List.of("episode_id_idx"), lake.versions().table("frames").indexes());
            assertEquals(List.of(), stale(lake));
            for (int i = 3; i < 6; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            assertEquals(List.of("episode_id_idx"), stale(lake), "15 appended rows are not indexed");

            CompactionPolicy never = CompactionPolicy.builder().minSmallFragments(1_000).build();
            CompactionResult r = lake.compact(never, List.of("frames"));
            assertEquals(0, r.compactCommit());
            assertEquals(List.of("episode_id_idx"), r.table("frames").indexesRefreshed());
            assertEquals(r.indexCommit(), lake.snapshot().seq());
            assertEquals("index", lake.snapshot().changes().get(0).kind());
            assertEquals(List.of(), stale(lake));

            Fixtures.ingest(lake, 6, 5);
            MaintenanceRoutine.configure(lake, 1);
            lake.begin("configure").property(CompactionPolicy.MIN_SMALL_FRAGMENTS_PROPERTY, "2").commit();
            CompactionResult routine = Fixtures.ingest(lake, 7, 5).maintenance();
            assertTrue(routine.table("frames").compacted());
            assertEquals(List.of(), stale(lake), "the compacted rows stay indexed, the appended ones are indexed");
            try (LakeTable frames = lake.table("frames")) {
                // Lance rewrites indexed and unindexed fragments in separate groups: files 0-5, then 6-7
                assertEquals(2, frames.dataFiles().size());
                for (int i = 0; i < 8; i++) {
                    assertEquals(5, frames.countRows("episode_id = '" + Fixtures.episodeId(i) + "'"));
                }
            }
        }
    }

    private static List<String> stale(Lake lake) {
        try (BufferAllocator a = lake.newAllocator("stale");
                Dataset ds = lake.openDataset("frames", lake.refresh().version("frames"), a)) {
            return IndexRefreshChange.stale(ds);
        }
    }

    /** A BTREE index built through the commit protocol (as the lake's own index builds are). */
    static final class CreateBTree extends PendingChange {
        private final String column;

        CreateBTree(String table, String column) {
            super(table, "index");
            this.column = column;
        }

        @Override
        Set<String> keys() {
            return Set.of();
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) {
            return Staged.direct(ds -> ds.createIndex(List.of(column), IndexType.BTREE, Optional.of(column + "_idx"),
                    IndexParams.builder().setScalarIndexParams(BTreeIndexParams.builder().build()).build(), true),
                    Map.of());
        }
    }
}
