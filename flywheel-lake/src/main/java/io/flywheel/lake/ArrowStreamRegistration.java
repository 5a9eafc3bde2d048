package io.flywheel.lake;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;

import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.ipc.LanceScanner;

/**
 * A scan of a lake table handed to an SQL engine on a JDBC connection as an Arrow C stream
 * ({@link LakeTable#registerArrowStream}): the engine reads the table's batches straight from Lance, nothing is copied
 * to another store. The engine names the stream as a table in its queries (DuckDB: {@code SELECT ... FROM name}); a
 * stream is read once, by the first query that scans it (register it again for the next query).
 *
 * <p>Lifetime: once registered the stream belongs to the engine, which releases it when it has read it (or when its
 * connection closes). Close the connection first, then this registration (it closes the Lance scanner), then the
 * {@link LakeTable}. This type names no Arrow or Lance type in its public API: callers outside the lake hold only a
 * {@link java.sql.Connection} and this handle.
 */
public final class ArrowStreamRegistration implements AutoCloseable {
    private final String name;
    private final java.util.List<LanceScanner> scanners;
    private boolean closed;

    private ArrowStreamRegistration(String name, java.util.List<LanceScanner> scanners) {
        this.name = name;
        this.scanners = scanners;
    }

    /**
     * Registers several streams (each a scan of a part of the table's fragments) under {@code name + "__" + i} and a
     * view {@code name} that is their {@code UNION ALL}: DuckDB reads each Arrow stream on one thread, so parts let it
     * read a table on several.
     */
    static ArrowStreamRegistration union(Connection connection, String name, java.util.List<ArrowStreamRegistration>
            parts) {
        java.util.List<LanceScanner> all = new java.util.ArrayList<>();
        StringBuilder view = new StringBuilder("CREATE OR REPLACE TEMP VIEW ").append(quoteIdent(name)).append(" AS ");
        for (int i = 0; i < parts.size(); i++) {
            all.addAll(parts.get(i).scanners);
            view.append(i == 0 ? "" : " UNION ALL ").append("SELECT * FROM ").append(quoteIdent(parts.get(i).name()));
        }
        ArrowStreamRegistration r = new ArrowStreamRegistration(name, all);
        try (java.sql.Statement s = connection.createStatement()) {
            s.execute(view.toString());
        } catch (SQLException e) {
            r.close();
            throw new io.flywheel.error.StorageUnavailableException("cannot create the view '" + name + "' over its"
                    + " streams: " + e.getMessage(), e);
        }
        return r;
    }

    static String quoteIdent(String n) {
        return "\"" + n.replace("\"", "\"\"") + "\"";
    }

    /** @return the name the engine knows the stream by */
    public String name() {
        return name;
    }

    /**
     * Exports {@code reader} as an Arrow C stream and registers it on the connection. Engines supported: those whose
     * JDBC connection unwraps to a class with {@code registerArrowStream(String, Object)} taking an
     * {@code ArrowArrayStream} (DuckDB's {@code org.duckdb.DuckDBConnection}, {@code org.duckdb:duckdb_jdbc} 2.0).
     *
     * @throws io.flywheel.error.BadInputException when the connection is not one of such an engine
     */
    static ArrowStreamRegistration register(Connection connection, String name, LanceScanner scanner,
            ArrowReader reader, BufferAllocator allocator, BufferAllocator streamAllocator) {
        Object engine;
        Method register;
        try {
            Class<?> duck = Class.forName("org.duckdb.DuckDBConnection", false, connection.getClass().getClassLoader());
            engine = connection.unwrap(duck);
            register = duck.getMethod("registerArrowStream", String.class, Object.class);
        } catch (ClassNotFoundException | NoSuchMethodException | SQLException e) {
            closeQuietly(reader, scanner);
            throw new io.flywheel.error.BadInputException("cannot hand an Arrow stream to a " + connection.getClass()
                    .getName() + " connection: only DuckDB (org.duckdb:duckdb_jdbc) connections take one", e);
        }
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(streamAllocator);
        try {
            Data.exportArrayStream(allocator, reader, stream); // the stream now owns the reader
        } catch (RuntimeException e) {
            stream.close();
            closeQuietly(reader, scanner);
            throw e;
        }
        try {
            register.invoke(engine, name, stream); // the stream now belongs to the engine: never closed here
        } catch (IllegalAccessException | InvocationTargetException e) {
            Throwable c = e instanceof InvocationTargetException t && t.getCause() != null ? t.getCause() : e;
            stream.close(); // not taken: released here (closes the reader)
            closeQuietly(null, scanner);
            throw new io.flywheel.error.StorageUnavailableException("cannot register table stream '" + name + "': "
                    + c.getMessage(), c);
        }
        return new ArrowStreamRegistration(name, java.util.List.of(scanner));
    }

    private static void closeQuietly(ArrowReader reader, LanceScanner scanner) {
        try {
            if (reader != null) {
                reader.close();
            }
        } catch (Exception ignored) {
            // already failing
        }
        try {
            scanner.close();
        } catch (Exception ignored) {
            // already failing
        }
    }

    /** Closes the Lance scanner behind the stream. Idempotent; call it after the engine's connection is closed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Exception first = null;
        for (LanceScanner scanner : scanners) {
            try {
                scanner.close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw Lake.failure("closing the scan behind stream '" + name + "' failed", first);
        }
    }
}
