package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Version;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * One table of a lake, pinned at one version (the one it was opened at). Reads never see later
 * commits; open the table again for those. Holds a native Lance dataset and an Arrow allocator:
 * close it (try-with-resources) before the {@link Lake}.
 */
public final class LakeTable implements AutoCloseable {
    private final Lake lake;
    private final String name;
    private final Dataset dataset;
    private final BufferAllocator allocator;
    private boolean closed;

    LakeTable(Lake lake, String name, Dataset dataset, BufferAllocator allocator) {
        this.lake = lake;
        this.name = name;
        this.dataset = dataset;
        this.allocator = allocator;
    }

    /** @return the table name */
    public String name() {
        return name;
    }

    /** @return the dataset URI ({@code <lake>/<name>.lance}) */
    public String uri() {
        return lake.tableUri(name);
    }

    /** @return the version this handle reads (1 = empty table made by init) */
    public long version() {
        return dataset.version();
    }

    /**
     * @return the table's version in the lake's newest snapshot (may be later than {@link #version()}, never one
     *     that no lake commit names)
     */
    public long latestVersion() {
        return lake.log().latest().orElseThrow().version(name);
    }

    /**
     * The data files of this version, fragment by fragment (what a reader of any column opens).
     *
     * @return one entry per data file, in fragment order
     * @throws io.flywheel.error.StorageUnavailableException when the manifest cannot be read
     */
    public List<DataFileRef> dataFiles() {
        List<DataFileRef> out = new ArrayList<>();
        try {
            for (org.lance.Fragment f : dataset.getFragments()) {
                for (org.lance.fragment.DataFile d : f.metadata().getFiles()) {
                    Long size = d.getFileSizeBytes();
                    out.add(new DataFileRef(d.getPath(), f.getId(), d.getFields().clone(), d.getColumnIndices().clone(),
                            size == null ? -1 : size, d.getFileMajorVersion(), d.getFileMinorVersion()));
                }
            }
        } catch (RuntimeException e) {
            throw new io.flywheel.error.StorageUnavailableException("table " + uri() + " at version " + version() + ": cannot list data files: "
                    + e.getMessage(), e);
        }
        return out;
    }

    /**
     * @param column a top-level column name
     * @return the Lance field ids of the column and of all its nested children (depth first)
     * @throws IllegalArgumentException naming the columns when there is no such column
     */
    public List<Integer> fieldIds(String column) {
        for (org.lance.schema.LanceField f : dataset.getLanceSchema().fields()) {
            if (f.getName().equals(column)) {
                List<Integer> ids = new ArrayList<>();
                collectIds(f, ids);
                return ids;
            }
        }
        throw new IllegalArgumentException("table " + uri() + " has no column '" + column + "'; columns: "
                + schema().getFields().stream().map(x -> x.getName()).toList());
    }

    private static void collectIds(org.lance.schema.LanceField f, List<Integer> ids) {
        ids.add(f.getId());
        for (org.lance.schema.LanceField c : f.getChildren()) {
            collectIds(c, ids);
        }
    }

    /** @return the table's Arrow schema at this version (inside the lake; others read {@link #columns()}) */
    Schema schema() {
        return dataset.getSchema();
    }

    /** @return the table's columns at this version, described (children, doc), in order */
    public List<ColumnSpec> columns() {
        return ArrowTypes.specs(dataset.getSchema().getFields());
    }

    /** @return the names of the table's columns at this version, in order */
    public List<String> columnNames() {
        return dataset.getSchema().getFields().stream().map(f -> f.getName()).toList();
    }

    /** @return whether the table has a column of that name at this version */
    public boolean hasColumn(String name) {
        return dataset.getSchema().getFields().stream().anyMatch(f -> f.getName().equals(name));
    }

    /**
     * @param name a top-level column
     * @return the column, described
     * @throws io.flywheel.error.NotFoundException naming the table, version and its columns when it has none of that
     *     name
     */
    public ColumnSpec column(String name) {
        for (org.apache.arrow.vector.types.pojo.Field f : dataset.getSchema().getFields()) {
            if (f.getName().equals(name)) {
                return ArrowTypes.spec(f);
            }
        }
        throw new io.flywheel.error.NotFoundException("table " + uri() + " at version " + version()
                + " has no column '" + name + "'; its columns: " + columnNames());
    }

