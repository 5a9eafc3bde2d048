package io.flywheel.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.function.Function;

import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.WriteParams;
import org.lance.fragment.FragmentUpdateResult;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Append;
import org.lance.operation.Operation;
import org.lance.operation.Overwrite;
import org.lance.operation.Update;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;

/**
 * One table's change inside a {@link LakeTransaction}: what it writes (kind, keys, columns, for the conflict check
 * against concurrent commits) and how its data files are staged. Staging writes new Lance data files next to the
 * table's (invisible until a table version names them) and returns the Lance operation that will name them.
 */
abstract class PendingChange {
    final String table;
    final String kind;

    PendingChange(String table, String kind) {
        this.table = table;
        this.kind = kind;
    }

    /** @return the partition keys written (episode ids, sha256), for the conflict check; empty when none */
    abstract Set<String> keys();

    /** @return for an update, the columns it changes */
    List<String> columns() {
        return List.of();
    }

    /**
     * @return whether the staged operation depends on the fragments it was staged against (an update or a
     *     replace), so that it must be staged again when those changed
     */
    boolean dependsOnFragments() {
        return false;
    }

    /**
     * Whether a change that {@link #dependsOnFragments()} may still commit what it staged: by default, when the
     * fragments it was computed from are unchanged in the table's latest version.
     *
     * @param staged what was staged
     * @param latest the table at its latest version, under the commit lock (null when it does not exist)
     */
    boolean basisHolds(Staged staged, Dataset latest) {
        return CommitProtocol.basisHolds(staged, latest);
    }

    /**
     * For a change Lance commits itself ({@link Staged#direct}): whether the versions after {@code before} are the
     * ones its call made. By default exactly one; a writer outside the lake's protocol shows as more.
     *
     * @param after the table at its latest version after the call
     * @param before the version the call was made on
     */
    boolean ownsDirectVersions(Dataset after, long before) {
        return after.version() == before + 1;
    }

    /**
     * Writes the change's data files.
     *
     * @param lake the lake (table URIs, storage options)
     * @param base the table at the version the change is staged against, or null when the table does not exist yet
     * @param alloc allocator for the Arrow batches
     * @return the staged operation
     */
    abstract Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception;

    /**
     * A staged change.
     *
     * @param operation the Lance operation naming the new data files, or null when the operation is decided at
     *     commit ({@code createOrAppend}), or when there is nothing to write
     * @param newFragments the fragments written
     * @param schema the schema of the rows written (for an overwrite, or a table created by this commit)
     * @param createOrAppend whether the fragments are appended when the table exists at commit, else create it
     * @param basis the fragments it was computed from (id to metadata), which must be unchanged when it commits
     * @param rowsAdded rows the operation appends
     * @param rowsUpdated rows whose columns it rewrites
     * @param rowsDeleted rows it deletes
     * @param direct for a change that Lance commits itself (a schema change, an index, a compaction's rewrite),
     *     the call that commits it on the dataset at its latest version, under the commit lock; it must leave the
     *     dataset on exactly one new version, or on its version when there is nothing to commit. Null for the
     *     others.
     */
    record Staged(Operation operation, List<FragmentMetadata> newFragments, Schema schema, boolean createOrAppend,
                  Map<Integer, FragmentMetadata> basis, long rowsAdded, long rowsUpdated, long rowsDeleted,
                  java.util.function.Consumer<Dataset> direct) {
        Staged(Operation operation, List<FragmentMetadata> newFragments, Schema schema, boolean createOrAppend,
               Map<Integer, FragmentMetadata> basis, long rowsAdded, long rowsUpdated, long rowsDeleted) {
            this(operation, newFragments, schema, createOrAppend, basis, rowsAdded, rowsUpdated, rowsDeleted, null);
        }

        /** @return a change Lance commits itself under the lock (see {@code direct}) */
        static Staged direct(java.util.function.Consumer<Dataset> commit, Map<Integer, FragmentMetadata> basis) {
            return new Staged(null, List.of(), null, false, basis, 0, 0, 0, commit);
        }
    }

    static WriteParams writeParams(Lake lake) {
        return new WriteParams.Builder().withStorageOptions(lake.storage().options()).build();
    }

