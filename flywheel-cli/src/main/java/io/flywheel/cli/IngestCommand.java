package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.StreamPolicy;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.lake.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel ingest LAKE INPUT...}: recordings into the lake, aligned and quality-checked. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
        description = "Read MCAP files, split rosbag2 recordings, ROS 1 bags and RLDS TFRecords; align every stream to"
                + " the master clock; run the quality rules; commit raw_files, episodes and frames once each."
                + " Files already in the lake (same SHA-256) are skipped.")
final class IngestCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "LAKE", description = "lake folder or s3:// URI")
    String lake;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "INPUT", description = "files or folders")
    List<Path> inputs;

    @Option(names = "--profile", paramLabel = "YAML", description = "robot profile: topic roles, master camera,"
            + " clock offsets, joint limits, nominal rates (default: roles detected from message types)")
    Path profile;

    @Option(names = "--robot", paramLabel = "ID", description = "robot id for recordings that do not name one")
    String robot;

    @Option(names = "--master-rate", paramLabel = "HZ", description = "use a fixed-rate master clock (e.g. the"
            + " policy's control rate) instead of the master camera")
    Double masterRate;

    @Option(names = "--policy", paramLabel = "TOPIC=METHOD[:TOLERANCE_MS]", description = "alignment policy of one"
            + " stream: nearest, asof or interpolate, e.g. /joint_states=asof:20 (repeatable)")
    List<String> policies;

    @Option(names = "--rules", paramLabel = "YAML", description = "quality rules (default: the built-in set)")
    Path rules;

    @Option(names = "--json", description = "machine-readable summary")
    boolean json;

    @Override
    public Integer call() throws Exception {
        IngestOptions.Builder ob = IngestOptions.builder();
        if (profile != null) {
            ob.profile(RobotProfile.load(profile));
        }
        if (robot != null) {
            ob.robotId(robot);
        }
        IngestJob.AlignConfig align = IngestJob.AlignConfig.defaults().withMasterRate(masterRate);
        for (String p : policies == null ? List.<String>of() : policies) {
            align = withPolicy(align, p);
        }
        RuleSet ruleSet = rules == null ? RuleSet.defaults() : RuleSet.load(rules);
        long t0 = System.nanoTime();
        PrintStream err = System.err;
        IngestJob.Result r;
        try (Lake l = Lake.open(lake)) {
            r = IngestJob.run(l, inputs, ob.build(), align, ruleSet, json ? line -> { } : err::println);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (json) {
            Json.print(System.out, r);
        } else {
            for (IngestJob.RecordingResult rr : r.recordings()) {
                if (!rr.profile().isEmpty() && profile == null && !rr.skipped()) {
                    System.out.println("roles guessed for " + String.join(", ", rr.files()) + ":\n" + indent(rr.profile()));
                }
                for (String issue : rr.timestampIssues()) {
                    System.out.println("timestamps: " + issue);
                }
            }
            System.out.printf(Locale.ROOT, "ingested %d recording(s): %d episode(s), %d frame(s); %d skipped as already"
                            + " in the lake; %.1f s%n", r.recordings().size() - r.skipped(), r.episodes(), r.frames(),
                    r.skipped(), secs);
        }
        return 0;
    }

    private static String indent(String s) {
        return "  " + s.strip().replace("\n", "\n  ");
    }

    static IngestJob.AlignConfig withPolicy(IngestJob.AlignConfig align, String spec) {
        int eq = spec.lastIndexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("--policy '" + spec + "': expected TOPIC=METHOD[:TOLERANCE_MS]");
        }
        String topic = spec.substring(0, eq);
        String[] m = spec.substring(eq + 1).split(":");
        AlignMethod method = AlignMethod.parse(m[0]);
        long tol = 50_000_000L;
        if (m.length > 1) {
            try {
                tol = Math.round(Double.parseDouble(m[1]) * 1e6);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--policy '" + spec + "': tolerance '" + m[1] + "' is not a number of ms");
            }
        }
        return align.withPolicy(topic, StreamPolicy.of(method, tol));
    }
}
