package io.flywheel.ros.msgdef;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.decode.DecodeException;

/**
 * Parses the OMG IDL 4.2 subset that rosidl generates and rosbag2 stores as MCAP schema encoding
 * {@code ros2idl} (https://mcap.dev/spec/registry#ros2idl,
 * https://design.ros2.org/articles/idl_interface_definition.html).
 *
 * <p>Accepted: nested {@code module}s, {@code struct}s, {@code typedef}s (e.g.
 * {@code typedef double double__9[9];}), {@code const} declarations (constants in a module
 * {@code Type_Constants} belong to struct {@code Type}), {@code sequence<T>} and
 * {@code sequence<T, N>}, one-dimensional arrays {@code T name[N]}, {@code string<N>},
 * {@code wstring<N>}, scoped names ({@code std_msgs::msg::Header}), annotations
 * ({@code @default (value=...)} sets the field's default, others such as {@code @verbatim} and
 * {@code @key} are skipped), comments and {@code #include} lines, and the
 * {@code ====...} + {@code IDL: pkg/msg/Type} lines separating the files of one schema. IDL base
 * types map to ROS types as rosidl does: {@code boolean -> bool}, {@code octet -> byte},
 * {@code char -> char}, {@code short -> int16}, {@code unsigned long -> uint32},
 * {@code long long -> int64}, {@code float -> float32}, {@code double -> float64}.
 * {@code builtin_interfaces::msg::Time|Duration} are read as {@link PrimitiveType#TIME}/{@link
 * PrimitiveType#DURATION}. A struct whose only member is rosidl's placeholder
 * {@code uint8 structure_needs_at_least_one_member} is read as a message with zero fields, as its
 * {@code .msg} source has.
 *
 * <p>Not accepted (error): {@code enum}, {@code union}, {@code wchar}, {@code long double},
 * multi-dimensional arrays, sequences of sequences.
 */
public final class IdlParser {
    private IdlParser() {}

    /**
     * Parses a ros2idl schema.
     *
     * @param rootType the root struct's name, {@code pkg/msg/Type} or {@code pkg::msg::Type}
     * @param text the IDL text (one or more IDL files)
     * @return the schema, dialect {@link Dialect#ROS2}
     * @throws DecodeException on a syntax error (names the line) or an unknown type
     */
    public static MessageSchema parse(String rootType, String text) throws DecodeException {
        if (rootType == null || rootType.isBlank()) {
            throw new DecodeException("IDL schema: root type name is empty");
        }
        Parser p = new Parser(rootType, tokenize(rootType, text == null ? "" : text));
        p.definitions(new ArrayList<>(), false);
        return p.build();
    }

    // ---------------------------------------------------------------- tokens

    private enum Kind { IDENT, NUMBER, STRING, PUNCT, EOF }

    private record Token(Kind kind, String text, int line) {}

