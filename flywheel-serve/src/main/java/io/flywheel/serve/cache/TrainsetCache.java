package io.flywheel.serve.cache;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import io.flywheel.lake.Lake;
import io.flywheel.lake.StorageConfig;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.TrainsetLoader;

/**
 * A local cache in front of a lake (local folder or S3) for reading training sets: warm it from a
 * set's plan, then open loaders whose reads hit the cache first and fall back to the origin.
 *
 * <p>How reads go through it: a {@link CacheServer} on loopback speaks the S3 API over the cache
 * and the lake's storage, and the lake is opened through it as {@code s3://flywheel-cache} (so
 * Lance's own reader, with its own IO scheduling, reads cached byte ranges); raw images go through
 * a {@link CachedRawReader}. Bytes, hits and misses are counted on both paths.
 *
 * <pre>
 * try (TrainsetCache c = TrainsetCache.open(Path.of("/mnt/nvme/cache"), "s3://bucket/lake", storage)) {
 *     WarmPlan plan = c.plan("train-v2", options);
 *     c.warm(plan, 16, Warmer.Progress.NONE);
 *     try (TrainsetLoader l = c.loader("train-v2", options)) { ... }
 *     c.stats();
 * }
 * </pre>
 */
public final class TrainsetCache implements AutoCloseable {
    /** Bucket name the lake is served under by the cache endpoint. */
    public static final String BUCKET = "flywheel-cache";

    /**
     * Hit and miss counters of one cache since it was opened.
     *
     * @param lakeHitBytes Lance reads served from the cache, bytes
     * @param lakeMissBytes Lance reads served from the origin, bytes
     * @param rawHitBytes raw-image reads served from the cache, bytes
     * @param rawMissBytes raw-image reads served from the raw files, bytes
     * @param requests HTTP requests to the cache endpoint (reads, heads and lists)
     */
    public record Stats(long lakeHitBytes, long lakeMissBytes, long rawHitBytes, long rawMissBytes, long requests) {
        /** @return hit bytes / all bytes read, 1 when nothing was read */
        public double hitRatio() {
            long all = lakeHitBytes + lakeMissBytes + rawHitBytes + rawMissBytes;
            return all == 0 ? 1.0 : (double) (lakeHitBytes + rawHitBytes) / all;
        }
    }

    private final Path dir;
    private final RangeCache cache;
    private final Origin lakeOrigin;
    private final RoutedOrigin origin;
    private final Lake originLake;
    private final CacheServer server;
    private final Lake cachedLake;
    private final CachedRawReader.Counters rawCounters = new CachedRawReader.Counters();

    private TrainsetCache(Path dir, Lake originLake, Origin lakeOrigin) throws IOException {
        this.dir = dir;
        this.originLake = originLake;
        this.lakeOrigin = lakeOrigin;
        this.origin = new RoutedOrigin(lakeOrigin);
        this.cache = RangeCache.open(dir);
        this.server = CacheServer.start(cache, lakeOrigin);
        try {
            this.cachedLake = Lake.open("s3://" + BUCKET, Lake.Options.defaults().withEnvironment(Map.of())
                    .withStorage(StorageConfig.builder().endpoint(server.endpoint()).region("us-east-1")
                            .credentials("cache", "cache").build()));
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * Opens the cache in {@code dir} (created by the first fetch) in front of a lake.
     *
     * @param dir local cache folder
     * @param lakeLocation lake folder or {@code s3://bucket/prefix}
     * @param options the lake's open options (storage for S3)
     * @return the cache; close it
     * @throws IOException when the cache folder cannot be used or the loopback port not bound
     * @throws io.flywheel.error.NotFoundException when there is no lake at the location
     */
    public static TrainsetCache open(Path dir, String lakeLocation, Lake.Options options) throws IOException {
        Lake lake = Lake.open(lakeLocation, options);
        try {
            Origin o = lake.location().matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")
                    ? new S3Origin(lake.location(), lake.storage())
                    : new LocalOrigin(Path.of(lake.location()));
            return new TrainsetCache(dir, lake, o);
        } catch (IOException | RuntimeException e) {
            lake.close();
            throw e;
        }
    }

    /** @return the cache folder */
    public Path dir() {
        return dir;
    }

    /** @return the lake on its origin */
    public Lake originLake() {
        return originLake;
    }

    /** @return the lake read through the cache (for loaders) */
    public Lake cachedLake() {
        return cachedLake;
    }

    /** @return the cache endpoint (S3 API on loopback) */
    public CacheServer server() {
        return server;
    }

    /** @return the on-disk store */
    public RangeCache store() {
        return cache;
    }

    /**
     * @param tag training-set tag
     * @param options the loader options the trainer will use (they decide the columns)
     * @return the files and ranges those reads touch
     * @throws IOException when a file cannot be read
     */
    public WarmPlan plan(String tag, LoaderOptions options) throws IOException {
        return WarmPlanner.plan(originLake, lakeOrigin, tag, TrainsetLoader.columns(options), WarmPlanner.DEFAULT_GAP);
    }

    /**
     * Fetches a plan into the cache.
     *
     * @param plan from {@link #plan}
     * @param threads parallel fetches
     * @param progress progress callback
     * @return the report
     * @throws IOException naming the key and range of a failed fetch
     */
    public Warmer.Report warm(WarmPlan plan, int threads, Warmer.Progress progress) throws IOException {
        return Warmer.warm(plan, origin, cache, threads, Warmer.DEFAULT_PIECE, progress);
    }

    /**
     * @return a loader reading through the cache
     * @throws io.flywheel.error.NotFoundException when there is no such set
     */
    public TrainsetLoader loader(String tag, LoaderOptions options) {
        return TrainsetLoader.open(cachedLake, tag, options, () -> new CachedRawReader(cache, rawCounters));
    }

    /** @return counters since the cache was opened */
    public Stats stats() {
        CacheServer.Stats s = server.stats();
        return new Stats(s.hitBytes(), s.missBytes(), rawCounters.hitBytes(), rawCounters.missBytes(), s.requests());
    }

    @Override
    public void close() {
        cachedLake.close();
        server.close();
        originLake.close();
        try {
            lakeOrigin.close();
        } catch (IOException e) {
            // nothing held open
        }
    }
}
