package io.flywheel.lake;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

import io.flywheel.error.NotFoundException;
import io.flywheel.error.StorageUnavailableException;

/**
 * A scratch vector table: a local Lance dataset of {@code id} utf8, any number of utf8 scalar columns (for SQL
 * prefilters, e.g. {@code quality_status}, {@code robot_id}, {@code task}) and {@code embedding}
 * fixed_size_list&lt;float32, D&gt;, written once ({@link #create}), indexed ({@link #buildIndex}) and searched
 * ({@link #nearest}) like a lake table's model column, for vectors the lake does not store (mining's derived episode
 * vectors: chosen cameras and phases, PCA-whitened). It is not a lake table: no commit point names it, and it lives
 * in a scratch folder the caller removes. Holds a native dataset and an Arrow allocator: close it
 * (try-with-resources). One query at a time per instance is the tested use.
 */
public final class VectorPool implements AutoCloseable {
    /** Name of the id column. */
    public static final String ID = "id";
    /** Name of the embedding column. */
    public static final String EMBEDDING = "embedding";
    private static final int BATCH = 65_536;

    private final String uri;
    private final BufferAllocator allocator;
    private final Dataset dataset;
    private final int dim;
    private boolean closed;

    private VectorPool(String uri, BufferAllocator allocator, Dataset dataset) {
        this.uri = uri;
        this.allocator = allocator;
        this.dataset = dataset;
        this.dim = Vectors.dimension(dataset, EMBEDDING, uri);
    }

