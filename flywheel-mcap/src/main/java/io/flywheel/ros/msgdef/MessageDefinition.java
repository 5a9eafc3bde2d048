package io.flywheel.ros.msgdef;

import java.util.List;
import java.util.Objects;

/**
 * One message type: its fields in serialization order and its constants. A message may have zero
 * fields ({@code std_msgs/msg/Empty}); ROS 2 then serializes one placeholder byte.
 *
 * @param name full type name as declared, e.g. {@code "sensor_msgs/msg/Image"} (ROS 2) or
 *     {@code "sensor_msgs/Image"} (ROS 1)
 * @param fields fields in order (immutable)
 * @param constants constants (immutable)
 */
public record MessageDefinition(String name, List<Field> fields, List<Constant> constants) {
    public MessageDefinition {
        Objects.requireNonNull(name, "name");
        fields = List.copyOf(fields);
        constants = List.copyOf(constants);
    }

    /** @return the field named {@code fieldName}, or null */
    public Field field(String fieldName) {
        for (Field f : fields) {
            if (f.name().equals(fieldName)) {
                return f;
            }
        }
        return null;
    }
}
