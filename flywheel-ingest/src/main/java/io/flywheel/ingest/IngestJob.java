package io.flywheel.ingest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.align.AlignMethod;
import io.flywheel.align.AlignOptions;
import io.flywheel.align.Aligner;
import io.flywheel.align.Alignment;
import io.flywheel.align.MasterClock;
import io.flywheel.align.MissPolicy;
import io.flywheel.align.ResidualStats;
import io.flywheel.align.StreamAlignment;
import io.flywheel.align.StreamPolicy;
import io.flywheel.align.TopicStream;
import io.flywheel.quality.EpisodeMetrics;
import io.flywheel.quality.JointLimits;
import io.flywheel.quality.QualityReport;
import io.flywheel.quality.RuleSet;
import io.flywheel.quality.StreamMetrics;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;
import io.flywheel.rows.StreamMatch;

/**
 * {@code flywheel ingest}: recordings become rows of {@code raw_files}, {@code episodes} and
 * {@code frames}, committed one recording per transaction through a {@link RowSink} (the lake).
 *
 * <p>Per episode: every stream is aligned to the master clock (the profile's master camera, else the
 * camera with the lowest channel id, else the state stream; or a fixed rate) with a per-stream
 * policy; one frame row per master tick carries the state, action and gripper values, one raw-file
 * image locator per camera, and each stream's residual. Defaults, by role: cameras {@code nearest}
 * within 20 ms, state and gripper {@code asof} within 50 ms (no future leak), action
 * {@code nearest} within 50 ms; per-device clock offsets from the profile are applied first. A stream
 * with no message within tolerance leaves the frame's value null and flags the frame
 * {@code unmatched:<topic>}, or, when its miss policy is {@link MissPolicy#DROP_FRAME}, drops the
 * frame (counted in the episode metadata's {@code dropped_frames}). A stream's policy is, from weakest
 * to strongest: the role default, the run's miss policy ({@link AlignConfig#onMiss()}), the robot
 * profile's {@code align} entry for the topic, and a per-topic policy of the run
 * ({@link AlignConfig#policies()}), which replaces the others. For {@code interpolate}, state, action
 * and gripper values are the linear interpolation of the two neighbours (never across a gap larger than
 * the tolerance: null and flagged there). The quality rules run on the episode's metrics; failing
 * episodes are stored, flagged.
 *
 * <p>An episode without a gripper topic takes its frames' gripper value from a state joint when it has one
 * ({@link GripperJoint#select}: the profile's {@code gripper_joints}, else joints named {@code *gripper*} or
 * {@code *finger*}, the one with the largest range of motion): the joint's position in the frame's aligned message
 * of that state stream (interpolated with it). The joint used is recorded in the episode metadata as
 * {@code gripper_joint} ({@code {"topic", "joint", "range_of_motion", "candidates", "source", "unit"}}: source
 * {@code profile}, {@code name}, {@code metadata} or {@code urdf}; unit {@code m}, {@code rad} or "" from the URDF) and in
 * {@link RecordingResult#gripperJoints()}.
 *
 * <p>Frames a robot skipped on purpose (a live stream's frame filter, recorded in the frame-skip channel:
 * {@link FrameSkips}) get no frame row; they count as received in their camera's quality metrics, are counted per
 * topic in the episode metadata's {@code skipped_frames}, and a frame row without an image of a camera because that
 * camera's frame there was skipped is flagged {@code skipped:<topic>} rather than {@code unmatched:<topic>}.
 *
 * <p>Idempotent by content: a recording whose files' SHA-256s are all in {@code raw_files} is
 * skipped, and so is one that a concurrent writer commits first. Episode ids are derived from the content hash,
 * so a re-run writes the same keys. The stage knows no storage: the same code runs in a Spark task with another
 * sink.
 */
