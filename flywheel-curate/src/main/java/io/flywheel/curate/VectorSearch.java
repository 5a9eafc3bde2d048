package io.flywheel.curate;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.lance.Dataset;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.BTreeIndexParams;
import org.lance.index.scalar.BitmapIndexParams;
import org.lance.index.scalar.ScalarIndexParams;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.VectorIndexParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * k-nearest-neighbour search over an embedding column of a Lance dataset, by cosine distance, with
 * an optional IVF-PQ index (H. Jegou, M. Douze, C. Schmid, "Product Quantization for Nearest
 * Neighbor Search", IEEE TPAMI 33(1), 2011: inverted file + product quantisation, re-ranked by
 * exact distance with a refine factor) or a flat exact scan for small pools, and a scalar SQL
 * prefilter applied before the search (so k hits come back whenever k rows pass the filter),
 * answered from scalar indexes ({@link ScalarIndex}) on the columns it tests where they exist.
 * Holds a native dataset and an Arrow allocator: close it (try-with-resources). One query at a
 * time per instance is the tested use.
 */
public final class VectorSearch implements AutoCloseable {
    /** How a column is searched. */
    public enum Kind { FLAT, IVF_PQ }

    /**
     * The index choice for a pool.
     *
     * @param kind flat scan or IVF-PQ index
     * @param column embedding column
     * @param rows rows in the pool
     * @param dim embedding dimension D
     * @param partitions IVF partitions (0 for flat)
     * @param subVectors PQ sub-vectors (0 for flat)
     * @param reason why, in words
     */
    public record IndexChoice(Kind kind, String column, long rows, int dim, int partitions, int subVectors,
            String reason) {}

    /**
     * One hit.
     *
     * @param id the row's id column value, as text
     * @param distance cosine distance {@code 1 - cos} to the query (exact when refined or flat)
     */
    public record Hit(String id, float distance) {}

    private final String uri;
    private final BufferAllocator allocator;
    private final Dataset dataset;
    /** Embedding dimension by column: the schema comes over JNI (~7-10 ms a call), so once per column. */
    private final java.util.Map<String, Integer> dimensions = new java.util.concurrent.ConcurrentHashMap<>();
    private boolean closed;

    private VectorSearch(String uri, BufferAllocator allocator, Dataset dataset) {
        this.uri = uri;
        this.allocator = allocator;
        this.dataset = dataset;
    }

    /**
     * Opens the latest version of the dataset at {@code uri}.
     *
     * @throws IllegalArgumentException when no dataset is there (message names the URI)
     */
    public static VectorSearch open(String uri) {
        BufferAllocator alloc = new RootAllocator(Long.MAX_VALUE);
        try {
            return new VectorSearch(uri, alloc, Dataset.open(uri, alloc));
        } catch (Exception e) {
            alloc.close();
            throw new IllegalArgumentException("cannot open vector table " + uri + ": " + e.getMessage(), e);
        }
    }

    /** @return rows in the dataset */
    public long rows() {
        return dataset.countRows();
    }

    /**
     * @return the dimension D of embedding column {@code column}
     * @throws IllegalArgumentException when the column is missing or not FixedSizeList&lt;float32&gt;
     */
    public int dimension(String column) {
        Integer known = dimensions.get(column);
        if (known != null) {
            return known;
        }
        int d = readDimension(column);
        dimensions.put(column, d);
        return d;
    }

    private int readDimension(String column) {
        Field f;
        try {
            f = dataset.getSchema().findField(column);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("vector table " + uri + " has no column '" + column + "'", e);
        }
        if (!(f.getType() instanceof ArrowType.FixedSizeList l) || f.getChildren().size() != 1
                || !(f.getChildren().get(0).getType() instanceof ArrowType.FloatingPoint)) {
            throw new IllegalArgumentException("vector table " + uri + ": column '" + column + "' is " + f.getType()
                    + ", expected FixedSizeList<float32>[D]");
        }
        return l.getListSize();
    }

