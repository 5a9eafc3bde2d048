package io.flywheel.ros.msgdef;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed schema: the root message type and every message type it depends on, with all field
 * types resolved (every {@link FieldType#isMessage() message-typed} field names a definition in
 * {@link #definitions()}).
 *
 * <p>Type names are matched without their interface kind: {@code pkg/Type}, {@code pkg/msg/Type}
 * and IDL {@code pkg::msg::Type} name the same type (see {@link #key(String)}).
 *
 * @param rootName the root type's full name
 * @param dialect ROS 1 or ROS 2 built-in type semantics
 * @param definitions every definition by {@link #key(String) key} (immutable, in text order)
 */
public record MessageSchema(String rootName, Dialect dialect, Map<String, MessageDefinition> definitions) {
    public MessageSchema {
        Objects.requireNonNull(rootName, "rootName");
        Objects.requireNonNull(dialect, "dialect");
        definitions = Collections.unmodifiableMap(new LinkedHashMap<>(definitions));
        if (!definitions.containsKey(key(rootName))) {
            throw new IllegalArgumentException("root type " + rootName + " not among the definitions");
        }
    }

    /** @return the root message definition */
    public MessageDefinition root() {
        return definitions.get(key(rootName));
    }

    /**
     * @param typeName any spelling of a type name ({@code pkg/Type}, {@code pkg/msg/Type},
     *     {@code pkg::msg::Type})
     * @return its definition, or null when the schema does not define it
     */
    public MessageDefinition definition(String typeName) {
        return definitions.get(key(typeName));
    }

    /**
     * The lookup key of a type name: {@code "pkg/Type"}, with {@code ::} read as {@code /} and a
     * middle interface-kind segment ({@code msg}, {@code srv}, {@code action}) dropped.
     *
     * @param typeName a type name
     * @return its key
     */
    public static String key(String typeName) {
        String n = typeName.replace("::", "/");
        if (n.startsWith("/")) {
            n = n.substring(1);
        }
        int first = n.indexOf('/');
        int last = n.lastIndexOf('/');
        if (first >= 0 && last > first) {
            return n.substring(0, first) + n.substring(last);
        }
        return n;
    }
}