    static List<FragmentMetadata> writeFragments(Lake lake, String table, VectorSchemaRoot root, BufferAllocator alloc) {
        if (root.getRowCount() == 0) {
            return List.of();
        }
        return Fragment.create(lake.tableUri(table), alloc, root, writeParams(lake));
    }

    // ------------------------------------------------------------------------------------------ typed rows

    /**
     * How one of the typed tables ({@code raw_files}, {@code episodes}, {@code frames}) turns rows into Arrow and
     * identifies them.
     */
    record Codec<R>(String table, List<String> keyColumns, String partitionColumn, Encoder<R> toArrow,
                    Function<R, String> partitionKey, Function<R, List<Object>> rowKey, String secondaryColumn,
                    java.util.function.ToIntFunction<R> secondaryKey) {
        /** A codec whose rows are identified by their partition key alone. */
        Codec(String table, String partitionColumn, Encoder<R> toArrow, Function<R, String> partitionKey) {
            this(table, List.of(partitionColumn), partitionColumn, toArrow, partitionKey,
                    r -> List.of(partitionKey.apply(r)), null, r -> -1);
        }
    }

    /** Rows into a root of the table's schema, model columns filled from the rows' embeddings. */
    @FunctionalInterface
    interface Encoder<R> {
        VectorSchemaRoot encode(List<R> rows, Schema schema, EmbeddingModels models, BufferAllocator alloc);
    }

    /** @return the schema rows of {@code table} are written with: the table's own, or the fixed one for a new table */
    static Schema schemaOf(String table, Dataset base) {
        return base != null ? base.getSchema() : TableSchemas.of(table);
    }

    static EmbeddingModels models(Lake lake) {
        return EmbeddingModels.of(lake.snapshot().properties());
    }

    /**
     * Rows appended, replacing any rows with the same partition key (raw_files by sha256, episodes by episode_id,
     * frames by episode_id: an episode's frames are replaced as a whole). One Lance commit: an append when no key is
     * present, else an update that deletes the old rows and adds the new ones.
     */
    static final class PutRows<R> extends PendingChange {
        private final Codec<R> codec;
        private final List<R> rows;
        private final boolean replace;

        /**
         * @param replace true to replace rows with the same partition keys ({@code put}); false when the caller knows
         *     the keys are new ({@code append}: no scan for them; a concurrent commit of the same keys is still a
         *     conflict)
         */
        PutRows(Codec<R> codec, List<R> rows, boolean replace) {
            super(codec.table(), replace ? "put" : "append");
            this.codec = codec;
            this.rows = List.copyOf(rows);
            this.replace = replace;
        }

        @Override
        Set<String> keys() {
            Set<String> k = new LinkedHashSet<>();
            rows.forEach(r -> k.add(codec.partitionKey().apply(r)));
            return k;
        }

        @Override
        boolean dependsOnFragments() {
            return replace;
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            List<FragmentMetadata> added;
            try (VectorSchemaRoot root = codec.toArrow().encode(rows, schemaOf(table, base), models(lake), alloc)) {
                added = writeFragments(lake, table, root, alloc);
            }
            Map<Integer, List<Integer>> doomed = new TreeMap<>();
            long deleted = 0;
            if (replace && base != null && base.countRows() > 0) {
                String filter = Sql.in(codec.partitionColumn(), new ArrayList<>(keys()));
                List<long[]> addrs = rowAddresses(base, List.of(codec.partitionColumn()), filter, alloc, null);
                for (long[] a : addrs) {
                    doomed.computeIfAbsent((int) (a[0] >>> 32), f -> new ArrayList<>()).add((int) a[0]);
                    deleted++;
                }
            }
            if (doomed.isEmpty()) {
                return new Staged(added.isEmpty() ? null : Append.builder().fragments(added).build(), added, null,
                        false, Map.of(), rows.size(), 0, 0);
            }
            Map<Integer, FragmentMetadata> basis = new LinkedHashMap<>();
            List<FragmentMetadata> updated = new ArrayList<>();
            List<Long> removed = new ArrayList<>();
            for (Map.Entry<Integer, List<Integer>> e : doomed.entrySet()) {
                Fragment f = base.getFragment(e.getKey());
                basis.put(e.getKey(), f.metadata());
                FragmentMetadata m = f.deleteRows(e.getValue());
                if (m == null) {
                    removed.add((long) e.getKey());
                } else {
                    updated.add(m);
                }
            }
            Update op = Update.builder().updatedFragments(updated).removedFragmentIds(removed).newFragments(added)
                    .build();
            return new Staged(op, added, null, false, basis, rows.size(), 0, deleted);
        }
    }