    /** @return number of rows at this version */
    public long countRows() {
        return dataset.countRows();
    }

    /**
     * @param sqlFilter SQL predicate, e.g. {@code "episode_id = 'e1'"}
     * @return number of rows matching it at this version
     * @throws io.flywheel.error.BadInputException when the filter is not valid SQL for this schema
     */
    public long countRows(String sqlFilter) {
        try {
            return dataset.countRows(sqlFilter);
        } catch (Exception e) { // Lance's JNI also throws undeclared IOException
            throw Lake.failure("table " + uri() + ": cannot count rows where " + sqlFilter, e);
        }
    }

    /** @return every committed version, oldest first */
    public List<VersionInfo> versions() {
        List<VersionInfo> out = new ArrayList<>();
        for (Version v : dataset.listVersions()) {
            out.add(new VersionInfo(v.getId(), v.getDataTime().toInstant(), v.getMetadata()));
        }
        return out;
    }

    /** @return the lake tags that pin this table, by name, with the version each pins */
    public List<TagInfo> tags() {
        List<TagInfo> out = new ArrayList<>();
        lake.snapshot().tags().forEach((tag, pinned) -> {
            Long v = pinned.get(name);
            if (v != null) {
                out.add(new TagInfo(tag, v));
            }
        });
        return out;
    }

    /**
     * Scans the table, handing each batch to {@code consumer} as a {@link RowBatch}: the columns asked for, read with
     * typed accessors. A batch is valid only during the call; copy what you keep.
     *
     * @throws io.flywheel.error.BadInputException for a bad filter or column; StorageUnavailableException when the
     *     data cannot be read
     */
    public void scan(ScanRequest request, Consumer<RowBatch> consumer) {
        String source = describe();
        scanArrow(request, root -> consumer.accept(new RowBatch(root, source)));
    }

    /**
     * Reads rows by position (0-based row offsets at this version, in table order), handing them to
     * {@code consumer} as {@link RowBatch}es in the order of {@code indices}, after validating every index: Lance
     * aborts the JVM on some out-of-range ids, so none reaches it. A batch is valid only during the call.
     *
     * @param indices row offsets, each in {@code [0, countRows())}
     * @param columns columns to read, or null for all
     * @param consumer receives the rows, in the order of {@code indices}
     * @throws IndexOutOfBoundsException naming the first bad index and the row count
     */
    public void take(long[] indices, List<String> columns, Consumer<RowBatch> consumer) {
        String source = describe();
        takeArrow(indices, columns, root -> consumer.accept(new RowBatch(root, source)));
    }

    /** @return {@code table <uri> at version <v>}, for messages */
    private String describe() {
        return "table " + uri() + " at version " + version();
    }

    /** @return Lance scan options with the request's columns, filter, limit and batch size */
    private static ScanOptions.Builder scanOptions(ScanRequest request) {
        ScanOptions.Builder b = new ScanOptions.Builder();
        if (request.columns() != null) {
            b.columns(request.columns());
        }
        if (request.filter() != null) {
            b.filter(request.filter());
        }
        if (request.limit() != null) {
            b.limit(request.limit());
        }
        if (request.batchSize() != null) {
            b.batchSize(request.batchSize());
        }
        return b;
    }

    /** {@link #scan} with the Arrow batches themselves (inside the lake). */
    void scanArrow(ScanRequest request, Consumer<VectorSchemaRoot> consumer) {
        ScanOptions.Builder b = scanOptions(request);
        if (request.offset() != null) {
            b.offset(request.offset());
        }
        if (!request.order().isEmpty()) {
            List<org.lance.ipc.ColumnOrdering> order = new ArrayList<>();
            for (ScanRequest.SortKey k : request.order()) {
                org.lance.ipc.ColumnOrdering.Builder ob = new org.lance.ipc.ColumnOrdering.Builder();
                ob.setColumnName(k.column());
                ob.setAscending(k.ascending());
                ob.setNullFirst(k.nullsFirst());
                order.add(ob.build());
            }
            b.setColumnOrderings(order);
        }
        try (LanceScanner scanner = dataset.newScan(b.build()); ArrowReader reader = scanner.scanBatches()) {
            drain(reader, consumer);
        } catch (io.flywheel.error.FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw Lake.failure("table " + uri() + " at version " + version() + ": scan " + request + " failed", e);
        }
    }

