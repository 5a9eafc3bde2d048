package io.flywheel.enrich.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one JavaScript literal value (object, array, string, number, boolean, null) as minifiers
 * write it: unquoted keys, {@code !0}/{@code !1} for true/false, numbers like {@code .5} or
 * {@code -0}, single- or double-quoted strings, {@code void 0}. Objects become
 * {@code LinkedHashMap<String,Object>} (key order kept), arrays {@code List<Object>}, numbers
 * {@code Double}, strings {@code String}, booleans {@code Boolean}, null/undefined {@code null}.
 *
 * <p>This is the subset of ECMAScript literal syntax (ECMA-262 section 13.2) found in the browserify
 * bundles of TF.js models; anything else is an error naming the file and character offset.
 */
final class JsLiteral {
    private final String src;
    private final String file;
    private int pos;

    private JsLiteral(String src, String file, int pos) {
        this.src = src;
        this.file = file;
        this.pos = pos;
    }

    /**
     * Parses the literal that starts with the last character of the first occurrence of
     * {@code marker} in {@code src}.
     *
     * @param src    the whole file text
     * @param marker text ending with the literal's first character, e.g. <code>exports={</code>
     * @param file   the file name, for error messages
     * @return the parsed value
     * @throws ModelFormatException when the marker is missing or the literal is malformed
     */
    static Object parseAfter(String src, String marker, String file) throws ModelFormatException {
        int at = src.indexOf(marker);
        if (at < 0) {
            throw new ModelFormatException(file + ": expected a JavaScript literal starting with '" + marker + "', found none");
        }
        JsLiteral p = new JsLiteral(src, file, at + marker.length() - 1);
        return p.value();
    }

    private ModelFormatException error(String expected) {
        String near = src.substring(pos, Math.min(src.length(), pos + 20));
        return new ModelFormatException(file + " at character " + pos + ": expected " + expected + ", found '" + near + "'");
    }

    private void skipSpace() {
        while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
            pos++;
        }
    }

    private Object value() throws ModelFormatException {
        skipSpace();
        if (pos >= src.length()) {
            throw error("a value");
        }
        char c = src.charAt(pos);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
            case '\'':
                return string();
            case '!':
                if (src.startsWith("!0", pos)) {
                    pos += 2;
                    return Boolean.TRUE;
                }
                if (src.startsWith("!1", pos)) {
                    pos += 2;
                    return Boolean.FALSE;
                }
                throw error("!0 or !1");
            default:
                break;
        }
        if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
            return number();
        }
        String word = identifier();
        switch (word) {
            case "true":
                return Boolean.TRUE;
            case "false":
                return Boolean.FALSE;
            case "null":
                return null;
            case "void":
                skipSpace();
                number();
                return null;
            case "Infinity":
                return Double.POSITIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                pos -= word.length();
                throw error("a JavaScript literal");
        }
    }

    private Map<String, Object> object() throws ModelFormatException {
        pos++;
        Map<String, Object> map = new LinkedHashMap<>();
        skipSpace();
        if (pos < src.length() && src.charAt(pos) == '}') {
            pos++;
            return map;
        }
        while (true) {
            skipSpace();
            if (pos >= src.length()) {
                throw error("a key");
            }
            char c = src.charAt(pos);
            String key;
            if (c == '"' || c == '\'') {
                key = string();
            } else if (c >= '0' && c <= '9') {
                key = numberText();
            } else {
                key = identifier();
                if (key.isEmpty()) {
                    throw error("a key");
                }
            }
            skipSpace();
            if (pos >= src.length() || src.charAt(pos) != ':') {
                throw error("':'");
            }
            pos++;
            map.put(key, value());
            skipSpace();
            if (pos < src.length() && src.charAt(pos) == ',') {
                pos++;
                continue;
            }
            if (pos < src.length() && src.charAt(pos) == '}') {
                pos++;
                return map;
            }
            throw error("',' or '}'");
        }
    }

    private List<Object> array() throws ModelFormatException {
        pos++;
        List<Object> list = new ArrayList<>();
        skipSpace();
        if (pos < src.length() && src.charAt(pos) == ']') {
            pos++;
            return list;
        }
        while (true) {
            list.add(value());
            skipSpace();
            if (pos < src.length() && src.charAt(pos) == ',') {
                pos++;
                continue;
            }
            if (pos < src.length() && src.charAt(pos) == ']') {
                pos++;
                return list;
            }
            throw error("',' or ']'");
        }
    }

    private String string() throws ModelFormatException {
        char quote = src.charAt(pos++);
        int start = pos;
        int end = src.indexOf(quote, pos);
        int backslash = src.indexOf('\\', pos);
        if (end >= 0 && (backslash < 0 || backslash > end)) {
            pos = end + 1;
            return src.substring(start, end);
        }
        StringBuilder sb = new StringBuilder();
        while (pos < src.length()) {
            char c = src.charAt(pos++);
            if (c == quote) {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= src.length()) {
                break;
            }
            char e = src.charAt(pos++);
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'v' -> sb.append('\u000b');
                case '0' -> sb.append('\0');
                case 'u' -> {
                    if (pos + 4 > src.length()) {
                        throw error("four hex digits after \\u");
                    }
                    try {
                        sb.append((char) Integer.parseInt(src.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("four hex digits after \\u");
                    }
                    pos += 4;
                }
                case 'x' -> {
                    if (pos + 2 > src.length()) {
                        throw error("two hex digits after \\x");
                    }
                    try {
                        sb.append((char) Integer.parseInt(src.substring(pos, pos + 2), 16));
                    } catch (NumberFormatException ex) {
                        throw error("two hex digits after \\x");
                    }
                    pos += 2;
                }
                default -> sb.append(e);
            }
        }
        pos = start - 1;
        throw error("a closing " + quote);
    }

    private String numberText() {
        int start = pos;
        if (pos < src.length() && (src.charAt(pos) == '-' || src.charAt(pos) == '+')) {
            pos++;
        }
        while (pos < src.length()) {
            char c = src.charAt(pos);
            boolean sign = (c == '-' || c == '+') && (src.charAt(pos - 1) == 'e' || src.charAt(pos - 1) == 'E');
            if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || sign) {
                pos++;
            } else {
                break;
            }
        }
        return src.substring(start, pos);
    }

    private Double number() throws ModelFormatException {
        int start = pos;
        String text = numberText();
        if (text.equals("-Infinity")) {
            return Double.NEGATIVE_INFINITY;
        }
        if (text.endsWith("-") || text.equals("+")) {
            String word = identifier();
            if (word.equals("Infinity")) {
                return text.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
            }
        }
        try {
            return Double.valueOf(text);
        } catch (NumberFormatException ex) {
            pos = start;
            throw error("a number");
        }
    }

    private String identifier() {
        int start = pos;
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (Character.isLetterOrDigit(c) || c == '_' || c == '$') {
                pos++;
            } else {
                break;
            }
        }
        return src.substring(start, pos);
    }
}
