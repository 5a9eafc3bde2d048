package io.flywheel.ros.msgdef;

import java.util.Objects;

/**
 * A constant declared in a message definition ({@code int32 FOO=1}, {@code string S="x"}, IDL
 * {@code const} in a {@code Type_Constants} module). Constants are not serialized.
 *
 * @param name constant name
 * @param type its built-in type
 * @param value the parsed value, typed as in {@link io.flywheel.decode.MessageDecoder}'s tree
 * @param valueText the value as written in the definition
 */
public record Constant(String name, PrimitiveType type, Object value, String valueText) {
    public Constant {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}
