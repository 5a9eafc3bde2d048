package io.flywheel.serve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import io.flywheel.serve.loader.CameraImage;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import io.flywheel.testkit.SharedData;

/**
 * Warm and cached reads over a training set of the 25 real BridgeData episodes (MCAP with zstd
 * chunks: every image locator is chunked, no hot copies).
 */
class TrainsetCacheTest {
    @TempDir
    static Path tmp;
    static Path lakeDir;
    static final LoaderOptions OPTS = LoaderOptions.builder().batchSize(16).seed(5).threads(2).build();

    @BeforeAll
    static void build() throws IOException {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(0.4).seed(3).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
        }
    }

    static Map<Long, Sample> epoch(TrainsetLoader l) {
        Map<Long, Sample> out = new HashMap<>();
        for (Iterator<List<Sample>> it = l.epoch(0); it.hasNext(); ) {
            for (Sample s : it.next()) {
                out.put(s.sampleIndex(), s);
            }
        }
        return out;
    }

    static void assertSame(Map<Long, Sample> want, Map<Long, Sample> got) {
        assertEquals(want.keySet(), got.keySet());
        for (Map.Entry<Long, Sample> e : want.entrySet()) {
            Sample a = e.getValue();
            Sample b = got.get(e.getKey());
            assertEquals(a.episodeId(), b.episodeId());
            assertEquals(a.timestampNs(), b.timestampNs());
            assertArrayEquals(a.state(), b.state());
            assertArrayEquals(a.action(), b.action());
            assertEquals(a.images().size(), b.images().size());
            for (int i = 0; i < a.images().size(); i++) {
                CameraImage x = a.images().get(i);
                CameraImage y = b.images().get(i);
                assertEquals(x.topic(), y.topic());
                assertArrayEquals(x.bytes(), y.bytes(), "image " + x.topic() + " of sample " + e.getKey());
            }
        }
    }

    @Test
    void warmListCoversExactlyWhatTheLoaderReadsAndCachedValuesEqualTheOrigin() throws IOException {
        Map<Long, Sample> origin;
        try (Lake lake = Lake.open(lakeDir); TrainsetLoader l = TrainsetLoader.open(lake, "train-v1", OPTS)) {
            origin = epoch(l);
        }
        assertEquals(100, origin.size());
        try (TrainsetCache c = TrainsetCache.open(tmp.resolve("cache1"), lakeDir.toString(), Lake.Options.defaults())) {
            WarmPlan plan = c.plan("train-v1", OPTS);
            // cold: nothing cached, every Lance read goes to the origin; record them
            c.server().recording(true);
            Map<Long, Sample> cold;
            try (TrainsetLoader l = c.loader("train-v1", OPTS)) {
                cold = epoch(l);
            }
            List<CacheServer.Read> reads = c.server().reads();
            assertSame(origin, cold);
            TrainsetCache.Stats s0 = c.stats();
            assertEquals(0, s0.lakeHitBytes());
            assertEquals(0, s0.rawHitBytes());
            Map<String, List<ByteRange>> listed = new HashMap<>();
            plan.files().forEach(f -> listed.put(f.key(), f.ranges()));
            long uncovered = 0;
            List<String> outside = new ArrayList<>();
            Map<String, List<ByteRange>> touched = new HashMap<>();
            for (CacheServer.Read r : reads) {
                if (!r.key().startsWith("trainset_samples.lance/data/")) {
                    continue;
                }
                touched.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.range());
                long u = ByteRange.uncovered(listed.getOrDefault(r.key(), List.of()), r.range());
                if (u > 0) {
                    outside.add(r.key() + " " + r.range() + " (" + u + " bytes)");
                }
                uncovered += u;
            }
            assertEquals(0, uncovered, "reads outside the warm list: " + outside);
            // the data file is smaller than Lance's first (tail) read, so reads and list are the whole file
            WarmPlan.FileRanges data = plan.files(WarmPlan.Kind.LANCE_DATA).get(0);
            assertEquals(List.of(new ByteRange(0, data.size())), data.ranges());
            // 10 episodes, 10 raw MCAP files; every locator is chunked: whole chunk records are listed
            assertEquals(10, plan.files(WarmPlan.Kind.RAW).size());

            Warmer.Report w = c.warm(plan, 4, Warmer.Progress.NONE);
            assertEquals(plan.bytes(), w.fetchedBytes());
            TrainsetCache.Stats before = c.stats();
            Map<Long, Sample> warm;
            try (TrainsetLoader l = c.loader("train-v1", OPTS)) {
                warm = epoch(l);
            }
            assertSame(origin, warm);
            TrainsetCache.Stats after = c.stats();
            assertEquals(before.lakeMissBytes(), after.lakeMissBytes(), "a Lance read missed the warm cache");
            assertEquals(before.rawMissBytes(), after.rawMissBytes(), "a raw read missed the warm cache");
            assertTrue(after.rawHitBytes() > 0 && after.lakeHitBytes() > before.lakeHitBytes());
        }
    }

    /** Coverage check on a lake whose data file is far larger than the tail read (3 x 400 frames, 3 KB images). */
    @Test
    void onALargerFileTheListHoldsOnlyTheReadColumnsAndEveryReadIsInsideIt() throws IOException {
        Path lakeDir2 = tmp.resolve("lake2");
        try (Lake lake = Lake.init(lakeDir2)) {
            SyntheticLake.build(lake, tmp.resolve("raw2"), 3, 400, 3000, "syn-v1");
        }
        for (LoaderOptions.Images mode : List.of(LoaderOptions.Images.NONE, LoaderOptions.Images.BYTES)) {
            LoaderOptions o = LoaderOptions.builder().batchSize(64).seed(9).images(mode).build();
            Map<Long, Sample> origin;
            try (Lake lake = Lake.open(lakeDir2); TrainsetLoader l = TrainsetLoader.open(lake, "syn-v1", o)) {
                origin = epoch(l);
            }
            assertEquals(1200, origin.size());
            Sample s = origin.get(401L); // episode 1, frame 1: odd frame, raw range
            assertArrayEquals(new double[] {1, 1, 1.001}, s.state());
            if (mode == LoaderOptions.Images.BYTES) {
                assertArrayEquals(SyntheticLake.image(1, 1, 3000), s.images().get(0).bytes());
                assertEquals("raw", s.images().get(0).source());
                assertArrayEquals(SyntheticLake.hot(1, 2, 3000), origin.get(402L).images().get(0).bytes());
            }
            try (TrainsetCache c = TrainsetCache.open(tmp.resolve("cache2-" + mode), lakeDir2.toString(),
                    Lake.Options.defaults())) {
                WarmPlan plan = c.plan("syn-v1", o);
                c.server().recording(true);
                try (TrainsetLoader l = c.loader("syn-v1", o)) {
                    assertSame(origin, epoch(l));
                }
                Map<String, List<ByteRange>> touched = new HashMap<>();
                for (CacheServer.Read r : c.server().reads()) {
                    touched.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.range());
                }
                for (WarmPlan.FileRanges f : plan.files(WarmPlan.Kind.LANCE_DATA)) {
                    List<ByteRange> read = ByteRange.merge(touched.getOrDefault(f.key(), List.of()), 0);
                    long outside = read.stream().mapToLong(r -> ByteRange.uncovered(f.ranges(), r)).sum();
                    long unread = f.ranges().stream().mapToLong(r -> ByteRange.uncovered(read, r)).sum();
                    // what is listed but unread is only the padding between buffers (< 64 bytes each)
                    List<ByteRange> unreadPieces = new ArrayList<>();
                    for (ByteRange r : f.ranges()) {
                        long at = r.start();
                        for (ByteRange x : read) {
                            if (x.end() <= at || x.start() >= r.end()) {
                                continue;
                            }
                            if (x.start() > at) {
                                unreadPieces.add(new ByteRange(at, x.start()));
                            }
                            at = Math.max(at, x.end());
                        }
                        if (at < r.end()) {
                            unreadPieces.add(new ByteRange(at, r.end()));
                        }
                    }
                    System.out.println(mode + " " + f.key() + ": file " + f.size() + ", listed " + f.bytes() + ", read "
                            + ByteRange.total(read) + ", outside " + outside + ", listed but unread " + unread);
                    assertEquals(0, outside, "bytes read outside the list: " + read + " vs " + f.ranges());
                    assertEquals(unread, ByteRange.total(unreadPieces));
                    assertTrue(unreadPieces.stream().allMatch(r -> r.length() < 64),
                            "listed but never read in a whole epoch: " + unreadPieces);
                    assertTrue(f.bytes() < f.size() || mode == LoaderOptions.Images.BYTES);
                }
                if (mode == LoaderOptions.Images.NONE) {
                    assertTrue(plan.files(WarmPlan.Kind.RAW).isEmpty());
                } else {
                    // odd frames read raw ranges: 200 per episode, 3000 bytes each, one range per image
                    List<WarmPlan.FileRanges> raw = plan.files(WarmPlan.Kind.RAW);
                    assertEquals(3, raw.size());
                    assertEquals(200, raw.get(0).ranges().size());
                    assertEquals(new ByteRange(3000, 6000), raw.get(0).ranges().get(0));
                    assertEquals(600 * 3000L, raw.stream().mapToLong(WarmPlan.FileRanges::bytes).sum());
                    assertTrue(plan.juicefsRangeLines(null).contains(raw.get(0).path() + " [" + String.join(";",
                            raw.get(0).ranges().stream().map(r -> r.start() + "-" + r.end()).toList()) + "]"));
                }
            }
        }
    }

    /** A warm killed after a few pieces leaves only whole entries; the next warm fetches only the rest. */
    @Test
    void aKilledWarmLeavesNoCorruptEntryAndResumes() throws IOException {
        Path lakeDir3 = tmp.resolve("lake3");
        try (Lake lake = Lake.init(lakeDir3)) {
            SyntheticLake.build(lake, tmp.resolve("raw3"), 2, 100, 2000, "syn-v1");
        }
        Path cacheDir = tmp.resolve("cache3");
        LoaderOptions o = LoaderOptions.builder().batchSize(32).seed(2).build();
        WarmPlan plan;
        try (TrainsetCache c = TrainsetCache.open(cacheDir, lakeDir3.toString(), Lake.Options.defaults())) {
            plan = c.plan("syn-v1", o);
        }
        RoutedOrigin real = new RoutedOrigin(new LocalOrigin(lakeDir3));
        AtomicInteger reads = new AtomicInteger();
        Origin dying = new Origin() {
            @Override
            public String describe() {
                return "dying";
            }

            @Override
            public long size(String key) throws IOException {
                return real.size(key);
            }

            @Override
            public byte[] read(String key, ByteRange range) throws IOException {
                if (reads.incrementAndGet() > 5) {
                    throw new IOException("connection reset (simulated) at " + key + " " + range);
                }
                return real.read(key, range);
            }

            @Override
            public List<Entry> list(String prefix) throws IOException {
                return real.list(prefix);
            }
        };
        RangeCache cache = RangeCache.open(cacheDir);
        IOException e = assertThrows(IOException.class, () -> Warmer.warm(plan, dying, cache, 1, 1000, Warmer.Progress.NONE));
        assertTrue(e.getMessage().contains("connection reset"), e.getMessage());
        // a writer killed mid-entry leaves a temporary file (simulated here), and a torn entry can only appear
        // under its final name through a rename, which we also simulate with a wrong length
        Path someDir = cache.objectsDir().resolve(plan.files(WarmPlan.Kind.LANCE_DATA).get(0).key());
        Files.createDirectories(someDir);
        Files.write(someDir.resolve(".tmp-123.part"), new byte[] {1, 2, 3});
        Files.write(someDir.resolve("0-999.range"), new byte[10]);
        RangeCache reopened = RangeCache.open(cacheDir);
        assertFalse(Files.exists(someDir.resolve(".tmp-123.part")));
        assertFalse(Files.exists(someDir.resolve("0-999.range")));
        long held = 0;
        for (WarmPlan.FileRanges f : plan.files()) {
            for (ByteRange r : reopened.ranges(f.key())) {
                assertArrayEquals(real.read(f.key(), r), reopened.get(f.key(), r), f.key() + " " + r);
                held += r.length();
            }
        }
        long firstFive = 0; // the first five pieces of at most 1000 bytes, in plan order (one thread)
        int n = 0;
        outer:
        for (WarmPlan.FileRanges f : plan.files()) {
            for (ByteRange r : f.ranges()) {
                for (long at = r.start(); at < r.end(); at += 1000) {
                    if (n++ == 5) {
                        break outer;
                    }
                    firstFive += Math.min(1000, r.end() - at);
                }
            }
        }
        assertEquals(firstFive, held);
        assertNull(reopened.get(plan.files().get(0).key(), new ByteRange(0, plan.files().get(0).size() + 1)));
        Warmer.Report w = Warmer.warm(plan, real, reopened, 3, 1000, Warmer.Progress.NONE);
        assertEquals(plan.bytes() - held, w.fetchedBytes());
        assertEquals(held, w.cachedBytes());
        Map<Long, Sample> origin;
        try (Lake lake = Lake.open(lakeDir3); TrainsetLoader l = TrainsetLoader.open(lake, "syn-v1", o)) {
            origin = epoch(l);
        }
        try (TrainsetCache c = TrainsetCache.open(cacheDir, lakeDir3.toString(), Lake.Options.defaults())) {
            try (TrainsetLoader l = c.loader("syn-v1", o)) {
                assertSame(origin, epoch(l));
            }
            assertEquals(0, c.stats().rawMissBytes());
            assertTrue(c.stats().hitRatio() > 0.99, "hit ratio " + c.stats().hitRatio());
        }
    }
}
