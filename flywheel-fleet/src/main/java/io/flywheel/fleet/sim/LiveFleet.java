package io.flywheel.fleet.sim;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.flywheel.error.BadInputException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.sim.EpisodeSpec;
import io.flywheel.sim.FleetPlan;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;
import io.flywheel.sim.JpegEncoder;

/**
 * A simulated robot fleet living its day against a fleet gateway: each robot of the fleet plan ({@link FleetPlan}) is
 * two threads ({@link SimRobot}), one recording its episodes with the fleet simulator on the robot's clock (paced to
 * {@link LiveFleetOptions#speed()}) and publishing telemetry, alerts and audit records over MQTT as it goes, one
 * uploading each recording with {@link io.flywheel.fleet.client.FleetClient} the moment it is finished; with faults
 * injected ({@link Faults}). The recordings are byte for byte those {@code flywheel sim} writes for the same options
 * (same files, same SHA-256), in the same folder layout with the same {@code ground_truth.json}.
 *
 * <p>Robot side only: it needs the gateway's address and one token per robot, never the lake ({@link LiveCheck}
 * checks a run against the lake afterwards).
 */
public final class LiveFleet {
    /**
     * The stream's ground truth, beside {@code ground_truth.json} when the robots publish the fleet stream: a JSON
     * object whose {@code episodes} hold per episode robot_id, episode_id (the stream's and the recording's name of
     * it), stream_outcome and rule (what the default labelling rules must give), e_stop, interventions, empty_grasp
     * and success_signal (what happened); what {@code flywheel stream report --truth} reads.
     */
    public static final String STREAM_TRUTH = "stream_truth.json";

    private LiveFleet() {}

