package io.flywheel.eval;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.flywheel.error.BadInputException;
import io.flywheel.lake.ArrowStreamRegistration;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;

/**
 * One SQL question to DuckDB over lake tables: each table is opened at a version, scanned by Lance (with the columns
 * and filter given pushed into the scan) and handed to an in-memory DuckDB as an Arrow stream
 * ({@link LakeTable#registerArrowStream}); nothing is copied into DuckDB. A registered table is read once: one
 * {@link #query} (or {@link #copyToParquet}) per session. Close it (try-with-resources): the connection first, then the
 * scans, then the tables.
 */
public final class LakeSql implements AutoCloseable {
    /** A query's result: column names and DuckDB types, and the rows as plain Java values. */
    public record Result(List<String> columns, List<String> types, List<List<Object>> rows, long updateCount) {
        /** A query's result (it has a result set). */
        public Result(List<String> columns, List<String> types, List<List<Object>> rows) {
            this(columns, types, rows, -1);
        }

        /** @return whether the statement had no result set ({@code CREATE}, {@code COPY ... TO}, ...) */
        public boolean statement() {
            return updateCount >= 0;
        }
    }

    /**
     * Rows per Arrow batch of the Lance scans handed to DuckDB: larger batches than Lance's default (8,192) cut the
     * per-batch cost of the stream (bench/olap.sh: the cube over 10^6 rows took 0.17 s at 65,536 against 0.27 s at
     * 8,192; 262,144 was slower again).
     */
    public static final int BATCH_ROWS = 65_536;

    /** Streams per table (DuckDB reads each stream on one thread): one per core. */
    static final int PARTS = Integer.getInteger("flywheel.sql.parts", Math.max(1, Runtime.getRuntime().availableProcessors()));

    private final Lake lake;
    private final Connection connection;
    private final List<LakeTable> tables = new ArrayList<>();
    private final List<ArrowStreamRegistration> streams = new ArrayList<>();

    private LakeSql(Lake lake, Connection connection) {
        this.lake = lake;
        this.connection = connection;
    }

    /** @return a session over the lake's tables (an in-memory DuckDB with no table yet) */
    public static LakeSql open(Lake lake) {
        try {
            Connection c = DriverManager.getConnection("jdbc:duckdb:");
            try (Statement s = c.createStatement()) {
                s.execute("SET threads TO " + Math.max(1, Runtime.getRuntime().availableProcessors()));
            }
            return new LakeSql(lake, c);
        } catch (SQLException e) {
            throw new io.flywheel.error.StorageUnavailableException("cannot start DuckDB: " + e.getMessage(), e);
        }
    }

    /**
     * Makes a lake table a table of the session, named as in the lake.
     *
     * @param name the lake table
     * @param ref its version (latest, number or tag)
     * @param request columns and filter pushed into the Lance scan
     * @return this
     * @throws io.flywheel.error.NotFoundException for a table, version or tag the lake has not
     */
    public LakeSql table(String name, TableRef ref, ScanRequest request) {
        return table(name, name, ref, request);
    }

    /** As {@link #table(String, TableRef, ScanRequest)}, known to SQL as {@code alias}. */
    public LakeSql table(String name, String alias, TableRef ref, ScanRequest request) {
        LakeTable t = lake.table(name, ref);
        tables.add(t);
        streams.add(t.registerArrowStreams(connection, alias, request, PARTS));
        return this;
    }

    /** @return the session's JDBC connection, for engine settings (not for more lake tables) */
    Connection connection() {
        return connection;
    }

