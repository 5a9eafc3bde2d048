package io.flywheel.ros.msgdef;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.decode.DecodeException;

/**
 * Parses ROS message definition text: MCAP schema encodings {@code ros2msg} and {@code ros1msg},
 * and ROS 1 bag {@code message_definition} connection headers.
 *
 * <p>Format (http://wiki.ros.org/msg, https://docs.ros.org/en/rolling/Concepts/Basic/About-Interfaces.html,
 * MCAP well-known schema encodings https://mcap.dev/spec/registry): the root type's definition,
 * then each dependency after a separator line of {@code =} characters and a line
 * {@code MSG: pkg/Type} (or {@code MSG: pkg/msg/Type}). Each definition line is one of
 * <ul>
 *   <li>a field {@code TYPE NAME [DEFAULT]}: {@code int32 x}, {@code int32 x 5},
 *       {@code int32[] a [1, 2]}, {@code string<=10 s "hi"};</li>
 *   <li>a constant {@code TYPE NAME=VALUE}: {@code int32 FOO=1}, {@code string S="x"};</li>
 *   <li>a comment ({@code #}) or blank.</li>
 * </ul>
 * Type resolution: {@code pkg/Type} and {@code pkg/msg/Type} are the same type; an unqualified
 * type names a type of the same package, else {@code Header} means {@code std_msgs/Header}. In ROS 1
 * (genmsg) a bare {@code Header} always means {@code std_msgs/Header}, and a type that is not
 * defined under the name used falls back to the one definition with the same short name (after
 * the last {@code /}), if exactly one exists.
 * Built-in types are those of {@link PrimitiveType}; in ROS 2 {@code builtin_interfaces/Time} and
 * {@code Duration} are read as {@link PrimitiveType#TIME}/{@link PrimitiveType#DURATION}.
 *
 * <p>rosbag2 stores a service event type ({@code pkg/srv/X_Event}) with the service's
 * {@code .srv} text (request {@code ---} response) as its schema. This parser then builds the
 * event type as rosidl generates it: {@code service_msgs/msg/ServiceEventInfo info},
 * {@code X_Request[<=1] request}, {@code X_Response[<=1] response}
 * (https://github.com/ros2/rcl_interfaces, service_msgs/msg/ServiceEventInfo.msg).
 */
public final class MsgDefParser {
    private MsgDefParser() {}

    private record Section(String name, List<String> lines, int firstLine) {}

    /**
     * Parses a schema.
     *
     * @param rootType the root type's name, e.g. {@code "sensor_msgs/msg/Image"} (the MCAP schema
     *     name or ROS 1 connection type)
     * @param text the definition text (root definition, then dependencies)
     * @param dialect ROS 1 or ROS 2 built-in type semantics (see {@link Dialect})
     * @return the root and all dependencies, with field types resolved
     * @throws DecodeException when a line cannot be parsed, a literal is out of range or a
     *     referenced type is not defined in the text; the message names the type and line
     */
    public static MessageSchema parse(String rootType, String text, Dialect dialect) throws DecodeException {
        if (rootType == null || rootType.isBlank()) {
            throw new DecodeException("message definition: root type name is empty");
        }
        String rootName = canonicalName(rootType.strip(), dialect);
        List<Section> sections = split(rootName, text == null ? "" : text);
        Map<String, MessageDefinition> defs = new LinkedHashMap<>();
        Section root = sections.get(0);
        List<List<String>> srvParts = splitServiceParts(root.lines);
        if (srvParts.size() > 1) {
            addServiceDefinitions(rootName, root, srvParts, dialect, defs);
        } else {
            defs.put(MessageSchema.key(rootName), parseSection(root, dialect));
        }
        for (int i = 1; i < sections.size(); i++) {
            Section s = sections.get(i);
            defs.putIfAbsent(MessageSchema.key(s.name), parseSection(s, dialect));
        }
        if (srvParts.size() > 1) {
            defs.putIfAbsent(MessageSchema.key(SERVICE_EVENT_INFO), serviceEventInfo());
        }
        Map<String, MessageDefinition> resolved = new LinkedHashMap<>();
        for (Map.Entry<String, MessageDefinition> e : defs.entrySet()) {
            resolved.put(e.getKey(), resolve(e.getValue(), defs, rootName, dialect));
        }
        return new MessageSchema(rootName, dialect, resolved);
    }

