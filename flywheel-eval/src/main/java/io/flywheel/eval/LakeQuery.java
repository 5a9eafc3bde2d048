package io.flywheel.eval;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;

/**
 * Ad hoc SQL over every lake table ({@code flywheel sql}): the lake tables a query names (as whole words, outside
 * string literals) are handed to DuckDB as Arrow streams of their Lance scans, each at the lake's current version or
 * at the version an {@code at} entry pins ({@code --at episodes=train-v2}: the version the lake tag pins;
 * {@code --at frames=12}: version 12). DuckDB cannot push its projection into a stream made before the query, so the
 * Lance scan reads the columns the query names as words ({@link #projection}), or every column when it may read
 * columns it does not name. A stream is read once: a query that reads one table twice (a self-join) runs again with
 * each table's scan copied once into a DuckDB temporary table, which costs the memory of those columns.
 */
public final class LakeQuery {
    private LakeQuery() {}

    /** The result and the table versions it read. */
    public record Answer(LakeSql.Result result, Map<String, Long> versions, long rowsWritten) {}

    private static final Pattern WORD = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * @param at table to version: a number or a tag (as {@link #parseAt})
     * @param parquet where to write the result as Parquet, or null to return its rows
     * @throws NotFoundException for a table, tag or version the lake lacks, or an {@code at} table the query does not
     *     name
     * @throws BadInputException for SQL the engine refuses (its message)
     */
    public static Answer run(Lake lake, String sql, Map<String, TableRef> at, Path parquet) {
        List<String> named = tablesNamed(sql, new TreeSet<>(lake.snapshot().tables().keySet()));
        for (String t : at.keySet()) {
            if (!lake.hasTable(t)) {
                throw new NotFoundException("--at names table '" + t + "', which the lake does not have; tables: "
                        + new TreeSet<>(lake.snapshot().tables().keySet()));
            }
            if (!named.contains(t)) {
                throw new BadInputException("--at names table '" + t + "', which the query does not read");
            }
        }
        try {
            return answer(lake, sql, at, named, parquet, false);
        } catch (BadInputException e) {
            if (!e.getMessage().contains(LakeSql.READ_ONCE)) {
                throw e;
            }
            return answer(lake, sql, at, named, parquet, true); // a table read twice: again, each table materialized
        }
    }

    /**
     * The query over the named tables, streamed; or, with {@code materialize}, each table's scan copied once into a
     * DuckDB temporary table of its name, so that the query may read it more than once (a self-join).
     */
    private static Answer answer(Lake lake, String sql, Map<String, TableRef> at, List<String> named, Path parquet,
            boolean materialize) {
        Map<String, Long> versions = new LinkedHashMap<>();
        try (LakeSql s = LakeSql.open(lake)) {
            for (String t : named) {
                TableRef ref = at.getOrDefault(t, TableRef.latest());
                try (LakeTable probe = lake.table(t, ref)) {
                    versions.put(t, probe.version());
                }
                ScanRequest.Builder req = ScanRequest.builder().batchSize(LakeSql.BATCH_ROWS);
                List<String> cols = projection(sql, lake, t, ref);
                if (cols != null) {
                    req.columns(cols.toArray(String[]::new));
                }
                if (materialize) {
                    String stream = "lake_stream_" + t;
                    s.table(t, stream, ref, req.build());
                    s.query("CREATE TEMPORARY TABLE \"" + t + "\" AS SELECT * FROM " + stream);
                } else {
                    s.table(t, ref, req.build());
                }
            }
            try {
                if (parquet != null) {
                    long n = s.copyToParquet(sql, parquet);
                    return new Answer(new LakeSql.Result(List.of(), List.of(), List.of()), versions, n);
                }
                return new Answer(s.query(sql), versions, -1);
            } catch (BadInputException e) {
                if (e.getMessage().contains("Table with name") && e.getMessage().contains("does not exist")) {
                    throw new BadInputException(e.getMessage() + "; the lake's tables: " + String.join(", ",
                            new TreeSet<>(lake.snapshot().tables().keySet())), e);
                }
                throw e;
            }
        }
    }

    /**
     * @param specs {@code TABLE=VERSION} or {@code TABLE=TAG}, e.g. {@code episodes=train-v2}, {@code frames=12}
     * @return table to ref
     * @throws IllegalArgumentException when one is malformed or a table is given twice
     */
    public static Map<String, TableRef> parseAt(List<String> specs) {
        Map<String, TableRef> out = new LinkedHashMap<>();
        for (String s : specs) {
            int eq = s.indexOf('=');
            if (eq <= 0 || eq == s.length() - 1) {
                throw new IllegalArgumentException("'" + s + "': expected TABLE=VERSION or TABLE=TAG, e.g."
                        + " episodes=train-v2 or frames=12");
            }
            String table = s.substring(0, eq);
            String ref = s.substring(eq + 1);
            TableRef r;
            if (ref.matches("\\d+")) {
                long v = Long.parseLong(ref);
                if (v < 1) {
                    throw new IllegalArgumentException("'" + s + "': table versions start at 1");
                }
                r = TableRef.version(v);
            } else {
                r = TableRef.tag(ref);
            }
            if (out.put(table, r) != null) {
                throw new IllegalArgumentException("table '" + table + "' is given twice");
            }
        }
        return out;
    }

    private static final Pattern STAR = Pattern.compile("(?i)count\\s*\\(\\s*\\*\\s*\\)");
    private static final Pattern WHOLE_ROW = Pattern.compile("(?i)\\bnatural\\b|\\bcolumns\\s*\\(|\\bexclude\\b"
            + "|\\breplace\\s*\\(|\"");

    /**
     * The columns of a table a query can read: every column whose name appears in it as a word (outside string
     * literals), so that a query over {@code frames} does not stream every frame's hot JPEG. Null (every column) when
     * the query may read columns it does not name: a {@code *} other than {@code count(*)}, a {@code NATURAL} join,
     * {@code COLUMNS(...)}, {@code EXCLUDE}, {@code REPLACE (...)} or a quoted identifier.
     */
    static List<String> projection(String sql, Lake lake, String table, TableRef ref) {
        String bare = sql.replaceAll("'(?:[^']|'')*'", "''");
        if (STAR.matcher(bare).replaceAll("").contains("*") || WHOLE_ROW.matcher(bare).find()) {
            return null;
        }
        java.util.Set<String> words = new java.util.HashSet<>();
        Matcher m = WORD.matcher(bare);
        while (m.find()) {
            words.add(m.group().toLowerCase(Locale.ROOT));
        }
        List<String> out = new ArrayList<>();
        List<String> all;
        try (LakeTable t = lake.table(table, ref)) {
            all = t.columnNames();
        }
        for (String c : all) {
            if (words.contains(c.toLowerCase(Locale.ROOT))) {
                out.add(c);
            }
        }
        if (out.isEmpty()) { // count(*) alone: one small column keeps the row count
            out.add(all.get(0));
        }
        return out;
    }

    /** @return the lake tables the SQL names as words outside string literals and quoted identifiers, in order */
    static List<String> tablesNamed(String sql, java.util.Set<String> tables) {
        String bare = sql.replaceAll("'(?:[^']|'')*'", "''");
        List<String> out = new ArrayList<>();
        Matcher m = WORD.matcher(bare);
        while (m.find()) {
            String w = m.group();
            String lw = w.toLowerCase(Locale.ROOT);
            String hit = tables.contains(w) ? w : tables.contains(lw) ? lw : null;
            if (hit != null && !out.contains(hit)) {
                // a word right after a '.' is a column of something else (e.g. t.episodes)
                int before = m.start() - 1;
                while (before >= 0 && Character.isWhitespace(bare.charAt(before))) {
                    before--;
                }
                if (before < 0 || bare.charAt(before) != '.') {
                    out.add(hit);
                }
            }
        }
        return out;
    }
}
