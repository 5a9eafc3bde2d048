package io.flywheel.ros.ros1;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.flywheel.decode.DecodeException;

/**
 * Parser for the ROS 1 message definition text as stored in bags and in MCAP schemas of encoding
 * {@code ros1msg} (http://wiki.ros.org/msg, and the "message_definition" connection field of
 * http://wiki.ros.org/Bags/Format/2.0): the root type's {@code .msg} text, then for each type it
 * uses, a line of {@code =} characters, a line {@code MSG: pkg/Type}, and that type's text.
 *
 * <p>Per line: {@code #} starts a comment; {@code TYPE NAME=VALUE} is a constant (for string
 * constants the value is the rest of the line, {@code #} included); {@code TYPE NAME} is a field,
 * {@code TYPE} being a primitive, {@code pkg/Type}, a bare {@code Type} of the same package, or
 * {@code Header} ({@code std_msgs/Header}), optionally followed by {@code []} (variable array,
 * uint32 count) or {@code [N]} (fixed array). {@code byte} is read as int8 and {@code char} as
 * uint8 (their ROS 1 aliases).
 *
 * <p>Scoped to ROS 1; package-private until it is unified with the shared definition parser.
 */
final class Ros1MsgDef {
    private Ros1MsgDef() {}

    static final Set<String> PRIMITIVES = Set.of("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
            "int64", "uint64", "float32", "float64", "string", "time", "duration", "byte", "char");

    /**
     * One field.
     *
     * @param name field name
     * @param type primitive name or fully qualified {@code pkg/Type}
     * @param isArray true for {@code []} and {@code [N]}
     * @param fixedLength N for {@code [N]}, -1 otherwise
     */
    record Field(String name, String type, boolean isArray, int fixedLength) {
        boolean isPrimitive() {
            return PRIMITIVES.contains(type);
        }
    }

    /** One message type: its fields in order (constants dropped). */
    record MsgType(String name, List<Field> fields) {}

    /**
     * @param rootType the root type, {@code pkg/Type} (or {@code pkg/msg/Type})
     * @param text the full definition text
     * @return type name -> definition, the root first
     * @throws DecodeException when a line cannot be parsed or a type is not defined in the text
     */
    static Map<String, MsgType> parse(String rootType, String text) throws DecodeException {
        String root = normalize(rootType);
        Map<String, MsgType> types = new LinkedHashMap<>();
        String current = root;
        List<String> lines = new ArrayList<>();
        String[] all = text.split("\r?\n", -1);
        for (int i = 0; i <= all.length; i++) {
            String line = i < all.length ? all[i] : null;
            if (line == null || isSeparator(line)) {
                addType(types, current, lines, rootType);
                lines.clear();
                current = null;
                if (line != null) {
                    // the next non-blank line names the type
                    while (i + 1 < all.length && all[i + 1].trim().isEmpty()) {
                        i++;
                    }
                    if (i + 1 >= all.length || !all[i + 1].trim().startsWith("MSG:")) {
                        throw new DecodeException(rootType + " definition: expected 'MSG: pkg/Type' after the "
                                + "separator line " + (i + 1));
                    }
                    current = normalize(all[++i].trim().substring(4).trim());
                }
            } else {
                lines.add(line);
            }
        }
        // resolve relative names, check that every type is defined
        Map<String, MsgType> resolved = new LinkedHashMap<>();
        for (MsgType t : types.values()) {
            String pkg = t.name().contains("/") ? t.name().substring(0, t.name().indexOf('/')) : "";
            List<Field> fields = new ArrayList<>();
            for (Field f : t.fields()) {
                String type = f.type();
                if (!PRIMITIVES.contains(type)) {
                    type = resolve(type, pkg, types, rootType);
                }
                fields.add(new Field(f.name(), type, f.isArray(), f.fixedLength()));
            }
            resolved.put(t.name(), new MsgType(t.name(), List.copyOf(fields)));
        }
        if (!resolved.containsKey(root)) {
            throw new DecodeException(rootType + " definition does not define the root type");
        }
        return resolved;
    }

