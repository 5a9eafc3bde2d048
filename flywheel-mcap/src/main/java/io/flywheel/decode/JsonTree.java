package io.flywheel.decode;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

/**
 * Writes a decoded-message tree ({@link MessageDecoder}) as JSON, normalised so that any
 * JSON reader gets the exact values (this is what {@code mcap cat --json} prints):
 * <ul>
 *   <li>{@code Long} and {@code BigInteger} (uint32, int64, uint64) as decimal strings, since
 *       JSON readers such as JavaScript lose integers above 2^53;</li>
 *   <li>{@code byte[]} (and {@code ByteBuffer}, from position to limit) as an array of numbers
 *       0..255;</li>
 *   <li>{@code Float} widened to double and written as that double ({@code 0.1f} prints as
 *       {@code 0.10000000149011612}), the value a JavaScript reader holds for a float32;</li>
 *   <li>NaN, +Infinity, -Infinity (float or double) as the strings {@code "NaN"},
 *       {@code "Infinity"}, {@code "-Infinity"};</li>
 *   <li>maps as objects in iteration order, lists and Java arrays as arrays, Integer/Short/Byte
 *       as numbers, Boolean, String and null as themselves.</li>
 * </ul>
 */
public final class JsonTree {
    private JsonTree() {}

    private static final JsonFactory FACTORY = new JsonFactory();

    /**
     * @param tree a decoded tree (or any value it contains)
     * @return compact JSON text
     * @throws IllegalArgumentException when the tree holds a value of a type not listed above
     */
    public static String toJson(Object tree) {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(w)) {
            write(g, tree);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return w.toString();
    }

    /**
     * Writes one value with the normalisation above.
     *
     * @param g the generator
     * @param v the value
     * @throws IOException from the generator
     * @throws IllegalArgumentException for a value of a type not listed above
     */
    public static void write(JsonGenerator g, Object v) throws IOException {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof String s) {
            g.writeString(s);
        } else if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            g.writeNumber(((Number) v).intValue());
        } else if (v instanceof Long || v instanceof BigInteger) {
            g.writeString(v.toString());
        } else if (v instanceof Double d) {
            writeDouble(g, d);
        } else if (v instanceof Float f) {
            writeDouble(g, f.doubleValue());
        } else if (v instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (v instanceof Map<?, ?> m) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                g.writeFieldName(String.valueOf(e.getKey()));
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (v instanceof List<?> l) {
            g.writeStartArray();
            for (Object o : l) {
                write(g, o);
            }
            g.writeEndArray();
        } else if (v instanceof byte[] b) {
            g.writeStartArray();
            for (byte x : b) {
                g.writeNumber(x & 0xFF);
            }
            g.writeEndArray();
        } else if (v instanceof ByteBuffer bb) {
            g.writeStartArray();
            for (int i = bb.position(); i < bb.limit(); i++) {
                g.writeNumber(bb.get(i) & 0xFF);
            }
            g.writeEndArray();
        } else if (v instanceof double[] a) {
            g.writeStartArray();
            for (double x : a) {
                writeDouble(g, x);
            }
            g.writeEndArray();
        } else if (v instanceof float[] a) {
            g.writeStartArray();
            for (float x : a) {
                writeDouble(g, x);
            }
            g.writeEndArray();
        } else if (v instanceof int[] a) {
            g.writeStartArray();
            for (int x : a) {
                g.writeNumber(x);
            }
            g.writeEndArray();
        } else if (v instanceof long[] a) {
            g.writeStartArray();
            for (long x : a) {
                g.writeString(Long.toString(x));
            }
            g.writeEndArray();
        } else if (v instanceof boolean[] a) {
            g.writeStartArray();
            for (boolean x : a) {
                g.writeBoolean(x);
            }
            g.writeEndArray();
        } else if (v instanceof Object[] a) {
            g.writeStartArray();
            for (Object x : a) {
                write(g, x);
            }
            g.writeEndArray();
        } else {
            throw new IllegalArgumentException("JsonTree: a decoded tree cannot hold a " + v.getClass().getName());
        }
    }

    private static void writeDouble(JsonGenerator g, double d) throws IOException {
        if (Double.isNaN(d)) {
            g.writeString("NaN");
        } else if (d == Double.POSITIVE_INFINITY) {
            g.writeString("Infinity");
        } else if (d == Double.NEGATIVE_INFINITY) {
            g.writeString("-Infinity");
        } else {
            g.writeNumber(d);
        }
    }
}
