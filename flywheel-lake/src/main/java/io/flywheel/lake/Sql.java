package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;

/** SQL literal helpers for Lance filters. */
public final class Sql {
    private Sql() {}

    /** @return {@code s} as a SQL string literal, single quotes doubled */
    public static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /** @return {@code column IN ('a', 'b', ...)}, as ORed IN lists of at most 500 values; "false" when empty */
    public static String in(String column, List<String> values) {
        if (values.isEmpty()) {
            return "false";
        }
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < values.size(); i += 500) {
            List<String> q = new ArrayList<>();
            for (String v : values.subList(i, Math.min(values.size(), i + 500))) {
                q.add(quote(v));
            }
            parts.add(column + " IN (" + String.join(", ", q) + ")");
        }
        return parts.size() == 1 ? parts.get(0) : "(" + String.join(") OR (", parts) + ")";
    }
}