    /**
     * Named columns of existing rows rewritten, every other column kept as it is: for each fragment holding an
     * updated row, Lance writes a new data file of just those columns ({@link Fragment#updateColumns}, matched by row
     * address) and one update commit replaces them. The cost is the size of the changed columns, not of the rows.
     * Fragments are rewritten side by side, one per core.
     */
    static final class UpdateColumns<R> extends PendingChange {
        private final Codec<R> codec;
        private final List<String> columns;
        private final List<R> rows;

        UpdateColumns(Codec<R> codec, List<String> columns, List<R> rows) {
            super(codec.table(), "update");
            this.codec = codec;
            Schema schema = TableSchemas.of(codec.table());
            for (String c : columns) {
                // a model's column and a stream label's are checked against the table's schema when the update is staged
                if (!c.startsWith(TableSchemas.MODEL_COLUMN_PREFIX)
                        && !(codec.table().equals(TableSchemas.EPISODES) && TableSchemas.STREAM_LABEL_COLUMNS.contains(c))
                        && schema.getFields().stream().noneMatch(f -> f.getName().equals(c))) {
                    throw new IllegalArgumentException("table " + codec.table() + " has no column '" + c + "'");
                }
                if (codec.keyColumns().contains(c)) {
                    throw new IllegalArgumentException("column '" + c + "' is a key of " + codec.table()
                            + " and cannot be updated");
                }
            }
            if (columns.isEmpty()) {
                throw new IllegalArgumentException("an update of " + codec.table() + " names no column");
            }
            this.columns = List.copyOf(new LinkedHashSet<>(columns));
            this.rows = List.copyOf(rows);
        }

        @Override
        Set<String> keys() {
            Set<String> k = new LinkedHashSet<>();
            rows.forEach(r -> k.add(codec.partitionKey().apply(r)));
            return k;
        }

        @Override
        List<String> columns() {
            return columns;
        }

