package io.flywheel.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Extracts numbers, texts and header stamps from decoded message trees ({@link io.flywheel.decode.MessageDecoder}
 * form: maps in field order, lists, boxed numbers, {@code byte[]}).
 */
final class Values {
    private Values() {}

    /** Numeric components of one message with their names. */
    record Vector(double[] values, List<String> names) {}

    /**
     * The value vector of a message, by the rules of {@link StreamData#values()}: JointState -> position
     * (names: joint names); *MultiArray -> data; Twist -> [linear xyz, angular xyz]; TwistStamped -> its twist;
     * PoseStamped -> its pose [position xyz, orientation xyzw]; PoseWithCovarianceStamped -> its pose (the
     * covariance is left out); Odometry -> [pose.position xyz, pose.orientation xyzw, twist.linear xyz,
     * twist.angular xyz] (13, covariances left out); tf2_msgs/TFMessage -> per transform, in message order,
     * [translation xyz, rotation xyzw] named {@code <child_frame_id>.translation.x} ...;
     * anything else -> every numeric leaf in field order except the header / timestamp, byte arrays and
     * strings (names: dotted field paths).
     */
    @SuppressWarnings("unchecked")
    static Vector vector(Object tree, String messageType) {
        String shortType = shortType(messageType);
        if (tree instanceof Map<?, ?> m) {
            Map<String, Object> map = (Map<String, Object>) m;
            if (shortType.equals("JointState") && map.get("position") instanceof List<?> pos) {
                List<String> names = new ArrayList<>();
                if (map.get("name") instanceof List<?> nl) for (Object o : nl) names.add(String.valueOf(o));
                return new Vector(numbers(pos), names.size() == pos.size() ? names : List.of());
            }
            if (shortType.endsWith("MultiArray") && map.get("data") != null) {
                Object d = map.get("data");
                double[] v = d instanceof byte[] b ? bytes(b) : d instanceof List<?> l ? numbers(l) : new double[0];
                return new Vector(v, List.of());
            }
            if (shortType.equals("TwistStamped") && map.get("twist") != null) {
                return flatten(map.get("twist"), "");
            }
            if (shortType.equals("PoseStamped") && map.get("pose") != null) {
                return flatten(map.get("pose"), "");
            }
            if (shortType.equals("PoseWithCovarianceStamped") && map.get("pose") instanceof Map<?, ?> pc
                    && pc.get("pose") != null) {
                return flatten(pc.get("pose"), ""); // the covariance is 36 numbers of uncertainty, not state
            }
            if (shortType.equals("Odometry") && map.get("pose") instanceof Map<?, ?> pc && pc.get("pose") != null
                    && map.get("twist") instanceof Map<?, ?> tc && tc.get("twist") != null) {
                Vector pose = flatten(pc.get("pose"), "pose");
                Vector twist = flatten(tc.get("twist"), "twist");
                return concat(pose, twist);
            }
            if (shortType.equals("TFMessage") && map.get("transforms") instanceof List<?> tfs) {
                Vector all = new Vector(new double[0], List.of());
                for (Object o : tfs) {
                    if (o instanceof Map<?, ?> tf && tf.get("transform") != null) {
                        Object child = tf.get("child_frame_id");
                        String prefix = child == null || String.valueOf(child).isEmpty()
                                ? "transforms[" + all.names().size() / 7 + "]" : String.valueOf(child);
                        all = concat(all, flatten(tf.get("transform"), prefix));
                    }
                }
                return all;
            }
        }
        return flatten(tree, "");
    }

    private static Vector concat(Vector a, Vector b) {
        double[] v = new double[a.values().length + b.values().length];
        System.arraycopy(a.values(), 0, v, 0, a.values().length);
        System.arraycopy(b.values(), 0, v, a.values().length, b.values().length);
        List<String> names = new ArrayList<>(a.names());
        names.addAll(b.names());
        return new Vector(v, names);
    }

    static Vector flatten(Object tree, String prefix) {
        List<String> names = new ArrayList<>();
        List<Double> vals = new ArrayList<>();
        walk(tree, prefix, names, vals);
        double[] v = new double[vals.size()];
        for (int i = 0; i < v.length; i++) v[i] = vals.get(i);
        return new Vector(v, names);
    }

    private static void walk(Object o, String path, List<String> names, List<Double> vals) {
        if (o instanceof Number n) {
            names.add(path);
            vals.add(n.doubleValue());
        } else if (o instanceof Boolean b) {
            names.add(path);
            vals.add(b ? 1.0 : 0.0);
        } else if (o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                String k = String.valueOf(e.getKey());
                if (path.isEmpty() && (k.equals("header") || k.equals("timestamp"))) continue;
                walk(e.getValue(), path.isEmpty() ? k : path + "." + k, names, vals);
            }
        } else if (o instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) walk(l.get(i), path + "[" + i + "]", names, vals);
        }
        // strings, byte[], null: not numeric
    }

    static double[] numbers(List<?> l) {
        double[] v = new double[l.size()];
        for (int i = 0; i < v.length; i++) {
            Object o = l.get(i);
            v[i] = o instanceof Number n ? n.doubleValue() : o instanceof Boolean b ? (b ? 1 : 0) : Double.NaN;
        }
        return v;
    }

    private static double[] bytes(byte[] b) {
        double[] v = new double[b.length];
        for (int i = 0; i < b.length; i++) v[i] = b[i];
        return v;
    }

    /**
     * @return header.stamp ({@code {sec, nanosec}} or ROS 1 {@code {sec, nsec}}), else a top-level
     *     {@code timestamp} of the same shape (foxglove / labelbox JSON) or a protobuf
     *     {@code google.protobuf.Timestamp} ({@code {seconds, nanos}}), in ns; 0 when absent
     */
    static long stamp(Object tree) {
        if (!(tree instanceof Map<?, ?> m)) return 0;
        Object h = m.get("header");
        if (h instanceof Map<?, ?> hm && hm.get("stamp") instanceof Map<?, ?> st) return time(st);
        if (m.get("timestamp") instanceof Map<?, ?> st) return time(st);
        return 0;
    }

    /** @return true when the tree has a header stamp or timestamp field */
    static boolean hasStamp(Object tree) {
        if (!(tree instanceof Map<?, ?> m)) return false;
        return (m.get("header") instanceof Map<?, ?> hm && hm.get("stamp") instanceof Map)
                || m.get("timestamp") instanceof Map;
    }

    private static long time(Map<?, ?> st) {
        Object s = st.containsKey("sec") ? st.get("sec") : st.get("seconds"); // google.protobuf.Timestamp: seconds, nanos
        Object ns = st.containsKey("nanosec") ? st.get("nanosec") : st.containsKey("nsec") ? st.get("nsec") : st.get("nanos");
        if (!(s instanceof Number sec)) return 0;
        long n = ns instanceof Number x ? x.longValue() : 0;
        return sec.longValue() * 1_000_000_000L + n;
    }

    /** @return {@code data} of a String-like message, else its JSON-ish text */
    static String text(Object tree) {
        if (tree instanceof Map<?, ?> m && m.get("data") instanceof String s) return s;
        if (tree instanceof String s) return s;
        return String.valueOf(tree);
    }

    static String shortType(String type) {
        if (type == null) return "";
        String t = type.substring(Math.max(type.lastIndexOf('/'), type.lastIndexOf('.')) + 1);
        return t.equals("tfMessage") ? "TFMessage" : t; // ROS 1's tf/tfMessage: the layout of tf2_msgs/TFMessage
    }
}