    /**
     * Writes the pool at {@code dir} (which must not exist) and opens it.
     *
     * @param dir the dataset folder, local (e.g. {@code <scratch>/pool.lance})
     * @param ids row ids, n of them, unique (not checked)
     * @param scalars scalar columns by name, each with n values (null allowed), in column order
     * @param rowMajor n * dim floats, row i at {@code [i * dim, (i + 1) * dim)}
     * @param dim embedding dimension D
     * @return the open pool
     * @throws IllegalArgumentException when a column has another length than {@code ids}, or a scalar column is named
     *     like the id or embedding column
     * @throws StorageUnavailableException when Lance cannot write the dataset (naming the folder)
     */
    public static VectorPool create(Path dir, String[] ids, Map<String, String[]> scalars, float[] rowMajor, int dim) {
        int n = ids.length;
        if (dim < 1 || rowMajor.length != (long) n * dim) {
            throw new IllegalArgumentException("embeddings: " + rowMajor.length + " floats for " + n + " rows of dimension "
                    + dim);
        }
        Map<String, String[]> cols = new LinkedHashMap<>(scalars);
        for (Map.Entry<String, String[]> e : cols.entrySet()) {
            if (e.getKey().equals(ID) || e.getKey().equals(EMBEDDING)) {
                throw new IllegalArgumentException("scalar column '" + e.getKey() + "' clashes with a fixed column");
            }
            if (e.getValue().length != n) {
                throw new IllegalArgumentException("scalar column '" + e.getKey() + "' has " + e.getValue().length
                        + " values for " + n + " ids");
            }
        }
        List<Field> fields = new ArrayList<>();
        fields.add(new Field(ID, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
        for (String c : cols.keySet()) {
            fields.add(new Field(c, FieldType.nullable(ArrowType.Utf8.INSTANCE), null));
        }
        fields.add(embeddingField(EMBEDDING, dim));
        Schema schema = new Schema(fields);
        String uri = dir.toAbsolutePath().toString();
        BufferAllocator alloc = new RootAllocator(Long.MAX_VALUE);
        try {
            BatchReader reader = new BatchReader(alloc, schema, ids, cols, rowMajor, dim);
            Dataset ds = Dataset.write().allocator(alloc).reader(reader).uri(uri).mode(WriteParams.WriteMode.CREATE)
                    .execute();
            return new VectorPool(uri, alloc, ds);
        } catch (RuntimeException e) {
            alloc.close();
            if (e instanceof IllegalArgumentException || e instanceof io.flywheel.error.FlywheelException) {
                throw e;
            }
            throw new StorageUnavailableException("cannot write vector pool " + uri + ": " + e.getMessage(), e);
        } catch (Exception e) { // Lance's JNI throws undeclared checked exceptions too
            alloc.close();
            throw new StorageUnavailableException("cannot write vector pool " + uri + ": " + e.getMessage(), e);
        }
    }

    /**
     * Opens a pool written by {@link #create}.
     *
     * @throws NotFoundException when no dataset is there (naming the folder)
     */
    public static VectorPool open(Path dir) {
        String uri = dir.toAbsolutePath().toString();
        BufferAllocator alloc = new RootAllocator(Long.MAX_VALUE);
        try {
            return new VectorPool(uri, alloc, Dataset.open(uri, alloc));
        } catch (RuntimeException e) {
            alloc.close();
            if (e instanceof io.flywheel.error.FlywheelException) {
                throw e;
            }
            throw new NotFoundException("cannot open vector pool " + uri + ": " + e.getMessage(), e);
        }
    }

    /** @return the dataset folder */
    public String uri() {
        return uri;
    }

    /** @return rows in the pool */
    public long rows() {
        return dataset.countRows();
    }

    /** @return the dimension D of the embedding column */
    public int dimension() {
        return dim;
    }

    /**
     * Chooses the index ({@link IndexChoice#choose}, on {@link #EMBEDDING} whatever {@code options.column()} says)
     * and, for IVF-PQ, builds it (a new dataset version); then, flat or not, builds {@code options.scalarIndexes()}.
     * A flat choice leaves any existing vector index alone, so force flat queries with
     * {@link VectorQuery#exact()}.
     *
     * @return the choice made
     * @throws io.flywheel.error.BadInputException when a scalar index column is missing or not a scalar column
     * @throws StorageUnavailableException when Lance fails to build an index (naming the pool)
     */
    public IndexChoice buildIndex(VectorIndexOptions options) {
        for (ScalarIndex si : options.scalarIndexes()) {
            Vectors.checkScalarColumn(dataset, si, uri);
        }
        VectorIndexOptions o = options.column().equals(EMBEDDING) ? options : options.withColumn(EMBEDDING);
        IndexChoice choice = IndexChoice.choose(rows(), dim, o);
        if (choice.kind() == IndexChoice.Kind.IVF_PQ) {
            Vectors.createVectorIndex(dataset, choice, o, EMBEDDING + "_ivf_pq", uri);
        }
        Vectors.buildScalarIndexes(dataset, o.scalarIndexes(), o.replace(), uri);
        return choice;
    }

    /**
     * Builds a scalar index ({@link ScalarIndex}) on each listed column, one new dataset version each; later
     * prefilters on those columns are answered from the index. Search results do not change.
     *
     * @param replace replace an existing index of the same name (else Lance refuses to build it)
     */
    public void buildScalarIndexes(List<ScalarIndex> indexes, boolean replace) {
        Vectors.buildScalarIndexes(dataset, indexes, replace, uri);
    }

    /** @return the pool's indexes, name to Lance index type ({@code BITMAP}, {@code BTREE}, {@code VECTOR}) */
    public Map<String, String> indexTypes() {
        return Vectors.indexTypes(dataset);
    }

    /** @return the names of the pool's indexes */
    public List<String> indexes() {
        return dataset.listIndexes();
    }

    /**
     * The k nearest rows to the query that pass its prefilter, nearest first, with cosine distances.
     *
     * @throws io.flywheel.error.BadInputException when the query's column is not {@link #EMBEDDING}, its dimension
     *     differs from the pool's, or the filter is not valid SQL for the pool (naming the pool and the filter)
     */
    public List<VectorHit> nearest(VectorQuery q) {
        if (!q.column().equals(EMBEDDING)) {
            throw new io.flywheel.error.BadInputException("vector pool " + uri + " has no vector column '" + q.column()
                    + "' (its vectors are in '" + EMBEDDING + "')");
        }
        return Vectors.knn(dataset, q, dim, uri);
    }

    /** Closes the dataset, then the allocator (the files stay). Idempotent. */
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

    /** @return the Arrow field {@code name: FixedSizeList<float32>[dim]}, not nullable */
    static Field embeddingField(String name, int dim) {
        Field item = new Field("item", FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
                null);
        return new Field(name, FieldType.notNullable(new ArrowType.FixedSizeList(dim)), List.of(item));
    }

    /** Yields the rows in batches, filling the reader's own root. */
    private static final class BatchReader extends ArrowReader {
        private final Schema schema;
        private final String[] ids;
        private final Map<String, String[]> scalars;
        private final float[] data;
        private final int dim;
        private int next;

        BatchReader(BufferAllocator alloc, Schema schema, String[] ids, Map<String, String[]> scalars, float[] data,
                int dim) {
            super(alloc);
            this.schema = schema;
            this.ids = ids;
            this.scalars = scalars;
            this.data = data;
            this.dim = dim;
        }

        @Override
        public boolean loadNextBatch() throws IOException {
            if (next >= ids.length) {
                return false;
            }
            int from = next;
            int rows = Math.min(BATCH, ids.length - from);
            next += rows;
            prepareLoadNextBatch();
            VectorSchemaRoot root = getVectorSchemaRoot();
            fill((VarCharVector) root.getVector(ID), ids, from, rows);
            for (Map.Entry<String, String[]> e : scalars.entrySet()) {
                fill((VarCharVector) root.getVector(e.getKey()), e.getValue(), from, rows);
            }
            FixedSizeListVector emb = (FixedSizeListVector) root.getVector(EMBEDDING);
            emb.allocateNew();
            Float4Vector items = (Float4Vector) emb.getDataVector();
            items.allocateNew(rows * dim);
            for (int r = 0; r < rows; r++) {
                emb.setNotNull(r);
                int base = (from + r) * dim;
                for (int d = 0; d < dim; d++) {
                    items.set(r * dim + d, data[base + d]);
                }
            }
            items.setValueCount(rows * dim);
            emb.setValueCount(rows);
            for (FieldVector v : root.getFieldVectors()) {
                v.setValueCount(rows);
            }
            root.setRowCount(rows);
            return true;
        }

        private static void fill(VarCharVector v, String[] values, int from, int rows) {
            v.allocateNew(rows);
            for (int r = 0; r < rows; r++) {
                String s = values[from + r];
                if (s == null) {
                    v.setNull(r);
                } else {
                    v.setSafe(r, s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
            }
            v.setValueCount(rows);
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {}

        @Override
        protected Schema readSchema() {
            return schema;
        }
    }
}