    /**
     * Runs the fleet until every robot has recorded, uploaded and (if asked) seen ingested all its episodes.
     *
     * @param o what to run
     * @param progress told where the run stands about twice a second
     * @return the report; failures (refused uploads, ingest failures, unacknowledged messages) are in it, not thrown
     * @throws BadInputException when a robot of the fleet has no token
     * @throws StorageUnavailableException when the gateway or the broker cannot be reached, or the gateway refuses a
     *     robot's token
     * @throws IOException when a recording cannot be written
     */
    public static LiveFleetReport run(LiveFleetOptions o, LiveProgress.Listener progress)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        FleetPlan plan = FleetPlan.plan(o.fleet());
        List<String> missing = plan.robots().stream().map(FleetPlan.Robot::robotId)
                .filter(r -> !o.tokens().containsKey(r)).toList();
        if (!missing.isEmpty()) {
            throw new BadInputException("no gateway token for robot(s) " + String.join(", ", missing)
                    + " (the fleet's robots are robot_01.." + plan.robots().get(plan.robots().size() - 1).robotId()
                    + ")");
        }
        java.nio.file.Files.createDirectories(o.fleet().outDir());
        Map<String, List<EpisodeSpec>> byRobot = new TreeMap<>();
        for (EpisodeSpec s : plan.episodes()) {
            byRobot.computeIfAbsent(s.robotId(), k -> new ArrayList<>()).add(s);
        }
        SimRobot.Counters counters = new SimRobot.Counters();
        List<SimRobot> robots = new ArrayList<>();
        try {
            int index = 0;
            for (FleetPlan.Robot r : plan.robots()) {
                java.nio.file.Files.createDirectories(o.fleet().outDir().resolve(r.robotId()));
                RobotMqtt mqtt = o.mqtt() == null ? null
                        : RobotMqtt.connect(r.robotId(), o.mqtt(), o.faults().reconnect() > 0);
                robots.add(new SimRobot(o, r.robotId(), byRobot.get(r.robotId()), robotSeed(o.fleet().seed(), index++),
                        counters, mqtt));
            }
            for (SimRobot r : robots) {
                String refused = r.probe(Duration.ofSeconds(8));
                if (refused != null) {
                    throw new StorageUnavailableException("the gateway at " + o.gateway() + " does not take robot "
                            + r.robotId() + ": " + refused);
                }
            }
            return runRobots(o, plan, robots, counters, progress, t0);
        } finally {
            for (SimRobot r : robots) {
                r.close();
            }
        }
    }

    private static LiveFleetReport runRobots(LiveFleetOptions o, FleetPlan plan, List<SimRobot> robots,
            SimRobot.Counters counters, LiveProgress.Listener progress, long t0)
            throws IOException, InterruptedException {
        int total = plan.episodes().size();
        ExecutorService pool = Executors.newFixedThreadPool(2 * robots.size(), r -> {
            Thread t = new Thread(r, "flywheel-sim-live");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flywheel-sim-live-progress");
            t.setDaemon(true);
            return t;
        });
        Runnable tick = () -> progress.onProgress(new LiveProgress((int) counters.recorded.get(),
                (int) counters.uploaded.get(), total, counters.bytesUploaded.get(), counters.published.get(),
                counters.uploadCuts.get(), counters.mqttCuts.get(), System.nanoTime() - t0));
        ticker.scheduleAtFixedRate(tick, 500, 500, TimeUnit.MILLISECONDS);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (SimRobot r : robots) {
                futures.add(pool.submit(() -> {
                    r.record();
                    return null;
                }));
                futures.add(pool.submit(() -> {
                    r.upload();
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    pool.shutdownNow();
                    Throwable c = e.getCause();
                    if (c instanceof IOException io) {
                        throw io;
                    }
                    if (c instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new IOException("the live fleet failed: " + c, c);
                }
            }
        } finally {
            ticker.shutdownNow();
            ticker.awaitTermination(5, TimeUnit.SECONDS);
            pool.shutdownNow();
        }
        tick.run();
        return report(o, plan, robots, t0);
    }

    private static LiveFleetReport report(LiveFleetOptions o, FleetPlan plan, List<SimRobot> robots, long t0)
            throws IOException {
        GroundTruth.Episode[] truth = new GroundTruth.Episode[plan.episodes().size()];
        List<LiveFleetReport.Episode> episodes = new ArrayList<>();
        List<LiveFleetReport.Message> messages = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        long[] published = new long[3];
        long uploaded = 0, already = 0, ingested = 0, ingestFailed = 0, bytes = 0, bytesSent = 0, cuts = 0,
                resumed = 0, dups = 0, mqttCuts = 0, reconnects = 0, inFlight = 0, unacked = 0, recordWall = 0,
                day = 0;
        double recordedNs = 0;
        for (SimRobot r : robots) {
            r.truth.forEach((i, e) -> truth[i] = e);
            recordedNs += r.truth.values().stream().mapToLong(GroundTruth.Episode::durationNs).sum();
            for (LiveFleetReport.Episode e : r.outcomes) {
                episodes.add(e);
                bytes += e.bytes();
                ingested += e.state().equals("INGESTED") ? 1 : 0;
                ingestFailed += e.state().equals("INGEST_FAILED") ? 1 : 0;
            }
            messages.addAll(r.messages);
            failures.addAll(r.failures);
            long[] p = r.published();
            for (int q = 0; q < 3; q++) {
                published[q] += p[q];
            }
            already += r.alreadyInLake;
            uploaded += r.outcomes.stream().filter(e -> !e.state().equals("REFUSED")).count() - r.alreadyInLake;
            bytesSent += r.bytesSent;
            cuts += r.uploadCuts();
            resumed += r.uploadsResumed;
            dups += r.duplicatesInjected();
            mqttCuts += r.mqttCuts();
            reconnects += r.reconnects();
            inFlight += r.inFlightAtCuts();
            unacked += r.unacknowledged;
            recordWall = Math.max(recordWall, r.recordWallNanos);
            day = Math.max(day, r.dayNanos());
        }
        episodes.sort(Comparator.comparing(LiveFleetReport.Episode::episodeId));
        String encoder = JpegEncoder.resolve(o.fleet().jpegEncoder()).name().toLowerCase(Locale.ROOT);
        java.nio.file.Path gt = FleetSimulator.writeGroundTruth(o.fleet(), plan, encoder, List.of(truth));
        if (o.streamEvents()) {
            writeStreamTruth(gt.resolveSibling(STREAM_TRUTH), robots);
        }
        return new LiveFleetReport(robots.size(), plan.episodes().size(), uploaded, already, ingested, ingestFailed,
                bytes, bytesSent, cuts, resumed, published, dups, mqttCuts, reconnects, inFlight, unacked,
                recordedNs / 1e9, day / 1e9, recordWall / 1e9, (System.nanoTime() - t0) / 1e9, List.copyOf(episodes),
                List.copyOf(messages), List.copyOf(failures), gt);
    }

    private static void writeStreamTruth(java.nio.file.Path file, List<SimRobot> robots) throws IOException {
        java.util.SortedMap<Integer, SimRobot.StreamTruth> all = new TreeMap<>();
        robots.forEach(r -> all.putAll(r.streamTruth));
        List<Map<String, Object>> eps = new ArrayList<>();
        for (SimRobot.StreamTruth t : all.values()) {
            Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("robot_id", t.robotId());
            m.put("episode_id", t.episodeId());
            m.put("stream_outcome", t.streamOutcome());
            m.put("rule", t.rule());
            m.put("e_stop", t.eStop());
            m.put("interventions", t.interventions());
            m.put("empty_grasp", t.emptyGrasp());
            m.put("success_signal", t.successSignal());
            eps.add(m);
        }
        java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        new com.fasterxml.jackson.databind.ObjectMapper().writerWithDefaultPrettyPrinter()
                .writeValue(tmp.toFile(), Map.of("episodes", eps));
        java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** @return robot {@code index}'s seed for telemetry and faults: the fleet seed mixed with a salt of our own */
    static long robotSeed(long fleetSeed, int index) {
        return FleetPlan.mix(fleetSeed, 17, index);
    }
}