    /**
     * The index a pool of {@code rows} vectors of dimension {@code dim} gets under {@code options}.
     *
     * @throws IllegalArgumentException when a given sub-vector count does not divide D
     */
    public static IndexChoice choose(long rows, int dim, VectorIndexOptions options) {
        if (rows < options.flatBelowRows()) {
            return new IndexChoice(Kind.FLAT, options.column(), rows, dim, 0, 0, rows + " rows < "
                    + options.flatBelowRows() + ": a flat exact scan is cheap, and IVF training needs many rows");
        }
        int partitions = options.partitions() > 0 ? options.partitions() : (int) Math.max(1, Math.round(Math.sqrt(rows)));
        int sub = options.subVectors();
        if (sub == 0) {
            sub = 1;
            for (int s = Math.max(1, dim / 4); s >= 1; s--) {
                if (dim % s == 0) {
                    sub = s;
                    break;
                }
            }
        } else if (dim % sub != 0) {
            throw new IllegalArgumentException(sub + " PQ sub-vectors do not divide dimension " + dim);
        }
        return new IndexChoice(Kind.IVF_PQ, options.column(), rows, dim, partitions, sub, rows + " rows >= "
                + options.flatBelowRows() + ": IVF-PQ, " + partitions + " partitions (~sqrt(rows)), " + sub
                + " sub-vectors of " + dim / sub + " dimensions, 8 bits, cosine");
    }

    /**
     * Chooses ({@link #choose}) and, for IVF-PQ, builds the index on {@code options.column()} (a
     * new dataset version); then, flat or not, builds {@code options.scalarIndexes()}
     * ({@link #buildScalarIndexes}). A flat choice leaves any existing vector index alone, so force
     * flat queries with {@link KnnQuery#exact()}.
     *
     * @return the choice made
     * @throws IllegalArgumentException when the column is not an embedding column, or a scalar
     *     index column is missing or not a scalar column
     * @throws IllegalStateException when Lance fails to build an index (message names the URI)
     */
    public IndexChoice buildIndex(VectorIndexOptions options) {
        IndexChoice choice = choose(rows(), dimension(options.column()), options);
        for (ScalarIndex si : options.scalarIndexes()) {
            checkScalarColumn(si);
        }
        if (choice.kind() == Kind.IVF_PQ) {
            IvfBuildParams ivf = new IvfBuildParams.Builder().setNumPartitions(choice.partitions())
                    .setMaxIters(options.maxIterations()).setSampleRate(options.sampleRate()).build();
            PQBuildParams pq = new PQBuildParams.Builder().setNumSubVectors(choice.subVectors()).setNumBits(8)
                    .setMaxIters(options.pqMaxIterations()).setSampleRate(options.sampleRate()).build();
            VectorIndexParams vp = VectorIndexParams.withIvfPqParams(DistanceType.Cosine, ivf, pq);
            try {
                dataset.createIndex(List.of(options.column()), IndexType.IVF_PQ,
                        Optional.of(options.column() + "_ivf_pq"), IndexParams.builder().setVectorIndexParams(vp).build(),
                        options.replace());
            } catch (Exception e) {
                throw new IllegalStateException("vector table " + uri + ": cannot build " + choice.reason() + ": "
                        + e.getMessage(), e);
            }
        }
        buildScalarIndexes(options.scalarIndexes(), options.replace());
        return choice;
    }

    /**
     * Builds a scalar index ({@link ScalarIndex}) on each listed column, named
     * {@link ScalarIndex#indexName()}, one new dataset version each; later prefilters on those
     * columns are answered from the index. Search results do not change.
     *
     * @param replace replace an existing index of the same name (else Lance refuses to build it)
     * @throws IllegalArgumentException when a column is missing or is a list/struct column
     * @throws IllegalStateException when Lance fails to build an index (message names the URI and column)
     */
    public void buildScalarIndexes(List<ScalarIndex> indexes, boolean replace) {
        for (ScalarIndex si : indexes) {
            checkScalarColumn(si);
        }
        for (ScalarIndex si : indexes) {
            ScalarIndexParams params = si.kind() == ScalarIndex.Kind.BITMAP ? BitmapIndexParams.builder().build()
                    : BTreeIndexParams.builder().build();
            IndexType type = si.kind() == ScalarIndex.Kind.BITMAP ? IndexType.BITMAP : IndexType.BTREE;
            try {
                dataset.createIndex(List.of(si.column()), type, Optional.of(si.indexName()),
                        IndexParams.builder().setScalarIndexParams(params).build(), replace);
            } catch (Exception e) {
                throw new IllegalStateException("vector table " + uri + ": cannot build the " + si.kind()
                        + " index on column '" + si.column() + "': " + e.getMessage(), e);
            }
        }
    }

