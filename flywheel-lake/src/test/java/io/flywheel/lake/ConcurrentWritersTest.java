package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrent writers, as threads and as processes: commuting changes (appends of other keys, updates of disjoint
 * columns) all commit, nothing lost or doubled; changes that do not commute fail with a typed conflict naming the
 * table and both versions, and nothing of them is visible. The commit windows of concurrent writers overlap: the
 * lock covers only the publish step.
 */
class ConcurrentWritersTest {
    static final int K = 40;

    @TempDir
    Path dir;

    @AfterEach
    void noListener() {
        CommitHooks.listen(null);
    }

    @Test
    void threadsIngestingDisjointFilesAllCommitWithOverlappingCommitWindows() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            lake.snapshot();
        }
        Map<String, List<long[]>> windows = new ConcurrentHashMap<>(); // thread -> [begin, published] per commit
        Map<String, Long> begun = new ConcurrentHashMap<>();
        CommitHooks.listen(step -> {
            String t = Thread.currentThread().getName();
            if (step.equals("begin")) {
                begun.put(t, System.nanoTime());
            } else if (step.equals("published")) {
                windows.computeIfAbsent(t, k -> Collections.synchronizedList(new ArrayList<>()))
                        .add(new long[] {begun.get(t), System.nanoTime()});
            }
        });
        int threads = 4;
        int perThread = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> fs = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            int from = w * perThread;
            fs.add(pool.submit(() -> {
                try (Lake lake = Lake.open(lakeDir)) { // one Lake per writer, as separate processes would have
                    for (int i = from; i < from + perThread; i++) {
                        Fixtures.ingest(lake, i, K);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(300, TimeUnit.SECONDS);
        }
        pool.shutdown();
        try (Lake lake = Lake.open(lakeDir)) {
            CommitKillTestSupport.assertFiles(lake, threads * perThread, K, "after " + threads + " threads");
            assertEquals(1 + threads * perThread, lake.snapshot().seq(), "one lake commit per file");
        }
        assertTrue(overlapping(windows) > 0, "no two commits of different writers overlapped: " + windows.size());
    }

    @Test
    void sameFileFromTwoWritersAtOnceIsCommittedOnceAndTheOtherConflicts() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, K);
        }
        CommitHooks.listen(bothStagedOnce()); // both transactions are staged against the same snapshot
        List<Object> outcomes = runTwo(lakeDir, lake -> Fixtures.ingest(lake, 1, K), lake -> Fixtures.ingest(lake, 1, K));
        CommitHooks.listen(null);
        CommitConflictException c = conflictOf(outcomes);
        assertNotNull(c, "one of the two must conflict: " + outcomes);
        assertTrue(c.getMessage().contains("frames") && c.getMessage().contains("version"), c.getMessage());
        assertEquals(2, c.baseVersion(), "both were based on frames version 2");
        assertEquals(3, c.conflictingVersion(), "the winner wrote frames version 3");
        try (Lake lake = Lake.open(lakeDir)) {
            CommitKillTestSupport.assertFiles(lake, 2, K, "after the race");
        }
    }

    @Test
    void updatesOfDisjointColumnsOfTheSameRowsCommuteAndTheSameColumnsConflict() throws Exception {
        Path lakeDir = dir.resolve("lake");
        EmbeddingModel m;
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, K);
            Fixtures.ingest(lake, 1, K);
            m = lake.registerModel("m", 2, "abc");
        }
        EpisodeRow e0 = Fixtures.episode(0, K);
        EpisodeRow qc = new EpisodeRow(e0.episodeId(), null, null, null, null, null, null, null, null, null, null,
                null, "fail", List.of("min_duration"), "{\"m\":1}", null);
        EpisodeRow enriched = e0.withEnrichment(42L, "{\"stride\":1}").withEmbedding("m", new float[] {0.6f, 0.8f}, 42L);
        List<String> enrichColumns = new java.util.ArrayList<>(TableSchemas.EPISODE_ENRICHMENT_COLUMNS);
        enrichColumns.addAll(TableSchemas.episodeModelColumns(m));
        CommitHooks.listen(bothStagedOnce());
        AtomicReference<CommitResult> second = new AtomicReference<>();
        List<Object> outcomes = runTwo(lakeDir,
                lake -> lake.begin("qc").updateEpisodes(TableSchemas.QUALITY_COLUMNS, List.of(qc)).commit(),
                lake -> lake.begin("enrich").updateEpisodes(enrichColumns, List.of(enriched)).commit());
        CommitHooks.listen(null);
        for (Object o : outcomes) {
            assertTrue(o instanceof CommitResult, "disjoint columns commute: " + o);
            if (((CommitResult) o).attempts() > 1) {
                second.set((CommitResult) o);
            }
        }
        assertNotNull(second.get(), "the later commit was staged again (same fragment, rewritten by the first)");
        try (Lake lake = Lake.open(lakeDir); LakeTable eps = lake.table("episodes")) {
            EpisodeRow got = eps.episodes(ScanRequest.builder().filter("episode_id = '" + e0.episodeId() + "'").build())
                    .get(0);
            assertEquals("fail", got.qualityStatus());
            assertEquals(List.of("min_duration"), got.qualityFlags());
            assertArrayEquals(new float[] {0.6f, 0.8f}, got.embedding("m"));
            assertEquals(42L, got.enrichedAtNs());
            assertEquals(e0.task(), got.task(), "a column neither update named keeps its value");
            assertEquals(Fixtures.episode(1, K), eps.episodes(ScanRequest.builder()
                    .filter("episode_id = '" + Fixtures.episodeId(1) + "'").build()).get(0));
        }

        // the same column of the same row from two writers: one commits, the other conflicts
        EpisodeRow warn = new EpisodeRow(e0.episodeId(), null, null, null, null, null, null, null, null, null, null,
                null, "warn", List.of(), "{}", null);
        CommitHooks.listen(bothStagedOnce());
        outcomes = runTwo(lakeDir,
                lake -> lake.begin("qc").updateEpisodes(TableSchemas.QUALITY_COLUMNS, List.of(warn)).commit(),
                lake -> lake.begin("label").updateEpisodes(List.of("quality_status"), List.of(warn)).commit());
        CommitConflictException c = conflictOf(outcomes);
        assertNotNull(c, "the same column of the same row must conflict: " + outcomes);
        assertTrue(c.getMessage().contains("episodes") && c.getMessage().contains("quality_status"), c.getMessage());
    }

    /**
     * Two writers registering different embedding models at once: their columns commute, the registry property does
     * not (a later writer would drop the other's entry), so the later one conflicts on it and registers again on top;
     * both models end registered with their columns.
     */
    @Test
    void twoModelsRegisteredAtOnceAreBothKept() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            Fixtures.ingest(lake, 0, K);
        }
        java.util.function.Consumer<String> staged = bothStagedOnce();
        java.util.concurrent.atomic.AtomicInteger begun = new java.util.concurrent.atomic.AtomicInteger();
        CommitHooks.listen(step -> {
            if (step.equals("begin")) {
                begun.incrementAndGet();
            }
            staged.accept(step);
        });
        List<Object> outcomes = runTwo(lakeDir, lake -> lake.registerModel("a", 2, ""),
                lake -> lake.registerModel("b", 3, ""));
        CommitHooks.listen(null);
        assertTrue(outcomes.stream().allMatch(o -> o instanceof EmbeddingModel), outcomes.toString());
        assertEquals(3, begun.get(), "the later registration conflicted on the registry and ran again");
        try (Lake lake = Lake.open(lakeDir); LakeTable e = lake.table("episodes"); LakeTable f = lake.table("frames")) {
            assertEquals(List.of("a", "b"), lake.models().all().stream().map(EmbeddingModel::id).toList());
            for (String c : List.of("emb_a", "emb_a_at_ns", "emb_b", "emb_b_at_ns")) {
                assertNotNull(e.schema().findField(c), c);
            }
            assertNotNull(f.schema().findField("emb_a"));
            assertNotNull(f.schema().findField("emb_b"));
            long registrations = lake.history().stream().filter(s -> lake.snapshot(s).operation().equals("model"))
                    .count();
            assertEquals(2, registrations, "one commit each, the conflicting attempt committed nothing");
        }
    }

    @Test
    void processesIngestingWhileAnotherAppendsEverySecondLoseAndDoubleNothing() throws Exception {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            lake.snapshot();
        }
        try (ChildProcess a = ChildProcess.start(dir.resolve("tmp-a"), Map.of(), Map.of(), CommitWriter.class,
                lakeDir.toString(), "0", "12", Integer.toString(K));
                ChildProcess b = ChildProcess.start(dir.resolve("tmp-b"), Map.of(), Map.of(), CommitWriter.class,
                        lakeDir.toString(), "12", "24", Integer.toString(K));
                ChildProcess overlap = ChildProcess.start(dir.resolve("tmp-c"), Map.of(), Map.of(), CommitWriter.class,
                        lakeDir.toString(), "6", "18", Integer.toString(K))) {
            // the appender: one small file a second while the three processes run
            try (Lake lake = Lake.open(lakeDir)) {
                for (int i = 100; i < 106; i++) {
                    Fixtures.ingest(lake, i, 3);
                    Thread.sleep(1000);
                }
            }
            assertEquals(0, a.waitFor(), "writer a: " + a.seen);
            assertEquals(0, b.waitFor(), "writer b: " + b.seen);
            assertEquals(0, overlap.waitFor(), "writer c: " + overlap.seen);
        }
        try (Lake lake = Lake.open(lakeDir); LakeTable raw = lake.table("raw_files"); LakeTable eps = lake.table("episodes");
                LakeTable frames = lake.table("frames")) {
            assertEquals(30, raw.countRows(), "24 ingested files and 6 appended, each once");
            assertEquals(30, eps.countRows());
            assertEquals(24L * K + 6 * 3, frames.countRows());
            for (int i = 0; i < 24; i++) {
                assertEquals(K, frames.countRows("episode_id = '" + Fixtures.episodeId(i) + "'"), "file " + i);
            }
        }
    }

    /** @return how many pairs of commits of different threads had overlapping [begin, published] windows */
    private static int overlapping(Map<String, List<long[]>> windows) {
        int n = 0;
        List<String> threads = new ArrayList<>(windows.keySet());
        for (int a = 0; a < threads.size(); a++) {
            for (int b = a + 1; b < threads.size(); b++) {
                for (long[] x : windows.get(threads.get(a))) {
                    for (long[] y : windows.get(threads.get(b))) {
                        if (x[0] < y[1] && y[0] < x[1]) {
                            n++;
                        }
                    }
                }
            }
        }
        return n;
    }

    interface Work {
        Object run(Lake lake) throws Exception;
    }

    /** Runs two writers, each with its own Lake, at once. @return each one's result or exception */
    private static List<Object> runTwo(Path lakeDir, Work first, Work second) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Object>> fs = new ArrayList<>();
            for (Work w : List.of(first, second)) {
                fs.add(pool.submit(() -> {
                    try (Lake lake = Lake.open(lakeDir)) {
                        return w.run(lake);
                    } catch (Exception e) {
                        return e;
                    }
                }));
            }
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : fs) {
                out.add(f.get(120, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static CommitConflictException conflictOf(List<Object> outcomes) {
        int ok = 0;
        CommitConflictException c = null;
        for (Object o : outcomes) {
            if (o instanceof CommitConflictException e) {
                c = e;
            } else if (o instanceof CommitResult) {
                ok++;
            } else {
                throw new AssertionError("unexpected outcome " + o, o instanceof Throwable t ? t : null);
            }
        }
        return ok == 1 ? c : null;
    }

    /**
     * @return a hook that holds each of two writers at its first {@code staged} step until both got there, so that
     *     both transactions are based on the same snapshot (a writer staging again after a retry passes freely)
     */
    private static java.util.function.Consumer<String> bothStagedOnce() {
        CyclicBarrier barrier = new CyclicBarrier(2);
        java.util.Set<Thread> passed = ConcurrentHashMap.newKeySet();
        return step -> {
            if (step.equals("staged") && passed.add(Thread.currentThread())) {
                await(barrier);
            }
        };
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.BrokenBarrierException e) {
            // the other writer staged again alone (a retry): go on
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