    /** ROS 2 names get their {@code msg} segment: {@code std_msgs/Header -> std_msgs/msg/Header}. */
    static String canonicalName(String name, Dialect dialect) {
        String n = name.replace("::", "/");
        if (dialect == Dialect.ROS2) {
            String[] parts = n.split("/");
            if (parts.length == 2) {
                return parts[0] + "/msg/" + parts[1];
            }
        }
        return n;
    }

    private static List<Section> split(String rootName, String text) throws DecodeException {
        String[] lines = text.replace("\r\n", "\n").replace('\r', '\n').split("\n", -1);
        List<Section> sections = new ArrayList<>();
        String name = rootName;
        List<String> cur = new ArrayList<>();
        int first = 1;
        boolean expectMsg = false;
        for (int i = 0; i < lines.length; i++) {
            String t = lines[i].strip();
            if (t.length() >= 3 && t.chars().allMatch(c -> c == '=')) {
                sections.add(new Section(name, cur, first));
                cur = new ArrayList<>();
                name = null;
                expectMsg = true;
                first = i + 2;
                continue;
            }
            if (expectMsg) {
                if (t.isEmpty() || t.startsWith("#")) {
                    cur.add("");
                    continue;
                }
                if (!t.startsWith("MSG:")) {
                    throw new DecodeException("message definition " + rootName + ", line " + (i + 1)
                            + ": expected 'MSG: pkg/Type' after a separator line, found '" + t + "'");
                }
                String n = t.substring(4).strip();
                int hash = n.indexOf('#');
                if (hash >= 0) {
                    n = n.substring(0, hash).strip();
                }
                if (n.isEmpty()) {
                    throw new DecodeException("message definition " + rootName + ", line " + (i + 1) + ": 'MSG:' without a type name");
                }
                name = n;
                expectMsg = false;
                cur.add("");
                continue;
            }
            cur.add(lines[i]);
        }
        if (expectMsg) {
            // trailing separator with nothing after it: ignore
            return sections;
        }
        sections.add(new Section(name, cur, first));
        return sections;
    }

    private static List<List<String>> splitServiceParts(List<String> lines) {
        List<List<String>> parts = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        for (String l : lines) {
            if (l.strip().equals("---")) {
                parts.add(cur);
                cur = new ArrayList<>();
            } else {
                cur.add(l);
            }
        }
        parts.add(cur);
        return parts;
    }

    static final String SERVICE_EVENT_INFO = "service_msgs/msg/ServiceEventInfo";

    private static MessageDefinition serviceEventInfo() {
        List<Constant> constants = List.of(
                new Constant("REQUEST_SENT", PrimitiveType.UINT8, 0, "0"),
                new Constant("REQUEST_RECEIVED", PrimitiveType.UINT8, 1, "1"),
                new Constant("RESPONSE_SENT", PrimitiveType.UINT8, 2, "2"),
                new Constant("RESPONSE_RECEIVED", PrimitiveType.UINT8, 3, "3"));
        List<Field> fields = List.of(
                new Field("event_type", FieldType.of(PrimitiveType.UINT8), ArrayKind.NONE, -1, -1, null),
                new Field("stamp", FieldType.of(PrimitiveType.TIME), ArrayKind.NONE, -1, -1, null),
                new Field("client_gid", FieldType.of(PrimitiveType.CHAR), ArrayKind.FIXED, 16, -1, null),
                new Field("sequence_number", FieldType.of(PrimitiveType.INT64), ArrayKind.NONE, -1, -1, null));
        return new MessageDefinition(SERVICE_EVENT_INFO, fields, constants);
    }

    private static void addServiceDefinitions(String rootName, Section root, List<List<String>> parts, Dialect dialect,
                                              Map<String, MessageDefinition> defs) throws DecodeException {
        if (parts.size() != 2) {
            throw new DecodeException("message definition " + rootName + ": " + (parts.size() - 1)
                    + " '---' separators (an action definition?); only service definitions (one '---') are supported");
        }
        String base;
        if (rootName.endsWith("_Event")) {
            base = rootName.substring(0, rootName.length() - "_Event".length());
        } else if (rootName.endsWith("_Request")) {
            base = rootName.substring(0, rootName.length() - "_Request".length());
        } else if (rootName.endsWith("_Response")) {
            base = rootName.substring(0, rootName.length() - "_Response".length());
        } else {
            throw new DecodeException("message definition " + rootName
                    + ": text is a service definition (request --- response) but the type is not X_Event, X_Request or X_Response");
        }
        String req = base + "_Request";
        String resp = base + "_Response";
        defs.put(MessageSchema.key(req), parseSection(new Section(req, parts.get(0), root.firstLine), dialect));
        defs.put(MessageSchema.key(resp), parseSection(new Section(resp, parts.get(1), root.firstLine), dialect));
        if (rootName.endsWith("_Event")) {
            List<Field> fields = List.of(
                    new Field("info", FieldType.message(SERVICE_EVENT_INFO), ArrayKind.NONE, -1, -1, null),
                    new Field("request", FieldType.message(req), ArrayKind.BOUNDED, 1, -1, null),
                    new Field("response", FieldType.message(resp), ArrayKind.BOUNDED, 1, -1, null));
            defs.put(MessageSchema.key(rootName), new MessageDefinition(rootName, fields, List.of()));
        }
    }

