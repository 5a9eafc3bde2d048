package io.flywheel.ros.msgdef;

import java.util.Objects;

/**
 * One field of a message definition, e.g. {@code string<=22[<=3] names ["a", "b"]}.
 *
 * @param name field name
 * @param type element type
 * @param arrayKind none, fixed {@code [N]}, bounded {@code [<=N]} or unbounded {@code []}
 * @param arrayLength N for {@link ArrayKind#FIXED} and {@link ArrayKind#BOUNDED}, -1 otherwise
 * @param stringBound N of {@code string<=N} / IDL {@code string<N>}, -1 when unbounded or not a string
 * @param defaultValue the declared default (ROS 2 {@code int32 x 5}, IDL {@code @default}), or null;
 *     values follow {@link io.flywheel.decode.MessageDecoder}'s tree types (Integer, Long,
 *     BigInteger, Float, Double, Boolean, String); for arrays a {@code List} of those
 */
public record Field(String name, FieldType type, ArrayKind arrayKind, int arrayLength, int stringBound,
                    Object defaultValue) {
    public Field {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(arrayKind, "arrayKind");
        if ((arrayKind == ArrayKind.FIXED || arrayKind == ArrayKind.BOUNDED) != (arrayLength >= 0)) {
            throw new IllegalArgumentException("arrayLength " + arrayLength + " does not fit array kind " + arrayKind);
        }
    }

    /** @return true unless {@link #arrayKind()} is {@link ArrayKind#NONE} */
    public boolean isArray() {
        return arrayKind != ArrayKind.NONE;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(type.typeName());
        if (stringBound >= 0) {
            sb.append("<=").append(stringBound);
        }
        switch (arrayKind) {
            case FIXED -> sb.append('[').append(arrayLength).append(']');
            case BOUNDED -> sb.append("[<=").append(arrayLength).append(']');
            case UNBOUNDED -> sb.append("[]");
            default -> { }
        }
        sb.append(' ').append(name);
        if (defaultValue != null) {
            sb.append(' ').append(defaultValue);
        }
        return sb.toString();
    }
}