    /**
     * @param sql one SQL statement over the session's tables
     * @return its rows
     * @throws BadInputException naming the engine's complaint when the SQL is not valid or refers to an unknown
     *     table or column
     */
    public Result query(String sql) {
        try (Statement s = connection.createStatement()) {
            if (!s.execute(sql)) { // a statement without a result set: it ran (execute, not executeQuery)
                return new Result(List.of(), List.of(), List.of(), Math.max(0, s.getUpdateCount()));
            }
            try (ResultSet rs = s.getResultSet()) {
                return result(rs);
            }
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    private static Result result(ResultSet rs) throws SQLException {
        {
            ResultSetMetaData md = rs.getMetaData();
            int n = md.getColumnCount();
            List<String> columns = new ArrayList<>();
            List<String> types = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                columns.add(md.getColumnLabel(i));
                types.add(md.getColumnTypeName(i));
            }
            List<List<Object>> rows = new ArrayList<>();
            while (rs.next()) {
                List<Object> row = new ArrayList<>(n);
                for (int i = 1; i <= n; i++) {
                    row.add(plain(rs.getObject(i)));
                }
                rows.add(Collections.unmodifiableList(row));
            }
            return new Result(List.copyOf(columns), List.copyOf(types), rows);
        }
    }

    /** The hint for a query that reads a table twice: each table's stream is read once. */
    static final String READ_ONCE = "; a lake table is read once per query: name it once, in a materialized CTE"
            + " (WITH t AS MATERIALIZED (SELECT * FROM episodes) SELECT ... FROM t a JOIN t b ...)";

    private static BadInputException failed(SQLException e) {
        String m = EvalResultsFile.firstLine(e.getMessage());
        return new BadInputException("SQL failed: " + m + (m.contains("stream has been released") ? READ_ONCE : ""),
                e);
    }

    /**
     * Runs the query into a Parquet file (DuckDB's {@code COPY ... TO ... (FORMAT parquet)}).
     *
     * @return the rows written
     * @throws BadInputException as {@link #query}
     */
    public long copyToParquet(String sql, java.nio.file.Path out) {
        return copyToParquet(sql, out, 0);
    }

    /**
     * As {@link #copyToParquet(String, java.nio.file.Path)}, with row groups of {@code rowGroupSize} rows (0: DuckDB's
     * default, 122,880).
     */
    public long copyToParquet(String sql, java.nio.file.Path out, long rowGroupSize) {
        String q = sql.strip();
        if (q.endsWith(";")) {
            q = q.substring(0, q.length() - 1);
        }
        try (Statement s = connection.createStatement()) {
            s.execute("COPY (" + q + ") TO '" + out.toAbsolutePath().toString().replace("'", "''")
                    + "' (FORMAT parquet" + (rowGroupSize > 0 ? ", ROW_GROUP_SIZE " + rowGroupSize : "") + ")");
            try (ResultSet rs = s.getResultSet()) {
                if (rs != null && rs.next()) {
                    return rs.getLong(1);
                }
            }
            return s.getUpdateCount();
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    private static Object plain(Object v) throws SQLException {
        if (v == null || v instanceof String || v instanceof Boolean || v instanceof Long || v instanceof Integer
                || v instanceof Double || v instanceof Float || v instanceof Short || v instanceof Byte) {
            return v;
        }
        if (v instanceof BigInteger b) {
            return b.bitLength() < 63 ? (Object) b.longValue() : b.toString();
        }
        if (v instanceof BigDecimal d) {
            return d.doubleValue();
        }
        if (v instanceof java.sql.Blob b) {
            long n = b.length();
            return new BlobValue(b.getBytes(1, (int) n));
        }
        if (v instanceof byte[] bytes) {
            return new BlobValue(bytes);
        }
        if (v instanceof java.sql.Array a) {
            Object arr = a.getArray();
            List<Object> out = new ArrayList<>();
            if (arr instanceof Object[] os) {
                for (Object o : os) {
                    out.add(plain(o));
                }
            }
            return out;
        }
        if (v instanceof org.duckdb.DuckDBStruct st) {
            java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
            for (java.util.Map.Entry<String, Object> e : st.getMap().entrySet()) {
                out.put(e.getKey(), plain(e.getValue()));
            }
            return out;
        }
        if (v instanceof java.sql.Struct st) {
            List<Object> out = new ArrayList<>();
            for (Object o : st.getAttributes()) {
                out.add(plain(o));
            }
            return out;
        }
        if (v instanceof java.util.Map<?, ?> m) {
            java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
            for (java.util.Map.Entry<?, ?> e : m.entrySet()) {
                out.put(String.valueOf(plain(e.getKey())), plain(e.getValue()));
            }
            return out;
        }
        if (v instanceof java.util.Collection<?> c) {
            List<Object> out = new ArrayList<>();
            for (Object o : c) {
                out.add(plain(o));
            }
            return out;
        }
        return v.toString();
    }

    /**
     * A BLOB value of a result: printed as {@code <blob N bytes>} ({@link #toString}), written to JSON as
     * {@code {"base64": "...", "bytes": N}} (an object, so that it is never taken for a VARCHAR).
     */
    public record BlobValue(byte[] bytes) {
        @com.fasterxml.jackson.annotation.JsonValue
        public java.util.Map<String, Object> json() {
            java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("base64", java.util.Base64.getEncoder().encodeToString(bytes));
            m.put("bytes", bytes.length);
            return m;
        }

        @Override
        public String toString() {
            return "<blob " + bytes.length + " bytes>";
        }
    }

    /** Closes the connection (the engine releases its streams), then the Lance scans, then the tables. */
    @Override
    public void close() {
        RuntimeException first = null;
        try {
            connection.close();
        } catch (SQLException e) {
            first = new io.flywheel.error.StorageUnavailableException("closing DuckDB failed: " + e.getMessage(), e);
        }
        for (ArrowStreamRegistration r : streams) {
            try {
                r.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        for (LakeTable t : tables) {
            try {
                t.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