        @Override
        boolean dependsOnFragments() {
            return true;
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            if (base == null) {
                throw new NotFoundException("cannot update table " + table + ": it does not exist");
            }
            Schema schema = base.getSchema();
            for (String c : columns) {
                if (schema.getFields().stream().noneMatch(f -> f.getName().equals(c))) {
                    throw new IllegalArgumentException("table " + lake.tableUri(table) + " (version " + base.version()
                            + ") has no column '" + c + "'; its columns: " + schema.getFields().stream()
                            .map(Field::getName).toList());
                }
            }
            EmbeddingModels models = models(lake);
            RowKeys wanted = new RowKeys();
            for (int i = 0; i < rows.size(); i++) {
                R r = rows.get(i);
                wanted.add(codec.partitionKey().apply(r), codec.secondaryKey().applyAsInt(r), i);
            }
            int twice = wanted.seal();
            if (twice >= 0) {
                throw new BadInputException("update of " + table + ": row " + codec.rowKey().apply(rows.get(twice))
                        + " is given twice");
            }
            long[] addrOf = new long[rows.size()];
            java.util.Arrays.fill(addrOf, -1);
            locate(base, codec, wanted, addrOf);
            Map<Integer, List<Integer>> byFragment = new TreeMap<>();
            for (int i = 0; i < rows.size(); i++) {
                if (addrOf[i] < 0) {
                    throw new NotFoundException("update of " + table + " (" + String.join(", ", columns) + "): row "
                            + codec.rowKey().apply(rows.get(i)) + " is not in the table at version " + base.version());
                }
                byFragment.computeIfAbsent((int) (addrOf[i] >>> 32), f -> new ArrayList<>()).add(i);
            }
            List<Field> projected = new ArrayList<>();
            for (String c : columns) {
                projected.add(schema.findField(c));
            }
            Schema partSchema = new Schema(projected);
            Map<Integer, FragmentMetadata> basis = new LinkedHashMap<>();
            List<Callable<FragmentUpdateResult>> tasks = new ArrayList<>();
            for (Map.Entry<Integer, List<Integer>> e : byFragment.entrySet()) {
                Fragment f = base.getFragment(e.getKey());
                basis.put(e.getKey(), f.metadata());
                List<Integer> at = e.getValue();
                tasks.add(() -> {
                    List<R> sub = new ArrayList<>(at.size());
                    long[] addrs = new long[at.size()];
                    for (int j = 0; j < addrs.length; j++) {
                        sub.add(rows.get(at.get(j)));
                        addrs[j] = addrOf[at.get(j)];
                    }
                    try (BufferAllocator a = alloc.newChildAllocator("update-" + f.getId(), 0, Long.MAX_VALUE);
                            VectorSchemaRoot part = withAddresses(codec.toArrow().encode(sub, partSchema, models, a),
                                    addrs, a);
                            ArrowArrayStream stream = ArrowArrayStream.allocateNew(a)) {
                        Data.exportArrayStream(a, new RootReader(part, a), stream);
                        return f.updateColumns(stream, ROW_ADDR, ROW_ADDR);
                    }
                });
            }
            List<FragmentMetadata> updated = new ArrayList<>();
            Set<Long> fields = new java.util.TreeSet<>();
            for (FragmentUpdateResult r : Parallel.run(tasks)) {
                updated.add(r.getUpdatedFragment());
                for (long id : r.getFieldsModified()) {
                    fields.add(id);
                }
            }
            Update op = Update.builder().updatedFragments(updated)
                    .fieldsModified(fields.stream().mapToLong(Long::longValue).toArray()).build();
            return new Staged(op, List.of(), null, false, basis, 0, rows.size(), 0);
        }

        /**
         * @param cols the updated columns only (the encoder writes nothing else)
         * @return {@code _rowaddr} then those columns' vectors, as they are (no copy)
         */
        private static VectorSchemaRoot withAddresses(VectorSchemaRoot cols, long[] addrs, BufferAllocator alloc) {
            UInt8Vector a = new UInt8Vector(new Field(ROW_ADDR, org.apache.arrow.vector.types.pojo.FieldType
                    .notNullable(new ArrowType.Int(64, false)), null), alloc);
            a.allocateNew(addrs.length);
            for (int i = 0; i < addrs.length; i++) {
                a.set(i, addrs[i]);
            }
            a.setValueCount(addrs.length);
            List<FieldVector> vectors = new ArrayList<>();
            vectors.add(a);
            vectors.addAll(cols.getFieldVectors());
            List<Field> fields = new ArrayList<>();
            fields.add(a.getField());
            fields.addAll(cols.getSchema().getFields()); // the table's fields as given: a list vector's own view of
                                                         // its field names its child "$data$", Lance's "item"
            return new VectorSchemaRoot(fields, vectors, addrs.length);
        }

        /**
         * Finds the row address of every wanted row: one scan of the key columns of the rows whose partition key is
         * wanted. Rows of one partition are contiguous in a scan, so the partition's key string is decoded once per
         * run of rows, not per row.
         */
        private static <R> void locate(Dataset base, Codec<R> codec, RowKeys wanted, long[] addrOf)
                throws Exception {
            String filter = Sql.in(codec.partitionColumn(), new ArrayList<>(wanted.partitions()));
            ScanOptions o = new ScanOptions.Builder().columns(codec.keyColumns()).filter(filter).withRowAddress(true)
                    .build();
            try (LanceScanner sc = base.newScan(o); ArrowReader r = sc.scanBatches()) {
                byte[] last = null;
                long[] group = null;
                while (r.loadNextBatch()) {
                    VectorSchemaRoot b = r.getVectorSchemaRoot();
                    UInt8Vector addr = (UInt8Vector) b.getVector(ROW_ADDR);
                    org.apache.arrow.vector.VarCharVector part =
                            (org.apache.arrow.vector.VarCharVector) b.getVector(codec.partitionColumn());
                    org.apache.arrow.vector.IntVector second = codec.secondaryColumn() == null ? null
                            : (org.apache.arrow.vector.IntVector) b.getVector(codec.secondaryColumn());
                    for (int i = 0; i < b.getRowCount(); i++) {
                        if (last == null || !sameBytes(part, i, last)) {
                            last = part.get(i);
                            group = wanted.group(new String(last, java.nio.charset.StandardCharsets.UTF_8));
                        }
                        if (group != null) {
                            int row = RowKeys.find(group, second == null ? -1 : second.get(i));
                            if (row >= 0) {
                                addrOf[row] = addr.get(i);
                            }
                        }
                    }
                }
            }
        }

