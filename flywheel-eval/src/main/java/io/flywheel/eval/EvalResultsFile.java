package io.flywheel.eval;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.rows.EvalEpisodeRow;

/**
 * An evaluation results file read into eval episode rows: CSV (RFC 4180: a header line, comma separated, double quotes
 * around values with commas, quotes or line breaks), JSON (an array of objects, or one object per line) or Parquet
 * (read through DuckDB). The format comes from the name ({@code .csv}, {@code .json}/{@code .jsonl}/{@code .ndjson},
 * {@code .parquet}).
 *
 * <p>Columns (names as the lake's): {@code episode_id}, {@code task}, {@code object}, {@code lighting},
 * {@code robot_id} (or {@code robot}), {@code success} (true/false, 1/0, yes/no) are required; {@code run_id} and
 * {@code policy_version} unless the caller gives them; {@code scene}, {@code duration_s} (seconds) or
 * {@code duration_ns}, {@code failure_mode}, {@code intervention} (as success; default false) and
 * {@code started_at_ns} are optional; other columns are ignored. A success's failure mode is dropped.
 *
 * <p>Errors ({@link BadInputException}) name the file, the line (CSV, JSON; Parquet: the row, 1-based) and the column:
 * a missing column, an empty required value, a value that does not parse, a run's second policy, an episode twice, a
 * column given twice (or {@code robot} beside {@code robot_id}, {@code duration_s} beside {@code duration_ns}), a JSON
 * array or object as a known column's value, a {@code run_id} or {@code policy_version} other than the caller's.
 */
public final class EvalResultsFile {
    /** One run's rows from the file. */
    public record Run(String runId, String policyVersion, Long startedAtNs, List<EvalEpisodeRow> episodes) {}

    private static final List<String> REQUIRED = List.of("episode_id", "task", "object", "lighting", "robot_id",
            "success");

    /** The columns read; any other is ignored. */
    private static final java.util.Set<String> KNOWN = java.util.Set.of("run_id", "policy_version", "episode_id",
            "task", "object", "lighting", "robot_id", "success", "scene", "duration_s", "duration_ns", "failure_mode",
            "intervention", "started_at_ns");
    private static final java.util.Set<String> NUMBERS = java.util.Set.of("duration_s", "duration_ns",
            "started_at_ns");

    private final Path file;
    private final String runOverride;
    private final String policyOverride;

    private EvalResultsFile(Path file, String run, String policy) {
        this.file = file;
        this.runOverride = run;
        this.policyOverride = policy;
    }

    /**
     * @param file a .csv, .json, .jsonl or .parquet file
     * @param run the run id of every row, or null to take each row's {@code run_id}
     * @param policy the policy version of every run, or null to take each row's {@code policy_version}
     * @return the file's runs, in the order they first appear
     * @throws BadInputException naming file, line and column; {@link java.io.UncheckedIOException} when unreadable
     */
    public static List<Run> read(Path file, String run, String policy) {
        return new EvalResultsFile(file, run, policy).read();
    }

    /** One record of the file: its position for messages, its values by column name (null: absent or empty). */
    private record Record(String where, Map<String, String> values, Map<String, String> columnWhere) {}

