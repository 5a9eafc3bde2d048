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
}