        /** Whether value {@code i} of {@code v} is {@code key}, compared in place (no copy per row). */
        private static boolean sameBytes(org.apache.arrow.vector.VarCharVector v, int i, byte[] key) {
            int start = v.getStartOffset(i);
            if (v.getEndOffset(i) - start != key.length) {
                return false;
            }
            org.apache.arrow.memory.ArrowBuf data = v.getDataBuffer();
            for (int j = 0; j < key.length; j++) {
                if (data.getByte(start + j) != key[j]) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * New nullable columns, null in every existing row (Lance adds them to the schema only; no data file is
     * written). Commutes with every change but another that adds a column of the same name.
     */
    static final class AddColumns extends PendingChange {
        private final List<Field> fields;

        AddColumns(String table, List<Field> fields) {
            super(table, "schema");
            if (fields.isEmpty()) {
                throw new IllegalArgumentException("no column to add to " + table);
            }
            for (Field f : fields) {
                if (!f.isNullable()) {
                    throw new IllegalArgumentException("column '" + f.getName() + "' added to " + table
                            + " must be nullable: its existing rows have no value");
                }
            }
            this.fields = List.copyOf(fields);
        }

        @Override
        Set<String> keys() {
            return Set.of();
        }

        @Override
        List<String> columns() {
            return fields.stream().map(Field::getName).toList();
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) {
            if (base == null) {
                throw new NotFoundException("cannot add columns to table " + table + ": it does not exist");
            }
            return Staged.direct(ds -> {
                for (Field f : fields) {
                    if (ds.getSchema().getFields().stream().anyMatch(x -> x.getName().equals(f.getName()))) {
                        throw new io.flywheel.error.ConflictException("table " + lake.tableUri(table) + " has a column '"
                                + f.getName() + "' already (version " + ds.version() + ")");
                    }
                }
                ds.addColumns(fields);
            }, Map.of());
        }
    }

    /**
     * The vector index of one embedding column, built or refreshed under the commit lock on the table's latest
     * version (Lance builds and commits an index itself): with no index and at least
     * {@link VectorIndexOptions#flatBelowRows()} vectors, an IVF-PQ index is built ({@link IndexChoice#choose});
     * with an index and rows it does not cover (appended or updated since), Lance's index optimisation adds them;
     * otherwise nothing is written and the table keeps its version. Commutes with every change but a migration: the
     * index is computed from the data the lock holds still.
     */
    static final class IndexVectors extends PendingChange {
        private final String column;
        private final String indexName;
        private final VectorIndexOptions options;

        IndexVectors(String table, String column, String indexName, VectorIndexOptions options) {
            super(table, "index");
            this.column = column;
            this.indexName = indexName;
            this.options = options.withColumn(column);
        }

        @Override
        Set<String> keys() {
            return Set.of();
        }

        @Override
        List<String> columns() {
            return List.of(column);
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) {
            if (base == null) {
                throw new NotFoundException("cannot index table " + table + ": it does not exist");
            }
            String uri = lake.tableUri(table);
            Vectors.dimension(base, column, uri); // a missing or non-vector column fails before the lock is taken
            return Staged.direct(ds -> {
                int dim = Vectors.dimension(ds, column, uri);
                java.util.Optional<VectorIndexInfo> idx = Vectors.index(ds, column);
                if (idx.isEmpty()) {
                    IndexChoice c = IndexChoice.choose(ds.countRows(column + " IS NOT NULL"), dim, options);
                    if (c.kind() == IndexChoice.Kind.IVF_PQ) {
                        Vectors.createVectorIndex(ds, c, options, indexName, uri);
                    }
                } else if (idx.get().rowsUnindexed() > 0) {
                    Vectors.optimize(ds, idx.get().name(), uri);
                }
            }, Map.of());
        }
    }

    static final String ROW_ADDR = "_rowaddr";

    /** Receives one row's address and key values from {@link #rowAddresses}. */
    interface AddressConsumer {
        void accept(long address, List<Object> key);
    }

    /**
     * Scans the key columns of the rows matching the filter with their row addresses.
     *
     * @return the addresses as {address} arrays when {@code consumer} is null
     */
    static List<long[]> rowAddresses(Dataset ds, List<String> keyColumns, String filter, BufferAllocator alloc,
                                     AddressConsumer consumer) throws Exception {
        List<long[]> out = new ArrayList<>();
        ScanOptions o = new ScanOptions.Builder().columns(keyColumns).filter(filter).withRowAddress(true).build();
        try (LanceScanner s = ds.newScan(o); ArrowReader r = s.scanBatches()) {
            while (r.loadNextBatch()) {
                VectorSchemaRoot b = r.getVectorSchemaRoot();
                UInt8Vector addr = (UInt8Vector) b.getVector(ROW_ADDR);
                for (int i = 0; i < b.getRowCount(); i++) {
                    long a = addr.get(i);
                    if (consumer == null) {
                        out.add(new long[] {a});
                    } else {
                        List<Object> key = new ArrayList<>(keyColumns.size());
                        for (String k : keyColumns) {
                            Object v = b.getVector(k).getObject(i);
                            key.add(v instanceof org.apache.arrow.vector.util.Text t ? t.toString() : v);
                        }
                        consumer.accept(a, key);
                    }
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------ other tables

    /**
     * Writes the rows of a reader as new data files of the table (consumed and closed by Lance) and stages them as an
     * append, or as an overwrite with the given schema.
     */
    static Staged stageReader(Lake lake, String table, ArrowReader reader, Schema schema, boolean overwrite,
            Dataset base, BufferAllocator alloc) throws Exception {
        List<FragmentMetadata> added;
        long rows = 0;
        try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(alloc)) {
            Data.exportArrayStream(alloc, reader, stream);
            added = Fragment.create(lake.tableUri(table), stream, writeParams(lake));
        }
        for (FragmentMetadata f : added) {
            rows += f.getNumRows();
        }
        if (overwrite) {
            return new Staged(Overwrite.builder().fragments(added).schema(schema).build(), added, schema, false,
                    Map.of(), rows, 0, base == null ? 0 : base.countRows());
        }
        return new Staged(null, added, schema, true, Map.of(), rows, 0, 0);
    }

    /**
     * The rows of an Arrow reader appended to a table, or replacing its rows as a new version (overwrite; the
     * reader's schema becomes the table's). Used by schema migrations and the lake's tests.
     */
    static final class WriteReader extends PendingChange {
        private final ArrowReader reader;
        private final boolean overwrite;
        private final Set<String> keys;
        private boolean consumed;

        WriteReader(String table, ArrowReader reader, boolean overwrite, Set<String> keys) {
            this(table, reader, overwrite, keys, overwrite ? "overwrite" : "append");
        }

        /** @param kind the change's kind in the commit point ({@code migrate} for a schema migration's rewrite) */
        WriteReader(String table, ArrowReader reader, boolean overwrite, Set<String> keys, String kind) {
            super(table, kind);
            this.reader = reader;
            this.overwrite = overwrite;
            this.keys = Set.copyOf(keys);
        }

        @Override
        Set<String> keys() {
            return keys;
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            if (consumed) {
                throw new IllegalStateException("rows of " + table + " were staged already");
            }
            consumed = true;
            return stageReader(lake, table, reader, reader.getVectorSchemaRoot().getSchema(), overwrite, base, alloc);
        }
    }

    /**
     * Typed rows of a {@link TypedTable} appended to it (in the table's schema, or the declared one for a new table),
     * or replacing its rows as a new version in the declared schema (overwrite). The rows are encoded
     * {@link #ROWS_PER_BATCH} at a time while Lance writes them, so memory is one batch.
     */
    static final class WriteRows<R> extends PendingChange {
        static final int ROWS_PER_BATCH = 65_536;
        private final TypedTable<R> typed;
        private final Iterable<R> rows;
        private final boolean overwrite;
        private final Set<String> keys;

        WriteRows(TypedTable<R> typed, Iterable<R> rows, boolean overwrite, Set<String> keys) {
            super(typed.name(), overwrite ? "overwrite" : "append");
            this.typed = java.util.Objects.requireNonNull(typed, "table");
            this.rows = java.util.Objects.requireNonNull(rows, "rows");
            this.overwrite = overwrite;
            this.keys = Set.copyOf(keys);
        }

        @Override
        Set<String> keys() {
            return keys;
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            EmbeddingModels models = models(lake);
            Schema schema = overwrite || base == null ? typed.schema(models) : base.getSchema();
            return stageReader(lake, table, new RowsReader<>(typed, rows.iterator(), schema, models, alloc), schema,
                    overwrite, base, alloc);
        }
    }

    /** Typed rows encoded into Arrow batches on demand, for Lance's writer. */
    private static final class RowsReader<R> extends ArrowReader {
        private final TypedTable<R> typed;
        private final java.util.Iterator<R> rows;
        private final Schema schema;
        private final EmbeddingModels models;
        private final BufferAllocator alloc;
        private boolean emitted;

        RowsReader(TypedTable<R> typed, java.util.Iterator<R> rows, Schema schema, EmbeddingModels models,
                   BufferAllocator alloc) {
            super(alloc);
            this.typed = typed;
            this.rows = rows;
            this.schema = schema;
            this.models = models;
            this.alloc = alloc;
        }

        @Override
        public boolean loadNextBatch() throws java.io.IOException {
            if (emitted && !rows.hasNext()) {
                return false;
            }
            emitted = true; // an empty table still gets one (empty) batch, so that an overwrite writes its schema
            prepareLoadNextBatch();
            List<R> batch = new ArrayList<>();
            while (batch.size() < WriteRows.ROWS_PER_BATCH && rows.hasNext()) {
                batch.add(rows.next());
            }
            try (VectorSchemaRoot encoded = typed.encoder().encode(batch, schema, models, alloc);
                    org.apache.arrow.vector.ipc.message.ArrowRecordBatch b =
                            new org.apache.arrow.vector.VectorUnloader(encoded).getRecordBatch()) {
                new org.apache.arrow.vector.VectorLoader(getVectorSchemaRoot()).load(b);
            }
            return true;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {
            // the rows are plain values: nothing to close
        }

        @Override
        protected Schema readSchema() {
            return schema;
        }
    }

    /**
     * A table's rows replaced by rows of another table at a version, taken by row offset ({@link RowCopy}): the
     * source is opened at its version while the change is staged, and its rows stream from Lance's {@code take}
     * into the new data files ({@link TakeCopyReader}). An overwrite: commutes with every concurrent change.
     */
    static final class CopyRows extends PendingChange {
        private final RowCopy copy;

        CopyRows(String table, RowCopy copy) {
            super(table, "overwrite");
            this.copy = java.util.Objects.requireNonNull(copy, "copy");
            if (copy.sourceTable().equals(table)) {
                throw new IllegalArgumentException("table " + table + " cannot be overwritten with a copy of itself");
            }
        }

        @Override
        Set<String> keys() {
            return Set.of();
        }

        @Override
        Staged stage(Lake lake, Dataset base, BufferAllocator alloc) throws Exception {
            String name = lake.tableUri(copy.sourceTable()) + " at version " + copy.sourceVersion();
            Dataset source;
            try {
                source = lake.openDataset(copy.sourceTable(), copy.sourceVersion(), alloc);
            } catch (RuntimeException e) {
                throw new NotFoundException("cannot copy rows from " + name + ": " + e.getMessage(), e);
            }
            try (source) {
                TakeCopyReader reader = new TakeCopyReader(source, name, copy, alloc);
                return stageReader(lake, table, reader, reader.writeSchema(), true, base, alloc);
            }
        }
    }
}