    private static MessageDefinition parseSection(Section s, Dialect dialect) throws DecodeException {
        String name = canonicalName(s.name, dialect);
        List<Field> fields = new ArrayList<>();
        List<Constant> constants = new ArrayList<>();
        for (int i = 0; i < s.lines.size(); i++) {
            String line = s.lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                parseLine(line, dialect, fields, constants);
            } catch (IllegalArgumentException e) {
                throw new DecodeException("message definition " + name + ", line " + (s.firstLine + i) + " '" + line
                        + "': " + e.getMessage(), e);
            }
        }
        return new MessageDefinition(name, fields, constants);
    }

    private static void parseLine(String line, Dialect dialect, List<Field> fields, List<Constant> constants) {
        int i = 0;
        int n = line.length();
        while (i < n && !Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String typeTok = line.substring(0, i);
        while (i < n && Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        int nameStart = i;
        while (i < n && (Character.isLetterOrDigit(line.charAt(i)) || line.charAt(i) == '_')) {
            i++;
        }
        String name = line.substring(nameStart, i);
        if (name.isEmpty() || !Character.isLetter(name.charAt(0))) {
            throw new IllegalArgumentException("expected 'TYPE NAME', found no field name");
        }
        while (i < n && Character.isWhitespace(line.charAt(i))) {
            i++;
        }
        String rest = line.substring(i);

        // type token: base[<=N][ [] | [N] | [<=N] ]
        String base = typeTok;
        ArrayKind kind = ArrayKind.NONE;
        int arrayLen = -1;
        int lb = base.indexOf('[');
        if (lb >= 0) {
            if (!base.endsWith("]")) {
                throw new IllegalArgumentException("malformed array type '" + typeTok + "'");
            }
            String inner = base.substring(lb + 1, base.length() - 1).strip();
            base = base.substring(0, lb);
            if (inner.isEmpty()) {
                kind = ArrayKind.UNBOUNDED;
            } else if (inner.startsWith("<=")) {
                kind = ArrayKind.BOUNDED;
                arrayLen = parseBound(inner.substring(2), typeTok);
            } else {
                kind = ArrayKind.FIXED;
                arrayLen = parseBound(inner, typeTok);
            }
        }
        int stringBound = -1;
        int sb = base.indexOf("<=");
        if (sb >= 0) {
            stringBound = parseBound(base.substring(sb + 2), typeTok);
            base = base.substring(0, sb);
            if (!base.equals("string") && !base.equals("wstring")) {
                throw new IllegalArgumentException("a bound '<=N' is only allowed on string and wstring, not " + base);
            }
        }
        if (base.isEmpty()) {
            throw new IllegalArgumentException("empty type name");
        }
        PrimitiveType prim = PrimitiveType.fromRosName(base, dialect);

        if (rest.startsWith("=")) {
            if (prim == null || kind != ArrayKind.NONE || prim == PrimitiveType.TIME || prim == PrimitiveType.DURATION) {
                throw new IllegalArgumentException("constants must have a built-in scalar type, not " + typeTok);
            }
            String raw = rest.substring(1).strip();
            String valueText;
            if (prim == PrimitiveType.STRING || prim == PrimitiveType.WSTRING) {
                if (dialect == Dialect.ROS1) {
                    valueText = raw; // ROS 1: the rest of the line, verbatim
                } else {
                    valueText = stringLiteralText(raw);
                }
            } else {
                valueText = stripComment(raw);
            }
            constants.add(new Constant(name, prim, Literals.scalar(prim, valueText, dialect), valueText));
            return;
        }
        Object defaultValue = null;
        if (!rest.isEmpty() && !rest.startsWith("#")) {
            if (prim == null || prim == PrimitiveType.TIME || prim == PrimitiveType.DURATION) {
                throw new IllegalArgumentException("only built-in types can have default values, not " + typeTok);
            }
            if (kind != ArrayKind.NONE) {
                int close = arrayLiteralEnd(rest);
                String tail = rest.substring(close).strip();
                if (!tail.isEmpty() && !tail.startsWith("#")) {
                    throw new IllegalArgumentException("unexpected text after default value: '" + tail + "'");
                }
                defaultValue = List.copyOf(Literals.array(prim, rest.substring(0, close), dialect));
            } else if (prim == PrimitiveType.STRING || prim == PrimitiveType.WSTRING) {
                defaultValue = Literals.scalar(prim, stringLiteralText(rest), dialect);
            } else {
                defaultValue = Literals.scalar(prim, stripComment(rest), dialect);
            }
        }
        FieldType ft = prim != null ? FieldType.of(prim) : FieldType.message(base);
        fields.add(new Field(name, ft, kind, arrayLen, stringBound, defaultValue));
    }

    private static int parseBound(String s, String typeTok) {
        try {
            int v = Integer.parseInt(s.strip());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad array or string bound in '" + typeTok + "'");
        }
    }

    /** A quoted literal (with a possible trailing comment) or bare text up to a comment. */
    private static String stringLiteralText(String raw) {
        if (raw.startsWith("\"") || raw.startsWith("'")) {
            int end = Literals.quotedEnd(raw, 0);
            String tail = raw.substring(end).strip();
            if (!tail.isEmpty() && !tail.startsWith("#")) {
                throw new IllegalArgumentException("unexpected text after string literal: '" + tail + "'");
            }
            return raw.substring(0, end);
        }
        return stripComment(raw);
    }

    private static String stripComment(String raw) {
        int hash = raw.indexOf('#');
        return (hash >= 0 ? raw.substring(0, hash) : raw).strip();
    }

    private static int arrayLiteralEnd(String s) {
        if (!s.startsWith("[")) {
            throw new IllegalArgumentException("array default must start with '[': '" + s + "'");
        }
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\'') {
                i = Literals.quotedEnd(s, i) - 1;
            } else if (c == ']') {
                return i + 1;
            }
        }
        throw new IllegalArgumentException("array default without closing ']': '" + s + "'");
    }

    private static MessageDefinition resolve(MessageDefinition def, Map<String, MessageDefinition> defs, String rootName,
                                             Dialect dialect) throws DecodeException {
        String pkg = packageOf(def.name());
        List<Field> out = new ArrayList<>(def.fields().size());
        for (Field f : def.fields()) {
            if (f.type().isPrimitive()) {
                out.add(f);
                continue;
            }
            String ref = f.type().typeName();
            MessageDefinition target;
            if (ref.contains("/") || ref.contains("::")) {
                target = defs.get(MessageSchema.key(ref));
            } else if (dialect == Dialect.ROS1 && ref.equals("Header")) {
                // genmsg: a bare Header is always std_msgs/Header, whatever the package
                target = defs.get("std_msgs/Header");
            } else {
                target = pkg == null ? null : defs.get(pkg + "/" + ref);
                if (target == null && ref.equals("Header")) {
                    target = defs.get("std_msgs/Header");
                }
            }
            if (target == null && dialect == Dialect.ROS1) {
                target = uniqueByShortName(ref, defs);
            }
            if (target == null) {
                throw new DecodeException("message definition " + rootName + ": field " + def.name() + "." + f.name()
                        + " has type " + ref + ", which the schema text does not define");
            }
            out.add(new Field(f.name(), FieldType.message(target.name()), f.arrayKind(), f.arrayLength(),
                    f.stringBound(), f.defaultValue()));
        }
        return new MessageDefinition(def.name(), out, def.constants());
    }

    /**
     * ROS 1 writers do not always name a dependency's section with the package its users name
     * (a root type given without a package, a {@code MSG:} line written short): accept
     * the one definition whose type name (after the last {@code /}) matches.
     *
     * @return that definition, or null when none or several match
     */
    private static MessageDefinition uniqueByShortName(String ref, Map<String, MessageDefinition> defs) {
        String shortName = ref.substring(ref.lastIndexOf('/') + 1);
        MessageDefinition match = null;
        for (Map.Entry<String, MessageDefinition> e : defs.entrySet()) {
            String k = e.getKey();
            if (k.substring(k.lastIndexOf('/') + 1).equals(shortName)) {
                if (match != null) {
                    return null;
                }
                match = e.getValue();
            }
        }
        return match;
    }

    static String packageOf(String typeName) {
        String n = typeName.replace("::", "/");
        int slash = n.indexOf('/');
        return slash > 0 ? n.substring(0, slash) : null;
    }
}
