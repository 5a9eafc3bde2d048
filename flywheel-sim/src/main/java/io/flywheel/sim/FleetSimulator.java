package io.flywheel.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Simulates a robot fleet: plans it ({@link FleetPlan}), generates every episode as one ROS 2
 * MCAP file {@code <outDir>/<robot_id>/<episode_id>.mcap} on a pool of worker threads (each file
 * written to a temporary name and moved into place when complete), then writes {@code
 * <outDir>/ground_truth.json} (also atomically, last). The output depends only on the options
 * (seed included), not on the thread count or the order episodes finish in.
 */
public final class FleetSimulator {
    private FleetSimulator() {}

    /** Opens the sink an episode is written to. */
    @FunctionalInterface
    public interface SinkFactory {
        /**
         * @param target the final file path (the sink must write atomically)
         * @param options fleet options
         * @return an open sink
         */
        EpisodeSink open(Path target, SimOptions options) throws IOException;
    }

    /** The ground truth file name inside the output folder. */
    public static final String GROUND_TRUTH = "ground_truth.json";

    /**
     * Runs the simulation with indexed, zstd-chunked MCAP output.
     *
     * @param options what to simulate and where to write it
     * @param progress called after every finished episode (may be {@link ProgressListener#NONE})
     * @return the end summary
     * @throws IOException when a file cannot be written; the message names the episode. Episodes
     *     finished before the failure stay in place; ground_truth.json is not written.
     */
    public static SimSummary run(SimOptions options, ProgressListener progress) throws IOException {
        return run(options, progress, McapEpisodeSink::open);
    }

