package io.flywheel.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The state joint whose position stands in for a gripper topic, in an episode that has none: many robots publish
 * their gripper inside {@code sensor_msgs/JointState} (Franka's {@code fr3_finger_joint1/2}, the simulator's
 * {@code left_gripper} / {@code right_gripper} of {@code /joint_states}).
 *
 * <p>Candidates ({@link #select}): the joints of the episode's STATE streams that the robot profile names in
 * {@code gripper_joints} ({@link RobotProfile#gripperJoints()}, any STATE stream with component names); without
 * that key, the joints of STATE {@code JointState} streams whose names contain {@code gripper} or {@code finger}
 * (case-insensitive), finger joints by name first ({@code *gripper_finger*}, {@code *finger_joint*}: {@link #nameRank})
 * so that ranges in different units (a revolute joint's radians, a finger's metres) are never compared; when no joint
 * is named so, the joints the recording declares ({@link #declaredJoints}: an MCAP metadata key {@code gripper_joints}
 * or {@code end_effector_joints}), in any STATE stream with component names; then the gripper joints its URDF
 * declares ({@link #urdf}, {@link Urdf#gripperJoints()}: a finger/gripper joint or child link, a {@code <mimic>} pair
 * of prismatic joints). With a URDF, a joint's unit is its type's ({@link Urdf#unitOf}) and candidates are compared
 * only within one unit, metres first. Among
 * the candidates of the highest rank, the one with the largest range of motion (max - min of its position over
 * the episode's messages) is taken: on a dual-arm robot the active arm's gripper moves and the idle one stays open. Ties go to
 * the first candidate in stream (channel id) then joint order (Franka's two fingers mirror each other).
 *
 * <p>The value is used as it is: a JointState gripper position is the finger opening (metres, or a normalised
 * 0..1), larger = more open, which is the convention of the frames' {@code gripper} column and of
 * {@code io.flywheel.enrich.motion.MotionLabeler}.
 *
 * @param topic the STATE stream's topic, e.g. {@code /joint_states}
 * @param joint the joint's name, e.g. {@code left_gripper}
 * @param index the joint's component index in the stream's values ({@link StreamData#values()}), &ge; 0
 * @param rangeOfMotion max - min of the joint's position over the episode's messages, in the joint's units
 *     (metres for a finger opening); 0 when it never moves
 * @param candidates every gripper joint found, as {@code topic:joint}, in the order they were considered
 * @param source where the choice came from: {@link #SOURCE_PROFILE}, {@link #SOURCE_NAME}, {@link #SOURCE_METADATA}
 *     or {@link #SOURCE_URDF}
 * @param unit the joint's unit from its URDF type ({@code m} prismatic, {@code rad} revolute / continuous); "" when
 *     the episode has no URDF or it does not list the joint (a range never decides the unit)
 */
public record GripperJoint(String topic, String joint, int index, double rangeOfMotion, List<String> candidates,
                           String source, String unit) {
    /** The choice came from the robot profile's {@code gripper_joints}. */
    public static final String SOURCE_PROFILE = "profile";
    /** The choice came from the joint names ({@code *gripper*}, {@code *finger*}). */
    public static final String SOURCE_NAME = "name";
    /** The choice came from the recording's metadata keys {@code gripper_joints} / {@code end_effector_joints}. */
    public static final String SOURCE_METADATA = "metadata";
    /** The choice came from the recording's URDF ({@link Urdf#gripperJoints()}). */
    public static final String SOURCE_URDF = "urdf";

    public GripperJoint {
        if (index < 0) {
            throw new IllegalArgumentException("joint index must be >= 0, got " + index);
        }
        candidates = List.copyOf(candidates);
        java.util.Objects.requireNonNull(source, "source");
        java.util.Objects.requireNonNull(unit, "unit");
    }

    /**
     * @param name a joint name
     * @return true when the name contains {@code gripper} or {@code finger}, in any case
     */
    public static boolean looksLikeGripper(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return n.contains("gripper") || n.contains("finger");
    }

    /**
     * @param name a joint name
     * @return 2 for a finger joint by name ({@code *gripper_finger*}, {@code *finger_joint*}, any case: a
     *     prismatic finger, metres), 1 for any other {@code gripper} / {@code finger} name, 0 otherwise
     */
    public static int nameRank(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        if (n.contains("gripper_finger") || n.contains("finger_joint")) {
            return 2;
        }
        return looksLikeGripper(name) ? 1 : 0;
    }

    /**
     * Picks the gripper joint of an episode (rule in the class comment).
     *
     * @param episode the episode
     * @param profile the robot profile applied (its {@code gripper_joints}); null: the name rule
     * @return the joint; empty when the episode has a GRIPPER stream with values, or no candidate joint with at
     *     least one finite position
     */
    public static Optional<GripperJoint> select(Episode episode, RobotProfile profile) {
        for (StreamData s : episode.streams()) {
            if (s.role() == StreamRole.GRIPPER && s.values() != null && s.size() > 0) {
                return Optional.empty();
            }
        }
        // the profile's URDF wins over the recording's
        Urdf urdf = profile != null && profile.urdf().isPresent() ? profile.urdf().get() : urdf(episode).orElse(null);
        List<String> named = profile == null ? List.of() : profile.gripperJoints();
        if (!named.isEmpty()) {
            return select(episode, named, urdf, SOURCE_PROFILE);
        }
        Optional<GripperJoint> g = select(episode, List.of(), urdf, SOURCE_NAME);
        if (g.isEmpty()) {
            List<String> declared = declaredJoints(episode.metadata());
            if (!declared.isEmpty()) {
                g = select(episode, declared, urdf, SOURCE_METADATA);
            }
        }
        if (g.isEmpty() && urdf != null && !urdf.gripperJoints().isEmpty()) {
            g = select(episode, urdf.gripperJoints(), urdf, SOURCE_URDF);
        }
        return g;
    }

    /**
     * The URDF of an episode: the metadata value of a key {@code robot_description}: an MCAP's URDF attachment or the
     * first message of its {@code /robot_description} {@code std_msgs/String} topic (as ROS 2's robot_state_publisher
     * latches it), which the MCAP reader puts there, or a metadata record's {@code robot_description} (any record:
     * {@code robot.robot_description}).
     *
     * @param episode the episode
     * @return the URDF; empty when there is none, or when the one found does not parse (the episode's
     *     {@code robot_description.warning} metadata, where the reader left one, says why)
     */
    public static Optional<Urdf> urdf(Episode episode) {
        for (java.util.Map.Entry<String, String> e : episode.metadata().entrySet()) {
            String k = e.getKey();
            if (k.equals("robot_description") || k.endsWith(".robot_description")) {
                String src = episode.metadata().getOrDefault(k + ".source", "metadata " + k);
                try {
                    return Optional.of(Urdf.parse(Urdf.utf8(e.getValue()), src));
                } catch (IngestException bad) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The gripper joints a recording declares in its metadata: the value of a key {@code gripper_joints} or
     * {@code end_effector_joints} of any metadata record ({@code robot.gripper_joints}), a JSON list or a comma
     * separated list of joint names.
     *
     * @param metadata the episode's metadata (MCAP metadata records flattened as {@code record.key})
     * @return the joint names, in the order given; empty when no key declares any
     */
    public static List<String> declaredJoints(java.util.Map<String, String> metadata) {
        for (java.util.Map.Entry<String, String> e : new java.util.TreeMap<>(metadata).entrySet()) {
            String k = e.getKey();
            String leaf = k.substring(k.lastIndexOf('.') + 1);
            if (!leaf.equals("gripper_joints") && !leaf.equals("end_effector_joints")) {
                continue;
            }
            String v = e.getValue().strip();
            if (v.startsWith("[") && v.endsWith("]")) {
                v = v.substring(1, v.length() - 1);
            }
            List<String> out = new ArrayList<>();
            for (String part : v.split(",")) {
                String n = part.strip();
                if (n.length() >= 2 && n.startsWith("\"") && n.endsWith("\"")) {
                    n = n.substring(1, n.length() - 1);
                }
                if (!n.isEmpty()) {
                    out.add(n);
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
        }
        return List.of();
    }

    /**
     * The rule of {@link #select(Episode, RobotProfile)} with {@code named} joints (empty: the name rule). With a URDF,
     * the candidates are grouped by unit (the joint's type: prismatic, metres, first; then revolute / continuous,
     * radians; then joints the URDF does not type) and only the first group's ranges are compared.
     */
    private static Optional<GripperJoint> select(Episode episode, List<String> named, Urdf urdf, String source) {
        List<String> candidates = new ArrayList<>();
        GripperJoint best = null;
        int bestRank = -1;
        for (StreamData s : episode.streams()) {
            if (s.role() != StreamRole.STATE || s.values() == null || s.names().isEmpty()) {
                continue;
            }
            boolean jointState = s.messageType() != null && s.messageType().endsWith("JointState");
            if (named.isEmpty() && !jointState) {
                continue;
            }
            List<String> names = s.names();
            for (int j = 0; j < names.size(); j++) {
                String name = names.get(j);
                if (named.isEmpty() ? !looksLikeGripper(name) : !named.contains(name)) {
                    continue;
                }
                double lo = Double.POSITIVE_INFINITY;
                double hi = Double.NEGATIVE_INFINITY;
                for (double[] v : s.values()) {
                    if (v != null && j < v.length && Double.isFinite(v[j])) {
                        lo = Math.min(lo, v[j]);
                        hi = Math.max(hi, v[j]);
                    }
                }
                if (lo > hi) {
                    continue; // never a finite position
                }
                candidates.add(s.topic() + ":" + name);
                String unit = urdf == null ? "" : urdf.joint(name).map(Urdf.Joint::unit).orElse("");
                // ranges are compared only within one unit (a revolute joint's radians never beat a finger's
                // metres): by the URDF's joint type when there is one, else by name rank
                int unitRank = switch (unit) {
                    case "m" -> 2;
                    case "rad" -> 1;
                    default -> 0;
                };
                int rank = unitRank * 3 + (named.isEmpty() ? nameRank(name) : 0);
                if (best == null || rank > bestRank || (rank == bestRank && hi - lo > best.rangeOfMotion())) {
                    best = new GripperJoint(s.topic(), name, j, hi - lo, List.of(), source, unit);
                    bestRank = rank;
                }
            }
        }
        return best == null ? Optional.empty()
                : Optional.of(new GripperJoint(best.topic(), best.joint(), best.index(), best.rangeOfMotion(),
                        candidates, source, best.unit()));
    }
}
