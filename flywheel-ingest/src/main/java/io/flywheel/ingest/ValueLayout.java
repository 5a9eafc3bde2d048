package io.flywheel.ingest;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How the frames' {@code state} (or {@code action}) vector of an episode is made of its streams: every STATE (ACTION)
 * stream with numeric values, concatenated in the declared order (the robot profile's {@code state: [a, b]}, else
 * channel-id order), each aligned to the master clock on its own. Where the roles were guessed (no profile names
 * them), a {@code tf2_msgs/TFMessage} stream is left out of the vector (transforms come in bursts of varying frames),
 * and when some of the streams are {@code JointState}s (the follower arms of a teleoperated robot) only those make up
 * the vector, the others (a robot's own state message, an odometry) being kept as streams of their own: the streams
 * left out are named in {@link #leftOut()} (and the episode metadata's {@code value_topics}). A profile that names a
 * stream's role always takes it in.
 *
 * <p>Per-value names: a stream's component names as recorded ({@code JointState.name}; for other messages the field
 * paths, {@code position.x}; a {@code *MultiArray}'s {@code data[i]}). A name that two of the streams share is
 * prefixed by its topic's last segment ({@code left_follow.joint_1}); where two topics share the last segment, by the
 * topic without its leading slash ({@code left/joint_states.joint_1}).
 *
 * <p>Shapes: a stream's width is that of its first message with a value; a message of another width is an
 * {@link IngestException} naming the topic, the episode, the message index and the width expected. Episodes of one
 * recording must agree: the same topics, each of the same width ({@link #checkSameAs}).
 *
 * @param role {@link StreamRole#STATE} or {@link StreamRole#ACTION}
 * @param streams the streams of the vector, in order
 * @param widths per stream, its number of values
 * @param names per value, in vector order ({@code sum(widths)} of them)
 * @param leftOut the topics of the role with values that are not part of the vector (guessed roles only)
 */
public record ValueLayout(StreamRole role, List<StreamData> streams, List<Integer> widths, List<String> names,
                          List<String> leftOut) {
    public ValueLayout {
        streams = List.copyOf(streams);
        widths = List.copyOf(widths);
        names = List.copyOf(names);
        leftOut = List.copyOf(leftOut);
    }

    /** @return the vector's width: the sum of the streams' widths */
    public int width() {
        return names.size();
    }

    /** @return whether no stream makes up the vector */
    public boolean isEmpty() {
        return streams.isEmpty();
    }

    /**
     * Lays out an episode's vector of a role (rule in the class comment).
     *
     * @param episode the episode
     * @param profile the robot profile applied (declared order; whether roles were named), or null
     * @param role STATE or ACTION
     * @param file the recording's (first) file, named in errors; may be null
     * @return the layout; empty when the episode has no such stream with values
     * @throws IngestException when a stream's width changes within the episode
     */
    public static ValueLayout of(Episode episode, RobotProfile profile, StreamRole role, String file)
            throws IngestException {
        List<StreamData> picked = new ArrayList<>();
        List<String> leftOut = new ArrayList<>();
        for (StreamData s : episode.streams()) {
            if (s.role() != role || s.values() == null || s.size() == 0 || firstWidth(s) < 0) {
                continue;
            }
            boolean tf = Values.shortType(s.messageType()).equals("TFMessage");
            if (tf && !declared(profile, s)) {
                leftOut.add(s.topic());
                continue;
            }
            picked.add(s);
        }
        if (picked.stream().anyMatch(ValueLayout::isJointState)) {
            List<StreamData> kept = new ArrayList<>();
            for (StreamData s : picked) {
                if (isJointState(s) || declared(profile, s)) {
                    kept.add(s);
                } else {
                    leftOut.add(s.topic());
                }
            }
            picked = kept;
        }
        if (profile != null) {
            List<String> order = new ArrayList<>(profile.roles().keySet());
            picked.sort((a, b) -> Integer.compare(rank(order, a.topic()), rank(order, b.topic())));
        }
        List<Integer> widths = new ArrayList<>();
        List<List<String>> raw = new ArrayList<>();
        for (StreamData s : picked) {
            int w = firstWidth(s);
            double[][] v = s.values();
            for (int i = 0; i < v.length; i++) {
                if (v[i] != null && v[i].length != w) {
                    throw new IngestException(file, -1, role.name().toLowerCase(java.util.Locale.ROOT) + " topic "
                            + s.topic() + " of episode " + episode.episodeId() + ": message " + i + " has "
                            + v[i].length + " values, expected " + w + " (the width of its first message)");
                }
            }
            widths.add(w);
            List<String> n = s.names().size() == w ? s.names() : indexNames(s, w);
            raw.add(n);
        }
        return new ValueLayout(role, picked, widths, prefixClashes(picked, raw), leftOut);
    }

    /** @return whether the robot profile named the stream's role (not a guess) */
    private static boolean declared(RobotProfile profile, StreamData s) {
        return profile != null && "profile".equals(profile.reasons().get(s.topic()));
    }

    private static boolean isJointState(StreamData s) {
        return s.messageType() != null && s.messageType().endsWith("JointState")
                && !s.messageType().endsWith("MultiDOFJointState");
    }

    private static int rank(List<String> order, String topic) {
        int i = order.indexOf(topic);
        return i < 0 ? Integer.MAX_VALUE : i;
    }

    private static int firstWidth(StreamData s) {
        for (double[] v : s.values()) {
            if (v != null) {
                return v.length;
            }
        }
        return -1;
    }

    /**
     * Names of a stream without component names: the field path of its values ({@code data[i]}), else the topic's
     * last segment indexed ({@code state[i]} of RLDS {@code steps/observation/state}).
     */
    private static List<String> indexNames(StreamData s, int w) {
        String base = Values.shortType(s.messageType()).endsWith("MultiArray") ? "data" : basename(s.topic());
        List<String> out = new ArrayList<>(w);
        for (int i = 0; i < w; i++) {
            out.add(base + "[" + i + "]");
        }
        return out;
    }

    /** The names, each one that two streams share prefixed by its topic's short name. */
    static List<String> prefixClashes(List<StreamData> streams, List<List<String>> names) {
        Map<String, Integer> owners = new HashMap<>();
        for (List<String> n : names) {
            for (String x : new HashSet<>(n)) {
                owners.merge(x, 1, Integer::sum);
            }
        }
        Set<String> bases = new HashSet<>();
        Set<String> clashingBases = new HashSet<>();
        for (StreamData s : streams) {
            if (!bases.add(basename(s.topic()))) {
                clashingBases.add(basename(s.topic()));
            }
        }
        List<String> out = new ArrayList<>();
        for (int k = 0; k < streams.size(); k++) {
            String topic = streams.get(k).topic();
            String prefix = clashingBases.contains(basename(topic))
                    ? (topic.startsWith("/") ? topic.substring(1) : topic) : basename(topic);
            for (String x : names.get(k)) {
                out.add(owners.get(x) > 1 ? prefix + "." + x : x);
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** @return the topic's last segment ({@code /arm/left_follow} -> {@code left_follow}) */
    static String basename(String topic) {
        String t = topic.endsWith("/") ? topic.substring(0, topic.length() - 1) : topic;
        return t.substring(t.lastIndexOf('/') + 1);
    }

    /**
     * Checks that another episode of the same recording lays out its vector as this one does.
     *
     * @param other the other episode's layout of the same role
     * @param episodeId the other episode
     * @param file the recording's (first) file, named in the error; may be null
     * @throws IngestException naming the topic, the episode and the width expected, when a topic's width differs
     */
    public void checkSameAs(ValueLayout other, String episodeId, String file) throws IngestException {
        List<String> mine = streams.stream().map(StreamData::topic).toList();
        List<String> theirs = other.streams.stream().map(StreamData::topic).toList();
        if (!mine.equals(theirs) && !mine.isEmpty() && !theirs.isEmpty()) { // an episode without any: null vectors
            throw new IngestException(file, -1, role.name().toLowerCase(java.util.Locale.ROOT) + " of episode "
                    + episodeId + " is made of " + (theirs.isEmpty() ? "no topic" : String.join(", ", theirs))
                    + ", expected " + (mine.isEmpty() ? "no topic" : String.join(", ", mine)) + " (as in the recording's"
                    + " first episode): its vectors would not line up");
        }
        for (int k = 0; k < other.streams.size(); k++) {
            String topic = other.streams.get(k).topic();
            for (int j = 0; j < streams.size(); j++) {
                if (streams.get(j).topic().equals(topic) && !widths.get(j).equals(other.widths.get(k))) {
                    throw new IngestException(file, -1, role.name().toLowerCase(java.util.Locale.ROOT) + " topic "
                            + topic + " of episode " + episodeId + " has " + other.widths.get(k)
                            + " values per message, expected " + widths.get(j) + " (its width in the recording's"
                            + " first episode)");
                }
            }
        }
    }
}