    private static String resolve(String type, String pkg, Map<String, MsgType> types, String rootType)
            throws DecodeException {
        String full;
        if (type.contains("/")) {
            full = normalize(type);
        } else if (type.equals("Header")) {
            full = "std_msgs/Header";
        } else {
            full = pkg.isEmpty() ? type : pkg + "/" + type;
        }
        if (types.containsKey(full)) {
            return full;
        }
        // some writers name dependencies without the package: match on the short name
        String shortName = full.substring(full.lastIndexOf('/') + 1);
        String match = null;
        for (String k : types.keySet()) {
            if (k.substring(k.lastIndexOf('/') + 1).equals(shortName)) {
                if (match != null) {
                    match = null;
                    break;
                }
                match = k;
            }
        }
        if (match == null) {
            throw new DecodeException(rootType + " definition uses type '" + type + "' but does not define "
                    + full + " (no 'MSG: " + full + "' section)");
        }
        return match;
    }

    private static void addType(Map<String, MsgType> types, String name, List<String> lines, String rootType)
            throws DecodeException {
        if (name == null) {
            return;
        }
        List<Field> fields = new ArrayList<>();
        for (String raw : lines) {
            Field f = parseLine(raw, name, rootType);
            if (f != null) {
                fields.add(f);
            }
        }
        types.putIfAbsent(name, new MsgType(name, List.copyOf(fields)));
    }

    /** @return the field on this line, or null for blank lines, comments and constants */
    private static Field parseLine(String raw, String typeName, String rootType) throws DecodeException {
        String line = raw.trim();
        if (line.isEmpty() || line.startsWith("#")) {
            return null;
        }
        int sp = indexOfWhitespace(line);
        if (sp < 0) {
            throw new DecodeException(rootType + " definition, type " + typeName + ": line '" + raw
                    + "' is not 'TYPE NAME' or 'TYPE NAME=VALUE'");
        }
        String typeSpec = line.substring(0, sp);
        String rest = line.substring(sp).trim();
        int eq = rest.indexOf('=');
        int hash = rest.indexOf('#');
        if (eq >= 0 && (hash < 0 || eq < hash)) {
            return null; // constant: not a field
        }
        String name = (hash >= 0 ? rest.substring(0, hash) : rest).trim();
        if (name.isEmpty() || indexOfWhitespace(name) >= 0 || !isIdentifier(name)) {
            throw new DecodeException(rootType + " definition, type " + typeName + ": bad field name in line '"
                    + raw + "'");
        }
        boolean isArray = false;
        int fixed = -1;
        String type = typeSpec;
        int br = typeSpec.indexOf('[');
        if (br >= 0) {
            if (!typeSpec.endsWith("]")) {
                throw new DecodeException(rootType + " definition, type " + typeName + ": bad array type '"
                        + typeSpec + "'");
            }
            isArray = true;
            type = typeSpec.substring(0, br);
            String n = typeSpec.substring(br + 1, typeSpec.length() - 1).trim();
            if (!n.isEmpty()) {
                try {
                    fixed = Integer.parseInt(n);
                } catch (NumberFormatException e) {
                    throw new DecodeException(rootType + " definition, type " + typeName + ": bad array length '"
                            + typeSpec + "'");
                }
                if (fixed < 0) {
                    throw new DecodeException(rootType + " definition, type " + typeName
                            + ": negative array length '" + typeSpec + "'");
                }
            }
        }
        if (type.isEmpty()) {
            throw new DecodeException(rootType + " definition, type " + typeName + ": empty type in line '"
                    + raw + "'");
        }
        return new Field(name, type, isArray, fixed);
    }

    private static boolean isIdentifier(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(Character.isLetterOrDigit(c) || c == '_')) {
                return false;
            }
        }
        return true;
    }

    private static int indexOfWhitespace(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isWhitespace(s.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isSeparator(String line) {
        String t = line.trim();
        if (t.length() < 3) {
            return false;
        }
        for (int i = 0; i < t.length(); i++) {
            if (t.charAt(i) != '=') {
                return false;
            }
        }
        return true;
    }

    /** {@code pkg/msg/Type} -> {@code pkg/Type}. */
    static String normalize(String type) {
        String t = type.trim();
        int a = t.indexOf("/msg/");
        return a >= 0 ? t.substring(0, a) + t.substring(a + 4) : t;
    }
}
