package io.flywheel.ros.msgdef;

import java.util.Objects;

/**
 * The element type of a field: a built-in {@link PrimitiveType} or a message type defined in the
 * same schema text.
 *
 * @param primitive the built-in type, or null for a message type
 * @param typeName for a primitive its ROS name ({@code "float64"}); for a message type the name of
 *     its {@link MessageDefinition} in the schema ({@code "std_msgs/msg/Header"})
 */
public record FieldType(PrimitiveType primitive, String typeName) {
    public FieldType {
        Objects.requireNonNull(typeName, "typeName");
    }

    /** @return the field type of a built-in type */
    public static FieldType of(PrimitiveType p) {
        return new FieldType(p, p.rosName());
    }

    /** @return the field type of a message type */
    public static FieldType message(String typeName) {
        return new FieldType(null, typeName);
    }

    /** @return true for built-in types */
    public boolean isPrimitive() {
        return primitive != null;
    }

    /** @return true for message (complex) types */
    public boolean isMessage() {
        return primitive == null;
    }

    @Override
    public String toString() {
        return typeName;
    }
}
