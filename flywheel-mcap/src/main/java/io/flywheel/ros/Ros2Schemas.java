package io.flywheel.ros;

/**
 * {@code ros2msg} schema texts of the standard ROS 2 message types Flywheel writes (simulator,
 * benchmarks, tests), in the form rosbag2's MCAP storage plugin stores them: the root definition,
 * then each dependency after a line of 80 {@code =} and {@code MSG: pkg/Type}. Field layouts follow
 * the ROS 2 Humble interface packages (builtin_interfaces, std_msgs, sensor_msgs).
 */
public final class Ros2Schemas {
    private Ros2Schemas() {}

    /** The ros2msg schema encoding name used in MCAP Schema records. */
    public static final String ENCODING = "ros2msg";
    /** The CDR message encoding name used in MCAP Channel records. */
    public static final String MESSAGE_ENCODING = "cdr";

    private static final String SEP = "=".repeat(80) + "\n";

    private static final String TIME = "int32 sec\nuint32 nanosec\n";
    private static final String HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n";
    private static final String DEP_TIME = SEP + "MSG: builtin_interfaces/Time\n" + TIME;
    private static final String DEP_HEADER = SEP + "MSG: std_msgs/Header\n" + HEADER + DEP_TIME;

    public static final String COMPRESSED_IMAGE_NAME = "sensor_msgs/msg/CompressedImage";
    /** sensor_msgs/msg/CompressedImage: header, format ("jpeg", "png", ...), uint8[] data. */
    public static final String COMPRESSED_IMAGE =
            "std_msgs/Header header\nstring format\nuint8[] data\n" + DEP_HEADER;

    public static final String JOINT_STATE_NAME = "sensor_msgs/msg/JointState";
    /** sensor_msgs/msg/JointState: header, name[], position[] (rad or m), velocity[], effort[]. */
    public static final String JOINT_STATE =
            "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
                    + DEP_HEADER;

    public static final String FLOAT64_MULTI_ARRAY_NAME = "std_msgs/msg/Float64MultiArray";
    /** std_msgs/msg/Float64MultiArray: layout (dim[], data_offset) and float64[] data. */
    public static final String FLOAT64_MULTI_ARRAY =
            "MultiArrayLayout layout\nfloat64[] data\n"
                    + SEP + "MSG: std_msgs/MultiArrayLayout\nMultiArrayDimension[] dim\nuint32 data_offset\n"
                    + SEP + "MSG: std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n";

    public static final String STRING_NAME = "std_msgs/msg/String";
    /** std_msgs/msg/String: one string field, {@code data}. */
    public static final String STRING = "string data\n";

    public static final String LOG_NAME = "rcl_interfaces/msg/Log";
    /** rcl_interfaces/msg/Log (what {@code /rosout} carries): stamp, level, name, msg, file, function, line. */
    public static final String LOG = "byte DEBUG=10\nbyte INFO=20\nbyte WARN=30\nbyte ERROR=40\nbyte FATAL=50\n"
            + "builtin_interfaces/Time stamp\nuint8 level\nstring name\nstring msg\nstring file\nstring function\n"
            + "uint32 line\n" + DEP_TIME;

    public static final String HEADER_NAME = "std_msgs/msg/Header";
    /** std_msgs/msg/Header: stamp (builtin_interfaces/Time) and frame_id. */
    public static final String HEADER_SCHEMA = HEADER + DEP_TIME;

    public static final String TIME_NAME = "builtin_interfaces/msg/Time";
    /** builtin_interfaces/msg/Time: int32 sec, uint32 nanosec. */
    public static final String TIME_SCHEMA = TIME;

    private static final java.util.Map<String, String> BUILT_IN = java.util.Map.of(
            COMPRESSED_IMAGE_NAME, COMPRESSED_IMAGE, JOINT_STATE_NAME, JOINT_STATE,
            FLOAT64_MULTI_ARRAY_NAME, FLOAT64_MULTI_ARRAY, STRING_NAME, STRING, LOG_NAME, LOG,
            HEADER_NAME, HEADER_SCHEMA, TIME_NAME, TIME_SCHEMA);

    /**
     * The built-in ros2msg schema text of a type, for recordings that carry no definition of it (rosbag2
     * sqlite3 storage before Iron has no message_definitions table).
     *
     * @param type a ROS 2 type name, {@code pkg/msg/Name} (or {@code pkg/Name})
     * @return the schema text, or empty when the type is not built in
     */
    public static java.util.Optional<String> builtIn(String type) {
        String t = type == null ? "" : type;
        String[] parts = t.split("/");
        if (parts.length == 2) {
            t = parts[0] + "/msg/" + parts[1];
        }
        return java.util.Optional.ofNullable(BUILT_IN.get(t));
    }

    /** @return the names of the built-in types, sorted */
    public static java.util.List<String> builtInTypes() {
        return BUILT_IN.keySet().stream().sorted().toList();
    }
}
