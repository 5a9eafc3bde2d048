package io.flywheel.cli;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.serve.cache.TrainsetCache;
import io.flywheel.serve.cache.WarmPlan;
import io.flywheel.serve.cache.Warmer;
import io.flywheel.serve.loader.LoaderOptions;
import io.flywheel.serve.loader.Sample;
import io.flywheel.serve.loader.TrainsetLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code flywheel warm LAKE TAG --cache DIR}: fetches exactly the files and byte ranges a training
 * set's reads touch into a local cache, then reads a few batches through it and reports the hit
 * ratio; {@code --list} prints the list instead (JuiceFS warmup format or JSON).
 */
@Command(name = "warm", mixinStandardHelpOptions = true,
        description = "Fetch, in parallel, the files and byte ranges a training set's reads touch (Lance metadata, the"
                + " read columns' pages of trainset_samples, hot image copies, raw image ranges or whole MCAP chunks)"
                + " into a local cache; reads through the cache hit it first and fall back to the lake. --list prints"
                + " the list instead.")
final class WarmCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation lake;

    @Parameters(index = "1", paramLabel = "TAG", description = "training-set tag")
    String tag;

    @Option(names = "--cache", paramLabel = "DIR", description = "local cache folder (needed unless --list)")
    Path cache;

    @Option(names = "--list", description = "print the files and merged byte ranges instead of fetching them")
    boolean list;

    @Option(names = "--format", defaultValue = "juicefs",
            description = "with --list: juicefs (one path per line, whole files: what released JuiceFS warmup --file"
                    + " reads) or juicefs-ranges ('/path [start-end;start-end]', end exclusive, no space after ';':"
                    + " JuiceFS's main branch only) (default ${DEFAULT-VALUE})")
    String format;

    @Option(names = "--path-prefix", paramLabel = "P",
            description = "with --list: replace the lake location by this path (where JuiceFS mounts the lake)")
    String pathPrefix;

    @Option(names = "--images", defaultValue = "bytes",
            description = "what the trainer reads: none, bytes or decoded (default ${DEFAULT-VALUE})")
    String images;

    @Option(names = "--threads", defaultValue = "16", description = "parallel fetches (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--check-batches", defaultValue = "10",
            description = "batches of 64 read through the cache after warming, to report the hit ratio (default"
                    + " ${DEFAULT-VALUE}; 0 = none)")
    int checkBatches;

    @Mixin
    JsonOutput jsonOutput;

    @Override
    public Integer call() throws Exception {
        boolean json = jsonOutput.enabled();
        LoaderOptions.Images mode = LoadCommand.imagesMode(spec, images);
        Usage.require(spec, format.equals("juicefs") || format.equals("juicefs-ranges"),
                "--format '" + format + "': expected juicefs or juicefs-ranges (use --json for JSON)");
        Usage.require(spec, cache != null || list, "--cache DIR is needed to warm (or give --list)");
        Usage.require(spec, threads >= 1, "--threads must be >= 1, got " + threads);
        Usage.require(spec, checkBatches >= 0, "--check-batches must be >= 0 (0: none), got " + checkBatches);
        Usage.require(spec, list || pathPrefix == null && !spec.commandLine().getParseResult().hasMatchedOption("--format"),
                "--format and --path-prefix apply to --list only");
        LoaderOptions o = LoaderOptions.builder().batchSize(64).images(mode).build();
        Path dir = cache != null ? cache : java.nio.file.Files.createTempDirectory("flywheel-warm-list");
        try (TrainsetCache c = TrainsetCache.open(dir, lake.uri(), lake.options())) {
            WarmPlan plan = c.plan(tag, o);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("lake", plan.lake());
            out.put("tag", tag);
            out.put("samples_version", plan.samplesVersion());
            out.put("columns", plan.columns());
            out.put("files", plan.files().size());
            out.put("lance_files", plan.files().size() - plan.files(WarmPlan.Kind.RAW).size());
            out.put("raw_files", plan.files(WarmPlan.Kind.RAW).size());
            out.put("bytes", plan.bytes());
            out.put("file_bytes", plan.fileBytes());
            if (list) {
                if (json) {
                    out.put("list", plan.files().stream().map(f -> Map.of("path", plan.mountedPath(f, pathPrefix), "kind",
                            f.kind().name().toLowerCase(Locale.ROOT), "size", f.size(), "ranges",
                            f.ranges().stream().map(r -> List.of(r.start(), r.end())).toList())).toList());
                    Json.print(System.out, out);
                } else {
                    (format.equals("juicefs") ? plan.juicefsLines(pathPrefix) : plan.juicefsRangeLines(pathPrefix))
                            .forEach(System.out::println);
                    System.err.printf(Locale.ROOT, "warm list: %d files, %s in ranges of %s in files%n",
                            plan.files().size(), mb(plan.bytes()), mb(plan.fileBytes()));
                }
                return 0;
            }
            long t0 = System.nanoTime();
            Warmer.Report r = c.warm(plan, threads, (done, total, bytes) -> {
                if (!json && (done % 50 == 0 || done == total)) {
                    double s = (System.nanoTime() - t0) / 1e9;
                    System.err.printf(Locale.ROOT, "warm: %d/%d pieces, %s, %.1f MiB/s, ETA %.0fs%n", done, total,
                            mb(bytes), bytes / 1048576.0 / s, (total - done) * s / done);
                }
            });
            out.put("cache", c.dir().toString());
            out.put("fetched_bytes", r.fetchedBytes());
            out.put("already_cached_bytes", r.cachedBytes());
            out.put("seconds", r.elapsedNs() / 1e9);
            out.put("mib_per_s", r.mibPerSecond());
            out.put("threads", threads);
            if (checkBatches > 0) {
                TrainsetCache.Stats before = c.stats();
                long samples = 0;
                long t1 = System.nanoTime();
                try (TrainsetLoader l = c.loader(tag, o)) {
                    Iterator<List<Sample>> it = l.epoch(0);
                    for (int b = 0; b < checkBatches && it.hasNext(); b++) {
                        samples += it.next().size();
                    }
                }
                TrainsetCache.Stats after = c.stats();
                long hit = after.lakeHitBytes() - before.lakeHitBytes() + after.rawHitBytes() - before.rawHitBytes();
                long miss = after.lakeMissBytes() - before.lakeMissBytes() + after.rawMissBytes() - before.rawMissBytes();
                out.put("check_samples", samples);
                out.put("check_hit_bytes", hit);
                out.put("check_miss_bytes", miss);
                out.put("check_hit_ratio", hit + miss == 0 ? 1.0 : (double) hit / (hit + miss));
                out.put("check_samples_per_s", samples / ((System.nanoTime() - t1) / 1e9));
            }
            if (json) {
                Json.print(System.out, out);
            } else {
                System.out.printf(Locale.ROOT, "warmed '%s' into %s: %d files (%d raw), %s fetched, %s already cached, "
                        + "%.1f s, %.1f MiB/s (%s listed of %s in those files)%n", tag, c.dir(), plan.files().size(),
                        plan.files(WarmPlan.Kind.RAW).size(), mb(r.fetchedBytes()), mb(r.cachedBytes()),
                        r.elapsedNs() / 1e9, r.mibPerSecond(), mb(plan.bytes()), mb(plan.fileBytes()));
                if (checkBatches > 0) {
                    System.out.printf(Locale.ROOT, "read %d samples through the cache: hit ratio %.4f (%s from cache, %s"
                            + " from the lake), %.0f samples/s%n", out.get("check_samples"), out.get("check_hit_ratio"),
                            mb((Long) out.get("check_hit_bytes")), mb((Long) out.get("check_miss_bytes")),
                            out.get("check_samples_per_s"));
                }
            }
            return 0;
        } finally {
            if (cache == null) {
                io.flywheel.lake.LocalFiles.deleteTree(dir);
            }
        }
    }


    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
