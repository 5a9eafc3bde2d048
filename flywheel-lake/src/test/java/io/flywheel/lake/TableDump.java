package io.flywheel.lake;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.arrow.vector.FieldVector;

/** Every row of a table version by value: one line per row, every column, sorted (row order is not compared). */
final class TableDump {
    private TableDump() {}

    static List<String> of(Lake lake, String table) {
        try (LakeTable t = lake.table(table)) {
            return of(t);
        }
    }

    static List<String> of(LakeTable t) {
        List<String> rows = new ArrayList<>();
        t.scanArrow(ScanRequest.all(), batch -> {
            for (int i = 0; i < batch.getRowCount(); i++) {
                StringBuilder b = new StringBuilder();
                for (FieldVector v : batch.getFieldVectors()) {
                    b.append(v.getName()).append('=').append(render(v.getObject(i))).append(" | ");
                }
                rows.add(b.toString());
            }
        });
        Collections.sort(rows);
        return rows;
    }

    /** @return the value with byte arrays as hex, nested in lists and structs too */
    private static String render(Object o) {
        if (o instanceof byte[] bytes) {
            return java.util.HexFormat.of().formatHex(bytes);
        }
        if (o instanceof List<?> l) {
            List<String> out = new ArrayList<>();
            l.forEach(x -> out.add(render(x)));
            return out.toString();
        }
        if (o instanceof java.util.Map<?, ?> m) {
            java.util.TreeMap<String, String> out = new java.util.TreeMap<>();
            m.forEach((k, v) -> out.put(String.valueOf(k), render(v)));
            return out.toString();
        }
        return String.valueOf(o);
    }
}
