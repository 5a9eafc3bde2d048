package io.flywheel.ros.msgdef;

/**
 * The built-in field types of ROS message definitions (ROS 1 {@code .msg}, ROS 2 {@code .msg} and
 * the IDL subset of rosidl). Sizes are in bytes as serialized; {@code 0} means variable size.
 *
 * <p>{@link #TIME} and {@link #DURATION} stand for ROS 1 {@code time}/{@code duration} and ROS 2
 * {@code builtin_interfaces/msg/Time}/{@code Duration}: two 32-bit integers, laid out as described
 * in {@link Dialect}. {@link #BYTE} is unsigned in ROS 2 and signed in ROS 1 (see {@link Dialect}).
 */
public enum PrimitiveType {
    BOOL("bool", 1),
    BYTE("byte", 1),
    CHAR("char", 1),
    INT8("int8", 1),
    UINT8("uint8", 1),
    INT16("int16", 2),
    UINT16("uint16", 2),
    INT32("int32", 4),
    UINT32("uint32", 4),
    INT64("int64", 8),
    UINT64("uint64", 8),
    FLOAT32("float32", 4),
    FLOAT64("float64", 8),
    STRING("string", 0),
    WSTRING("wstring", 0),
    TIME("time", 8),
    DURATION("duration", 8);

    private final String rosName;
    private final int size;

    PrimitiveType(String rosName, int size) {
        this.rosName = rosName;
        this.size = size;
    }

    /** @return the type's name in a ROS {@code .msg} file, e.g. {@code "float64"} */
    public String rosName() {
        return rosName;
    }

    /** @return the serialized size in bytes, 0 for strings (variable size) */
    public int size() {
        return size;
    }

    /** @return true for 1-byte integer types (byte, char, int8, uint8), decoded as {@code byte[]} in arrays */
    public boolean isByteLike() {
        return this == BYTE || this == CHAR || this == INT8 || this == UINT8;
    }

    /**
     * @param name a type name as written in a {@code .msg} file ({@code "int32"}, {@code "time"},
     *     {@code "builtin_interfaces/msg/Time"}, ...)
     * @param dialect the dialect (ROS 1 has no {@code builtin_interfaces})
     * @return the primitive type, or null when {@code name} is not a built-in type
     */
    public static PrimitiveType fromRosName(String name, Dialect dialect) {
        switch (name) {
            case "bool": return BOOL;
            case "byte": return BYTE;
            case "char": return CHAR;
            case "int8": return INT8;
            case "uint8": return UINT8;
            case "int16": return INT16;
            case "uint16": return UINT16;
            case "int32": return INT32;
            case "uint32": return UINT32;
            case "int64": return INT64;
            case "uint64": return UINT64;
            case "float32": return FLOAT32;
            case "float64": return FLOAT64;
            case "string": return STRING;
            case "wstring": return WSTRING;
            case "time": return TIME;
            case "duration": return DURATION;
            default:
                break;
        }
        if (dialect == Dialect.ROS2) {
            switch (name) {
                case "builtin_interfaces/Time":
                case "builtin_interfaces/msg/Time":
                    return TIME;
                case "builtin_interfaces/Duration":
                case "builtin_interfaces/msg/Duration":
                    return DURATION;
                default:
                    break;
            }
        }
        return null;
    }
}
