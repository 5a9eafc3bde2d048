package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.operation.Append;

import io.flywheel.rows.EpisodeRow;

/**
 * Compaction as a lake transaction: every row and value kept (compared by value, every column of every table), the
 * small fragments rewritten into one, older versions and tags still opening what they named; staged again when a
 * concurrent commit changed the fragments it rewrites; committed across the rollback of a dead writer's version; and
 * working while another writer appends, with no row lost or doubled.
 */
class CompactionTest {
    static final List<String> TABLES = List.of("raw_files", "episodes", "frames");

    @TempDir
    Path dir;

    @AfterEach
    void noListener() {
        CommitHooks.listen(null);
    }

    @Test
    void compactionKeepsEveryRowAndValueAndRewritesTheSmallFragmentsIntoOne() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0); // the routine stays out of this test
            for (int i = 0; i < 12; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            ingestTogether(lake, 20, 21); // one fragment per table holding two files
            EpisodeRow failed = qc(Fixtures.episode(2, 5), "fail");
            lake.begin("qc").updateEpisodes(TableSchemas.QUALITY_COLUMNS, List.of(failed)).commit();
            Fixtures.ingest(lake, 21, 7); // replaces file 21: its 5 frames rows are deleted, 7 appended
            lake.begin("tag").tag("before", TABLES).commit();
            Map<String, List<String>> before = dumps(lake);
            assertEquals(13 * 5 + 7, before.get("frames").size());

            CompactionResult r = lake.compact(CompactionPolicy.builder().minSmallFragments(4).build(), List.of());
            CompactionResult.TableCompaction frames = r.table("frames");
            assertEquals(14, frames.before().fragments(), "12 ingests, files 20 and 21 together, file 21 again");
            assertEquals(5, frames.before().deletedRows(), "file 21's first frames");
            assertEquals(1, frames.after().fragments());
            assertEquals(0, frames.after().deletedRows(), "deletions are materialised");
            assertEquals(72, frames.after().rows());
            assertEquals(14, frames.fragmentsRemoved());
            assertEquals(1, frames.fragmentsAdded());
            assertTrue(frames.reason().contains("14 small fragments"), frames.reason());
            CompactionResult.TableCompaction episodes = r.table("episodes");
            assertEquals(15, episodes.before().dataFiles(), "14 fragments, one of them with the qc update's file");
            assertEquals(1, episodes.after().dataFiles());
            assertEquals(before, dumps(lake), "every row and value of every table is kept");

            LakeSnapshot s = lake.snapshot();
            assertEquals(r.compactCommit(), s.seq());
            assertEquals("compact", s.operation());
            assertEquals(Map.of("tables", "episodes, frames, raw_files"), s.summary());
            for (LakeSnapshot.TableChange c : s.changes()) {
                assertEquals("compact", c.kind(), c.toString());
                assertEquals(c.fromVersion() + 2, c.toVersion(), "Lance's ReserveFragments, then the Rewrite: " + c);
                assertEquals(0, MaintenanceRoutine.commitsSinceCompaction(s, c.table()));
            }
            try (LakeTable old = lake.table("frames", TableRef.tag("before"))) {
                assertEquals(14, old.dataFiles().size(), "the tag still opens the version before compaction");
                assertEquals(before.get("frames"), TableDump.of(old));
            }

            CompactionResult again = lake.compact(CompactionPolicy.builder().minSmallFragments(4).build(), List.of());
            assertFalse(again.changedAnything());
            assertEquals(s.seq(), lake.refresh().seq(), "nothing left to compact: no commit");
            for (CompactionResult.TableCompaction t : again.tables()) {
                assertNull(t.reason(), t.toString());
                assertEquals(t.fromVersion(), t.toVersion());
            }
        }
    }

    @Test
    void theDefaultPolicyLeavesAFewFragmentsAloneAndCompactsManyDeletions() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 3; i++) {
                ingestTogether(lake, 2 * i, 2 * i + 1); // 3 fragments of 10 rows
            }
            assertFalse(lake.compact(CompactionPolicy.defaults(), List.of("frames")).changedAnything(),
                    "4 small fragments are not more than 8");
            Fixtures.ingest(lake, 1, 2); // 5 of 32 physical frames rows deleted: 15.6% > 10%
            CompactionResult r = lake.compact(CompactionPolicy.defaults(), List.of("frames"));
            assertEquals(List.of("frames"), r.tables().stream().map(CompactionResult.TableCompaction::table).toList());
            assertTrue(r.table("frames").reason().startsWith("5 of 32 rows deleted (15.6%)"), r.table("frames").reason());
            assertEquals(0, r.table("frames").after().deletedRows());
            assertEquals(27, r.table("frames").after().rows());
        }
    }

    @Test
    void aCompactionWhoseFragmentsAConcurrentUpdateRewroteIsStagedAgain() {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir); Lake other = Lake.open(lakeDir)) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 6; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            AtomicInteger staged = new AtomicInteger();
            AtomicReference<Thread> compactor = new AtomicReference<>(Thread.currentThread());
            CommitHooks.listen(step -> {
                if (Thread.currentThread() == compactor.get() && step.equals("staged")
                        && staged.incrementAndGet() == 1) {
                    compactor.set(null); // the update below commits its own steps on this thread
                    other.refresh();
                    other.begin("qc").updateEpisodes(TableSchemas.QUALITY_COLUMNS,
                            List.of(qc(Fixtures.episode(4, 5), "warn"))).commit();
                    compactor.set(Thread.currentThread());
                }
            });
            lake.refresh();
            CompactionResult r = lake.compact(CompactionPolicy.builder().minSmallFragments(2).build(),
                    List.of("episodes"));
            CommitHooks.listen(null);
            assertEquals(2, staged.get(), "staged, found its fragment updated meanwhile, staged again");
            assertEquals(1, r.table("episodes").after().fragments());
            try (LakeTable eps = lake.table("episodes")) {
                assertEquals(1, eps.countRows("quality_status = 'warn'"), "the concurrent update is kept");
                assertEquals(6, eps.countRows());
            }
        }
    }

    @Test
    void aCompactionCommitsAcrossTheRollbackOfADeadWritersVersion() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 5; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            Map<String, List<String>> committed = dumps(lake);
            long head = lake.snapshot().version("frames");
            appendOutsideTheProtocol(lake, 90); // what a writer killed between its table commit and its commit point leaves
            CompactionResult r = lake.compact(CompactionPolicy.builder().minSmallFragments(2).build(), List.of("frames"));
            LakeSnapshot s = lake.snapshot();
            assertEquals(List.of("rollback", "compact"), s.changes().stream().map(LakeSnapshot.TableChange::kind).toList());
            assertEquals(head + 1, s.changes().get(0).fromVersion(), "the dead writer's version");
            assertEquals(head + 2, s.changes().get(0).toVersion(), "restored to the committed content");
            assertEquals(head + 4, r.table("frames").toVersion(), "then ReserveFragments and the Rewrite");
            assertEquals(1, r.table("frames").after().fragments());
            assertEquals(committed, dumps(lake), "the committed rows, without the dead writer's");
        }
    }

    @Test
    void compactionKeepsWorkingWhileAnotherWriterAppendsAndNoRowIsLostOrDoubled() throws Exception {
        Path lakeDir = dir.resolve("lake");
        Path refDir = dir.resolve("reference");
        int first = 10;
        int appended = 30;
        try (Lake lake = Lake.init(lakeDir); Lake ref = Lake.init(refDir)) {
            MaintenanceRoutine.configure(lake, 0);
            MaintenanceRoutine.configure(ref, 0);
            for (int i = 0; i < first; i++) {
                Fixtures.ingest(lake, i, 5);
                Fixtures.ingest(ref, i, 5);
            }
            for (int i = 100; i < 100 + appended; i++) {
                Fixtures.ingest(ref, i, 5);
            }
        }
        AtomicReference<Throwable> failed = new AtomicReference<>();
        CountDownLatch compactionStaged = new CountDownLatch(1);
        CountDownLatch appendPublished = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            try (Lake lake = Lake.open(lakeDir)) { // its own Lake, as another process would have
                await(compactionStaged); // so that the first compaction's commit window holds appends
                for (int i = 100; i < 100 + appended; i++) {
                    Fixtures.ingest(lake, i, 5);
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "appender");
        Thread compactor = Thread.currentThread();
        CommitHooks.listen(step -> {
            if (Thread.currentThread() == writer && step.equals("published")) {
                appendPublished.countDown();
            } else if (Thread.currentThread() == compactor && step.equals("staged")
                    && compactionStaged.getCount() > 0) {
                compactionStaged.countDown(); // the rewrites are written; an append commits before ours does
                await(appendPublished);
            }
        });
        int compactions = 0;
        try (Lake lake = Lake.open(lakeDir)) {
            writer.start();
            while (writer.isAlive() || compactions == 0) {
                CompactionResult r = lake.compact(CompactionPolicy.builder().minSmallFragments(2).build(), TABLES);
                if (r.compactCommit() == 0) {
                    continue;
                }
                LakeSnapshot c = lake.snapshot(r.compactCommit());
                for (LakeSnapshot.TableChange t : c.changes()) {
                    assertEquals("compact", t.kind(), t.toString());
                }
                if (compactions++ == 0) {
                    LakeSnapshot.TableChange frames = c.changes().stream().filter(t -> t.table().equals("frames"))
                            .findFirst().orElseThrow();
                    assertTrue(frames.fromVersion() > r.table("frames").fromVersion(), "the first compaction was"
                            + " staged on frames version " + r.table("frames").fromVersion() + " and committed on top"
                            + " of the append(s) after it: " + frames);
                }
            }
            writer.join();
            CommitHooks.listen(null);
            if (failed.get() != null) {
                throw new AssertionError("the appending writer failed", failed.get());
            }
            lake.refresh();
            try (Lake ref = Lake.open(refDir)) {
                for (String t : TABLES) {
                    assertEquals(TableDump.of(ref, t), TableDump.of(lake, t), t + ": every row once, every value kept");
                }
            }
            Set<String> keys = new HashSet<>();
            try (LakeTable frames = lake.table("frames")) {
                assertEquals((first + appended) * 5L, frames.countRows());
                frames.scanArrow(ScanRequest.builder().columns("episode_id", "frame_index").build(), b -> {
                    VarCharVector id = (VarCharVector) b.getVector("episode_id");
                    IntVector idx = (IntVector) b.getVector("frame_index");
                    for (int i = 0; i < b.getRowCount(); i++) {
                        assertTrue(keys.add(id.getObject(i) + "/" + idx.get(i)), "doubled: " + id.getObject(i));
                    }
                });
            }
            assertEquals((first + appended) * 5, keys.size());
        }
        assertTrue(compactions >= 1, "at least one compaction committed while the writer appended");
    }

    /** Files {@code i} and {@code j} (5 frames each) in one transaction: one fragment per table holding both. */
    static void ingestTogether(Lake lake, int i, int j) {
        List<io.flywheel.rows.FrameRow> frames = new ArrayList<>(Fixtures.frames(i, 5));
        frames.addAll(Fixtures.frames(j, 5));
        lake.begin("ingest").appendFrames(frames).appendEpisodes(List.of(Fixtures.episode(i, 5), Fixtures.episode(j, 5)))
                .appendRawFiles(List.of(Fixtures.rawFile(i), Fixtures.rawFile(j))).commit();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(120, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new AssertionError("the other thread never reached its step");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static EpisodeRow qc(EpisodeRow e, String status) {
        return new EpisodeRow(e.episodeId(), e.recordingId(), e.robotId(), e.task(), e.scene(), e.operator(),
                e.outcome(), e.startNs(), e.endNs(), e.durationNs(), e.masterTopic(), e.frameCount(), status,
                List.of("rule-" + status), "{\"status\":\"" + status + "\"}", e.metadataJson());
    }

    static Map<String, List<String>> dumps(Lake lake) {
        Map<String, List<String>> out = new java.util.TreeMap<>();
        for (String t : TABLES) {
            out.put(t, TableDump.of(lake, t));
        }
        return out;
    }

    /** Appends file {@code i}'s frames to the table with Lance directly: a version no lake commit names. */
    static void appendOutsideTheProtocol(Lake lake, int i) throws Exception {
        try (BufferAllocator a = lake.newAllocator("orphan"); Dataset ds = lake.openDataset("frames", null, a)) {
            List<FragmentMetadata> frags;
            try (VectorSchemaRoot rows = ArrowRows.frames(Fixtures.frames(i, 5), a)) {
                frags = PendingChange.writeFragments(lake, "frames", rows, a);
            }
            Append op = Append.builder().fragments(frags).build();
            try (Dataset after = new CommitBuilder(ds).execute(new Transaction.Builder().readVersion(ds.version())
                    .operation(op).build())) {
                assertEquals(ds.version() + 1, after.version());
            } finally {
                op.release();
            }
        }
    }
}