    private void checkScalarColumn(ScalarIndex si) {
        Field f;
        try {
            f = dataset.getSchema().findField(si.column());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("vector table " + uri + " has no column '" + si.column()
                    + "' to build a " + si.kind() + " index on", e);
        }
        if (!f.getChildren().isEmpty()) {
            throw new IllegalArgumentException("vector table " + uri + ": column '" + si.column() + "' is " + f.getType()
                    + "; a " + si.kind() + " index needs a scalar column (string, number, boolean, time)");
        }
    }

    /**
     * @return the dataset's indexes, name to Lance index type ({@code BITMAP},
     *     {@code BTREE}; Lance 7.0 reports an IVF-PQ index as {@code VECTOR}), in Lance's order
     */
    public java.util.Map<String, String> indexTypes() {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        for (org.lance.index.Index i : dataset.getIndexes()) {
            out.put(i.name(), i.indexType() == null ? "?" : i.indexType().name());
        }
        return out;
    }

    /** @return the names of the dataset's indexes */
    public List<String> indexes() {
        return dataset.listIndexes();
    }

    /**
     * The k nearest rows to the query that pass its prefilter, nearest first (ties by Lance's
     * order), with cosine distances.
     *
     * @throws IllegalArgumentException when the query dimension differs from the column's, or the
     *     filter is not valid SQL for the table (message names the URI and the filter)
     */
    public List<Hit> knn(KnnQuery q) {
        int dim = dimension(q.column());
        if (q.vector().length != dim) {
            throw new IllegalArgumentException("vector table " + uri + ": query has dimension " + q.vector().length
                    + ", column '" + q.column() + "' has " + dim);
        }
        Query.Builder qb = new Query.Builder().setColumn(q.column()).setKey(q.vector()).setK(q.k())
                .setDistanceType(DistanceType.Cosine).setUseIndex(!q.exact()).setNprobes(q.nprobes());
        if (q.refineFactor() > 0) {
            qb.setRefineFactor(q.refineFactor());
        }
        ScanOptions.Builder sb = new ScanOptions.Builder().nearest(qb.build()).prefilter(true)
                .columns(List.of(q.idColumn(), "_distance"));
        if (q.filter() != null && !q.filter().isBlank()) {
            sb.filter(q.filter());
        }
        List<Hit> hits = new ArrayList<>(q.k());
        try (LanceScanner scanner = dataset.newScan(sb.build()); ArrowReader reader = scanner.scanBatches()) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                FieldVector ids = root.getVector(q.idColumn());
                Float4Vector dist = (Float4Vector) root.getVector("_distance");
                for (int r = 0; r < root.getRowCount(); r++) {
                    hits.add(new Hit(idText(ids, r), dist.get(r)));
                }
            }
        } catch (Exception e) {
            throw new IllegalArgumentException("vector table " + uri + ": search " + q + " failed: " + e.getMessage(), e);
        }
        hits.sort((a, b) -> Float.compare(a.distance(), b.distance()));
        return hits;
    }

    private static String idText(FieldVector v, int r) {
        if (v.isNull(r)) {
            return null;
        }
        if (v instanceof VarCharVector s) {
            return new String(s.get(r), java.nio.charset.StandardCharsets.UTF_8);
        }
        if (v instanceof BaseIntVector i) {
            return Long.toString(i.getValueAsLong(r));
        }
        return String.valueOf(v.getObject(r));
    }

    /** Closes the dataset, then the allocator. Idempotent. */
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
