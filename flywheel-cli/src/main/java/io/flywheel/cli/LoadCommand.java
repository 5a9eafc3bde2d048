package io.flywheel.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.Lake;
import io.flywheel.serve.cache.TrainsetCache;
import io.flywheel.serve.loader.CameraImage;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel load LAKE TAG}: opens a training set as a trainer would, shows a sample, times batches. */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = "Open a training set through the loader: show its size and first sample, then read shuffled"
                + " batches and report samples/s and batch latency.")
final class LoadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation lake;

    @Parameters(index = "1", paramLabel = "TAG", description = "training-set tag")
    String tag;

    @Option(names = "--batch-size", defaultValue = "64", description = "samples per batch (default ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--batches", defaultValue = "20", description = "batches to time (default ${DEFAULT-VALUE}; 0 = a whole epoch)")
    int batches;

    @Option(names = "--seed", defaultValue = "0", description = "shuffle seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--threads", defaultValue = "2", description = "reader threads (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--prefetch", defaultValue = "4", description = "batches read ahead (default ${DEFAULT-VALUE})")
    int prefetch;

    @Option(names = "--images", defaultValue = "bytes",
            description = "none, bytes (encoded) or decoded (RGB) (default ${DEFAULT-VALUE})")
    String images;

    @Option(names = "--cache", paramLabel = "DIR",
            description = "read through this local cache (see flywheel warm): hits first, the lake otherwise")
    java.nio.file.Path cache;

    @Mixin
    JsonOutput jsonOutput;

    private boolean json;

    @Override
    public Integer call() throws java.io.IOException {
        json = jsonOutput.enabled();
        LoaderOptions.Images mode = imagesMode(spec, images);
        Usage.require(spec, batches >= 0, "--batches must be >= 0 (0: a whole epoch), got " + batches);
        Usage.atLeast(spec, "--batch-size", batchSize, 1);
        Usage.atLeast(spec, "--threads", threads, 1);
        Usage.atLeast(spec, "--prefetch", prefetch, 1);
        LoaderOptions o = Usage.check(spec, null, () -> LoaderOptions.builder().batchSize(batchSize).seed(seed)
                .threads(threads).prefetch(prefetch).images(mode).build());
        try (TrainsetCache tc = cache == null ? null : TrainsetCache.open(cache, lake.uri(), lake.options());
                Lake l = tc == null ? lake.open() : null;
                TrainsetLoader loader = tc == null ? TrainsetLoader.open(l, tag, o) : tc.loader(tag, o)) {
            this.cacheRef = tc;
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("tag", tag);
            out.put("samples", loader.size());
            out.put("episodes", loader.trainset().episodeCount());
            out.put("batch_size", batchSize);
            out.put("batches_per_epoch", loader.batchesPerEpoch());
            if (loader.size() == 0) {
                out.put("batches_timed", 0);
                print(out, null);
                return 0;
            }
            Sample first = loader.get(0).get(0);
            firstNames = loader.valueNames(first.episodeId());
            long n = batches == 0 ? loader.batchesPerEpoch() : Math.min(batches, loader.batchesPerEpoch());
            List<Double> latencyMs = new ArrayList<>();
            long samples = 0;
            long imageBytes = 0;
            long t0 = System.nanoTime();
            Iterator<List<Sample>> it = loader.epoch(0);
            for (long b = 0; b < n; b++) {
                long s = System.nanoTime();
                List<Sample> batch = it.next();
                latencyMs.add((System.nanoTime() - s) / 1e6);
                samples += batch.size();
                for (Sample x : batch) {
                    for (CameraImage c : x.images()) {
                        imageBytes += c.bytes().length;
                    }
                }
                if (!json && (b + 1) % 10 == 0) {
                    double secs = (System.nanoTime() - t0) / 1e9;
                    System.err.printf(Locale.ROOT, "load: %d/%d batches, %.0f samples/s, ETA %.0fs%n", b + 1, n,
                            samples / secs, (n - b - 1) * secs / (b + 1));
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double[] lat = latencyMs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            out.put("batches_timed", n);
            out.put("samples_per_s", samples / secs);
            out.put("image_mb_per_s", imageBytes / secs / 1e6);
            out.put("batch_wait_p50_ms", percentile(lat, 0.5));
            out.put("batch_wait_p99_ms", percentile(lat, 0.99));
            print(out, first);
        }
        return 0;
    }

    private TrainsetCache cacheRef;
    private io.flywheel.curate.trainset.ValueNames firstNames = io.flywheel.curate.trainset.ValueNames.NONE;

    private void print(Map<String, Object> out, Sample first) {
        if (cacheRef != null) {
            TrainsetCache.Stats st = cacheRef.stats();
            out.put("cache", cacheRef.dir().toString());
            out.put("cache_hit_bytes", st.lakeHitBytes() + st.rawHitBytes());
            out.put("cache_miss_bytes", st.lakeMissBytes() + st.rawMissBytes());
            out.put("cache_hit_ratio", st.hitRatio());
        }
        if (first != null) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("episode_id", first.episodeId());
            f.put("frame_index", first.frameIndex());
            f.put("timestamp_ns", first.timestampNs());
            f.put("state", first.state());
            f.put("action", first.action());
            f.put("state_names", firstNames.state());
            f.put("action_names", firstNames.action());
            f.put("images", first.images().stream().map(c -> Map.of("topic", c.topic(), "source", c.source(),
                    "format", c.format(), "bytes", c.bytes().length)).toList());
            out.put("first_sample", f);
        }
        if (json) {
            Json.print(System.out, out);
            return;
        }
        System.out.printf(Locale.ROOT, "training set '%s': %d samples from %d episodes, %d batches of %d per epoch%n",
                tag, out.get("samples"), out.get("episodes"), out.get("batches_per_epoch"), batchSize);
        if (first != null) {
            System.out.printf(Locale.ROOT, "sample 0: %s frame %d, state %s, action %s, %d image(s)%n", first.episodeId(),
                    first.frameIndex(), Arrays.toString(first.state()), Arrays.toString(first.action()),
                    first.images().size());
            if (!firstNames.state().isEmpty() || !firstNames.action().isEmpty()) {
                System.out.printf(Locale.ROOT, "  state names: %s%n  action names: %s%n",
                        firstNames.state().isEmpty() ? "(unknown)" : String.join(", ", firstNames.state()),
                        firstNames.action().isEmpty() ? "(unknown)" : String.join(", ", firstNames.action()));
            }
            System.out.printf(Locale.ROOT, "read %d shuffled batches: %.0f samples/s, %.1f MB/s of images, batch wait"
                            + " p50 %.2f ms, p99 %.2f ms%n", out.get("batches_timed"), out.get("samples_per_s"),
                    out.get("image_mb_per_s"), out.get("batch_wait_p50_ms"), out.get("batch_wait_p99_ms"));
        }
        if (cacheRef != null) {
            System.out.printf(Locale.ROOT, "cache %s: hit ratio %.4f (%d bytes from the cache, %d from the lake)%n",
                    out.get("cache"), out.get("cache_hit_ratio"), out.get("cache_hit_bytes"), out.get("cache_miss_bytes"));
        }
    }

    /**
     * @param value an {@code --images} value
     * @return its mode
     * @throws picocli.CommandLine.ParameterException when it is not none, bytes or decoded
     */
    static LoaderOptions.Images imagesMode(CommandSpec spec, String value) {
        return switch (value) {
            case "none" -> LoaderOptions.Images.NONE;
            case "bytes" -> LoaderOptions.Images.BYTES;
            case "decoded" -> LoaderOptions.Images.DECODED;
            default -> throw Usage.error(spec, "--images '" + value + "': expected none, bytes or decoded");
        };
    }

    private static double percentile(double[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    }
}
