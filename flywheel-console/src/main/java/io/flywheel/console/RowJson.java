package io.flywheel.console;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.lake.RowBatch;

/**
 * Rows of a lake batch as plain values for JSON ({@link RowBatch#row}: utf8 as String, integers as Long/Integer,
 * floats as Double/Float, bool as Boolean, lists as List, structs as Map), with binary values as
 * {@code {"binary_bytes": n}} (the bytes are served by their own endpoints). Columns are looked up by name, so a
 * column a lake does not have yet reads as absent instead of failing.
 */
final class RowJson {
    private RowJson() {}

    /** @return every column of row i, by name */
    static Map<String, Object> row(RowBatch b, int i) {
        Map<String, Object> out = new LinkedHashMap<>();
        b.row(i).forEach((k, v) -> out.put(k, json(v)));
        return out;
    }

    /** @return the column's value as a String, "" when null or absent */
    static String str(RowBatch b, String col, int i) {
        Object o = b.has(col) ? b.value(col, i) : null;
        return o == null ? "" : o.toString();
    }

    /** @return the value with every byte[] inside it replaced by {@code {"binary_bytes": n}} */
    static Object json(Object v) {
        if (v instanceof byte[] bytes) {
            return Map.of("binary_bytes", bytes.length);
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(x -> out.add(json(x)));
            return out;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), json(x)));
            return out;
        }
        return v;
    }
}