    private List<Run> read() {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        List<Record> records;
        List<String> columns;
        try {
            if (name.endsWith(".csv")) {
                List<String>[] cols = new List[1];
                records = csv(cols);
                columns = cols[0];
            } else if (name.endsWith(".json") || name.endsWith(".jsonl") || name.endsWith(".ndjson")) {
                records = json();
                columns = null;
            } else if (name.endsWith(".parquet")) {
                List<String>[] cols = new List[1];
                records = parquet(cols);
                columns = cols[0];
            } else {
                throw new BadInputException(file + ": not a results file: expected a name ending in .csv, .json,"
                        + " .jsonl or .parquet");
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        if (columns != null) {
            checkColumns(columns, file + ": line 1");
        }
        Map<String, Run> runs = new LinkedHashMap<>();
        Map<String, String> seen = new HashMap<>();
        Map<String, List<EvalEpisodeRow>> rows = new LinkedHashMap<>();
        Map<String, String> policies = new LinkedHashMap<>();
        Map<String, Long> starts = new HashMap<>();
        for (Record r : records) {
            if (columns == null) {
                checkColumns(new ArrayList<>(r.columnWhere().keySet()), r.where());
            }
            String runId = runOverride != null ? runOverride : required(r, "run_id");
            String policy = policyOverride != null ? policyOverride : required(r, "policy_version");
            String fileRun = r.values().get("run_id");
            if (runOverride != null && fileRun != null && !fileRun.trim().equals(runOverride)) {
                throw new BadInputException(at(r, "run_id") + ": run_id '" + fileRun + "' but --run '" + runOverride
                        + "' was given; drop --run (the file names its runs) or the file's run_id column");
            }
            String filePolicy = r.values().get("policy_version");
            if (policyOverride != null && filePolicy != null && !filePolicy.trim().equals(policyOverride)) {
                throw new BadInputException(at(r, "policy_version") + ": policy_version '" + filePolicy
                        + "' but --policy '" + policyOverride + "' was given; drop --policy (the file names its"
                        + " policies) or the file's policy_version column");
            }
            String prior = policies.putIfAbsent(runId, policy);
            if (prior != null && !prior.equals(policy)) {
                throw new BadInputException(at(r, "policy_version") + ": run '" + runId + "' has policy '" + prior
                        + "' on an earlier line, not '" + policy + "'");
            }
            String episode = required(r, "episode_id");
            String firstSeen = seen.putIfAbsent(runId + "\u0000" + episode, r.where());
            if (firstSeen != null) {
                throw new BadInputException(at(r, "episode_id") + ": episode '" + episode + "' of run '" + runId
                        + "' is there already (" + firstSeen.substring(firstSeen.indexOf(": ") + 2) + ")");
            }
            boolean success = bool(r, "success", null);
            Long duration = null;
            if (r.values().get("duration_ns") != null) {
                duration = longValue(r, "duration_ns");
            } else if (r.values().get("duration_s") != null) {
                double s = doubleValue(r, "duration_s");
                duration = Math.round(s * 1e9);
            }
            if (duration != null && duration < 0) {
                throw new BadInputException(at(r, r.values().get("duration_ns") != null ? "duration_ns" : "duration_s")
                        + ": a duration cannot be negative");
            }
            if (r.values().get("started_at_ns") != null) {
                long s = longValue(r, "started_at_ns");
                starts.merge(runId, s, Math::min);
            }
            String failure = success ? null : r.values().get("failure_mode");
            rows.computeIfAbsent(runId, k -> new ArrayList<>()).add(new EvalEpisodeRow(runId, episode,
                    required(r, "task"), required(r, "object"), required(r, "lighting"), r.values().get("scene"),
                    required(r, "robot_id"), success, duration, failure, bool(r, "intervention", false)));
        }
        if (records.isEmpty()) {
            throw new BadInputException(file + ": no result rows");
        }
        for (Map.Entry<String, List<EvalEpisodeRow>> e : rows.entrySet()) {
            runs.put(e.getKey(), new Run(e.getKey(), policies.get(e.getKey()), starts.get(e.getKey()), e.getValue()));
        }
        return List.copyOf(runs.values());
    }

    private void checkColumns(List<String> columns, String where) {
        List<String> need = new ArrayList<>(REQUIRED);
        if (runOverride == null) {
            need.add(0, "run_id");
        }
        if (policyOverride == null) {
            need.add(1, "policy_version");
        }
        for (String c : need) {
            if (!columns.contains(c)) {
                throw new BadInputException(where + ": missing column '" + c + "'"
                        + (c.equals("run_id") || c.equals("policy_version") ? " (or give --" + (c.equals("run_id")
                        ? "run" : "policy") + ")" : "") + "; columns there: " + columns);
            }
        }
    }

    /**
     * Refuses the name at {@code i} when an earlier one is the same column: the same name, {@code robot} beside
     * {@code robot_id}, or {@code duration_s} beside {@code duration_ns}.
     */
    private static void checkHeaderName(List<String> names, int i, String where) {
        String n = names.get(i);
        for (int j = 0; j < i; j++) {
            String o = names.get(j);
            if (o.equals(n)) {
                throw new BadInputException(where + ": column '" + n + "' is given twice");
            }
            if (normalise(o).equals(normalise(n))) {
                throw new BadInputException(where + ": both '" + o + "' and '" + n + "' are given; give one");
            }
            if ((o.equals("duration_s") && n.equals("duration_ns")) || (o.equals("duration_ns")
                    && n.equals("duration_s"))) {
                throw new BadInputException(where + ": both '" + o + "' and '" + n + "' are given; give one");
            }
        }
    }

    private static String at(Record r, String column) {
        String w = r.columnWhere().get(column);
        if (w != null && w.startsWith("@")) { // a JSON field on its own line
            int end = w.indexOf('@', 1);
            String where = r.where();
            return where.substring(0, where.lastIndexOf(": line ")) + ": line " + w.substring(1, end) + ", "
                    + w.substring(end + 1);
        }
        return r.where() + (w == null ? ", column " + column : ", " + w);
    }

    private static String required(Record r, String column) {
        String v = r.values().get(column);
        if (v == null || v.isBlank()) {
            throw new BadInputException(at(r, column) + ": empty value, a value is required");
        }
        return v;
    }

    private static boolean bool(Record r, String column, Boolean dflt) {
        String v = r.values().get(column);
        if (v == null || v.isBlank()) {
            if (dflt != null) {
                return dflt;
            }
            throw new BadInputException(at(r, column) + ": empty value, a value is required");
        }
        switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "t", "y":
                return true;
            case "false", "0", "no", "f", "n":
                return false;
            default:
                throw new BadInputException(at(r, column) + ": '" + v + "' is not a boolean (true/false, 1/0,"
                        + " yes/no)");
        }
    }

    private static long longValue(Record r, String column) {
        String v = r.values().get(column).trim();
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            try {
                double d = Double.parseDouble(v);
                if (d == Math.rint(d) && Math.abs(d) < 9e18) {
                    return (long) d;
                }
            } catch (NumberFormatException ignored) {
                // below
            }
            throw new BadInputException(at(r, column) + ": '" + v + "' is not an integer");
        }
    }

