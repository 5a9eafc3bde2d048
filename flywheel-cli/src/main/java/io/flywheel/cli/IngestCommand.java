package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.MissPolicy;
import io.flywheel.align.StreamPolicy;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel ingest LAKE INPUT...}: recordings into the lake, aligned and quality-checked. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
        description = "Read MCAP files, split rosbag2 recordings, ROS 1 bags and RLDS TFRecords; align every stream to"
                + " the master clock; run the quality rules; commit each recording's raw_files, episodes and frames rows in one lake"
                + " transaction."
                + " Files already in the lake (same SHA-256) are skipped. A recording that cannot be read is named"
                + " and skipped, the others are committed, and the exit code is 1; in a folder, so is a file named"
                + " *.mcap, *.bag, *.db3 or *.tfrecord* that is empty or not a recording (other files are passed"
                + " over).")
final class IngestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    LakeLocation lake;

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

    @Option(names = "--allow-missing-master", description = "ingest an episode that lacks the profile's master"
            + " topic on a fixed 10 Hz clock (default: the recording fails, naming the episode)")
    boolean allowMissingMaster;

    @Option(names = "--policy", paramLabel = "TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]", description = "alignment"
            + " policy of one stream: nearest, asof or interpolate, tolerance in ms (default 50), and what a frame"
            + " without a message within tolerance gets (default: --on-miss), e.g. /joint_states=asof:20:drop"
            + " (repeatable; replaces the profile's align entry for that topic)")
    List<String> policies;

    @Option(names = "--on-miss", paramLabel = "flag|drop", description = "when a stream has no message within"
            + " tolerance: flag keeps the frame with a null value and the flag unmatched:<topic>; drop leaves the"
            + " frame out. For every stream without its own setting (profile align entry or --policy)"
            + " (default: flag)")
    String onMiss;

    @Option(names = "--timeline", paramLabel = "auto|stamps|log_time", description = "which times order and time"
            + " each stream's messages: header stamps, log times, or auto: log times for a stream whose stamps go"
            + " backwards, stamps otherwise (default: auto; a profile's timelines entry sets one topic's)")
    String timeline;

    @Option(names = "--rules", paramLabel = "YAML", description = "quality rules (default: the built-in set)")
    Path rules;

    @Mixin
    JsonOutput jsonOutput;

    @Override
    public Integer call() throws Exception {
        MissPolicy miss = onMiss == null ? null : Usage.check(spec, null, () -> parseMiss("--on-miss", onMiss));
        if (masterRate != null) { // checked per recording by the stage; a wrong value is a usage error here, up front
            Usage.check(spec, "--master-rate", () -> io.flywheel.align.MasterClock.fixedRate(masterRate));
        }
        IngestJob.AlignConfig align = IngestJob.AlignConfig.defaults().withMasterRate(masterRate).withOnMiss(miss);
        for (String p : policies == null ? List.<String>of() : policies) {
            IngestJob.AlignConfig before = align;
            align = Usage.check(spec, null, () -> withPolicy(before, p));
        }
        boolean json = jsonOutput.enabled();
        IngestOptions.Builder ob = IngestOptions.builder();
        if (profile != null) {
            ob.profile(RobotProfile.load(profile));
        }
        if (robot != null) {
            ob.robotId(robot);
        }
        if (timeline != null) {
            io.flywheel.align.StreamTimeline tl = Usage.check(spec, "--timeline",
                    () -> io.flywheel.align.StreamTimeline.parse(timeline));
            ob.timestampRule(io.flywheel.align.TimestampRule.builder().timeline(tl).build());
        }
        ob.allowMissingMaster(allowMissingMaster || masterRate != null); // a fixed-rate clock needs no master
        RuleSet ruleSet = rules == null ? RuleSet.defaults() : RuleSet.load(rules);
        long t0 = System.nanoTime();
        PrintStream err = System.err;
        IngestJob.Result r;
        try (Lake l = lake.open()) {
            r = IngestJob.run(l, inputs, ob.build(), align, ruleSet, json ? line -> { } : err::println);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        for (IngestJob.Failure f : r.failed()) {
            err.println("flywheel ingest: " + failureLine(f));
        }
        boolean alignOptions = !(policies == null || policies.isEmpty()) || onMiss != null || masterRate != null
                || profile != null || timeline != null;
        if (r.skipped() > 0 && alignOptions) {
            err.println("flywheel ingest: note: " + r.skipped() + " recording(s) were already in the lake and kept as they"
                    + " were aligned then; alignment options apply when a recording is first ingested (to re-align,"
                    + " ingest into a new lake: the raw files are unchanged)");
        }
        if (json) {
            // "ok" first, as every command's JSON says whether it succeeded; then the run's result
            com.fasterxml.jackson.databind.node.ObjectNode doc = Json.MAPPER.createObjectNode();
            doc.put("ok", r.failed().isEmpty());
            doc.setAll((com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.valueToTree(r));
            Json.print(System.out, doc);
        } else {
            PrintStream out = System.out;
            for (String block : roleBlocks(r.recordings())) {
                out.print(block);
            }
            for (String line : timestampLines(r.recordings())) {
                out.println(line);
            }
            for (String line : vectorLines(r.recordings())) {
                out.println(line);
            }
            String grip = gripperLine(r.recordings());
            if (!grip.isEmpty()) {
                out.println(grip);
            }
            if (!r.videosNotTaken().isEmpty()) {
                out.println(r.videosNotTaken().size() + " video(s) not taken (no recording NAME of theirs: sidecars are"
                        + " NAME.<camera>.mp4 or NAME/<camera>.mp4): " + String.join(", ", r.videosNotTaken()));
            }
            out.printf(Locale.ROOT, "ingested %d recording(s): %d episode(s), %d frame(s); %d skipped as already"
                            + " in the lake; %d failed; %.1f s%n", r.recordings().size() - r.skipped(), r.episodes(),
                    r.frames(), r.skipped(), r.failed().size(), secs);
        }
        return r.failed().isEmpty() ? 0 : 1;
    }

    /** @return the failure's message, with a pointer to {@code flywheel mcap recover} for a broken MCAP file */
    static String failureLine(IngestJob.Failure f) {
        return f.message() + (f.damagedMcap()
                ? " (flywheel mcap recover can salvage its readable messages)" : "");
    }

    /**
     * @return one block per distinct set of guessed roles: which recordings it applies to (how many, and their
     *     file names, at most 3), the master and every topic with its role and reason
     */
    static List<String> roleBlocks(List<IngestJob.RecordingResult> recordings) {
        Map<IngestJob.ProfileSummary, List<String>> byGuess = new LinkedHashMap<>();
        for (IngestJob.RecordingResult rr : recordings) {
            if (!rr.skipped() && rr.profile() != null && !rr.profile().topics().isEmpty()) {
                byGuess.computeIfAbsent(rr.profile(), k -> new ArrayList<>()).add(fileNames(rr.files()));
            }
        }
        List<String> out = new ArrayList<>();
        for (Map.Entry<IngestJob.ProfileSummary, List<String>> e : byGuess.entrySet()) {
            List<String> names = e.getValue();
            IngestJob.ProfileSummary p = e.getKey();
            StringBuilder sb = new StringBuilder(p.guessed() ? "roles guessed for " : "roles (profile " + p.source()
                    + ") for ").append(names.size()).append(" recording(s) (")
                    .append(String.join(", ", names.subList(0, Math.min(3, names.size()))))
                    .append(names.size() > 3 ? ", ... " + (names.size() - 3) + " more" : "").append("):\n");
            sb.append("  master: ").append(p.master().isEmpty() ? "(none)" : p.master()).append('\n');
            int w = p.topics().keySet().stream().mapToInt(String::length).max().orElse(0);
            int rw = p.topics().values().stream().mapToInt(t -> t.role().length()).max().orElse(0);
            p.topics().forEach((topic, tr) -> {
                sb.append("  ").append(topic).append(" ".repeat(w - topic.length())).append("  ").append(tr.role());
                if (!tr.reason().isEmpty()) {
                    sb.append(" ".repeat(rw - tr.role().length())).append("  (").append(tr.reason()).append(')');
                }
                sb.append('\n');
            });
            out.add(sb.toString());
        }
        return out;
    }

    private static String fileNames(List<String> uris) {
        List<String> names = new ArrayList<>();
        for (String u : uris) {
            String path = u.startsWith("file:") ? java.net.URI.create(u).getPath() : u;
            names.add(path.substring(path.lastIndexOf('/') + 1));
        }
        return names.size() == 1 ? names.get(0) : names.get(0) + " +" + (names.size() - 1);
    }

    /**
     * @return "" when no episode took its gripper value from a state joint, else one line with each joint used
     *     ({@code topic:joint}) and its episode count, e.g.
     *     {@code "gripper: no gripper topic; state joint /joint_states:left_gripper in 4 episode(s), ..."}
     */
    /**
     * @return one line per state / action vector made of several topics, with the recordings that have it:
     *     {@code state vector: /left_follow (7) + /right_follow (7) = 14 values, 3 recording(s)}
     */
    static List<String> vectorLines(List<IngestJob.RecordingResult> recordings) {
        Map<String, Integer> count = new java.util.LinkedHashMap<>();
        for (IngestJob.RecordingResult rr : recordings) {
            rr.vectors().forEach((role, topics) -> {
                if (topics.size() > 1) {
                    StringBuilder b = new StringBuilder(role).append(" vector: ");
                    int sum = 0;
                    String sep = "";
                    for (Map.Entry<String, Integer> e : topics.entrySet()) {
                        b.append(sep).append(e.getKey()).append(" (").append(e.getValue()).append(')');
                        sum += e.getValue();
                        sep = " + ";
                    }
                    count.merge(b.append(" = ").append(sum).append(" values").toString(), 1, Integer::sum);
                }
            });
        }
        List<String> out = new ArrayList<>();
        count.forEach((line, n) -> out.add(line + ", " + n + " recording(s)"));
        return out;
    }

    static String gripperLine(List<IngestJob.RecordingResult> recordings) {
        Map<String, Integer> byJoint = new TreeMap<>();
        for (IngestJob.RecordingResult rr : recordings) {
            rr.gripperJoints().values().forEach(j -> byJoint.merge(j, 1, Integer::sum));
        }
        if (byJoint.isEmpty()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        byJoint.forEach((j, n) -> parts.add(j + " in " + n + " episode(s)"));
        return "gripper: no gripper topic; state joint " + String.join(", ", parts)
                + " (largest range of motion; episode metadata gripper_joint)";
    }

    /**
     * @return one line per topic with timestamp findings: each kind of finding with the number of episodes it
     *     occurs in, e.g. {@code "timestamps: /tf: log time 0 in 2 episode(s), no usable time in 2 episode(s)"}
     */
    static List<String> timestampLines(List<IngestJob.RecordingResult> recordings) {
        Map<String, Map<String, Integer>> byTopic = new TreeMap<>();
        for (IngestJob.RecordingResult rr : recordings) {
            for (IngestJob.TimestampIssue i : rr.timestampIssues()) {
                Map<String, Integer> kinds = byTopic.computeIfAbsent(i.topic(), k -> new LinkedHashMap<>());
                for (String f : i.findings()) {
                    kinds.merge(f, 1, Integer::sum);
                }
            }
        }
        List<String> out = new ArrayList<>();
        byTopic.forEach((topic, kinds) -> {
            List<String> parts = new ArrayList<>();
            kinds.forEach((k, n) -> parts.add(k + " in " + n + " episode(s)"));
            out.add("timestamps: " + topic + ": " + String.join(", ", parts));
        });
        if (!out.isEmpty()) {
            out.add("  (per-episode counts and positions: --json, timestamp_issues)");
        }
        return out;
    }

    /**
     * @param align settings so far (its {@code onMiss} is the default of a spec without one)
     * @param spec {@code TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]}
     * @return {@code align} with the topic's policy
     * @throws IllegalArgumentException naming the spec when a part is malformed (a usage error for the command)
     */
    static IngestJob.AlignConfig withPolicy(IngestJob.AlignConfig align, String spec) {
        return align.withPolicySpec(spec);
    }

    private static MissPolicy parseMiss(String where, String value) {
        try {
            return MissPolicy.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }
}
