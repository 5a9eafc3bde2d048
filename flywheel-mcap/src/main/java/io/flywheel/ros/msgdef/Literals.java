package io.flywheel.ros.msgdef;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses literal values of constants and defaults, shared by the {@code .msg} and IDL parsers.
 * Values are typed as in {@link io.flywheel.decode.MessageDecoder}'s tree. Errors are
 * {@link IllegalArgumentException}s that the parsers wrap with the schema name and line.
 */
final class Literals {
    private Literals() {}

    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** Parses one scalar literal (strings: quoted or bare). */
    static Object scalar(PrimitiveType type, String text, Dialect dialect) {
        String s = text.strip();
        switch (type) {
            case BOOL:
                switch (s) {
                    case "true", "True", "TRUE", "1": return Boolean.TRUE;
                    case "false", "False", "FALSE", "0": return Boolean.FALSE;
                    default: throw new IllegalArgumentException("not a bool literal: '" + s + "'");
                }
            case BYTE:
                return dialect == Dialect.ROS1 ? integer(s, -128, 127) : integer(s, 0, 255);
            case CHAR:
            case UINT8:
                return integer(s, 0, 255);
            case INT8:
                return integer(s, -128, 127);
            case INT16:
                return integer(s, Short.MIN_VALUE, Short.MAX_VALUE);
            case UINT16:
                return integer(s, 0, 0xFFFF);
            case INT32:
                return (int) integer(s, Integer.MIN_VALUE, Integer.MAX_VALUE).longValue();
            case UINT32:
                return integer(s, 0, 0xFFFF_FFFFL).longValue();
            case INT64:
                return big(s, BigInteger.valueOf(Long.MIN_VALUE), LONG_MAX).longValue();
            case UINT64: {
                BigInteger v = big(s, BigInteger.ZERO, U64_MAX);
                return v.compareTo(LONG_MAX) <= 0 ? (Object) v.longValue() : v;
            }
            case FLOAT32:
                return Float.parseFloat(floatText(s));
            case FLOAT64:
                return Double.parseDouble(floatText(s));
            case STRING:
            case WSTRING:
                return s.startsWith("\"") || s.startsWith("'") ? quoted(s) : s;
            default:
                throw new IllegalArgumentException("type " + type.rosName() + " cannot have a literal value");
        }
    }

    private static String floatText(String s) {
        String t = s.endsWith("f") || s.endsWith("F") ? s.substring(0, s.length() - 1) : s;
        switch (t.toLowerCase(java.util.Locale.ROOT)) {
            case "nan": return "NaN";
            case "inf": case "+inf": case "infinity": return "Infinity";
            case "-inf": case "-infinity": return "-Infinity";
            default: return t;
        }
    }

    /** Integer types up to 32 bits: returns Integer, except uint32 which the caller widens to Long. */
    private static Number integer(String s, long min, long max) {
        BigInteger v = big(s, BigInteger.valueOf(min), BigInteger.valueOf(max));
        long l = v.longValue();
        return l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Number) (int) l : (Number) l;
    }

    private static BigInteger big(String s, BigInteger min, BigInteger max) {
        BigInteger v;
        try {
            String t = s.startsWith("+") ? s.substring(1) : s;
            boolean neg = t.startsWith("-");
            String abs = neg ? t.substring(1) : t;
            if (abs.startsWith("0x") || abs.startsWith("0X")) {
                v = new BigInteger(abs.substring(2), 16);
            } else {
                v = new BigInteger(abs);
            }
            if (neg) {
                v = v.negate();
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an integer literal: '" + s + "'");
        }
        if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
            throw new IllegalArgumentException("integer " + s + " out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    /**
     * Parses an array literal {@code [a, b, "c,d"]} (or IDL {@code (a, b)}) into a list of scalars.
     */
    static List<Object> array(PrimitiveType type, String text, Dialect dialect) {
        String s = text.strip();
        if (s.length() < 2 || !(s.startsWith("[") && s.endsWith("]") || s.startsWith("(") && s.endsWith(")"))) {
            throw new IllegalArgumentException("array literal must be enclosed in [ ]: '" + s + "'");
        }
        String body = s.substring(1, s.length() - 1).strip();
        List<Object> out = new ArrayList<>();
        if (body.isEmpty()) {
            return out;
        }
        for (String part : splitTopLevel(body)) {
            out.add(scalar(type, part, dialect));
        }
        return out;
    }

    /** Splits on commas outside quotes. */
    static List<String> splitTopLevel(String body) {
        List<String> parts = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        char quote = 0;
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (quote != 0) {
                cur.append(c);
                if (c == '\\' && i + 1 < body.length()) {
                    cur.append(body.charAt(++i));
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                cur.append(c);
            } else if (c == ',') {
                parts.add(cur.toString().strip());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (quote != 0) {
            throw new IllegalArgumentException("unterminated string in '" + body + "'");
        }
        parts.add(cur.toString().strip());
        return parts;
    }

    /**
     * @return the index just past the closing quote of the quoted literal starting at {@code start}
     */
    static int quotedEnd(String s, int start) {
        char q = s.charAt(start);
        for (int i = start + 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == q) {
                return i + 1;
            }
        }
        throw new IllegalArgumentException("unterminated string literal: " + s.substring(start));
    }

    /** Decodes a whole quoted literal ({@code "..."} or {@code '...'}) with C-style escapes. */
    static String quoted(String s) {
        if (s.length() < 2 || s.charAt(0) != s.charAt(s.length() - 1) || quotedEnd(s, 0) != s.length()) {
            throw new IllegalArgumentException("malformed string literal: " + s);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i < s.length() - 1; i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'a' -> sb.append('\u0007');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'v' -> sb.append('\u000B');
                case 'x', 'u', 'U' -> {
                    int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    int end = Math.min(s.length() - 1, i + 1 + n);
                    sb.appendCodePoint(Integer.parseInt(s.substring(i + 1, end), 16));
                    i = end - 1;
                }
                default -> {
                    if (e >= '0' && e <= '7') {
                        int end = i;
                        while (end < s.length() - 1 && end < i + 3 && s.charAt(end) >= '0' && s.charAt(end) <= '7') {
                            end++;
                        }
                        sb.appendCodePoint(Integer.parseInt(s.substring(i, end), 8));
                        i = end - 1;
                    } else {
                        sb.append(e);
                    }
                }
            }
        }
        return sb.toString();
    }
}