    private static double doubleValue(Record r, String column) {
        String v = r.values().get(column).trim();
        try {
            double d = Double.parseDouble(v);
            if (Double.isFinite(d)) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // below
        }
        throw new BadInputException(at(r, column) + ": '" + v + "' is not a number");
    }

    private static String normalise(String column) {
        String c = column.trim();
        return c.equals("robot") ? "robot_id" : c;
    }

    // ------------------------------------------------------------------ CSV

    private List<Record> csv(List<String>[] columnsOut) throws IOException {
        List<Record> out = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new java.io.StringReader(utf8(file)))) {
            CsvLexer lex = new CsvLexer(in, file);
            CsvLexer.Line header = lex.next();
            if (header == null) {
                throw new BadInputException(file + ": empty file, expected a header line");
            }
            List<String> columns = new ArrayList<>();
            List<String> raw = new ArrayList<>();
            for (String h : header.fields()) {
                raw.add((h.startsWith("\uFEFF") ? h.substring(1) : h).trim());
            }
            for (int i = 0; i < raw.size(); i++) {
                checkHeaderName(raw, i, file + ": line 1, column " + (i + 1) + " (" + raw.get(i) + ")");
                columns.add(normalise(raw.get(i)));
            }
            columnsOut[0] = columns;
            CsvLexer.Line line;
            while ((line = lex.next()) != null) {
                if (line.fields().size() == 1 && line.fields().get(0).isEmpty()) {
                    continue; // a blank line
                }
                if (line.fields().size() != columns.size()) {
                    throw new BadInputException(file + ": line " + line.number() + ": " + line.fields().size()
                            + " values, the header has " + columns.size() + " columns");
                }
                Map<String, String> values = new HashMap<>();
                Map<String, String> where = new HashMap<>();
                for (int i = 0; i < columns.size(); i++) {
                    String v = line.fields().get(i);
                    values.put(columns.get(i), v.isEmpty() ? null : v);
                    where.put(columns.get(i), "column " + (i + 1) + " (" + columns.get(i) + ")");
                }
                out.add(new Record(file + ": line " + line.number(), values, where));
            }
        }
        return out;
    }

    /**
     * @return the file's text
     * @throws BadInputException naming the file, the line and the byte offset of the first byte that is not UTF-8
     */
    static String utf8(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
        java.nio.CharBuffer out = java.nio.CharBuffer.allocate(bytes.length);
        java.nio.charset.CoderResult r = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT).decode(in, out, true);
        if (r.isError()) {
            int offset = in.position();
            long line = 1;
            for (int i = 0; i < offset; i++) {
                if (bytes[i] == '\n') {
                    line++;
                }
            }
            throw new BadInputException(file + ": line " + line + ", byte offset " + offset + ": not valid UTF-8"
                    + " (byte 0x" + String.format("%02x", bytes[offset] & 0xff) + "); save the file as UTF-8");
        }
        return out.flip().toString();
    }

    // ------------------------------------------------------------------ JSON

    private List<Record> json() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        List<Record> out = new ArrayList<>();
        try (JsonParser p = mapper.getFactory().createParser(file.toFile())) {
            JsonToken t;
            try {
                t = p.nextToken();
                boolean array = t == JsonToken.START_ARRAY;
                if (array) {
                    t = p.nextToken();
                }
                while (t != null && t != JsonToken.END_ARRAY) {
                    JsonLocation loc = p.currentTokenLocation();
                    if (t != JsonToken.START_OBJECT) {
                        throw new BadInputException(file + ": line " + loc.getLineNr() + ", column "
                                + loc.getColumnNr() + ": expected a JSON object per result, got " + t);
                    }
                    String where = file + ": line " + loc.getLineNr();
                    Map<String, String> values = new HashMap<>();
                    Map<String, String> columns = new LinkedHashMap<>();
                    List<String> raw = new ArrayList<>();
                    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                        JsonLocation fieldAt = p.currentTokenLocation();
                        long fieldLine = fieldAt.getLineNr();
                        String name = p.currentName().trim();
                        raw.add(name);
                        String fieldWhere = file + ": line " + fieldLine + ", column " + fieldAt.getColumnNr()
                                + " (field " + name + ")";
                        checkHeaderName(raw, raw.size() - 1, fieldWhere);
                        String c = normalise(name);
                        p.nextToken();
                        JsonNode v = mapper.readTree(p);
                        if (v != null && v.isContainerNode() && KNOWN.contains(c)) {
                            throw new BadInputException(fieldWhere + ": expected a " + (NUMBERS.contains(c)
                                    ? "number" : c.equals("success") || c.equals("intervention") ? "boolean"
                                    : "string") + ", got " + (v.isArray() ? "an array" : "an object"));
                        }
                        // a field on a later line than its object's start is named with its own line
                        columns.put(c, (fieldLine == loc.getLineNr() ? "" : "@" + fieldLine + "@") + "field " + c);
                        values.put(c, v == null || v.isNull() ? null : v.isValueNode() ? v.asText() : v.toString());
                    }
                    out.add(new Record(where, values, columns));
                    t = p.nextToken();
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                JsonLocation loc = e.getLocation();
                throw new BadInputException(file + ": line " + (loc == null ? "?" : loc.getLineNr()) + ", column "
                        + (loc == null ? "?" : loc.getColumnNr()) + ": not valid JSON: " + e.getOriginalMessage(), e);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ Parquet

    private List<Record> parquet(List<String>[] columnsOut) {
        List<Record> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM read_parquet('" + file.toAbsolutePath().toString()
                     .replace("'", "''") + "')")) {
            ResultSetMetaData md = rs.getMetaData();
            List<String> columns = new ArrayList<>();
            List<String> raw = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                raw.add(md.getColumnName(i).trim());
            }
            for (int i = 0; i < raw.size(); i++) {
                checkHeaderName(raw, i, file + ": schema, column " + (i + 1) + " (" + raw.get(i) + ")");
                columns.add(normalise(raw.get(i)));
            }
            columnsOut[0] = columns;
            checkColumns(columns, file + ": schema");
            long row = 0;
            while (rs.next()) {
                row++;
                Map<String, String> values = new HashMap<>();
                Map<String, String> where = new HashMap<>();
                for (int i = 0; i < columns.size(); i++) {
                    String v = rs.getString(i + 1);
                    values.put(columns.get(i), v == null || v.isEmpty() ? null : v);
                    where.put(columns.get(i), "column " + (i + 1) + " (" + columns.get(i) + ")");
                }
                out.add(new Record(file + ": row " + row, values, where));
            }
        } catch (SQLException e) {
            throw new BadInputException(file + ": not a readable Parquet file: " + firstLine(e.getMessage()), e);
        }
        return out;
    }

    static String firstLine(String m) {
        if (m == null) {
            return "";
        }
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