    /**
     * As {@link #run(SimOptions, ProgressListener)} with another sink (tests, other formats).
     */
    public static SimSummary run(SimOptions options, ProgressListener progress, SinkFactory sinks) throws IOException {
        long t0 = System.nanoTime();
        FleetPlan plan = FleetPlan.plan(options);
        Path out = options.outDir();
        Files.createDirectories(out);
        for (FleetPlan.Robot r : plan.robots()) {
            Files.createDirectories(out.resolve(r.robotId()));
        }
        String encoder = JpegEncoder.resolve(options.jpegEncoder()).name().toLowerCase(java.util.Locale.ROOT);
        int n = plan.episodes().size();
        GroundTruth.Episode[] results = new GroundTruth.Episode[n];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicLong messages = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicBoolean failed = new AtomicBoolean();
        Object progressLock = new Object();
        int threads = Math.min(options.threads(), n);
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "flywheel-sim");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                futures.add(pool.submit(() -> {
                    try (EpisodeGenerator gen = new EpisodeGenerator(options)) {
                        int i;
                        while (!failed.get() && (i = next.getAndIncrement()) < n) {
                            EpisodeSpec spec = plan.episodes().get(i);
                            Path target = out.resolve(spec.file());
                            GroundTruth.Episode ep;
                            try {
                                EpisodeSink sink = sinks.open(target, options);
                                boolean ok = false;
                                try {
                                    ep = gen.generate(spec, sink);
                                    sink.close();
                                    ok = true;
                                } finally {
                                    if (!ok && sink instanceof McapEpisodeSink m) {
                                        m.abort();
                                    }
                                }
                            } catch (IOException | RuntimeException e) {
                                failed.set(true);
                                throw new IOException("episode " + spec.episodeId() + " (" + target + "): " + e.getMessage(), e);
                            }
                            long size = Files.exists(target) ? Files.size(target) : 0;
                            results[i] = ep.withBytes(size);
                            messages.addAndGet(ep.messages());
                            bytes.addAndGet(size);
                            int d = done.incrementAndGet();
                            synchronized (progressLock) {
                                progress.onProgress(d, n, messages.get(), bytes.get(), System.nanoTime() - t0);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof IOException io) {
                        throw io;
                    }
                    throw new IOException("fleet simulation failed: " + c, c);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("fleet simulation interrupted", e);
                }
            }
        } finally {
            pool.shutdownNow();
        }

        Path gt = writeGroundTruth(options, plan, encoder, List.of(results));
        long frames = 0;
        long simNs = 0;
        for (GroundTruth.Episode e : results) {
            for (GroundTruth.Stream s : e.cameras().values()) {
                frames += s.count() - s.dropped().length;
            }
            simNs += e.durationNs();
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        return new SimSummary(out, gt, n, plan.robots().size(), messages.get(), frames, bytes.get(), simNs / 1e9,
                wall, frames / wall, simNs / 1e9 / wall, encoder, threads);
    }

    /**
     * Writes {@code <outDir>/ground_truth.json} atomically (a temporary file renamed over it).
     *
     * @param options the fleet's options (its folder is where the file goes)
     * @param plan the fleet's plan
     * @param encoder the JPEG encoder's name, "opencv" or "imageio"
     * @param episodes every episode's ground truth, in index order, with its file size
     * @return the file written
     * @throws IOException when it cannot be written
     */
    public static Path writeGroundTruth(SimOptions options, FleetPlan plan, String encoder,
            List<GroundTruth.Episode> episodes) throws IOException {
        Path out = options.outDir();
        Path gt = out.resolve(GROUND_TRUTH);
        Path tmp = out.resolve("." + GROUND_TRUTH + ".tmp");
        mapper().writeValue(tmp.toFile(), groundTruth(options, plan, encoder, episodes));
        try {
            Files.move(tmp, gt, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, gt, StandardCopyOption.REPLACE_EXISTING);
        }
        return gt;
    }

    static GroundTruth groundTruth(SimOptions o, FleetPlan plan, String encoder, List<GroundTruth.Episode> episodes) {
        int transparent = 0;
        int reflective = 0;
        int failures = 0;
        int glassFailures = 0;
        Map<Integer, List<String>> groups = new LinkedHashMap<>();
        for (EpisodeSpec s : plan.episodes()) {
            transparent += s.object().transparent() ? 1 : 0;
            reflective += s.object().reflective() && !s.object().transparent() ? 1 : 0;
            if (s.failed()) {
                failures++;
                glassFailures += s.object().equals(Catalog.GLASS_CUP) ? 1 : 0;
            }
            if (s.duplicateGroup() >= 0) {
                groups.computeIfAbsent(s.duplicateGroup(), g -> new ArrayList<>()).add(s.episodeId());
            }
        }
        List<GroundTruth.DuplicateGroup> dg = new ArrayList<>();
        groups.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> dg.add(new GroundTruth.DuplicateGroup(e.getKey(), List.copyOf(e.getValue()))));
        GroundTruth.Fleet fleet = new GroundTruth.Fleet(o.preset().name().toLowerCase(java.util.Locale.ROOT), o.seed(),
                o.episodes(), o.robots(), o.episodeSeconds(), o.width(), o.height(), o.jpegQuality(), encoder,
                1e9 / EpisodeGenerator.CAMERA_PERIOD_NS, 1e9 / EpisodeGenerator.JOINT_PERIOD_NS,
                1e9 / EpisodeGenerator.COMMAND_PERIOD_NS, o.messageDropRate(), o.frameDropRate(), o.duplicateRate(),
                o.hardObjects(), transparent, reflective, failures, glassFailures);
        return new GroundTruth("flywheel-sim-ground-truth", 1, fleet, plan.robots(), dg, episodes);
    }

    /** @return the JSON mapper for ground_truth.json (snake_case, indented) */
    public static ObjectMapper mapper() {
        return new ObjectMapper()
                .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .enable(SerializationFeature.INDENT_OUTPUT);
    }

    /**
     * @param file a ground_truth.json
     * @return its contents
     * @throws IOException when it cannot be read or is not a ground truth file
     */
    public static GroundTruth readGroundTruth(Path file) throws IOException {
        return mapper().readValue(file.toFile(), GroundTruth.class);
    }
}
