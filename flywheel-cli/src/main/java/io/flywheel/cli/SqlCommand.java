package io.flywheel.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.eval.LakeQuery;
import io.flywheel.lake.Lake;
import io.flywheel.lake.TableRef;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel sql LAKE "SELECT ..."}: ad hoc SQL (DuckDB) over the lake's tables. */
@Command(name = "sql", mixinStandardHelpOptions = true, description = "Ad hoc SQL (DuckDB) over every lake table"
        + " (episodes, frames, raw_files, telemetry, trainsets, trainset_episodes, eval_runs, eval_episodes, ...),"
        + " read as Arrow streams of Lance scans; a table at a version with --at TABLE=VERSION|TAG. Output: a table,"
        + " --json, or --parquet FILE.")
final class SqlCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    LakeLocation at;

    @Parameters(index = "1", paramLabel = "SQL", description = "one SQL statement; lake tables by their names")
    String sql;

    @Option(names = "--at", paramLabel = "TABLE=REF", description = "read TABLE at a version number or at the"
            + " version a lake tag pins, e.g. --at episodes=train-v2 --at frames=12 (repeatable; default: the lake's"
            + " current versions)")
    List<String> atSpecs = new ArrayList<>();

    @Option(names = "--parquet", paramLabel = "FILE", description = "write the result to a Parquet file")
    Path parquet;

    @Option(names = "--max-rows", paramLabel = "N", description = "rows printed as a table (default:"
            + " ${DEFAULT-VALUE}; --json prints all)")
    int maxRows = 200;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        Map<String, TableRef> refs = Usage.check(spec, "--at", () -> LakeQuery.parseAt(atSpecs));
        Usage.require(spec, maxRows >= 1, "--max-rows must be >= 1, got " + maxRows);
        Usage.require(spec, !sql.isBlank(), "SQL is empty");
        long t0 = System.nanoTime();
        LakeQuery.Answer a;
        try (Lake lake = at.open()) {
            a = LakeQuery.run(lake, sql, refs, parquet);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        String read = versions(a.versions(), refs);
        if (json.enabled()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("table_versions", a.versions());
            if (parquet != null) {
                m.put("parquet", parquet);
                m.put("rows", a.rowsWritten());
            } else if (a.result().statement()) {
                m.put("statement", true);
                m.put("update_count", a.result().updateCount());
                m.put("rows", List.of());
                m.put("row_count", 0);
            } else {
                m.put("columns", a.result().columns());
                m.put("types", a.result().types());
                m.put("rows", a.result().rows());
                m.put("row_count", a.result().rows().size());
            }
            m.put("seconds", Math.round(secs * 1000) / 1000.0);
            Json.print(System.out, m);
            return 0;
        }
        if (parquet != null) {
            System.out.printf(java.util.Locale.ROOT, "wrote %d row(s) to %s in %.2f s; read %s%n", a.rowsWritten(),
                    parquet, secs, read);
            return 0;
        }
        if (a.result().statement()) {
            System.out.printf(java.util.Locale.ROOT, "statement ran; no rows (update count %d) in %.2f s; read %s%n",
                    a.result().updateCount(), secs, read);
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        for (List<Object> r : a.result().rows()) {
            if (rows.size() >= maxRows) {
                break;
            }
            List<String> row = new ArrayList<>();
            for (Object v : r) {
                row.add(text(v, false));
            }
            rows.add(row);
        }
        TextTable.print(System.out, a.result().columns(), rows);
        int n = a.result().rows().size();
        System.out.printf(java.util.Locale.ROOT, "%d row(s)%s in %.2f s; read %s%n", n, n > maxRows ? " (first "
                + maxRows + " shown; --max-rows, --json or --parquet for all)" : "", secs, read);
        return 0;
    }

    /**
     * A value as text: a blob as {@code <blob N bytes>}, a list as {@code [a, b]}, a struct or map as
     * {@code {key: value, ...}} (strings inside quoted), never a Java class name.
     */
    static String text(Object v, boolean nested) {
        if (v == null) {
            return "null";
        }
        if (v instanceof List<?> l) {
            List<String> parts = new ArrayList<>();
            l.forEach(o -> parts.add(text(o, true)));
            return "[" + String.join(", ", parts) + "]";
        }
        if (v instanceof Map<?, ?> m) {
            List<String> parts = new ArrayList<>();
            m.forEach((k, o) -> parts.add(k + ": " + text(o, true)));
            return "{" + String.join(", ", parts) + "}";
        }
        if (nested && v instanceof String s) {
            return "'" + s.replace("'", "''") + "'";
        }
        return String.valueOf(v);
    }

    private static String versions(Map<String, Long> v, Map<String, TableRef> refs) {
        if (v.isEmpty()) {
            return "no lake table";
        }
        List<String> parts = new ArrayList<>();
        v.forEach((t, ver) -> parts.add(t + " v" + ver + (refs.containsKey(t) && refs.get(t).tag() != null
                ? " (tag " + refs.get(t).tag() + ")" : "")));
        return String.join(", ", parts);
    }
}