    /** Holds the C structs of exported streams: the engine that takes a stream keeps pointing at its struct. */
    private static final BufferAllocator STREAM_STRUCTS = new org.apache.arrow.memory.RootAllocator();

    /**
     * Hands a scan of this table at this version to an SQL engine as an Arrow C stream registered on its JDBC
     * connection under {@code name} (DuckDB: the query then reads {@code FROM name}); the rows flow from Lance to the
     * engine batch by batch, nothing is copied to another store. The stream is read once, by the first query that
     * scans it. Close the connection, then the registration, then this table.
     *
     * @param connection a DuckDB connection ({@code org.duckdb:duckdb_jdbc})
     * @param name the name the engine will know the table by, e.g. {@code episodes}
     * @param request columns, filter and limit pushed into the Lance scan (order and offset are not)
     * @return the registration, to close after the connection
     * @throws io.flywheel.error.BadInputException for a bad filter or column, or a connection of another engine
     */
    public ArrowStreamRegistration registerArrowStream(java.sql.Connection connection, String name,
            ScanRequest request) {
        return registerArrowStream(connection, name, request, null);
    }

    /**
     * As {@link #registerArrowStream(java.sql.Connection, String, ScanRequest)}, read by up to {@code parts} engine
     * threads: the table's fragments are split into that many contiguous groups, each scanned into a stream of its own
     * ({@code name__0}, {@code name__1}, ...), and {@code name} is a view that is their {@code UNION ALL} (rows in
     * no particular order). One part, or a table of one fragment, is a single stream.
     *
     * @param parts streams to split the scan into, &ge; 1
     */
    public ArrowStreamRegistration registerArrowStreams(java.sql.Connection connection, String name,
            ScanRequest request, int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("parts must be >= 1, got " + parts);
        }
        if (request.limit() != null || request.offset() != null) {
            return registerArrowStream(connection, name, request, null);
        }
        List<Integer> ids = new ArrayList<>();
        for (org.lance.Fragment f : dataset.getFragments()) {
            ids.add(f.getId());
        }
        int k = Math.min(parts, ids.size());
        if (k <= 1) {
            return registerArrowStream(connection, name, request, null);
        }
        List<ArrowStreamRegistration> regs = new ArrayList<>();
        try {
            for (int i = 0; i < k; i++) {
                List<Integer> group = ids.subList(i * ids.size() / k, (i + 1) * ids.size() / k);
                regs.add(registerArrowStream(connection, name + "__" + i, request, group));
            }
        } catch (RuntimeException e) {
            regs.forEach(ArrowStreamRegistration::close);
            throw e;
        }
        return ArrowStreamRegistration.union(connection, name, regs);
    }

    private ArrowStreamRegistration registerArrowStream(java.sql.Connection connection, String name,
            ScanRequest request, List<Integer> fragments) {
        ScanOptions.Builder b = scanOptions(request);
        if (fragments != null) {
            b.fragmentIds(fragments);
        }
        LanceScanner scanner;
        ArrowReader reader;
        try {
            scanner = dataset.newScan(b.build());
        } catch (Exception e) {
            throw Lake.failure("table " + uri() + " at version " + version() + ": scan " + request + " failed", e);
        }
        try {
            reader = scanner.scanBatches();
        } catch (Exception e) {
            try {
                scanner.close();
            } catch (Exception ignored) {
                // already failing
            }
            throw Lake.failure("table " + uri() + " at version " + version() + ": scan " + request + " failed", e);
        }
        return ArrowStreamRegistration.register(connection, name, scanner, reader, allocator, STREAM_STRUCTS);
    }

    /** {@link #take} with the Arrow batches themselves (inside the lake). */
    void takeArrow(long[] indices, List<String> columns, Consumer<VectorSchemaRoot> consumer) {
        long n = countRows();
        List<Long> ids = new ArrayList<>(indices.length);
        for (long i : indices) {
            if (i < 0 || i >= n) {
                throw new IndexOutOfBoundsException("table " + uri() + " at version " + version() + ": row index " + i
                        + " is outside [0, " + n + ")");
            }
            ids.add(i);
        }
        if (ids.isEmpty()) {
            return;
        }
        List<String> cols = columns != null ? columns : schema().getFields().stream().map(f -> f.getName()).toList();
        try (ArrowReader reader = dataset.take(ids, cols)) {
            drain(reader, consumer);
        } catch (io.flywheel.error.FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw new io.flywheel.error.StorageUnavailableException("table " + uri() + " at version " + version() + ": take of " + ids.size()
                    + " rows failed: " + e.getMessage(), e);
        }
    }

    /** @return the lake's embedding models (its current snapshot's registry, {@link EmbeddingModels}) */
    public EmbeddingModels models() {
        return EmbeddingModels.of(lake.snapshot().properties());
    }

    /**
     * Reads episodes rows (all columns) batch by batch, handing each to {@code consumer}: memory is one batch, for
     * tables too large for {@link #episodes}.
     *
     * @throws IllegalStateException on another table; IllegalArgumentException when the request projects columns
     */
    public void forEachEpisode(ScanRequest request, Consumer<EpisodeRow> consumer) {
        forEach(TableSchemas.EPISODES, request, ArrowRows::episode, consumer);
    }

    /** As {@link #forEachEpisode}, for frames rows. */
    public void forEachFrame(ScanRequest request, Consumer<FrameRow> consumer) {
        forEach(TableSchemas.FRAMES, request, ArrowRows::frame, consumer);
    }

    private <T> void forEach(String table, ScanRequest request, Function<ArrowRows.Cursor, T> f, Consumer<T> consumer) {
        requireTable(table);
        if (request.columns() != null) {
            throw new IllegalArgumentException("typed reads of " + table + " need every column; use scan() for a projection");
        }
        EmbeddingModels models = models();
        List<T> rows = new ArrayList<>();
        scanArrow(request, batch -> {
            rows.clear();
            ArrowRows.decode(new ArrowRows.Cursor(batch, models, null), f, rows);
            rows.forEach(consumer);
        });
    }

    /** Receives one row of {@link #scanVectors}. */
    @FunctionalInterface
    public interface VectorConsumer {
        /**
         * @param id the row's id column value, as text
         * @param vector the row's vector, float32[D] (a fresh array the consumer may keep)
         */
        void accept(String id, float[] vector);
    }

    /**
     * Reads a vector column: each row with a non-null vector that passes the filter, with its id, in table order.
     *
     * @param column a fixed_size_list&lt;float32, D&gt; column, e.g. {@link EmbeddingModel#column()}
     * @param idColumn a utf8 column, e.g. {@code episode_id}
     * @param filter an extra SQL predicate, or null
     * @throws io.flywheel.error.BadInputException when the column is not a vector column or the filter is not valid
     */
    public void scanVectors(String column, String idColumn, String filter, VectorConsumer consumer) {
        Vectors.dimension(dataset, column, uri());
        String f = column + " IS NOT NULL" + (filter == null || filter.isBlank() ? "" : " AND (" + filter + ")");
        scanArrow(ScanRequest.builder().columns(idColumn, column).filter(f).build(), b -> {
            org.apache.arrow.vector.FieldVector ids = b.getVector(idColumn);
            org.apache.arrow.vector.complex.FixedSizeListVector v =
                    (org.apache.arrow.vector.complex.FixedSizeListVector) b.getVector(column);
            for (int r = 0; r < b.getRowCount(); r++) {
                float[] x = ArrowRows.fixed(v, r);
                if (x != null) {
                    consumer.accept(ids.isNull(r) ? null : String.valueOf(ids.getObject(r)), x);
                }
            }
        });
    }

    /**
     * @return the dimension D of a vector column
     * @throws io.flywheel.error.BadInputException when it is missing or not fixed_size_list&lt;float32, D&gt;
     */
    public int dimension(String column) {
        return Vectors.dimension(dataset, column, uri());
    }

    /**
     * The k rows nearest to the query that pass its prefilter, nearest first, by cosine distance, at this version:
     * through the column's IVF-PQ index when it has one (re-ranked by exact distance with the query's refine factor;
     * rows the index does not cover yet are scanned flat and merged), else, or with {@link VectorQuery#exact()}, by a
     * flat exact scan. Rows whose vector is null are never returned.
     *
     * @throws io.flywheel.error.BadInputException when the column is not a vector column, the query's dimension differs,
     *     or the filter is not valid SQL for the table (naming the table and the filter)
     */
    public List<VectorHit> nearest(VectorQuery query) {
        return Vectors.knn(dataset, query, dimension(query.column()), uri() + " at version " + version());
    }

    /** @return the vector index of a column at this version, if it has one */
    public java.util.Optional<VectorIndexInfo> vectorIndex(String column) {
        return Vectors.index(dataset, column);
    }

    /** Reads raw_files rows (all columns). @throws IllegalStateException on another table */
    public List<RawFileRow> rawFiles(ScanRequest request) {
        return typed(TableSchemas.RAW_FILES, request, ArrowRows::rawFile);
    }

    /** Reads episodes rows (all columns). @throws IllegalStateException on another table */
    public List<EpisodeRow> episodes(ScanRequest request) {
        return typed(TableSchemas.EPISODES, request, ArrowRows::episode);
    }

    /** Reads frames rows (all columns). @throws IllegalStateException on another table */
    public List<FrameRow> frames(ScanRequest request) {
        return typed(TableSchemas.FRAMES, request, ArrowRows::frame);
    }

    /** Reads frames by row position, validated as in {@link #take}. */
    public List<FrameRow> takeFrames(long... indices) {
        requireTable(TableSchemas.FRAMES);
        List<FrameRow> out = new ArrayList<>();
        EmbeddingModels models = models();
        takeArrow(indices, schema().getFields().stream().map(f -> f.getName()).toList(),
                batch -> ArrowRows.decode(batch, models, ArrowRows::frame, out));
        return out;
    }

    private <T> List<T> typed(String table, ScanRequest request, Function<ArrowRows.Cursor, T> f) {
        requireTable(table);
        if (request.columns() != null) {
            throw new IllegalArgumentException("typed reads of " + table + " need every column; use scan() for a projection");
        }
        List<T> out = new ArrayList<>();
        EmbeddingModels models = models();
        scanArrow(request, batch -> ArrowRows.decode(batch, models, f, out));
        return out;
    }

    /**
     * Reads the rows of a typed table (all columns) as records, in table order.
     *
     * @param table the table's type, e.g. {@link CurationTables#TRAINSETS}; this handle must be that table
     * @param request filter, order, limit (no projection: a record needs every column)
     * @throws IllegalStateException when this handle is another table
     * @throws IllegalArgumentException when the request projects columns
     */
    public <R> List<R> rows(TypedTable<R> table, ScanRequest request) {
        return typed(table.name(), request, table.decoder());
    }

    /**
     * As {@link #rows}, handing each record to {@code consumer} as its batch is read: memory is one batch, for tables
     * too large for a list (a training set's samples).
     */
    public <R> void forEachRow(TypedTable<R> table, ScanRequest request, Consumer<R> consumer) {
        forEach(table.name(), request, table.decoder(), consumer);
    }

    private void requireTable(String table) {
        if (!name.equals(table)) {
            throw new IllegalStateException("table " + uri() + " is '" + name + "', not '" + table + "'");
        }
    }

    private static void drain(ArrowReader reader, Consumer<VectorSchemaRoot> consumer) throws IOException {
        while (reader.loadNextBatch()) {
            consumer.accept(reader.getVectorSchemaRoot());
        }
    }

    /** Closes the dataset, then its allocator. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            dataset.close();
        } finally {
            allocator.close();
        }
    }
}
