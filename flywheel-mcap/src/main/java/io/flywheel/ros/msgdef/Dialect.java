package io.flywheel.ros.msgdef;

/**
 * Which ROS generation a message definition follows. The dialects differ in a few built-in types:
 * <ul>
 *   <li>{@code byte}: ROS 2 {@code octet}, unsigned 0..255; ROS 1 a (deprecated) alias of {@code int8}, signed;</li>
 *   <li>{@code char}: {@code uint8} in both;</li>
 *   <li>time and duration: ROS 2 {@code builtin_interfaces/msg/Time|Duration} = {int32 sec, uint32 nanosec};
 *       ROS 1 {@code time} = {uint32 sec, uint32 nsec}, {@code duration} = {int32 sec, int32 nsec};</li>
 *   <li>string constants: ROS 2 values may be quoted literals with escapes; ROS 1 takes the rest of the
 *       line verbatim (no comment stripping).</li>
 * </ul>
 * See https://design.ros2.org/articles/legacy_interface_definition.html and http://wiki.ros.org/msg.
 */
public enum Dialect {
    ROS1,
    ROS2
}
