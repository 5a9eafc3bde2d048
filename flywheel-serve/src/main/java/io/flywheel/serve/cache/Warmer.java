package io.flywheel.serve.cache;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fetches a {@link WarmPlan} into a {@link RangeCache}, in parallel: each range is cut into pieces
 * of at most {@code pieceBytes}, pieces already held are skipped (so a warm that was killed resumes
 * where it stopped), and each piece lands as one atomic cache entry.
 */
public final class Warmer {
    /** Default piece size: 4 MiB. */
    public static final int DEFAULT_PIECE = 4 << 20;

    /** Progress callback: pieces done, pieces in all, bytes fetched so far. */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (done, total, bytes) -> { };

        void update(long done, long total, long bytes);
    }

    /**
     * @param files files in the plan
     * @param bytes bytes in the plan's ranges
     * @param fetchedBytes bytes fetched from the origin by this run
     * @param cachedBytes bytes that were already in the cache
     * @param pieces pieces (cache entries) written by this run
     * @param elapsedNs wall time in ns
     * @param threads parallel fetches
     */
    public record Report(int files, long bytes, long fetchedBytes, long cachedBytes, long pieces, long elapsedNs,
            int threads) {
        /** @return fetched MiB per second */
        public double mibPerSecond() {
            return elapsedNs == 0 ? 0 : fetchedBytes / 1048576.0 / (elapsedNs / 1e9);
        }
    }

    private Warmer() {}

    /**
     * @param plan what to fetch
     * @param origin resolves every key of the plan (Lance keys and {@code raw/} keys)
     * @param cache where to put it
     * @param threads parallel fetches, &ge; 1
     * @param pieceBytes largest cache entry, &ge; 1
     * @param progress called after each piece (from the fetching threads)
     * @return what was done
     * @throws IOException naming the key and range of the first failed fetch; pieces already written stay
     */
    public static Report warm(WarmPlan plan, Origin origin, RangeCache cache, int threads, int pieceBytes,
            Progress progress) throws IOException {
        if (threads < 1 || pieceBytes < 1) {
            throw new IllegalArgumentException("threads and piece size must be >= 1, got " + threads + ", " + pieceBytes);
        }
        long t0 = System.nanoTime();
        record Piece(String key, ByteRange range) {}
        List<Piece> todo = new ArrayList<>();
        long cached = 0;
        for (WarmPlan.FileRanges f : plan.files()) {
            if (cache.size(f.key()) != f.size()) {
                cache.putSize(f.key(), f.size());
            }
            for (ByteRange r : f.ranges()) {
                for (long s = r.start(); s < r.end(); s += pieceBytes) {
                    ByteRange p = new ByteRange(s, Math.min(r.end(), s + pieceBytes));
                    if (cache.covers(f.key(), p)) {
                        cached += p.length();
                    } else {
                        todo.add(new Piece(f.key(), p));
                    }
                }
            }
        }
        AtomicLong fetched = new AtomicLong();
        AtomicLong done = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "warm");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (Piece p : todo) {
                fs.add(pool.submit(() -> {
                    byte[] b = origin.read(p.key(), p.range());
                    cache.put(p.key(), p.range().start(), b);
                    progress.update(done.incrementAndGet(), todo.size(), fetched.addAndGet(b.length));
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof IOException io) {
                        throw io;
                    }
                    if (c instanceof RuntimeException r) {
                        throw r;
                    }
                    throw new IOException(c.getMessage(), c);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("warm interrupted", e);
        } finally {
            pool.shutdownNow();
        }
        return new Report(plan.files().size(), plan.bytes(), fetched.get(), cached, todo.size(), System.nanoTime() - t0,
                threads);
    }
}
