package io.flywheel.console;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Arrow values as plain Java values for JSON, whatever the column's type: utf8 as String, integers as
 * Long/Integer, floats as Double/Float, bool as Boolean, lists as List, structs as Map (field name to
 * value), binary as {@code {"binary_bytes": n}} (the bytes are served by their own endpoints). Columns
 * are looked up by name, so a column a lake does not have yet reads as absent instead of failing.
 */
final class ArrowJson {
    private ArrowJson() {}

    /** @return whether the batch has this column */
    static boolean has(VectorSchemaRoot b, String col) {
        return b.getSchema().getFields().stream().anyMatch(f -> f.getName().equals(col));
    }

    /** @return row i of the column as a Java value; null when the value or the column is absent */
    static Object get(VectorSchemaRoot b, String col, int i) {
        return has(b, col) ? value(b.getVector(col), i) : null;
    }

    /** @return the column's value as a String, "" when null or absent */
    static String str(VectorSchemaRoot b, String col, int i) {
        Object o = get(b, col, i);
        return o == null ? "" : o.toString();
    }

    /** @return every column of row i, by name */
    static Map<String, Object> row(VectorSchemaRoot b, int i) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (FieldVector v : b.getFieldVectors()) {
            out.put(v.getName(), value(v, i));
        }
        return out;
    }

    static Object value(ValueVector v, int i) {
        if (v.isNull(i)) {
            return null;
        }
        if (v instanceof VarCharVector s) {
            return new String(s.get(i), StandardCharsets.UTF_8);
        }
        if (v instanceof LargeVarCharVector s) {
            return new String(s.get(i), StandardCharsets.UTF_8);
        }
        if (v instanceof BigIntVector x) {
            return x.get(i);
        }
        if (v instanceof IntVector x) {
            return x.get(i);
        }
        if (v instanceof SmallIntVector x) {
            return (int) x.get(i);
        }
        if (v instanceof Float8Vector x) {
            return x.get(i);
        }
        if (v instanceof Float4Vector x) {
            return x.get(i);
        }
        if (v instanceof BitVector x) {
            return x.get(i) == 1;
        }
        if (v instanceof ListVector l) {
            List<Object> out = new ArrayList<>();
            ValueVector data = l.getDataVector();
            for (int j = l.getElementStartIndex(i); j < l.getElementEndIndex(i); j++) {
                out.add(value(data, j));
            }
            return out;
        }
        if (v instanceof FixedSizeListVector l) {
            List<Object> out = new ArrayList<>();
            ValueVector data = l.getDataVector();
            for (int j = i * l.getListSize(); j < (i + 1) * l.getListSize(); j++) {
                out.add(value(data, j));
            }
            return out;
        }
        if (v instanceof StructVector s) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (String name : s.getChildFieldNames()) {
                out.put(name, value(s.getChild(name), i));
            }
            return out;
        }
        if (v instanceof BaseVariableWidthVector bin) {
            return Map.of("binary_bytes", bin.getValueLength(i));
        }
        Object o = v.getObject(i);
        return o == null ? null : o.toString();
    }

    /** @return the bytes of a binary value inside a struct list, or null */
    static byte[] binary(ValueVector v, int i) {
        if (v == null || v.isNull(i) || !(v instanceof BaseVariableWidthVector bin)) {
            return null;
        }
        return bin.get(i);
    }
}
