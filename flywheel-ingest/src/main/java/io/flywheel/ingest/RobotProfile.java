package io.flywheel.ingest;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * A robot profile: which topic plays which {@link StreamRole}, the master clock, per-device clock offsets,
 * joint limits and nominal rates. Immutable.
 *
 * <p>YAML form ({@link #load(Path)}); every key is optional:
 * <pre>{@code
 * robot_id: widowx-250
 * master: /camera0/image/compressed      # master clock topic
 * cameras: [/camera0/image/compressed, /camera1/image/compressed]
 * state: /robot/eef_state                # a topic or a list of topics; also action, gripper, task, outcome
 *                                        # (state: [/left_follow, /right_follow]: the frames' state vector holds
 *                                        # both, in this order: io.flywheel.ingest.ValueLayout)
 * action: /robot/action
 * task: /task
 * roles:                                 # any topic -> role (camera, state, action, gripper, task, outcome, other)
 *   /wrist/image: camera
 * clock_offsets_ns:                      # added to a topic's times before alignment
 *   /camera1/image/compressed: 12000000
 * joint_limits:                          # joint name -> [lower, upper], rad or m
 *   x: [0.1, 0.4]
 * gripper_joints: [left_gripper, right_gripper]   # state joints that are grippers (when no gripper topic)
 * urdf: arm.urdf                         # the robot's URDF (relative to the profile's folder): joint units
 * metadata_keys:                         # episode field -> MCAP metadata key (record.key) that fills it
 *   task: session.goal                   # fields: task, scene, operator, outcome, robot_id
 * nominal_rates_hz:
 *   /camera0/image/compressed: 5
 * align:                                 # per-topic alignment; every field optional
 *   /joint_states: {method: asof, tolerance_ms: 20, on_miss: drop}   # on_miss: flag (default) or drop
 * timelines:                             # per-topic clock: stamps, log_time or auto (default)
 *   /camera1/image/compressed: log_time
 * }</pre>
 * A {@code timelines} entry chooses which times order and time a topic's messages
 * ({@link io.flywheel.align.StreamTimeline}): {@code auto} follows log times when the topic's header stamps go
 * backwards and the stamps otherwise.
 * An {@code align} entry overrides, field by field, the ingest's defaults for that topic (method by role,
 * tolerance, and the run's {@code --on-miss}); a {@code --policy} given on the command line for the same
 * topic overrides the entry.
 * When a profile names at least one role, topics it does not name are {@link StreamRole#OTHER}; when it
 * names none, roles are detected ({@link #guess}).
 *
 * <p>{@code gripper_joints} names the joints of a STATE {@code JointState} whose position is a gripper opening
 * (larger = more open, e.g. metres between the fingers, as {@code io.flywheel.enrich.motion.MotionLabeler}
 * expects), for robots that publish their gripper inside the joint states rather than on a topic of its own
 * (Franka finger joints, dual-arm robots). Without the key, joints whose names contain {@code gripper} or
 * {@code finger} (any case) are taken. Used only when an episode has no GRIPPER stream; with several such joints
 * the one with the largest range of motion in the episode (the active arm) gives the frames' gripper value
 * ({@link GripperJoint#select}).
 *
 * <p>{@code urdf} names the robot's URDF file, read when the profile is parsed ({@link Urdf#parse}; a relative path is
 * resolved against the profile's folder): its joint types give the joints' units (revolute / continuous rad,
 * prismatic m) and it replaces any URDF the recording carries.
 *
 * <p>Without a profile, {@link #detect(List)} guesses: {@code CompressedImage}/{@code Image}/{@code CompressedVideo} -> CAMERA;
 * teleoperation topics first ({@code *_lead}/{@code *_leader} and a last topic segment {@code command}/{@code target} -> ACTION,
 * {@code *_follow}/{@code *_follower} -> STATE, for joint-like numeric types; {@link #teleopGuess});
 * {@code JointState}, {@code Pose}/{@code PoseStamped}/{@code PoseWithCovarianceStamped}/{@code Odometry}/
 * {@code tf2_msgs/TFMessage} and ROS 1's {@code tf/tfMessage} (but not {@code /tf_static}, latched: OTHER), types named
 * {@code *State}, and a numeric {@code *MultiArray} on a topic whose last segment says state, obs, position or joints ->
 * STATE; other numeric {@code *MultiArray}s, {@code Twist}/{@code TwistStamped} and types named {@code *Action} ->
 * ACTION; byte multi-arrays ({@code ByteMultiArray}, {@code UInt8MultiArray}, {@code Int8MultiArray}) -> OTHER; a topic named {@code *gripper*} with a numeric type -> GRIPPER; a {@code String} on a topic named
 * {@code *task*} or {@code *instruction*} -> TASK; a topic named {@code *outcome*} -> OUTCOME; else OTHER.
 * Master default: the CAMERA with the lowest channel id, else the STATE stream (JointState first, then
 * lowest channel id).
 */
public final class RobotProfile {

    /**
     * Per-topic alignment settings from a profile's {@code align} section; a null field keeps the ingest's
     * default for it.
     *
     * @param method nearest, asof or interpolate; null: the default for the topic's role
     * @param toleranceNs tolerance in ns, &ge; 0; null: the default
     * @param onMiss flag the frame (value null) or drop it when the topic has no message within tolerance;
     *     null: the run's default
     */
    public record AlignSetting(io.flywheel.align.AlignMethod method, Long toleranceNs,
                               io.flywheel.align.MissPolicy onMiss) {
        public AlignSetting {
            if (toleranceNs != null && toleranceNs < 0) {
                throw new IllegalArgumentException("tolerance must be >= 0 ns, got " + toleranceNs);
            }
        }

        /**
         * @param base the policy otherwise in force
         * @return {@code base} with this setting's non-null fields
         */
        public io.flywheel.align.StreamPolicy applyTo(io.flywheel.align.StreamPolicy base) {
            return base.toBuilder().method(method != null ? method : base.method())
                    .toleranceNs(toleranceNs != null ? toleranceNs : base.toleranceNs())
                    .onMiss(onMiss != null ? onMiss : base.onMiss()).build();
        }
    }

    /**
     * A topic as found in a recording, for role detection.
     *
     * @param topic topic name
     * @param channelId channel / connection id
     * @param messageType schema name, e.g. {@code sensor_msgs/msg/CompressedImage}
     */
    public record Channel(String topic, int channelId, String messageType) {}

    private final String source;
    private final String robotId;
    private final String master;
    private final Map<String, StreamRole> roles;
    private final Map<String, String> reasons;
    private final Map<String, Long> clockOffsetsNs;
    private final Map<String, double[]> jointLimits;
    private final Map<String, Double> nominalRatesHz;
    private final Map<String, AlignSetting> align;
    private final List<String> gripperJoints;
    private final Urdf urdf;
    private final Map<String, String> metadataKeys;
    private final Map<String, io.flywheel.align.StreamTimeline> timelines;

    /** The episode fields a profile's {@code metadata_keys} may map. */
    public static final List<String> METADATA_FIELDS = List.of("task", "scene", "operator", "outcome", "robot_id");

    private RobotProfile(Builder b) {
        source = b.source;
        robotId = b.robotId;
        master = b.master;
        roles = Collections.unmodifiableMap(new LinkedHashMap<>(b.roles));
        reasons = Collections.unmodifiableMap(new LinkedHashMap<>(b.reasons));
        clockOffsetsNs = Collections.unmodifiableMap(new LinkedHashMap<>(b.clockOffsetsNs));
        Map<String, double[]> jl = new LinkedHashMap<>();
        b.jointLimits.forEach((k, v) -> jl.put(k, v.clone()));
        jointLimits = Collections.unmodifiableMap(jl);
        nominalRatesHz = Collections.unmodifiableMap(new LinkedHashMap<>(b.nominalRatesHz));
        align = Collections.unmodifiableMap(new LinkedHashMap<>(b.align));
        gripperJoints = List.copyOf(b.gripperJoints);
        urdf = b.urdf;
        metadataKeys = Collections.unmodifiableMap(new LinkedHashMap<>(b.metadataKeys));
        timelines = Collections.unmodifiableMap(new LinkedHashMap<>(b.timelines));
    }

    /** @return topic -> the timeline the profile's {@code timelines} sets for it, in file order */
    public Map<String, io.flywheel.align.StreamTimeline> timelines() { return timelines; }

    /** @return the timeline the profile sets for a topic, if any */
    public Optional<io.flywheel.align.StreamTimeline> timeline(String topic) {
        return Optional.ofNullable(timelines.get(topic));
    }

    /**
     * @return episode field ({@link #METADATA_FIELDS}) -> the recording metadata key that fills it, as the
     *     profile's {@code metadata_keys} names it (MCAP metadata record {@code R} key {@code k} is {@code R.k};
     *     keys of a record named {@code episode} have no prefix); empty when the profile maps none
     */
    public Map<String, String> metadataKeys() { return metadataKeys; }

    /** @return a builder for an empty profile */
    public static Builder builder() {
        return new Builder();
    }

    /** @return where the profile came from: a file path, "built", or "detected" */
    public String source() { return source; }

    /** @return robot id, "" when not set */
    public String robotId() { return robotId; }

    /** @return the master clock topic, if set */
    public Optional<String> master() { return master.isEmpty() ? Optional.empty() : Optional.of(master); }

    /** @return topic -> role as named (or detected), in order */
    public Map<String, StreamRole> roles() { return roles; }

    /**
     * @return topic -> why it has its role: "profile", "not in profile", or a guess's reason (e.g. "type
     *     CompressedImage"); topics without a reason are absent
     */
    public Map<String, String> reasons() { return reasons; }

    /** @return topic -> clock offset in ns, added to the topic's times before alignment */
    public Map<String, Long> clockOffsetsNs() { return clockOffsetsNs; }

    /** @return a topic's clock offset, ns; 0 when none is set */
    public long clockOffsetNs(String topic) { return clockOffsetsNs.getOrDefault(topic, 0L); }

    /** @return joint name -> {lower, upper} (copies on each call are not made: do not modify) */
    public Map<String, double[]> jointLimits() { return jointLimits; }

    /** @return nominal rate of a topic in Hz, if set */
    public OptionalDouble nominalRateHz(String topic) {
        Double d = nominalRatesHz.get(topic);
        return d == null ? OptionalDouble.empty() : OptionalDouble.of(d);
    }

    /** @return topic -> nominal rate in Hz */
    public Map<String, Double> nominalRatesHz() { return nominalRatesHz; }

    /** @return topic -> alignment settings from the profile's {@code align} section, in file order */
    public Map<String, AlignSetting> align() { return align; }

    /** @return the alignment settings of a topic, if the profile has any */
    public Optional<AlignSetting> align(String topic) { return Optional.ofNullable(align.get(topic)); }

    /**
     * @return the joint names the profile's {@code gripper_joints} key names (state joints whose position is a
     *     gripper opening), in file order; empty when the key is absent (then names containing {@code gripper} or
     *     {@code finger} are taken, see {@link GripperJoint#select})
     */
    public List<String> gripperJoints() { return gripperJoints; }

    /** @return the URDF the profile's {@code urdf} key names, parsed; empty without the key */
    public java.util.Optional<Urdf> urdf() { return java.util.Optional.ofNullable(urdf); }

    /** @return the role of a topic: the one named, else OTHER */
    public StreamRole role(String topic) {
        return roles.getOrDefault(topic, StreamRole.OTHER);
    }

    /** @return true when the profile names at least one role */
    public boolean namesRoles() {
        return !roles.isEmpty();
    }

    /**
     * Resolves this profile against the topics of a recording: named roles are kept (unnamed topics become
     * OTHER); when the profile names no role, every role is guessed. Robot id, offsets, limits and rates are
     * kept; the master is the named one, else the default (see class comment).
     *
     * @param channels the recording's topics
     * @return the profile as applied
     */
    public RobotProfile resolve(List<Channel> channels) {
        return resolve(channels, Map.of());
    }

    /** As {@link #resolve(List)}, with source-specific guesses (RLDS feature keys) taking precedence over {@link #guess}. */
    RobotProfile resolve(List<Channel> channels, Map<String, Guess> sourceGuesses) {
        Builder b = toBuilder();
        b.roles.clear();
        b.reasons.clear();
        if (namesRoles()) { // the declared order first (a state: [left, right] list is the state vector's order)
            List<Channel> ordered = new ArrayList<>();
            for (String topic : roles.keySet()) {
                channels.stream().filter(c -> c.topic().equals(topic)).findFirst().ifPresent(ordered::add);
            }
            channels.stream().filter(c -> !roles.containsKey(c.topic())).forEach(ordered::add);
            channels = ordered;
        }
        for (Channel c : channels) {
            if (namesRoles()) {
                b.role(c.topic(), role(c.topic()), roles.containsKey(c.topic()) ? "profile" : "not in profile");
            } else {
                Guess g = sourceGuesses.containsKey(c.topic()) ? sourceGuesses.get(c.topic())
                        : guess(c.topic(), c.messageType());
                b.role(c.topic(), g.role(), g.reason());
            }
        }
        if (master.isEmpty()) {
            b.master(defaultMaster(channels, b.roles));
        }
        if (!namesRoles()) {
            b.source(source.equals("built") ? "detected" : source + " + detected roles");
        }
        return b.build();
    }

    /**
     * Guesses roles from message types and topic names (no profile).
     *
     * @param channels the recording's topics
     * @return a profile with a role for every topic and the default master
     */
    public static RobotProfile detect(List<Channel> channels) {
        return builder().build().resolve(channels);
    }

    /**
     * One role guess with its reason.
     *
     * @param role the guessed role
     * @param reason why, e.g. "type CompressedImage"
     */
    public record Guess(StreamRole role, String reason) {}

    /**
     * @param topic topic name
     * @param messageType schema name in any of the usual spellings ({@code sensor_msgs/msg/Image},
     *     {@code sensor_msgs/Image}, {@code foxglove.CompressedImage})
     * @return the guessed role and the reason
     */
    public static Guess guess(String topic, String messageType) {
        String type = messageType == null ? "" : messageType;
        String shortType = Values.shortType(type);
        String last = topic.substring(topic.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
        String t = topic.toLowerCase(Locale.ROOT);
        Guess teleop = teleopGuess(topic, shortType);
        if (teleop != null) {
            return teleop;
        }
        if (last.equals("tf_static")) { // latched: published once, so no frame could be paired with it
            return new Guess(StreamRole.OTHER, "static transforms (latched, published once), not a time series");
        }
        switch (shortType) {
            case "CompressedImage", "Image", "RawImage", "CompressedVideo":
                return new Guess(StreamRole.CAMERA, "type " + shortType);
            case "JointState":
                if (t.contains("gripper")) return new Guess(StreamRole.GRIPPER, "JointState on a gripper topic");
                return new Guess(StreamRole.STATE, "type JointState");
            case "Pose", "PoseStamped", "PoseWithCovarianceStamped", "Odometry", "TFMessage":
                return new Guess(StreamRole.STATE, "type " + shortType);
            case "Twist", "TwistStamped":
                return new Guess(StreamRole.ACTION, "type " + shortType);
            case "String":
                if (last.contains("task") || last.contains("instruction")) {
                    return new Guess(StreamRole.TASK, "String on topic named task/instruction");
                }
                if (last.contains("outcome")) return new Guess(StreamRole.OUTCOME, "String on topic named outcome");
                return new Guess(StreamRole.OTHER, "String on an unnamed topic");
            default:
                break;
        }
        if (last.contains("outcome")) return new Guess(StreamRole.OUTCOME, "topic named outcome");
        if (shortType.endsWith("MultiArray")) {
            if (BYTE_ARRAYS.contains(shortType)) { // bytes: a serialized blob or a raw buffer, not a value vector
                return new Guess(StreamRole.OTHER, "type " + shortType + " (bytes, not values)");
            }
            if (t.contains("gripper")) return new Guess(StreamRole.GRIPPER, shortType + " on a gripper topic");
            if (last.contains("state") || last.contains("obs") || last.contains("position") || last.contains("joints")) {
                return new Guess(StreamRole.STATE, shortType + " on a topic named state/obs/position/joints");
            }
            return new Guess(StreamRole.ACTION, "type " + shortType);
        }
        if (t.contains("gripper") && isNumericScalarType(shortType)) {
            return new Guess(StreamRole.GRIPPER, "numeric type on a gripper topic");
        }
        if (shortType.endsWith("Action") || shortType.endsWith("Command")) {
            return new Guess(StreamRole.ACTION, "type named *" + (shortType.endsWith("Action") ? "Action" : "Command"));
        }
        if (shortType.endsWith("State") && !shortType.endsWith("BatteryState")) {
            return new Guess(StreamRole.STATE, "type named *State");
        }
        return new Guess(StreamRole.OTHER, "no rule matched " + (type.isEmpty() ? "(no type)" : shortType));
    }

    /**
     * Teleoperation topics: a leader arm's joints are what the operator commands (ACTION), a follower's are what
     * the robot did (STATE). Matched on the topic's last segment ({@code *_lead}, {@code *_leader} -> ACTION;
     * {@code *_follow}, {@code *_follower} -> STATE) or a last segment {@code command} / {@code target}
     * ({@code /arm/command}, {@code /arm/target} -> ACTION), for numeric joint-like types only (JointState,
     * *MultiArray, types named *State / *Command); gripper topics stay GRIPPER.
     *
     * @return the guess, or null when the topic is not named like a teleoperation topic
     */
    static Guess teleopGuess(String topic, String shortType) {
        String t = topic.toLowerCase(Locale.ROOT);
        if (t.contains("gripper")) {
            return null;
        }
        boolean jointLike = shortType.equals("JointState") || shortType.endsWith("MultiArray")
                || (shortType.endsWith("State") && !shortType.endsWith("BatteryState")) || shortType.endsWith("Command");
        if (!jointLike) {
            return null;
        }
        String last = t.endsWith("/") ? t.substring(0, t.length() - 1) : t;
        last = last.substring(last.lastIndexOf('/') + 1);
        if (last.endsWith("_lead") || last.endsWith("_leader")) {
            return new Guess(StreamRole.ACTION, "teleoperation leader (topic *" + last.substring(last.lastIndexOf('_'))
                    + ") -> action");
        }
        if (last.endsWith("_follow") || last.endsWith("_follower")) {
            return new Guess(StreamRole.STATE, "teleoperation follower (topic *" + last.substring(last.lastIndexOf('_'))
                    + ") -> state");
        }
        if (last.equals("command") || last.equals("target")) {
            return new Guess(StreamRole.ACTION, "topic */" + last + " -> action");
        }
        return null;
    }

    /** std_msgs multi-arrays of bytes. */
    private static final Set<String> BYTE_ARRAYS = Set.of("ByteMultiArray", "UInt8MultiArray", "Int8MultiArray");

    private static boolean isNumericScalarType(String s) {
        return switch (s) {
            case "Float32", "Float64", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Bool" -> true;
            default -> false;
        };
    }

    /**
     * @return the default master: lowest-id camera, else JointState-first lowest-id state that is not a TF stream
     *     (transforms come in bursts, /tf_static once), else ""
     */
    static String defaultMaster(List<Channel> channels, Map<String, StreamRole> roles) {
        Optional<Channel> cam = channels.stream().filter(c -> roles.get(c.topic()) == StreamRole.CAMERA)
                .min(Comparator.comparingInt(Channel::channelId));
        if (cam.isPresent()) return cam.get().topic();
        return channels.stream().filter(c -> roles.get(c.topic()) == StreamRole.STATE)
                .filter(c -> c.messageType() == null || !c.messageType().toLowerCase(Locale.ROOT).endsWith("tfmessage"))
                .min(Comparator.<Channel>comparingInt(c -> c.messageType() != null
                        && c.messageType().endsWith("JointState") ? 0 : 1).thenComparingInt(Channel::channelId))
                .map(Channel::topic).orElse("");
    }

    /**
     * @return a human-readable description: source, robot id, master, one line per topic with role and the
     *     reason (for detected roles), offsets, limits and rates
     */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("robot profile (").append(source).append(")");
        if (!robotId.isEmpty()) sb.append(" robot ").append(robotId);
        sb.append("\n  master: ").append(master.isEmpty() ? "(none)" : master).append('\n');
        int w = roles.keySet().stream().mapToInt(String::length).max().orElse(0);
        roles.forEach((topic, role) -> {
            sb.append("  ").append(topic).append(" ".repeat(w - topic.length())).append("  ")
                    .append(role.name().toLowerCase(Locale.ROOT));
            String r = reasons.get(topic);
            if (r != null && !r.isEmpty()) sb.append("  (").append(r).append(')');
            sb.append('\n');
        });
        clockOffsetsNs.forEach((k, v) -> sb.append("  clock offset ").append(k).append(": ").append(v).append(" ns\n"));
        jointLimits.forEach((k, v) -> sb.append("  joint limit ").append(k).append(": [").append(v[0]).append(", ")
                .append(v[1]).append("]\n"));
        metadataKeys.forEach((k, v) -> sb.append("  metadata ").append(k).append(" <- ").append(v).append('\n'));
        if (!gripperJoints.isEmpty()) sb.append("  gripper joints: ").append(String.join(", ", gripperJoints)).append('\n');
        if (urdf != null) sb.append("  urdf: ").append(urdf.source()).append(" (").append(urdf.joints().size()).append(" joints)\n");
        nominalRatesHz.forEach((k, v) -> sb.append("  nominal rate ").append(k).append(": ").append(v).append(" Hz\n"));
        timelines.forEach((k, v) -> sb.append("  timeline ").append(k).append(": ").append(v.id()).append('\n'));
        align.forEach((k, v) -> sb.append("  align ").append(k).append(":")
                .append(v.method() == null ? "" : " " + v.method().name().toLowerCase(Locale.ROOT))
                .append(v.toleranceNs() == null ? "" : " tolerance " + v.toleranceNs() / 1e6 + " ms")
                .append(v.onMiss() == null ? "" : " on miss " + (v.onMiss() == io.flywheel.align.MissPolicy.FLAG
                        ? "flag" : "drop")).append('\n'));
        return sb.toString();
    }

    @Override
    public String toString() {
        return describe();
    }

    /** @return a builder holding this profile's settings */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.source = source;
        b.robotId = robotId;
        b.master = master;
        b.roles.putAll(roles);
        b.reasons.putAll(reasons);
        b.clockOffsetsNs.putAll(clockOffsetsNs);
        b.jointLimits.putAll(jointLimits);
        b.nominalRatesHz.putAll(nominalRatesHz);
        b.align.putAll(align);
        b.gripperJoints.addAll(gripperJoints);
        b.urdf = urdf;
        b.metadataKeys.putAll(metadataKeys);
        b.timelines.putAll(timelines);
        return b;
    }

    // ------------------------------------------------------------------------------------------ YAML

    /**
     * Loads a profile from a YAML file (format in the class comment).
     *
     * @param path the file
     * @return the profile
     * @throws IngestException naming the file and line when the YAML is malformed, a key is unknown, a
     *     role name is wrong or a value has the wrong type
     * @throws IOException when the file cannot be read
     */
    public static RobotProfile load(Path path) throws IOException {
        String text = Files.readString(path, StandardCharsets.UTF_8);
        return parse(new StringReader(text), path.toString());
    }

    /**
     * Parses a profile from YAML text.
     *
     * @param yaml the YAML
     * @param name file name for error messages
     * @return the profile
     * @throws IngestException as for {@link #load(Path)}
     */
    public static RobotProfile parse(Reader yaml, String name) throws IngestException {
        Node root;
        try {
            LoaderOptions lo = new LoaderOptions();
            lo.setAllowDuplicateKeys(false);
            lo.setMaxAliasesForCollections(10);
            lo.setCodePointLimit(1 << 20);
            root = new Yaml(lo).compose(yaml);
        } catch (MarkedYAMLException e) {
            int line = e.getProblemMark() == null ? 0 : e.getProblemMark().getLine() + 1;
            throw new IngestException(name, -1, "line " + line + ": not valid YAML: " + e.getProblem());
        } catch (YAMLException e) {
            throw new IngestException(name, -1, "not valid YAML: " + e.getMessage());
        }
        Builder b = builder().source(name);
        if (root == null) {
            return b.build();
        }
        MappingNode map = mapping(root, name, "the profile");
        for (NodeTuple t : map.getValue()) {
            String key = scalar(t.getKeyNode(), name, "a key");
            Node v = t.getValueNode();
            switch (key) {
                case "robot_id" -> b.robotId(scalar(v, name, "robot_id"));
                case "master" -> b.master(scalar(v, name, "master"));
                case "cameras", "state", "action", "gripper", "task", "outcome" -> {
                    StreamRole role = StreamRole.parse(key.equals("cameras") ? "camera" : key);
                    for (String topic : topics(v, name, key)) b.role(topic, role, "profile");
                }
                case "roles" -> {
                    for (NodeTuple rt : mapping(v, name, "roles").getValue()) {
                        String topic = scalar(rt.getKeyNode(), name, "a topic under roles");
                        String r = scalar(rt.getValueNode(), name, "the role of " + topic);
                        try {
                            b.role(topic, StreamRole.parse(r), "profile");
                        } catch (IllegalArgumentException e) {
                            throw error(name, rt.getValueNode(), e.getMessage());
                        }
                    }
                }
                case "clock_offsets_ns" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String topic = scalar(rt.getKeyNode(), name, "a topic under " + key);
                        String s = scalar(rt.getValueNode(), name, "the offset of " + topic);
                        try {
                            b.clockOffsetNs(topic, Long.parseLong(s.trim().replace("_", "")));
                        } catch (NumberFormatException e) {
                            throw error(name, rt.getValueNode(), "clock offset of " + topic
                                    + " must be an integer number of nanoseconds, found '" + s + "'");
                        }
                    }
                }
                case "joint_limits" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String joint = scalar(rt.getKeyNode(), name, "a joint under " + key);
                        Node lv = rt.getValueNode();
                        if (!(lv instanceof SequenceNode seq) || seq.getValue().size() != 2) {
                            throw error(name, lv, "joint limit of " + joint + " must be a list [lower, upper]");
                        }
                        double lo = number(seq.getValue().get(0), name, "lower limit of " + joint);
                        double hi = number(seq.getValue().get(1), name, "upper limit of " + joint);
                        if (!(lo <= hi)) throw error(name, lv, "joint limit of " + joint + ": lower " + lo + " > upper " + hi);
                        b.jointLimit(joint, lo, hi);
                    }
                }
                case "nominal_rates_hz" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String topic = scalar(rt.getKeyNode(), name, "a topic under " + key);
                        double hz = number(rt.getValueNode(), name, "nominal rate of " + topic);
                        if (!(hz > 0)) throw error(name, rt.getValueNode(), "nominal rate of " + topic + " must be > 0 Hz");
                        b.nominalRateHz(topic, hz);
                    }
                }
                case "gripper_joints" -> {
                    List<String> joints = topics(v, name, key);
                    for (String j : joints) {
                        if (j.isBlank()) throw error(name, v, "gripper_joints: a joint name must not be empty");
                    }
                    b.gripperJoints(joints);
                }
                case "urdf" -> {
                    String file = scalar(v, name, key).strip();
                    if (file.isEmpty()) throw error(name, v, "urdf: a file path must not be empty");
                    Path at = Path.of(file);
                    Path dir = Path.of(name).toAbsolutePath().getParent();
                    if (!at.isAbsolute() && dir != null) at = dir.resolve(at);
                    byte[] text;
                    try {
                        text = Files.readAllBytes(at);
                    } catch (IOException e) {
                        throw error(name, v, "urdf: cannot read " + at + ": " + e.getMessage());
                    }
                    try {
                        b.urdf(Urdf.parse(text, at.toString()));
                    } catch (IngestException e) {
                        throw error(name, v, "urdf: " + e.getMessage());
                    }
                }
                case "metadata_keys" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String field = scalar(rt.getKeyNode(), name, "an episode field under metadata_keys");
                        if (!METADATA_FIELDS.contains(field)) {
                            throw error(name, rt.getKeyNode(), "metadata_keys: unknown episode field '" + field
                                    + "'; expected one of " + String.join(", ", METADATA_FIELDS));
                        }
                        String mk = scalar(rt.getValueNode(), name, "the metadata key of " + field);
                        if (mk.isBlank()) throw error(name, rt.getValueNode(), "metadata_keys: the key of " + field + " is empty");
                        b.metadataKey(field, mk.trim());
                    }
                }
                case "align" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String topic = scalar(rt.getKeyNode(), name, "a topic under align");
                        b.align(topic, alignSetting(rt.getValueNode(), name, topic));
                    }
                }
                case "timelines" -> {
                    for (NodeTuple rt : mapping(v, name, key).getValue()) {
                        String topic = scalar(rt.getKeyNode(), name, "a topic under timelines");
                        String tl = scalar(rt.getValueNode(), name, "the timeline of " + topic);
                        try {
                            b.timeline(topic, io.flywheel.align.StreamTimeline.parse(tl));
                        } catch (IllegalArgumentException e) {
                            throw error(name, rt.getValueNode(), "timeline of " + topic + ": " + e.getMessage());
                        }
                    }
                }
                default -> throw error(name, t.getKeyNode(), "unknown key '" + key + "'; expected robot_id, master,"
                        + " cameras, state, action, gripper, task, outcome, roles, clock_offsets_ns, joint_limits,"
                        + " nominal_rates_hz, align, gripper_joints, urdf, metadata_keys, timelines");
            }
        }
        return b.build();
    }

    private static AlignSetting alignSetting(Node n, String file, String topic) throws IngestException {
        io.flywheel.align.AlignMethod method = null;
        Long tol = null;
        io.flywheel.align.MissPolicy miss = null;
        for (NodeTuple ft : mapping(n, file, "align of " + topic).getValue()) {
            String k = scalar(ft.getKeyNode(), file, "a key under align of " + topic);
            Node fv = ft.getValueNode();
            try {
                switch (k) {
                    case "method" -> method = io.flywheel.align.AlignMethod.parse(scalar(fv, file, "method of " + topic));
                    case "tolerance_ms" -> {
                        double ms = number(fv, file, "tolerance_ms of " + topic);
                        if (!(ms >= 0)) throw error(file, fv, "tolerance_ms of " + topic + " must be >= 0, found " + ms);
                        tol = Math.round(ms * 1e6);
                    }
                    case "on_miss" -> miss = io.flywheel.align.MissPolicy.parse(scalar(fv, file, "on_miss of " + topic));
                    default -> throw error(file, ft.getKeyNode(), "unknown key '" + k + "' under align of " + topic
                            + "; expected method, tolerance_ms, on_miss");
                }
            } catch (IllegalArgumentException e) {
                throw error(file, fv, topic + ": " + e.getMessage());
            }
        }
        return new AlignSetting(method, tol, miss);
    }

    private static IngestException error(String file, Node at, String problem) {
        return new IngestException(file, -1, "line " + (at.getStartMark().getLine() + 1) + ": " + problem);
    }

    private static MappingNode mapping(Node n, String file, String what) throws IngestException {
        if (n instanceof MappingNode m) return m;
        throw error(file, n, what + " must be a mapping (key: value lines)");
    }

    private static String scalar(Node n, String file, String what) throws IngestException {
        if (n instanceof ScalarNode s) return s.getValue();
        throw error(file, n, what + " must be a single value, not a " + (n instanceof SequenceNode ? "list" : "mapping"));
    }

    private static double number(Node n, String file, String what) throws IngestException {
        String s = scalar(n, file, what);
        try {
            return Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            throw error(file, n, what + " must be a number, found '" + s + "'");
        }
    }

    private static List<String> topics(Node n, String file, String key) throws IngestException {
        List<String> out = new ArrayList<>();
        if (n instanceof SequenceNode seq) {
            for (Node x : seq.getValue()) out.add(scalar(x, file, "an entry of " + key));
        } else {
            out.add(scalar(n, file, key));
        }
        return out;
    }

    /** Builder for {@link RobotProfile}. */
    public static final class Builder {
        private String source = "built";
        private String robotId = "";
        private String master = "";
        private final Map<String, StreamRole> roles = new LinkedHashMap<>();
        private final Map<String, String> reasons = new LinkedHashMap<>();
        private final Map<String, Long> clockOffsetsNs = new LinkedHashMap<>();
        private final Map<String, double[]> jointLimits = new LinkedHashMap<>();
        private final Map<String, Double> nominalRatesHz = new LinkedHashMap<>();
        private final Map<String, AlignSetting> align = new LinkedHashMap<>();
        private final List<String> gripperJoints = new ArrayList<>();
        private Urdf urdf;
        private final Map<String, String> metadataKeys = new LinkedHashMap<>();
        private final Map<String, io.flywheel.align.StreamTimeline> timelines = new LinkedHashMap<>();

        private Builder() {}

        /**
         * The timeline of one topic ({@link io.flywheel.align.StreamTimeline}): which times order and time its messages.
         *
         * @param topic the topic
         * @param timeline stamps, log times or auto
         * @return this
         */
        public Builder timeline(String topic, io.flywheel.align.StreamTimeline timeline) {
            timelines.put(java.util.Objects.requireNonNull(topic, "topic"),
                    java.util.Objects.requireNonNull(timeline, "timeline"));
            return this;
        }

        /**
         * Maps an episode field to the recording metadata key that fills it.
         *
         * @param field one of {@link #METADATA_FIELDS}
         * @param metadataKey e.g. {@code session.goal}
         * @return this
         * @throws IllegalArgumentException when {@code field} is not one of {@link #METADATA_FIELDS}
         */
        public Builder metadataKey(String field, String metadataKey) {
            if (!METADATA_FIELDS.contains(field)) {
                throw new IllegalArgumentException("unknown episode field '" + field + "'; expected one of "
                        + String.join(", ", METADATA_FIELDS));
            }
            metadataKeys.put(field, java.util.Objects.requireNonNull(metadataKey, "metadataKey"));
            return this;
        }

        public Builder source(String s) { source = s; return this; }
        public Builder robotId(String s) { robotId = s == null ? "" : s; return this; }
        public Builder master(String topic) { master = topic == null ? "" : topic; return this; }
        public Builder role(String topic, StreamRole role) { return role(topic, role, "profile"); }

        Builder role(String topic, StreamRole role, String reason) {
            roles.put(topic, role);
            reasons.put(topic, reason);
            return this;
        }

        public Builder clockOffsetNs(String topic, long ns) { clockOffsetsNs.put(topic, ns); return this; }
        public Builder jointLimit(String joint, double lower, double upper) {
            jointLimits.put(joint, new double[] {lower, upper});
            return this;
        }
        public Builder nominalRateHz(String topic, double hz) { nominalRatesHz.put(topic, hz); return this; }
        /** Alignment settings of one topic (see {@link AlignSetting}). */
        public Builder align(String topic, AlignSetting setting) {
            align.put(topic, java.util.Objects.requireNonNull(setting, "setting"));
            return this;
        }

        /**
         * The joints whose positions are gripper openings (see the class comment); replaces any set before.
         *
         * @param joints joint names as in the JointState's {@code name} field
         * @return this
         */
        public Builder gripperJoints(List<String> joints) {
            gripperJoints.clear();
            for (String j : joints) gripperJoints.add(java.util.Objects.requireNonNull(j, "joint"));
            return this;
        }

        /**
         * The robot's URDF ({@link RobotProfile#urdf()}); null: none.
         *
         * @param urdf the parsed URDF
         * @return this
         */
        public Builder urdf(Urdf urdf) {
            this.urdf = urdf;
            return this;
        }

        public RobotProfile build() { return new RobotProfile(this); }
    }
}
