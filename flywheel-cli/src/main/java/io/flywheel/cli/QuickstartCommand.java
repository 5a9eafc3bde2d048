package io.flywheel.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.fleet.gateway.LocalGateway;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code flywheel quickstart}: the whole loop on real recordings plus a small simulated fleet with field
 * failures, into a local lake, each stage through the same command a user would type, timed. The simulated fleet
 * arrives as a live one: a gateway with an embedded MQTT broker runs in this process ({@link LocalGateway}) and
 * {@code flywheel sim --live} uploads into it, as fast as it can, with upload cuts and duplicated alerts injected
 * (no MQTT cuts: the embedded Moquette broker does not resume a session's in-flight messages after one), checked
 * against the lake at the end.
 */
@Command(name = "quickstart", mixinStandardHelpOptions = true,
        description = "Run the whole loop into a local lake: ingest real recordings, then a small simulated fleet with"
                + " field failures uploads live into a gateway in this process (gRPC, MQTT telemetry), label simulated live"
                + " episodes through Kafka (label precision and recall), align and check"
                + " quality, enrich (MAC model), deduplicate, mine the failures' neighbours, build train-v1 (uniform)"
                + " and train-v2 (uniform + mined) and diff them, warm a cache, read batches through the loader, export"
                + " LeRobot; ends with a one-screen summary.")
final class QuickstartCommand implements Callable<Integer> {
    @Option(names = "--lake", defaultValue = "lake", description = "lake folder (default ${DEFAULT-VALUE})")
    Path lake;

    @Option(names = "--data", paramLabel = "DIR", description = "folder with the real recordings (camera/bridge-mcap,"
            + " mcap-real/...); default: the examples/data bundled with Flywheel")
    Path data;

    @Option(names = "--work", defaultValue = "quickstart",
            description = "folder for the simulated fleet, cache, charts and export (default ${DEFAULT-VALUE})")
    Path work;

    @Option(names = "--model", defaultValue = "mobilenet_v2_mac",
            description = "embedding model for enrich (default ${DEFAULT-VALUE}: max-pooled features, which mine small"
                    + " object cues better; pulled once per user)")
    String model;

    private record Stage(String name, String[] args, int exit, double seconds) {}

    @Override
    public Integer call() throws Exception {
        Path dataDir = data != null ? data
                : Path.of(System.getProperty("flywheel.home", ".")).resolve("examples").resolve("data");
        List<String> real = new ArrayList<>();
        for (String rel : List.of("camera/bridge-mcap", "mcap-real/labelbox-franka", "mcap-real/ros2-rosbag2/multiple_files")) {
            Path p = dataDir.resolve(rel);
            if (Files.exists(p)) {
                real.add(p.toString());
            }
        }
        if (real.isEmpty()) {
            throw new io.flywheel.error.NotFoundException("no real recordings under " + dataDir.toAbsolutePath()
                    + " (expected camera/bridge-mcap, mcap-real/labelbox-franka, ...): give --data DIR");
        }
        Files.createDirectories(work);
        String l = lake.toString();
        String fleet = work.resolve("fleet").toString();
        List<Stage> stages = new ArrayList<>();
        List<String[]> plan = new ArrayList<>();
        plan.add(new String[] {"init", l, "--exist-ok"});
        List<String> ingest = new ArrayList<>(List.of("ingest", l));
        ingest.addAll(real);
        plan.add(ingest.toArray(new String[0]));
        // the fleet lives its day against a gateway in this process: GATEWAY and MQTT are its addresses
        plan.add(new String[] {"sim", "--live", "--gateway", GATEWAY, "--mqtt", MQTT, "--lake", l, "--speed", "max",
            "--faults", "cut=0.3,duplicate=0.2", "--preset", "tiny", "--episodes", "24", "--hard-objects", "4",
            "--glass-failures", "2", "--out", fleet, "--force"});
        // realtime labelling: simulated live episodes through a Kafka broker in this process, labelled into the lake's
        // label_history exactly once, scored against their ground truth (label precision and recall per class)
        plan.add(new String[] {"stream", "run", l, "--episodes", "20", "--seed", "19", "--engine", "consumer",
            "--broker-log", work.resolve("kafka-broker.log").toString()});
        plan.add(new String[] {"qc", "report", l, "--status", "fail"});
        plan.add(new String[] {"enrich", l, "--model", model, "--stride", "keyframes"});
        plan.add(new String[] {"dedup", l, "--episode-threshold", "0.0005"});
        // the failures' neighbours by what the wrist cameras see while reaching for and grasping the object,
        // PCA-whitened so that the scene does not dominate, the failures searched as one joint query so that what
        // they share (the object) decides (see BENCHMARKS.md, mining quality)
        String wrists = io.flywheel.sim.EpisodeGenerator.cameraTopic("left_wrist_camera") + ","
                + io.flywheel.sim.EpisodeGenerator.cameraTopic("right_wrist_camera");
        plan.add(new String[] {"mine", l, "--failures", "-k", "8", "--cameras", wrists, "--phases", "approach,grasp",
            "--whiten", "--joint", "--out", work.resolve("mined.json").toString()});
        String v1 = "train-v1";
        String v2 = "train-v2";
        plan.add(new String[] {"trainset", "build", l, "--tag", v1, "--ratio", "0.3", "--seed", "1"});
        plan.add(new String[] {"trainset", "build", l, "--tag", v2, "--ratio", "0.3", "--seed", "1", "--mined",
                work.resolve("mined.json").toString()});
        plan.add(new String[] {"trainset", "diff", l, v1, v2, "--chart", work.resolve("trainset-diff.png").toString()});
        plan.add(new String[] {"map", l, "--out", work.resolve("embedding-map.png").toString(), "--trainset", v2});
        plan.add(new String[] {"warm", l, v2, "--cache", work.resolve("cache").toString()});
        plan.add(new String[] {"load", l, v2, "--cache", work.resolve("cache").toString(), "--batches", "10"});
        plan.add(new String[] {"export", "lerobot", l, v2, work.resolve("lerobot-" + v2).toString(), "--fps", "10", "--resample",
                "--force"});
        for (String[] args : plan) {
            System.out.println();
            System.out.println("== flywheel " + String.join(" ", args));
            System.out.flush();
            if (args[0].equals("trainset") && args[1].equals("build") && exists(args[4])) {
                System.out.println("training set '" + args[4] + "' is already in " + lake + ": kept (tags are immutable)");
                stages.add(new Stage("trainset build", args, 0, 0));
                continue;
            }
            if (args[0].equals("sim") && Files.exists(work.resolve("fleet").resolve("ground_truth.json"))) {
                System.out.println("the simulated fleet is already in " + work.resolve("fleet") + ": kept (same seed, same"
                        + " episodes; ingest skips files it has)");
                stages.add(new Stage("sim", args, 0, 0));
                continue;
            }
            long t0 = System.nanoTime();
            int exit = args[0].equals("sim") ? live(args) : Main.commandLine().execute(args);
            double secs = (System.nanoTime() - t0) / 1e9;
            stages.add(new Stage(args[0] + (args[0].equals("trainset") || args[0].equals("qc") || args[0].equals("export")
                    || args[0].equals("stream")
                    ? " " + args[1] : ""), args, exit, secs));
            if (exit != 0) {
                summary(stages, v1, v2);
                System.err.println("quickstart: stage `flywheel " + String.join(" ", args) + "` failed (exit " + exit
                        + "); the lake keeps what the earlier stages committed");
                return exit;
            }
        }
        summary(stages, v1, v2);
        return 0;
    }

    /** Placeholders of the live fleet's stage for the in-process gateway's addresses. */
    private static final String GATEWAY = "<gateway>";
    private static final String MQTT = "<mqtt>";

    /** Runs {@code sim --live} against a gateway with an embedded broker started for it on the lake. */
    private int live(String[] args) {
        try (io.flywheel.lake.Lake l = io.flywheel.lake.Lake.open(lake.toString());
                LocalGateway gw = LocalGateway.start(l, "flywheel-quickstart",
                        line -> System.err.println("quickstart: gateway: " + line))) {
            String[] a = args.clone();
            for (int i = 0; i < a.length; i++) {
                a[i] = a[i].equals(GATEWAY) ? gw.target() : a[i].equals(MQTT) ? gw.mqttUrl() : a[i];
            }
            System.out.println("(gateway " + gw.target() + " and MQTT broker " + gw.mqttUrl() + " in this process)");
            return Main.commandLine().execute(a);
        }
    }

    private boolean exists(String tag) {
        try (io.flywheel.lake.Lake l = io.flywheel.lake.Lake.open(lake.toString())) {
            return io.flywheel.curate.trainset.Trainsets.find(l, tag).isPresent();
        }
    }

    private void summary(List<Stage> stages, String v1, String v2) {
        System.out.println();
        System.out.println("== quickstart summary");
        double total = 0;
        Map<String, Double> by = new LinkedHashMap<>();
        for (Stage s : stages) {
            by.merge(s.name(), s.seconds(), Double::sum);
            total += s.seconds();
        }
        by.forEach((k, v) -> System.out.printf(Locale.ROOT, "  %-18s %7.1f s%n", k, v));
        System.out.printf(Locale.ROOT, "  %-18s %7.1f s%n", "total", total);
        System.out.println("lake: " + lake.toAbsolutePath() + "   training sets: " + v1 + " (uniform), " + v2
                + " (uniform + mined)");
        System.out.println("pictures: " + work.resolve("trainset-diff.png").toAbsolutePath() + ", "
                + work.resolve("embedding-map.png").toAbsolutePath());
        System.out.println("look at it all: ./flywheel serve " + lake + "   (then open http://127.0.0.1:8080/)");
    }
}