public final class IngestJob {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Alignment settings for one run.
     *
     * @param masterRateHz fixed master clock rate in Hz, or null for the master camera
     * @param policies per-topic policies that replace every other setting for the topic
     * @param byRole default policy per role
     * @param onMiss the run's miss policy for every stream without its own (profile {@code align} entry or
     *     {@code policies}); null keeps the role defaults' ({@link MissPolicy#FLAG})
     */
    public record AlignConfig(Double masterRateHz, Map<String, StreamPolicy> policies, Map<StreamRole, StreamPolicy> byRole,
                              MissPolicy onMiss) {
        /** Settings without a run-wide miss policy. */
        public AlignConfig(Double masterRateHz, Map<String, StreamPolicy> policies, Map<StreamRole, StreamPolicy> byRole) {
            this(masterRateHz, policies, byRole, null);
        }

        /** The defaults stated in the class Javadoc. */
        public static AlignConfig defaults() {
            Map<StreamRole, StreamPolicy> r = new LinkedHashMap<>();
            r.put(StreamRole.CAMERA, StreamPolicy.of(AlignMethod.NEAREST, 20_000_000L));
            r.put(StreamRole.STATE, StreamPolicy.of(AlignMethod.ASOF, 50_000_000L));
            r.put(StreamRole.GRIPPER, StreamPolicy.of(AlignMethod.ASOF, 50_000_000L));
            r.put(StreamRole.ACTION, StreamPolicy.of(AlignMethod.NEAREST, 50_000_000L));
            return new AlignConfig(null, Map.of(), r);
        }

        /** @return the same settings with {@code policy} for {@code topic} */
        public AlignConfig withPolicy(String topic, StreamPolicy policy) {
            Map<String, StreamPolicy> p = new LinkedHashMap<>(policies);
            p.put(topic, policy);
            return new AlignConfig(masterRateHz, p, byRole, onMiss);
        }

        /**
         * The settings with one stream's policy given as {@code flywheel ingest --policy} takes it.
         *
         * @param spec {@code TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]}: nearest, asof or interpolate; tolerance in ms
         *     (default 50); the miss policy (default: this config's {@code onMiss}, else flag)
         * @return the same settings with the topic's policy
         * @throws IllegalArgumentException naming the spec when a part is malformed
         */
        public AlignConfig withPolicySpec(String spec) {
            int eq = spec.lastIndexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--policy '" + spec + "': expected TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]");
            }
            String topic = spec.substring(0, eq);
            String[] m = spec.substring(eq + 1).split(":", -1);
            if (m.length > 3) {
                throw new IllegalArgumentException("--policy '" + spec + "': expected TOPIC=METHOD[:TOLERANCE_MS[:flag|drop]]");
            }
            AlignMethod method;
            try {
                method = AlignMethod.parse(m[0]);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--policy '" + spec + "': " + e.getMessage());
            }
            long tol = 50_000_000L;
            if (m.length > 1) {
                double ms;
                try {
                    ms = Double.parseDouble(m[1]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("--policy '" + spec + "': tolerance '" + m[1] + "' is not a number of ms");
                }
                if (!(ms >= 0) || Double.isInfinite(ms)) {
                    throw new IllegalArgumentException("--policy '" + spec + "': tolerance must be >= 0 ms, got " + m[1]);
                }
                tol = Math.round(ms * 1e6);
            }
            MissPolicy miss = m.length > 2 ? parseMiss("--policy '" + spec + "'", m[2])
                    : onMiss != null ? onMiss : MissPolicy.FLAG;
            return withPolicy(topic, StreamPolicy.builder().method(method).toleranceNs(tol).onMiss(miss).build());
        }

        /**
         * @param where the option, for the message
         * @param value {@code flag} or {@code drop}
         * @throws IllegalArgumentException naming {@code where} for any other value
         */
        public static MissPolicy parseMiss(String where, String value) {
            try {
                return MissPolicy.parse(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
        }

        /** @return the same settings with a fixed-rate master clock */
        public AlignConfig withMasterRate(Double hz) {
            return new AlignConfig(hz, policies, byRole, onMiss);
        }

        /** @return the same settings with the run's miss policy (null: the role defaults') */
        public AlignConfig withOnMiss(MissPolicy miss) {
            return new AlignConfig(masterRateHz, policies, byRole, miss);
        }

        /**
         * The policy of one stream, as the class comment orders the settings.
         *
         * @param topic the stream's topic
         * @param role its role
         * @param profile the robot profile applied, or null
         * @return the policy, without the profile's clock offset
         */
        public StreamPolicy policyFor(String topic, StreamRole role, RobotProfile profile) {
            StreamPolicy own = policies.get(topic);
            if (own != null) {
                return own;
            }
            StreamPolicy p = byRole.getOrDefault(role, StreamPolicy.of(AlignMethod.NEAREST, 50_000_000L));
            if (onMiss != null && onMiss != p.onMiss()) {
                p = p.toBuilder().onMiss(onMiss).build();
            }
            if (profile != null) {
                RobotProfile.AlignSetting a = profile.align().get(topic);
                if (a != null) {
                    p = a.applyTo(p);
                }
            }
            return p;
        }
    }

    /**
     * What one recording gave.
     *
     * @param recordingId content id of the recording (from its files' SHA-256s)
     * @param format source format name, e.g. {@code MCAP}
     * @param files the recording's file URIs
     * @param skipped true when it was already in the lake (nothing written)
     * @param episodes episodes written
     * @param frames frames written
     * @param profile the robot profile as applied (master, topic roles and why); null when skipped
     * @param timestampIssues one entry per episode and topic whose times were not clean
     * @param qualityStatus quality status -> episode count
     * @param gripperJoints episode id -> the state joint that gave its frames' gripper value, as {@code topic:joint},
     *     for the episodes without a gripper topic that have one ({@link GripperJoint}); empty otherwise
     * @param vectors {@code state} and {@code action}: the topics that make the frames' vector and their widths, in
     *     vector order ({@link ValueLayout}; the same in every episode of the recording); empty when skipped
     */
    public record RecordingResult(String recordingId, String format, List<String> files, boolean skipped,
                                  int episodes, long frames, ProfileSummary profile, List<TimestampIssue> timestampIssues,
                                  Map<String, Integer> qualityStatus, Map<String, String> gripperJoints,
                                  Map<String, Map<String, Integer>> vectors) {
        public RecordingResult {
            gripperJoints = gripperJoints == null ? Map.of()
                    : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(gripperJoints));
            vectors = vectors == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(vectors));
        }

        /** A result without vector layouts. */
        public RecordingResult(String recordingId, String format, List<String> files, boolean skipped, int episodes,
                               long frames, ProfileSummary profile, List<TimestampIssue> timestampIssues,
                               Map<String, Integer> qualityStatus, Map<String, String> gripperJoints) {
            this(recordingId, format, files, skipped, episodes, frames, profile, timestampIssues, qualityStatus,
                    gripperJoints, Map.of());
        }

        /** A result without gripper joints. */
        public RecordingResult(String recordingId, String format, List<String> files, boolean skipped, int episodes,
                               long frames, ProfileSummary profile, List<TimestampIssue> timestampIssues,
                               Map<String, Integer> qualityStatus) {
            this(recordingId, format, files, skipped, episodes, frames, profile, timestampIssues, qualityStatus, Map.of());
        }
    }

    /**
     * The robot profile applied to a recording, as data.
     *
     * @param source where it came from: a profile file, "detected" (every role guessed), or "FILE + detected roles"
     * @param master the master clock topic, "" when none
     * @param topics topic -> its role and the reason, in the recording's channel order
     */
    public record ProfileSummary(String source, String master, Map<String, TopicRole> topics) {
        /** @return true when the roles were guessed from message types and topic names, not named by a profile */
        public boolean guessed() {
            return source.contains("detected");
        }

        static ProfileSummary of(RobotProfile p) {
            Map<String, TopicRole> topics = new LinkedHashMap<>();
            p.roles().forEach((t, r) -> topics.put(t, new TopicRole(r.name().toLowerCase(java.util.Locale.ROOT),
                    p.reasons().getOrDefault(t, ""))));
            return new ProfileSummary(p.source(), p.master().orElse(""), java.util.Collections.unmodifiableMap(topics));
        }
    }

    /**
     * @param role the stream role, lower case ({@link StreamRole})
     * @param reason why: "profile", or the guess's reason, e.g. "type CompressedImage"
     */
    public record TopicRole(String role, String reason) {}

    /**
     * What the timestamp rule found odd in one stream of one episode.
     *
     * @param episodeId the episode
     * @param topic the stream's topic
     * @param findings the kinds of finding ({@link io.flywheel.ingest.TimestampReport#findings()}), e.g. "log time 0"
     * @param summary counts and first positions ({@link io.flywheel.ingest.TimestampReport#summary()})
     */
    public record TimestampIssue(String episodeId, String topic, List<String> findings, String summary) {}

    /**
     * An input that could not be read; it was skipped and nothing of it was written.
     *
     * @param input the file or folder
     * @param message what was wrong and where (names the file and, where known, the byte offset)
     * @param kind the kind of failure, a stable name ({@link io.flywheel.error.ErrorKind#id()}): {@code bad_input}
     *     (damaged, truncated, empty or not a recording), {@code not_found}, {@code storage_unavailable} (e.g.
     *     permission denied), {@code internal} (a bug)
     * @param damagedMcap whether an MCAP format error is among the causes ({@code flywheel mcap recover} may salvage
     *     the file's readable messages)
     */
    public record Failure(String input, String message, String kind, boolean damagedMcap) {}

    /**
     * What the run committed.
     *
     * @param recordings every recording read (written or skipped), in input order
     * @param episodes episodes written
     * @param frames frames written
     * @param skipped recordings already in the lake (also those a concurrent writer committed first)
     * @param failed inputs that could not be read
     * @param commits the lake commit of each recording written, in order
     * @param videosNotTaken MP4 files in the folders read that no recording takes as a sidecar video
     *     ({@link Sidecars}: {@code NAME.<camera>.mp4} or {@code NAME/<camera>.mp4} beside a recording {@code NAME}),
     *     absolute paths, sorted: said, not ignored silently
     */
    public record Result(List<RecordingResult> recordings, long episodes, long frames, long skipped,
                         List<Failure> failed, List<Long> commits, List<String> videosNotTaken) {
        public Result {
            recordings = List.copyOf(recordings);
            failed = List.copyOf(failed);
            commits = List.copyOf(commits);
            videosNotTaken = List.copyOf(videosNotTaken);
        }
    }

    /**
     * The MP4 files of the inputs' folders (an input folder and the folders under it, the folder of an input file)
     * that no recording takes as a sidecar; the folders of rosbag2 and LeRobot recordings are theirs and not looked in.
     */
    static List<String> videosNotTaken(List<Path> inputs, List<Sources.Source> sources) {
        java.util.Set<Path> claimed = new java.util.HashSet<>();
        java.util.Set<Path> owned = new java.util.HashSet<>(); // folders that are a recording
        for (Sources.Source src : sources) {
            if (src.root() != null && Files.isDirectory(src.root())) {
                owned.add(src.root().toAbsolutePath().normalize());
            }
            try {
                for (Sidecars.Sidecar sc : Sidecars.find(src)) {
                    claimed.add(sc.video().toAbsolutePath().normalize());
                }
            } catch (IOException | RuntimeException e) {
                // the recording's read reports it
            }
        }
        java.util.Set<Path> folders = new java.util.TreeSet<>();
        for (Path in : inputs) {
            Path a = in.toAbsolutePath().normalize();
            if (Files.isDirectory(a)) {
                try (java.util.stream.Stream<Path> w = Files.walk(a)) {
                    w.filter(Files::isDirectory).forEach(folders::add);
                } catch (IOException | RuntimeException e) {
                    // an unreadable folder is reported by discovery
                }
            } else if (a.getParent() != null) {
                folders.add(a.getParent());
            }
        }
        java.util.Set<String> out = new java.util.TreeSet<>();
        for (Path f : folders) {
            boolean inRecording = false;
            for (Path o : owned) {
                inRecording |= f.startsWith(o);
            }
            if (inRecording) {
                continue;
            }
            try (java.util.stream.Stream<Path> l = Files.list(f)) {
                l.filter(p -> p.getFileName().toString().endsWith(".mp4") && Files.isRegularFile(p))
                        .map(p -> p.toAbsolutePath().normalize()).filter(p -> !claimed.contains(p))
                        .forEach(p -> out.add(p.toString()));
            } catch (IOException | RuntimeException e) {
                // as above
            }
        }
        return List.copyOf(out);
    }

    private IngestJob() {}

    /**
     * A recording read and turned into rows, waiting to be committed.
     *
     * @param counter its {@code [n/N] } prefix in the progress lines
     * @param name the file or folder, as in the progress lines
     * @param summary what it holds, e.g. {@code 1 episode(s), 59 frame(s) {pass=1}}
     */
    private record Pending(RecordingRows rows, int resultIndex, long frames, String counter, String name,
                           String summary) {}

    /**
     * Reads every recording of the inputs, one at a time, and commits each as one transaction (its raw_files,
     * episodes and frames rows, all or nothing); a recording that cannot be read (truncated, corrupt, not a
     * recording) is reported in {@link Result#failed()} and skipped. A run killed at any moment leaves the
     * recordings committed so far, each whole; running it again ingests the others (same content is skipped).
     *
     * <p>When the run has per-topic policies, recordings are committed only once every policy's topic has been seen
     * in a recording read (a misspelled topic fails the run with nothing committed, instead of leaving recordings
     * aligned without the policy, which a re-run would then skip).
     *
     * @param sink where the rows go: the lake, on one machine
     * @param inputs files or folders (a folder is scanned for recordings, recursively); a folder without any
     *     recording is a failure ("no recordings found in ...")
     * @param options reading options (profile, robot id)
     * @param align alignment settings
     * @param rules quality rules
     * @param progress called with a line per recording
     * @return what was done
     * @throws IOException when a commit fails (the recordings committed before it stay)
     * @throws io.flywheel.error.NotFoundException when a per-topic policy names a topic no recording read has (nothing
     *     is committed)
     */
    public static Result run(RowSink sink, List<Path> inputs, IngestOptions options, AlignConfig align, RuleSet rules,
                             Consumer<String> progress) throws IOException {
        return run(sink, discover(inputs), options, align, rules, progress);
    }

    /**
     * The recordings of a run's inputs, found before any is read.
     *
     * @param sources one entry per recording, in input order (a folder's in sorted order)
     * @param failed inputs that could not be scanned, folders without any recording, and files named as recordings
     *     that are empty or not a recording
     * @param videosNotTaken MP4 files in the inputs that are no recording's sidecar
     */
    public record Discovery(List<Sources.Source> sources, List<Failure> failed, List<String> videosNotTaken) {
        public Discovery {
            sources = List.copyOf(sources);
            failed = List.copyOf(failed);
            videosNotTaken = List.copyOf(videosNotTaken);
        }

        /** @return one recording found already, for a task that reads it on its own */
        public static Discovery of(Sources.Source source) {
            return new Discovery(List.of(source), List.of(), List.of());
        }
    }

    /**
     * Finds the recordings of the inputs as {@link #run(RowSink, List, IngestOptions, AlignConfig, RuleSet, Consumer)}
     * does: a file or a rosbag2 / LeRobot folder is one recording; any other folder is scanned recursively. A scheduler
     * that reads recordings apart (one task per recording) calls this, then {@link #run(RowSink, Discovery,
     * IngestOptions, AlignConfig, RuleSet, Consumer)} with one source per task.
     *
     * @param inputs files or folders
     * @return the recordings and the inputs that failed
     */
    public static Discovery discover(List<Path> inputs) {
        List<Failure> failed = new ArrayList<>();
        List<Sources.Source> sources = new ArrayList<>();
        for (Path in : inputs) {
            int before = sources.size();
            int failedBefore = failed.size();
            discover(in, sources, failed);
            if (sources.size() == before && failed.size() == failedBefore) {
                failed.add(new Failure(in.toString(), "no recordings found in " + in,
                        io.flywheel.error.ErrorKind.BAD_INPUT.id(), false));
            }
        }
        return new Discovery(sources, failed, videosNotTaken(inputs, sources));
    }

    /**
     * {@link #run(RowSink, List, IngestOptions, AlignConfig, RuleSet, Consumer)} on recordings found already.
     *
     * @param found the recordings, and the inputs that already failed (reported in {@link Result#failed()} first)
     * @return what was done
     * @throws IOException when a commit fails (the recordings committed before it stay)
     */
    public static Result run(RowSink sink, Discovery found, IngestOptions options, AlignConfig align, RuleSet rules,
                             Consumer<String> progress) throws IOException {
        return run(sink, found, options, align, rules, progress, true);
    }

    /**
     * {@link #run(RowSink, Discovery, IngestOptions, AlignConfig, RuleSet, Consumer)} for a scheduler that reads
     * recordings apart: with {@code checkTopics} false each recording is committed as soon as it is read, and the
     * check that every per-topic policy's and profile's topic is in some recording is left to the caller, which sees
     * all of them ({@link #checkPolicyTopics}; a recording's topics are the keys of its raw_files rows' {@code topics}).
     */
    public static Result run(RowSink sink, Discovery found, IngestOptions options, AlignConfig align, RuleSet rules,
                             Consumer<String> progress, boolean checkTopics) throws IOException {
        List<Failure> failed = new ArrayList<>(found.failed());
        List<Sources.Source> sources = found.sources();
        List<String> notTaken = found.videosNotTaken();
        for (String v : notTaken) {
            progress.accept("note: video " + v + " is no sidecar of a recording read (expected NAME.<camera>.mp4 or"
                    + " NAME/<camera>.mp4 beside NAME.mcap / NAME.bag / a rosbag2 folder NAME): not taken");
        }
        List<RecordingResult> results = new ArrayList<>();
        java.util.Set<String> streamTopics = new java.util.TreeSet<>(); // of the recordings read and not skipped
        java.util.Set<String> unseenPolicyTopics = new java.util.TreeSet<>(align.policies().keySet());
        unseenPolicyTopics.addAll(profileTopics(options.profile()));
        java.util.Set<String> seen = new java.util.HashSet<>();
        java.util.Set<String> inLake = null; // sha256 of the raw files already in the lake, read at the first recording
        List<Pending> pending = new ArrayList<>();
        Totals totals = new Totals();
        long now = System.currentTimeMillis() * 1_000_000L;
        int n = 0;
        for (Sources.Source source : sources) {
            n++;
            String name = name(source);
            String counter = "[" + n + "/" + sources.size() + "] ";
            Recording rec;
            List<EpisodeOut> outs = new ArrayList<>();
            try {
                rec = Ingest.read(source, options);
                boolean known = !seen.add(rec.recordingId());
                if (!known) {
                    if (inLake == null) {
                        inLake = sink.committedRawFiles(); // once per run; a concurrent writer's commit is a conflict
                    }
                    known = inLake.containsAll(rec.files().stream().map(SourceFile::sha256).toList());
                }
                if (known) {
                    totals.skipped++;
                    results.add(new RecordingResult(rec.recordingId(), rec.format().name(), uris(rec), true, 0, 0,
                            null, List.of(), Map.of()));
                    progress.accept(counter + "skip " + name + ": already in the lake (same content)");
                    continue;
                }
                for (Episode ep : rec.episodes()) {
                    EpisodeOut out = episode(rec, ep, align, rules);
                    if (!outs.isEmpty()) { // the episodes of one recording agree on each topic's width
                        String file = rec.files().isEmpty() ? null : rec.files().get(0).uri();
                        outs.get(0).state().checkSameAs(out.state(), ep.episodeId(), file);
                        outs.get(0).action().checkSameAs(out.action(), ep.episodeId(), file);
                    }
                    outs.add(out);
                }
            } catch (IOException | RuntimeException e) {
                Failure f = failure(name, e);
                failed.add(f);
                progress.accept(counter + "failed: " + name);
                continue;
            }
            List<FrameRow> frames = new ArrayList<>();
            List<EpisodeRow> episodes = new ArrayList<>();
            List<RawFileRow> rawFiles = new ArrayList<>();
            Map<String, Integer> status = new LinkedHashMap<>();
            Map<String, String> gripperJoints = new LinkedHashMap<>();
            List<TimestampIssue> issues = new ArrayList<>();
            long recFrames = 0;
            for (int i = 0; i < outs.size(); i++) {
                EpisodeOut out = outs.get(i);
                Episode ep = rec.episodes().get(i);
                frames.addAll(out.frames);
                episodes.add(out.row);
                recFrames += out.frames.size();
                status.merge(out.row.qualityStatus(), 1, Integer::sum);
                if (out.gripperJoint != null) {
                    gripperJoints.put(ep.episodeId(), out.gripperJoint.topic() + ":" + out.gripperJoint.joint());
                }
                for (StreamData s : ep.streams()) {
                    String gaps = s.topic().equals(ep.masterTopic()) ? masterGaps(s.timestamps().resolved()
                            .usableTimesNs(), masterPeriodNs(rec.profile(), s)) : "";
                    if (!s.timestamps().clean() || !gaps.isEmpty()) {
                        List<String> findings = new ArrayList<>(s.timestamps().findings());
                        String summary = s.timestamps().summary();
                        if (!gaps.isEmpty()) {
                            findings.add(MASTER_GAPS);
                            summary += ", " + gaps;
                        }
                        issues.add(new TimestampIssue(ep.episodeId(), s.topic(), List.copyOf(findings), summary));
                    }
                }
            }
            Map<String, Integer> topics = new LinkedHashMap<>();
            for (Episode ep : rec.episodes()) {
                for (StreamData s : ep.streams()) {
                    topics.merge(s.topic(), s.size(), Integer::sum);
                    streamTopics.add(s.topic());
                    unseenPolicyTopics.remove(s.topic());
                }
            }
            long startNs = rec.episodes().stream().mapToLong(Episode::startNs).min().orElse(0);
            for (SourceFile f : rec.files()) {
                // sidecar videos and their timestamps files (io.flywheel.ingest.Sidecars) are raw files of their own kind
                String kind = f.uri().endsWith(".mp4") ? "mp4" : f.uri().endsWith(".timestamps") ? "timestamps"
                        : rec.format().name().toLowerCase();
                rawFiles.add(new RawFileRow(f.uri(), f.bytes(), f.sha256(), kind,
                        rec.recordingId(), rec.robotId(), startNs, json(topics), "ingested", now));
            }
            // a URDF the recording carries but that does not parse: said once per recording, the ingest goes on
            rec.episodes().stream().map(e -> e.metadata().get("robot_description.warning")).filter(Objects::nonNull)
                    .distinct().forEach(w -> progress.accept(counter + "warning: " + name + ": " + w
                            + " (the gripper joint is chosen without it)"));
            Map<String, Map<String, Integer>> vectors = new LinkedHashMap<>();
            for (EpisodeOut o : outs) { // the first episode that has the role (the others agree: checkSameAs)
                if (!vectors.containsKey("state") && !o.state().isEmpty()) vectors.put("state", topics(o.state()));
                if (!vectors.containsKey("action") && !o.action().isEmpty()) vectors.put("action", topics(o.action()));
            }
            results.add(new RecordingResult(rec.recordingId(), rec.format().name(), uris(rec), false,
                    rec.episodes().size(), recFrames, rec.profile() == null ? null : ProfileSummary.of(rec.profile()),
                    List.copyOf(issues), status, gripperJoints, vectors));
            String summary = String.format("%d episode(s), %d frame(s) %s", rec.episodes().size(), recFrames, status);
            pending.add(new Pending(new RecordingRows(rec.recordingId(), rawFiles, episodes, frames),
                    results.size() - 1, recFrames, counter, name, summary));
            if (unseenPolicyTopics.isEmpty() || !checkTopics) {
                commit(sink, pending, results, totals, progress);
            } else { // said as what it is: read, not yet in the lake
                progress.accept(counter + "read " + name + ": " + summary + "; committed once a recording has the"
                        + " topic(s) of --policy / the profile " + String.join(", ", unseenPolicyTopics));
            }
        }
        if (!pending.isEmpty()) {
            if (checkTopics) {
                checkPolicyTopics(align, options.profile(), streamTopics);
            }
            commit(sink, pending, results, totals, progress);
        }
        return new Result(results, totals.episodes, totals.frames, totals.skipped, failed, totals.commits, notTaken);
    }

    /** Counts of the run's commits. */
    private static final class Totals {
        long episodes;
        long frames;
        long skipped;
        final List<Long> commits = new ArrayList<>();
    }

    /**
     * Commits each pending recording as its own transaction; one a concurrent writer committed first is skipped. The
     * progress line of a recording is given after its commit, so that it says what is in the lake: {@code [n/N] FILE:
     * 1 episode(s), 59 frame(s) {pass=1} (lake commit 7)}, or {@code [n/N] skip FILE: ...} when another writer
     * committed it first.
     */
    private static void commit(RowSink sink, List<Pending> pending, List<RecordingResult> results, Totals totals,
                               Consumer<String> progress) {
        for (Pending p : pending) {
            java.util.OptionalLong c = sink.commit(p.rows());
            if (c.isPresent()) {
                totals.commits.add(c.getAsLong());
                totals.episodes += p.rows().episodes().size();
                totals.frames += p.frames();
                progress.accept(p.counter() + p.name() + ": " + p.summary() + " (lake commit " + c.getAsLong() + ")");
            } else {
                progress.accept(p.counter() + "skip " + p.name() + ": already in the lake (a concurrent writer"
                        + " committed the same content first)");
                RecordingResult r = results.get(p.resultIndex());
                results.set(p.resultIndex(), new RecordingResult(r.recordingId(), r.format(), r.files(), true, 0, 0,
                        null, List.of(), Map.of()));
                totals.skipped++;
            }
        }
        pending.clear();
    }

    /**
     * A per-topic policy that names no stream of the recordings read is a mistake (a misspelled topic would otherwise
     * leave the stream on its default policy, and the recordings, once committed, are skipped by later runs).
     *
     * @throws io.flywheel.error.NotFoundException naming the topic and the streams there are; nothing is committed
     */
    /**
     * @param streamTopics the topics of every recording read
     * @throws io.flywheel.error.NotFoundException naming the first per-topic policy or profile topic that none has
     */
    public static void checkPolicyTopics(AlignConfig align, RobotProfile profile, java.util.Set<String> streamTopics) {
        for (String topic : align.policies().keySet()) {
            if (!streamTopics.contains(topic)) {
                throw new io.flywheel.error.NotFoundException("policy for topic '" + topic + "': no recording of this run has"
                        + " that stream (streams: " + String.join(", ", streamTopics) + "); nothing was committed");
            }
        }
        for (String topic : profileTopics(profile)) {
            if (!streamTopics.contains(topic)) {
                throw new io.flywheel.error.NotFoundException("profile " + profile.source() + ": topic '" + topic + "' ("
                        + profile.roles().get(topic).name().toLowerCase(java.util.Locale.ROOT) + "): no recording of this"
                        + " run has that stream (streams: " + String.join(", ", streamTopics) + "); nothing was committed");
            }
        }
    }

    /** @return the topics a robot profile names a role for (none for a detected profile or none at all) */
    private static java.util.Set<String> profileTopics(RobotProfile profile) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        if (profile != null && !"detected".equals(profile.source())) {
            profile.roles().forEach((topic, role) -> {
                String why = profile.reasons().get(topic);
                if (why == null || why.equals("profile")) {
                    out.add(topic);
                }
            });
        }
        return out;
    }

    private static List<String> uris(Recording rec) {
        return rec.files().stream().map(SourceFile::uri).toList();
    }

    /** A folder recording (a bag or dataset folder) is named by its folder, even when it holds one file. */
    private static String name(Sources.Source s) {
        return (s.files().size() == 1 && !java.nio.file.Files.isDirectory(s.root()) ? s.files().get(0) : s.root()).toString();
    }

    /** A failure whose message names the input; an MCAP format error anywhere in the causes is reported as such. */
    static Failure failure(String input, Throwable e) {
        boolean damagedMcap = false;
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof io.flywheel.mcap.McapFormatException) {
                damagedMcap = true;
                break;
            }
        }
        Throwable shown = e instanceof java.io.UncheckedIOException u && u.getCause() != null ? u.getCause() : e;
        String msg;
        if (shown instanceof java.nio.file.NoSuchFileException nf) {
            msg = "no such file: " + nf.getFile();
        } else if (shown instanceof java.nio.file.AccessDeniedException ad) {
            msg = "permission denied: " + ad.getFile();
        } else {
            msg = shown.getMessage() == null ? shown.getClass().getSimpleName() : shown.getMessage();
            // a typed error's message says what and where; other runtime exceptions are bugs, named so they can be
            // reported
            if (shown instanceof RuntimeException && !(shown instanceof IllegalArgumentException)
                    && !(shown instanceof io.flywheel.error.FlywheelException)) {
                msg = shown.getClass().getSimpleName() + ": " + msg;
            }
        }
        String file = Path.of(input).getFileName() == null ? input : Path.of(input).getFileName().toString();
        if (!msg.contains(file)) {
            msg = input + ": " + msg;
        }
        return new Failure(input, msg, io.flywheel.error.ErrorKind.of(e).id(), damagedMcap);
    }

    /**
     * Finds the recordings of one input: a file or a rosbag2 folder is one; any other folder is scanned, then its
     * sub-folders (sorted, for a stable order). A file or folder that cannot be scanned is a failure.
     */
    private static void discover(Path in, List<Sources.Source> out, List<Failure> failed) {
        try {
            if (!Files.isDirectory(in) || Files.exists(in.resolve("metadata.yaml"))
                    || Files.exists(in.resolve("meta").resolve("info.json")) || LeRobotSource.lacksInfo(in)) {
                out.add(Sources.detect(in));
                return;
            }
            // a file named as a recording that cannot be read is a failure, like a truncated one, not silently skipped
            out.addAll(Sources.scan(in, (file, error) -> failed.add(failure(file.toString(), error))));
        } catch (IOException | RuntimeException e) {
            failed.add(failure(in.toString(), e));
            return;
        }
        List<Path> dirs;
        try (java.util.stream.Stream<Path> s = Files.list(in)) {
            dirs = s.filter(Files::isDirectory).sorted().toList();
        } catch (IOException | RuntimeException e) {
            failed.add(failure(in.toString(), e));
            return;
        }
        for (Path d : dirs) {
            discover(d, out, failed);
        }
    }

    /** The finding of {@link #masterGaps}: the master clock lost frames. */
    static final String MASTER_GAPS = "master gaps > 1.5 periods";

    /** @return the master stream's nominal period, ns: 1 / the profile's nominal rate, else its median step */
    private static long masterPeriodNs(RobotProfile profile, StreamData s) {
        java.util.OptionalDouble hz = profile == null ? java.util.OptionalDouble.empty() : profile.nominalRateHz(s.topic());
        return hz.isPresent() ? Math.round(1e9 / hz.getAsDouble()) : s.timestamps().medianPeriodNs();
    }

    /**
     * Dropped master frames: steps of the master's times larger than 1.5 nominal periods (a 30 Hz camera that loses
     * one frame steps 66.7 ms, two periods). Steps are taken in sorted order, so a backward stamp makes no gap here.
     *
     * @param timesNs  the master's usable times, ns, in input order (sorted here)
     * @param periodNs the nominal period, ns; 0 or less: nothing is reported
     * @return "" without gaps, else e.g. {@code "master gaps > 1.5 periods: 1 at [10 (+66.7 ms)]"}: the count and, for
     *     the first {@link TimestampReport#SUMMARY_POSITIONS}, the sorted position of the frame after the gap and the
     *     step
     */
    static String masterGaps(long[] timesNs, long periodNs) {
        if (periodNs <= 0 || timesNs.length < 2) {
            return "";
        }
        long[] t = timesNs.clone();
        Arrays.sort(t);
        long limit = periodNs + periodNs / 2;
        StringBuilder at = new StringBuilder();
        int n = 0;
        for (int i = 1; i < t.length; i++) {
            long step = t[i] - t[i - 1];
            if (step > limit) {
                if (n < TimestampReport.SUMMARY_POSITIONS) {
                    at.append(n == 0 ? "" : ", ").append(i)
                            .append(String.format(java.util.Locale.ROOT, " (+%.1f ms)", step / 1e6));
                } else if (n == TimestampReport.SUMMARY_POSITIONS) {
                    at.append(", ...");
                }
                n++;
            }
        }
        return n == 0 ? "" : MASTER_GAPS + ": " + n + " at [" + at + "]";
    }

    /**
     * The episode's {@code quality_metrics} document, its keys in a fixed order ({@code Map.of} iterates in an order
     * that changes from JVM to JVM, which made the same recording's row differ between runs).
     */
    private static Map<String, Object> qualityJson(Object metrics, QualityReport q) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("metrics", metrics);
        m.put("results", q.results());
        return m;
    }

    /** The episode metadata key of the stamp discontinuities ({@link #stampDiscontinuities}). */
    public static final String STAMP_DISCONTINUITIES = "stamp_discontinuities";

    /**
     * The stamp discontinuities of an episode's streams, as stored in its metadata under
     * {@value #STAMP_DISCONTINUITIES}: per discontinuity ({@link io.flywheel.align.StampDiscontinuity}) {@code topic},
     * {@code index} (the message after it, in the order read), {@code log_time_ns}, {@code stamp_ns},
     * {@code previous_stamp_ns}, {@code stamp_step_ns}, {@code log_step_ns}, {@code jump_ns} (stamp step - log step),
     * {@code direction} ({@code backward}, {@code forward}) and the stream's {@code timeline} ({@code stamps},
     * {@code log_time}); in stream, then index order.
     */
    static List<Map<String, Object>> stampDiscontinuities(Episode ep) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (StreamData s : ep.streams()) {
            for (io.flywheel.align.StampDiscontinuity d : s.timestamps().discontinuities()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("topic", s.topic());
                m.put("index", d.position());
                m.put("log_time_ns", d.logTimeNs());
                m.put("stamp_ns", d.stampNs());
                m.put("previous_stamp_ns", d.previousStampNs());
                m.put("stamp_step_ns", d.stampStepNs());
                m.put("log_step_ns", d.logStepNs());
                m.put("jump_ns", d.jumpNs());
                m.put("direction", d.direction());
                m.put("timeline", s.timestamps().timeline().id());
                out.add(m);
            }
        }
        return out;
    }

    /** The episode metadata key of the timelines set by a profile or option ({@link #setTimelines}). */
    public static final String TIMELINES = "timelines";

    /**
     * @return topic -> timeline id ({@code stamps}, {@code log_time}) of the streams whose timeline a profile's
     *     {@code timelines} or the run's {@code --timeline} set (not {@code auto}); stored in the episode metadata
     *     under {@value #TIMELINES}, so that reading the raw files again gives the same times
     */
    static Map<String, String> setTimelines(Episode ep) {
        Map<String, String> out = new LinkedHashMap<>();
        for (StreamData s : ep.streams()) {
            if (s.timestamps().requested() != io.flywheel.align.StreamTimeline.AUTO) {
                out.put(s.topic(), s.timestamps().requested().id());
            }
        }
        return out;
    }

    /** @param gripperJoint the state joint that gave the gripper values, or null */
    private record EpisodeOut(EpisodeRow row, List<FrameRow> frames, GripperJoint gripperJoint, ValueLayout state,
                              ValueLayout action) {}

    /** @return the topics of a layout with their widths, in vector order ({@code {"/left_follow": 7, ...}}) */
    private static Map<String, Integer> topics(ValueLayout l) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int k = 0; k < l.streams().size(); k++) {
            m.put(l.streams().get(k).topic(), l.widths().get(k));
        }
        return m;
    }

    /** @return per aligned stream, the offset of its values in the layout's vector, or -1 when it is not part of it */
    private static int[] parts(List<StreamData> aligned, ValueLayout layout) {
        int[] at = new int[aligned.size()];
        Arrays.fill(at, -1);
        for (int k = 0; k < aligned.size(); k++) {
            int offset = 0;
            for (int j = 0; j < layout.streams().size(); j++) {
                if (layout.streams().get(j) == aligned.get(k)) {
                    at[k] = offset;
                }
                offset += layout.widths().get(j);
            }
        }
        return at;
    }

    private static EpisodeOut episode(Recording rec, Episode ep, AlignConfig cfg, RuleSet rules)
            throws IngestException {
        RobotProfile profile = rec.profile();
        String file = rec.files().isEmpty() ? null : rec.files().get(0).uri();
        ValueLayout stateLayout = ValueLayout.of(ep, profile, StreamRole.STATE, file);
        ValueLayout actionLayout = ValueLayout.of(ep, profile, StreamRole.ACTION, file);
        List<StreamData> aligned = new ArrayList<>();
        List<TopicStream> streams = new ArrayList<>();
        List<StreamPolicy> policies = new ArrayList<>();
        Map<String, long[]> skipped = skippedTimes(ep);
        AlignOptions.Builder ob = AlignOptions.builder();
        for (StreamData s : ep.streams()) {
            boolean numeric = s.values() != null && s.values().length > 0 && s.values()[0] != null;
            if (s.size() == 0 || !(s.role() == StreamRole.CAMERA || numeric && (s.role() == StreamRole.STATE
                    || s.role() == StreamRole.ACTION || s.role() == StreamRole.GRIPPER))) {
                continue;
            }
            // messages without a usable time (see TimestampRule) are left out of alignment
            io.flywheel.align.ResolvedTimes times = s.timestamps().resolved();
            int[] usable = times.usable();
            if (usable.length == 0) {
                continue;
            }
            StreamPolicy p = cfg.policyFor(s.topic(), s.role(), profile);
            TopicStream.Builder tb = TopicStream.builder(s.topic()).timestamps(times.usableTimesNs()).payload(usable)
                    .sortIfNeeded(true);
            if (p.method() == AlignMethod.INTERPOLATE && s.role() != StreamRole.CAMERA) {
                double[] flat = interpolationValues(s, usable);
                if (flat != null) {
                    tb.values(flat, flat.length / usable.length);
                }
            }
            streams.add(tb.build());
            aligned.add(s);
            long offset = profile == null ? 0 : profile.clockOffsetNs(s.topic());
            if (offset != 0) {
                p = StreamPolicy.builder().method(p.method()).toleranceNs(p.toleranceNs()).clockOffsetNs(offset)
                        .onMiss(p.onMiss()).build();
            }
            ob.policy(s.topic(), p);
            policies.add(p);
        }
        String master = ep.masterTopic();
        if (cfg.masterRateHz() != null) {
            ob.master(MasterClock.fixedRate(cfg.masterRateHz()));
            master = String.format("%.6g Hz", cfg.masterRateHz());
        } else if (master == null || master.isEmpty() || aligned.stream().noneMatch(s -> s.topic().equals(ep.masterTopic()))) {
            ob.master(MasterClock.fixedRate(10.0));
            master = "10 Hz";
        } else {
            ob.masterStream(master);
        }
        List<FrameRow> rows = new ArrayList<>();
        List<StreamMetrics> metrics = new ArrayList<>();
        Alignment a = streams.isEmpty() ? null : Aligner.align(streams, ob.build());
        GripperJoint gripperJoint = null;
        if (a != null) {
            StreamData gripper = first(aligned, StreamRole.GRIPPER);
            StreamData jointStream = null;
            if (gripper == null) {
                gripperJoint = GripperJoint.select(ep, profile).orElse(null);
                if (gripperJoint != null) {
                    String topic = gripperJoint.topic();
                    jointStream = aligned.stream().filter(s -> s.topic().equals(topic)).findFirst().orElse(null);
                    if (jointStream == null) {
                        gripperJoint = null; // the state stream had no usable time: nothing to align
                    }
                }
            }
            int jointIndex = gripperJoint == null ? -1 : gripperJoint.index();
            // per aligned stream, looked up once rather than by topic in every frame
            StreamAlignment[] sas = new StreamAlignment[aligned.size()];
            TopicStream[] tss = new TopicStream[aligned.size()];
            // per aligned stream, the master-clock times of its skipped frames (sorted) and its tolerance
            long[][] skips = new long[aligned.size()][];
            long[] tolerances = new long[aligned.size()];
            // per aligned stream, where its values go in the state / action vector (-1: not part of it)
            int[] stateAt = parts(aligned, stateLayout);
            int[] actionAt = parts(aligned, actionLayout);
            Map<String, TopicStream> byName = new LinkedHashMap<>();
            streams.forEach(t -> byName.put(t.name(), t));
            for (int k = 0; k < sas.length; k++) {
                sas[k] = a.stream(aligned.get(k).topic());
                tss[k] = byName.get(aligned.get(k).topic());
                long[] sk = skipped.get(aligned.get(k).topic());
                if (sk != null) {
                    StreamPolicy p = policies.get(k);
                    skips[k] = Arrays.stream(sk).map(t -> t - p.clockOffsetNs()).sorted().toArray();
                    tolerances[k] = p.toleranceNs();
                }
            }
            long[] ft = a.frameTimesNs();
            for (int f = 0; f < ft.length; f++) {
                rows.add(frame(ep, f, ft[f], aligned, sas, tss, skips, tolerances, stateAt, stateLayout, actionAt,
                        actionLayout, gripper, jointStream, jointIndex));
            }
            Map<String, Long> p99 = new LinkedHashMap<>();
            for (ResidualStats rs : a.stats()) {
                p99.put(rs.stream(), rs.p99AbsNs() < 0 ? null : rs.p99AbsNs());
            }
            // the residual each stream's method allows by itself, from its nominal period (the declared rate, else
            // the median step of its times)
            Map<String, Long> limits = new LinkedHashMap<>();
            for (int k = 0; k < aligned.size(); k++) {
                StreamData s = aligned.get(k);
                java.util.OptionalDouble hz = profile == null ? java.util.OptionalDouble.empty()
                        : profile.nominalRateHz(s.topic());
                long period = hz.isPresent() ? Math.round(1e9 / hz.getAsDouble()) : s.timestamps().medianPeriodNs();
                limits.put(s.topic(), StreamMetrics.residualLimitNs(policies.get(k).method(), period));
            }
            for (StreamData s : ep.streams()) {
                Double nominal = profile == null || profile.nominalRateHz(s.topic()).isEmpty() ? null
                        : profile.nominalRateHz(s.topic()).getAsDouble();
                StreamMetrics m = StreamMetrics.measure(s.topic(), s.role().name().toLowerCase(),
                        s.timestamps().resolved().usableTimesNs(), nominal,
                        ep.startNs(), ep.endNs(), skipped.getOrDefault(s.topic(), new long[0]))
                        .withMonotonicityViolations(s.timestamps().resolved().monotonicityViolations());
                metrics.add(p99.containsKey(s.topic()) ? m.withResidual(p99.get(s.topic()), limits.get(s.topic())) : m);
            }
        }
        EpisodeMetrics em = new EpisodeMetrics(ep.episodeId(), ep.endNs() - ep.startNs(), metrics,
                EpisodeMetrics.missingRoles(List.of("state"), metrics));
        JointLimits limits = JointLimits.none();
        if (profile != null) {
            for (Map.Entry<String, double[]> e : profile.jointLimits().entrySet()) {
                limits = limits.with(e.getKey(), e.getValue()[0], e.getValue()[1]);
            }
        }
        if (limits.size() > 0 && !stateLayout.isEmpty()) {
            // each state stream against the limits of its own joint names (as recorded, before any topic prefix)
            long samples = 0;
            long violations = 0;
            Map<String, Long> perJoint = new LinkedHashMap<>();
            for (StreamData state : stateLayout.streams()) {
                if (state.names().isEmpty()) {
                    continue;
                }
                String[] names = state.names().toArray(String[]::new);
                double[] flat = Arrays.stream(state.values()).filter(Objects::nonNull).flatMapToDouble(Arrays::stream)
                        .toArray();
                JointLimits.Result r = limits.check(names, flat);
                samples += r.samples();
                violations += r.violations();
                r.perJoint().forEach((k, v) -> perJoint.merge(k, v, Long::sum));
            }
            em = em.withJointLimits(new JointLimits.Result(samples, violations, perJoint));
        }
        QualityReport q = rules.evaluate(em);
        Map<String, Object> meta = new LinkedHashMap<>(ep.metadata());
        String rdSource = ep.metadata().getOrDefault("robot_description.source", "");
        if (rdSource.startsWith("attachment ") || rdSource.startsWith("topic ")) {
            // the attachment or message stays in the raw file; the row names it (robot_description.source)
            meta.remove("robot_description");
        }
        meta.put("source_files", rec.files().stream().map(SourceFile::uri).toList());
        meta.put("format", rec.format().name());
        meta.put("dropped_frames", a == null ? 0 : a.droppedFrames());
        if (!ep.frameSkips().isEmpty()) {
            Map<String, Integer> perTopic = new java.util.TreeMap<>();
            ep.frameSkips().forEach(k -> perTopic.merge(k.topic(), 1, Integer::sum));
            meta.put("skipped_frames", perTopic);
        }
        List<Map<String, Object>> discontinuities = stampDiscontinuities(ep);
        if (!discontinuities.isEmpty()) {
            meta.put(STAMP_DISCONTINUITIES, discontinuities);
        }
        Map<String, String> timelines = setTimelines(ep);
        if (!timelines.isEmpty()) {
            meta.put(TIMELINES, timelines);
        }
        // the recording's own name of the episode (the simulator's and a live stream's episode_id metadata): what the
        // fleet stream calls it, so that its stream label finds it
        String sourceEpisodeId = Collector.metadataField(ep.metadata(), Map.of(), "episode_id", "episode_id");
        if (!sourceEpisodeId.isEmpty()) {
            meta.put(io.flywheel.rows.StreamLabel.SOURCE_EPISODE_ID, sourceEpisodeId);
        }
        if (gripperJoint != null) {
            Map<String, Object> gj = new LinkedHashMap<>();
            gj.put("topic", gripperJoint.topic());
            gj.put("joint", gripperJoint.joint());
            gj.put("range_of_motion", gripperJoint.rangeOfMotion());
            gj.put("candidates", gripperJoint.candidates());
            gj.put("source", gripperJoint.source());
            gj.put("unit", gripperJoint.unit());
            meta.put("gripper_joint", gj);
        }
        if (!stateLayout.isEmpty() || !actionLayout.isEmpty()) {
            Map<String, Object> vt = new LinkedHashMap<>();
            vt.put("state", topics(stateLayout));
            vt.put("action", topics(actionLayout));
            if (!stateLayout.leftOut().isEmpty() || !actionLayout.leftOut().isEmpty()) {
                // streams of the role kept as streams but not in the frames' vectors (guessed roles)
                Map<String, List<String>> out = new LinkedHashMap<>();
                out.put("state", stateLayout.leftOut());
                out.put("action", actionLayout.leftOut());
                vt.put("not_in_vector", out);
            }
            meta.put("value_topics", vt);
        }
        EpisodeRow row = new EpisodeRow(ep.episodeId(), rec.recordingId(), ep.robotId(), ep.task(), ep.scene(),
                ep.operator(), ep.outcome(), ep.startNs(), ep.endNs(), ep.endNs() - ep.startNs(), master,
                (long) rows.size(), q.status().name().toLowerCase(), q.flags(), json(qualityJson(em, q)), json(meta),
                Map.of(), null, null,
                stateLayout.isEmpty() ? null : stateLayout.names(), actionLayout.isEmpty() ? null : actionLayout.names());
        return new EpisodeOut(row, rows, gripperJoint, stateLayout, actionLayout);
    }

    /**
     * @return the vectors of the usable messages as one flat array for interpolation, or null when they are not
     *     all present with one common, non-zero length (then the lower neighbour's vector is stored)
     */
    private static double[] interpolationValues(StreamData s, int[] usable) {
        double[][] v = s.values();
        if (v == null || usable.length == 0 || v[usable[0]] == null || v[usable[0]].length == 0) {
            return null;
        }
        int dim = v[usable[0]].length;
        double[] flat = new double[Math.multiplyExact(usable.length, dim)];
        for (int i = 0; i < usable.length; i++) {
            double[] x = v[usable[i]];
            if (x == null || x.length != dim) {
                return null;
            }
            System.arraycopy(x, 0, flat, i * dim, dim);
        }
        return flat;
    }

    /**
     * One aligned frame (kept out of {@link #episode} so that the JIT compiles two small methods rather than one
     * huge one: on one core its compile time was taken from the ingest itself).
     */
    private static FrameRow frame(Episode ep, int f, long timeNs, List<StreamData> aligned, StreamAlignment[] sas,
                                  TopicStream[] tss, long[][] skips, long[] tolerances, int[] stateAt,
                                  ValueLayout stateLayout, int[] actionAt, ValueLayout actionLayout, StreamData gripper,
                                  StreamData jointStream, int jointIndex) {
        List<ImageLocator> images = new ArrayList<>(aligned.size());
        List<StreamMatch> matches = new ArrayList<>(aligned.size());
        List<String> flags = new ArrayList<>(0);
        // the state / action vector: every stream of its layout, each at its offset; null unless all of them matched
        double[] st = stateLayout.isEmpty() ? null : new double[stateLayout.width()];
        double[] ac = actionLayout.isEmpty() ? null : new double[actionLayout.width()];
        int stParts = 0;
        int acParts = 0;
        Double gr = null;
        for (int k = 0; k < sas.length; k++) {
            StreamData s = aligned.get(k);
            StreamAlignment sa = sas[k];
            int idx = sa.index()[f];
            int msg = idx < 0 ? -1 : tss[k].payload(idx);
            Long residual = idx < 0 ? null : sa.residualNs()[f];
            if (!sa.isMaster()) {
                matches.add(new StreamMatch(s.topic(), msg >= 0, residual));
                if (msg < 0) {
                    flags.add((skips[k] != null && near(skips[k], timeNs, tolerances[k]) ? "skipped:" : "unmatched:")
                            + s.topic());
                }
            }
            if (msg < 0) {
                continue;
            }
            if (s.role() == StreamRole.CAMERA && s.locators() != null && s.locators()[msg] != null) {
                RawLocator l = s.locators()[msg];
                images.add(new ImageLocator(s.topic(), l.uri(), l.chunkOffset(), l.offset(), l.length(),
                        l.storedCompression(), residual, l.format().isEmpty() ? null : l.format(),
                        l.width() > 0 ? l.width() : null, l.height() > 0 ? l.height() : null));
            }
            double[] jv = null;
            if (stateAt[k] >= 0 || actionAt[k] >= 0) {
                jv = value(s, sa, f, msg);
                if (jv != null && stateAt[k] >= 0) {
                    System.arraycopy(jv, 0, st, stateAt[k], jv.length);
                    stParts++;
                }
                if (jv != null && actionAt[k] >= 0) {
                    System.arraycopy(jv, 0, ac, actionAt[k], jv.length);
                    acParts++;
                }
            } else if (s == gripper) {
                double[] v = value(s, sa, f, msg);
                if (v.length > 0) {
                    gr = v[0];
                }
            }
            if (s == jointStream) {
                double[] v = jv != null ? jv : value(s, sa, f, msg);
                if (v != null && jointIndex < v.length && Double.isFinite(v[jointIndex])) {
                    gr = v[jointIndex];
                }
            }
        }
        if (st != null && stParts < stateLayout.streams().size()) {
            st = null; // a part unmatched (flagged above): no vector of mixed moments or a hole
        }
        if (ac != null && acParts < actionLayout.streams().size()) {
            ac = null;
        }
        return new FrameRow(ep.episodeId(), f, timeNs, st, ac, gr, images, matches, flags);
    }

    /** @return whether a time of {@code sorted} lies within {@code tolerance} of {@code t} */
    private static boolean near(long[] sorted, long t, long tolerance) {
        int i = Arrays.binarySearch(sorted, t);
        if (i >= 0) {
            return true;
        }
        int at = -i - 1;
        return at < sorted.length && sorted[at] - t <= tolerance || at > 0 && t - sorted[at - 1] <= tolerance;
    }

    /**
     * The skipped frames ({@link FrameSkips}) of each topic in its stream's time base: a skip's log time moved by the
     * repeated frame's chosen time minus its log time (the delay between the frame's capture stamp and its logging;
     * by 0 when the repeated frame has no usable time or is not in the stream).
     *
     * @return topic -> times, ns, in file order; empty without skips
     */
    private static Map<String, long[]> skippedTimes(Episode ep) {
        if (ep.frameSkips().isEmpty()) {
            return Map.of();
        }
        Map<String, List<FrameSkips.Skip>> byTopic = new LinkedHashMap<>();
        ep.frameSkips().forEach(k -> byTopic.computeIfAbsent(k.topic(), t -> new ArrayList<>()).add(k));
        Map<String, long[]> out = new LinkedHashMap<>();
        byTopic.forEach((topic, list) -> {
            StreamData s = ep.stream(topic).orElse(null);
            Map<Long, Integer> byLogTime = new java.util.HashMap<>();
            for (int i = 0; s != null && i < s.size(); i++) {
                byLogTime.putIfAbsent(s.logTimeNs()[i], i);
            }
            long[] t = new long[list.size()];
            for (int i = 0; i < t.length; i++) {
                FrameSkips.Skip k = list.get(i);
                Integer r = byLogTime.get(k.repeatsLogTimeNs());
                long shift = r == null || s.timeNs()[r] == 0 ? 0 : s.timeNs()[r] - s.logTimeNs()[r];
                t[i] = k.logTimeNs() + shift;
            }
            out.put(topic, t);
        });
        return out;
    }

    /** @return the stream's vector for frame {@code f}: the interpolated one when there is one, else message {@code msg}'s */
    private static double[] value(StreamData s, StreamAlignment sa, int f, int msg) {
        return sa.values() == null ? s.values()[msg] : Arrays.copyOfRange(sa.values(), f * sa.dim(), (f + 1) * sa.dim());
    }

    private static StreamData first(List<StreamData> streams, StreamRole role) {
        return streams.stream().filter(s -> s.role() == role && s.values() != null).findFirst().orElse(null);
    }

    private static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