    private static List<Token> tokenize(String root, String text) throws DecodeException {
        List<Token> out = new ArrayList<>();
        int line = 1;
        int n = text.length();
        int i = 0;
        boolean lineStart = true;
        while (i < n) {
            char c = text.charAt(i);
            if (c == '\n') {
                line++;
                i++;
                lineStart = true;
                continue;
            }
            if (Character.isWhitespace(c)) {
                i++;
                continue;
            }
            if (lineStart && (c == '#' || c == '=' || text.startsWith("IDL:", i))) {
                // preprocessor line, separator line of '=' or "IDL: pkg/msg/Type": skip to end of line
                while (i < n && text.charAt(i) != '\n') {
                    i++;
                }
                continue;
            }
            lineStart = false;
            if (c == '/' && i + 1 < n && text.charAt(i + 1) == '/') {
                while (i < n && text.charAt(i) != '\n') {
                    i++;
                }
                continue;
            }
            if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
                int end = text.indexOf("*/", i + 2);
                if (end < 0) {
                    throw new DecodeException("IDL schema " + root + ", line " + line + ": unterminated /* comment");
                }
                for (int k = i; k < end; k++) {
                    if (text.charAt(k) == '\n') {
                        line++;
                    }
                }
                i = end + 2;
                continue;
            }
            if (Character.isLetter(c) || c == '_') {
                int s = i;
                while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_')) {
                    i++;
                }
                out.add(new Token(Kind.IDENT, text.substring(s, i), line));
                continue;
            }
            if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(text.charAt(i + 1)))) {
                int s = i;
                while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '.'
                        || ((text.charAt(i) == '-' || text.charAt(i) == '+')
                            && (text.charAt(i - 1) == 'e' || text.charAt(i - 1) == 'E')))) {
                    i++;
                }
                out.add(new Token(Kind.NUMBER, text.substring(s, i), line));
                continue;
            }
            if (c == '"' || c == '\'') {
                int s = i;
                i++;
                while (i < n && text.charAt(i) != c) {
                    if (text.charAt(i) == '\\') {
                        i++;
                    }
                    if (i < n && text.charAt(i) == '\n') {
                        line++;
                    }
                    i++;
                }
                if (i >= n) {
                    throw new DecodeException("IDL schema " + root + ", line " + line + ": unterminated string literal");
                }
                i++;
                out.add(new Token(Kind.STRING, text.substring(s, i), line));
                continue;
            }
            if (c == ':' && i + 1 < n && text.charAt(i + 1) == ':') {
                out.add(new Token(Kind.PUNCT, "::", line));
                i += 2;
                continue;
            }
            out.add(new Token(Kind.PUNCT, String.valueOf(c), line));
            i++;
        }
        out.add(new Token(Kind.EOF, "<end of text>", line));
        return out;
    }

    // ---------------------------------------------------------------- parser

    /** A type as written: primitive or scoped name, with an optional sequence and string bound. */
    private record IdlType(PrimitiveType prim, String name, ArrayKind kind, int length, int stringBound) {}

    private record RawField(String name, IdlType type, String defaultText, int line) {}

    private record RawStruct(String fullName, List<String> scope, List<RawField> fields) {}

    private record RawConst(String name, IdlType type, String valueText, int line) {}

    private static final class Parser {
        private final String root;
        private final List<Token> toks;
        private int pos;
        private final Map<String, RawStruct> structs = new LinkedHashMap<>();
        private final Map<String, IdlType> typedefs = new HashMap<>();
        private final Map<String, List<String>> typedefScopes = new HashMap<>();
        private final Map<String, List<RawConst>> constantsByModule = new HashMap<>();

        Parser(String root, List<Token> toks) {
            this.root = root;
            this.toks = toks;
        }

        private Token peek() {
            return toks.get(pos);
        }

        private Token next() {
            Token t = toks.get(pos);
            if (t.kind != Kind.EOF) {
                pos++;
            }
            return t;
        }

        private DecodeException error(Token t, String msg) {
            return new DecodeException("IDL schema " + root + ", line " + t.line + " near '" + t.text + "': " + msg);
        }

        private boolean at(String text) {
            Token t = peek();
            return t.kind != Kind.STRING && t.text.equals(text);
        }

        private Token expect(String text) throws DecodeException {
            Token t = next();
            if (t.kind == Kind.STRING || !t.text.equals(text)) {
                throw error(t, "expected '" + text + "'");
            }
            return t;
        }

        private String ident() throws DecodeException {
            Token t = next();
            if (t.kind != Kind.IDENT) {
                throw error(t, "expected an identifier");
            }
            return t.text;
        }

        private int number() throws DecodeException {
            Token t = next();
            if (t.kind != Kind.NUMBER) {
                throw error(t, "expected a number");
            }
            try {
                return Integer.parseInt(t.text);
            } catch (NumberFormatException e) {
                throw error(t, "expected a non-negative 32-bit integer");
            }
        }

        /** Parses annotations; returns the text of {@code @default(value=...)}, or null. */
        private String annotations() throws DecodeException {
            String def = null;
            while (at("@")) {
                next();
                String name = scopedName();
                if (at("(")) {
                    int start = pos + 1;
                    next();
                    int depth = 1;
                    while (depth > 0) {
                        Token t = next();
                        if (t.kind == Kind.EOF) {
                            throw error(t, "unterminated annotation @" + name);
                        }
                        if (t.kind == Kind.PUNCT && t.text.equals("(")) {
                            depth++;
                        } else if (t.kind == Kind.PUNCT && t.text.equals(")")) {
                            depth--;
                        }
                    }
                    if (name.equals("default")) {
                        List<Token> args = toks.subList(start, pos - 1);
                        def = defaultValueText(args);
                    }
                }
            }
            return def;
        }

        private String defaultValueText(List<Token> args) {
            int from = 0;
            if (args.size() >= 2 && args.get(0).text.equals("value") && args.get(1).text.equals("=")) {
                from = 2;
            }
            StringBuilder sb = new StringBuilder();
            for (int k = from; k < args.size(); k++) {
                sb.append(args.get(k).text);
            }
            return sb.toString();
        }

        private String scopedName() throws DecodeException {
            StringBuilder sb = new StringBuilder();
            if (at("::")) {
                next();
                sb.append("::");
            }
            sb.append(ident());
            while (at("::")) {
                next();
                sb.append("::").append(ident());
            }
            return sb.toString();
        }

        void definitions(List<String> scope, boolean nested) throws DecodeException {
            while (true) {
                annotations();
                Token t = peek();
                if (t.kind == Kind.EOF) {
                    if (nested) {
                        throw error(t, "missing '}' closing module " + String.join("::", scope));
                    }
                    return;
                }
                if (at("}")) {
                    if (!nested) {
                        throw error(t, "unexpected '}'");
                    }
                    return;
                }
                if (t.kind != Kind.IDENT) {
                    throw error(t, "expected module, struct, typedef or const");
                }
                switch (t.text) {
                    case "module" -> {
                        next();
                        String name = ident();
                        expect("{");
                        List<String> inner = new ArrayList<>(scope);
                        inner.add(name);
                        definitions(inner, true);
                        expect("}");
                        expect(";");
                    }
                    case "struct" -> struct(scope);
                    case "typedef" -> {
                        next();
                        IdlType base = typeSpec();
                        String name = ident();
                        IdlType full = withArray(base, name);
                        expect(";");
                        String key = qualify(scope, name);
                        typedefs.put(key, full);
                        typedefScopes.put(key, scope);
                    }
                    case "const" -> {
                        next();
                        IdlType type = typeSpec();
                        String name = ident();
                        expect("=");
                        StringBuilder sb = new StringBuilder();
                        while (!at(";")) {
                            Token v = next();
                            if (v.kind == Kind.EOF) {
                                throw error(v, "missing ';' after const " + name);
                            }
                            sb.append(v.text);
                        }
                        expect(";");
                        constantsByModule.computeIfAbsent(String.join("::", scope), k -> new ArrayList<>())
                                .add(new RawConst(name, type, sb.toString(), t.line));
                    }
                    case "enum", "union", "interface", "valuetype", "bitmask", "bitset" ->
                        throw error(t, "'" + t.text + "' is not supported in ROS 2 IDL schemas");
                    default -> throw error(t, "expected module, struct, typedef or const");
                }
            }
        }

        private void struct(List<String> scope) throws DecodeException {
            next();
            String name = ident();
            if (at(";")) { // forward declaration
                next();
                return;
            }
            if (at(":")) {
                throw error(peek(), "struct inheritance is not supported");
            }
            expect("{");
            List<RawField> fields = new ArrayList<>();
            while (!at("}")) {
                String def = annotations();
                if (at("}")) {
                    break;
                }
                Token start = peek();
                if (start.kind == Kind.EOF) {
                    throw error(start, "missing '}' closing struct " + name);
                }
                IdlType type = typeSpec();
                while (true) {
                    String fname = ident();
                    fields.add(new RawField(fname, withArray(type, fname), def, start.line));
                    if (at(",")) {
                        next();
                        continue;
                    }
                    break;
                }
                expect(";");
            }
            expect("}");
            expect(";");
            String full = qualify(scope, name);
            structs.putIfAbsent(full, new RawStruct(full, List.copyOf(scope), fields));
        }

        private IdlType withArray(IdlType base, String name) throws DecodeException {
            if (!at("[")) {
                return base;
            }
            Token t = next();
            int n = number();
            expect("]");
            if (at("[")) {
                throw error(peek(), "multi-dimensional array " + name + " is not supported");
            }
            if (base.kind != ArrayKind.NONE) {
                throw error(t, "array " + name + " of a sequence is not supported");
            }
            return new IdlType(base.prim, base.name, ArrayKind.FIXED, n, base.stringBound);
        }

        private IdlType typeSpec() throws DecodeException {
            Token t = peek();
            if (t.kind != Kind.IDENT && !at("::")) {
                throw error(t, "expected a type");
            }
            if (at("sequence")) {
                next();
                expect("<");
                IdlType elem = typeSpec();
                if (elem.kind != ArrayKind.NONE) {
                    throw error(t, "sequences of sequences or arrays are not supported");
                }
                int bound = -1;
                if (at(",")) {
                    next();
                    bound = number();
                }
                expect(">");
                return new IdlType(elem.prim, elem.name, bound >= 0 ? ArrayKind.BOUNDED : ArrayKind.UNBOUNDED, bound,
                        elem.stringBound);
            }
            if (at("string") || at("wstring")) {
                PrimitiveType p = next().text.equals("string") ? PrimitiveType.STRING : PrimitiveType.WSTRING;
                int bound = -1;
                if (at("<")) {
                    next();
                    bound = number();
                    expect(">");
                }
                return new IdlType(p, null, ArrayKind.NONE, -1, bound);
            }
            PrimitiveType p = baseType();
            if (p != null) {
                return new IdlType(p, null, ArrayKind.NONE, -1, -1);
            }
            return new IdlType(null, scopedName(), ArrayKind.NONE, -1, -1);
        }

        private PrimitiveType baseType() throws DecodeException {
            Token t = peek();
            PrimitiveType p;
            switch (t.text) {
                case "boolean" -> p = PrimitiveType.BOOL;
                case "octet" -> p = PrimitiveType.BYTE;
                case "char" -> p = PrimitiveType.CHAR;
                case "int8" -> p = PrimitiveType.INT8;
                case "uint8" -> p = PrimitiveType.UINT8;
                case "int16", "short" -> p = PrimitiveType.INT16;
                case "uint16" -> p = PrimitiveType.UINT16;
                case "int32" -> p = PrimitiveType.INT32;
                case "uint32" -> p = PrimitiveType.UINT32;
                case "int64" -> p = PrimitiveType.INT64;
                case "uint64" -> p = PrimitiveType.UINT64;
                case "float" -> p = PrimitiveType.FLOAT32;
                case "double" -> p = PrimitiveType.FLOAT64;
                case "wchar" -> throw error(t, "wchar is not supported");
                case "unsigned" -> {
                    next();
                    Token u = next();
                    if (u.text.equals("short")) {
                        return PrimitiveType.UINT16;
                    }
                    if (u.text.equals("long")) {
                        if (at("long")) {
                            next();
                            return PrimitiveType.UINT64;
                        }
                        return PrimitiveType.UINT32;
                    }
                    throw error(u, "expected 'short' or 'long' after 'unsigned'");
                }
                case "long" -> {
                    next();
                    if (at("long")) {
                        next();
                        return PrimitiveType.INT64;
                    }
                    if (at("double")) {
                        throw error(t, "long double is not supported");
                    }
                    return PrimitiveType.INT32;
                }
                default -> p = null;
            }
            if (p != null) {
                next();
            }
            return p;
        }

        private static String qualify(List<String> scope, String name) {
            return scope.isEmpty() ? name : String.join("::", scope) + "::" + name;
        }

        // ------------------------------------------------------------ resolution

        MessageSchema build() throws DecodeException {
            String rootKey = MessageSchema.key(rootType());
            Map<String, MessageDefinition> defs = new LinkedHashMap<>();
            RawStruct rootStruct = null;
            for (RawStruct s : structs.values()) {
                if (MessageSchema.key(s.fullName).equals(rootKey)) {
                    rootStruct = s;
                }
            }
            if (rootStruct == null) {
                throw new DecodeException("IDL schema " + root + ": no struct named " + root + " in the text (found "
                        + structs.keySet() + ")");
            }
            // root first, then the rest in text order
            defs.put(rootKey, toDefinition(rootStruct));
            for (RawStruct s : structs.values()) {
                defs.putIfAbsent(MessageSchema.key(s.fullName), toDefinition(s));
            }
            return new MessageSchema(name(rootStruct.fullName), Dialect.ROS2, defs);
        }

        private String rootType() {
            return root.strip().replace("::", "/");
        }

        private static String name(String scoped) {
            return scoped.replace("::", "/");
        }

        private MessageDefinition toDefinition(RawStruct s) throws DecodeException {
            String defName = name(s.fullName);
            List<Field> fields = new ArrayList<>();
            boolean placeholderOnly = s.fields.size() == 1
                    && s.fields.get(0).name.equals("structure_needs_at_least_one_member");
            if (!placeholderOnly) {
                for (RawField f : s.fields) {
                    fields.add(toField(s, f));
                }
            }
            List<Constant> constants = new ArrayList<>();
            String constModule = s.fullName + "_Constants";
            for (RawConst c : constantsByModule.getOrDefault(constModule, List.of())) {
                IdlType t = expandTypedef(c.type, s.scope, c.line);
                if (t.prim == null || t.kind != ArrayKind.NONE) {
                    throw new DecodeException("IDL schema " + root + ", line " + c.line + ": constant " + c.name
                            + " must have a built-in scalar type");
                }
                try {
                    constants.add(new Constant(c.name, t.prim, Literals.scalar(t.prim, c.valueText, Dialect.ROS2),
                            c.valueText));
                } catch (IllegalArgumentException e) {
                    throw new DecodeException("IDL schema " + root + ", line " + c.line + ", constant " + c.name + ": "
                            + e.getMessage(), e);
                }
            }
            return new MessageDefinition(defName, fields, constants);
        }

        private Field toField(RawStruct s, RawField f) throws DecodeException {
            IdlType t = expandTypedef(f.type, s.scope, f.line);
            FieldType ft;
            if (t.prim != null) {
                ft = FieldType.of(t.prim);
            } else {
                String target = resolveStruct(t.name, s.scope);
                if (target == null) {
                    PrimitiveType builtin = PrimitiveType.fromRosName(name(absolute(t.name)), Dialect.ROS2);
                    if (builtin == null) {
                        throw new DecodeException("IDL schema " + root + ", line " + f.line + ": field "
                                + name(s.fullName) + "." + f.name + " has type " + t.name
                                + ", which the schema text does not define");
                    }
                    ft = FieldType.of(builtin);
                } else {
                    PrimitiveType builtin = PrimitiveType.fromRosName(name(target), Dialect.ROS2);
                    ft = builtin != null ? FieldType.of(builtin) : FieldType.message(name(target));
                }
            }
            Object def = null;
            if (f.defaultText != null) {
                if (ft.primitive() == null || ft.primitive() == PrimitiveType.TIME || ft.primitive() == PrimitiveType.DURATION) {
                    throw new DecodeException("IDL schema " + root + ", line " + f.line + ": @default on field " + f.name
                            + " of non-built-in type " + ft);
                }
                try {
                    if (t.kind != ArrayKind.NONE) {
                        String txt = f.defaultText;
                        if (txt.startsWith("\"") || txt.startsWith("'")) {
                            txt = Literals.quoted(txt);
                        }
                        def = List.copyOf(Literals.array(ft.primitive(), txt, Dialect.ROS2));
                    } else {
                        def = Literals.scalar(ft.primitive(), f.defaultText, Dialect.ROS2);
                    }
                } catch (IllegalArgumentException e) {
                    throw new DecodeException("IDL schema " + root + ", line " + f.line + ", @default of field " + f.name
                            + ": " + e.getMessage(), e);
                }
            }
            return new Field(f.name, ft, t.kind, t.length, t.stringBound, def);
        }

        private static String absolute(String n) {
            return n.startsWith("::") ? n.substring(2) : n;
        }

        /** Expands a typedef name (recursively, at most 16 levels). */
        private IdlType expandTypedef(IdlType t, List<String> scope, int line) throws DecodeException {
            IdlType cur = t;
            List<String> curScope = scope;
            for (int depth = 0; depth < 16; depth++) {
                if (cur.prim != null) {
                    return cur;
                }
                String key = lookup(cur.name, curScope, typedefs);
                if (key == null) {
                    return new IdlType(null, qualifiedOrSelf(cur.name, curScope), cur.kind, cur.length, cur.stringBound);
                }
                IdlType td = typedefs.get(key);
                if (td.kind != ArrayKind.NONE && cur.kind != ArrayKind.NONE) {
                    throw new DecodeException("IDL schema " + root + ", line " + line + ": array or sequence of typedef "
                            + key + ", which is itself an array (multi-dimensional), is not supported");
                }
                ArrayKind kind = cur.kind != ArrayKind.NONE ? cur.kind : td.kind;
                int len = cur.kind != ArrayKind.NONE ? cur.length : td.length;
                cur = new IdlType(td.prim, td.name, kind, len, td.stringBound);
                curScope = typedefScopes.get(key);
            }
            throw new DecodeException("IDL schema " + root + ", line " + line + ": typedef chain too deep at " + t.name);
        }

        /** Resolves a (possibly relative) name to a struct's full scoped name so typedef scopes stay right. */
        private String qualifiedOrSelf(String n, List<String> scope) {
            String key = lookup(n, scope, structs);
            return key != null ? "::" + key : n;
        }

        private String resolveStruct(String n, List<String> scope) {
            return lookup(n, scope, structs);
        }

        private static String lookup(String n, List<String> scope, Map<String, ?> table) {
            if (n.startsWith("::")) {
                String a = n.substring(2);
                return table.containsKey(a) ? a : null;
            }
            for (int k = scope.size(); k >= 0; k--) {
                String cand = k == 0 ? n : String.join("::", scope.subList(0, k)) + "::" + n;
                if (table.containsKey(cand)) {
                    return cand;
                }
            }
            return null;
        }
    }
}
