package io.flywheel.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
import org.lance.index.IndexDescription;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.OptimizeOptions;
import org.lance.index.scalar.BTreeIndexParams;
import org.lance.index.scalar.BitmapIndexParams;
import org.lance.index.scalar.ScalarIndexParams;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.VectorIndexParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

import io.flywheel.error.BadInputException;
import io.flywheel.error.FlywheelException;
import io.flywheel.error.StorageUnavailableException;

/**
 * The Lance side of vector search, shared by lake tables ({@link LakeTable#nearest}, {@link LakeTransaction#indexVectors})
 * and scratch pools ({@link VectorPool}): k nearest neighbours by cosine distance with a SQL prefilter applied before
 * the search (so k hits come back whenever k rows pass it), flat or through an IVF-PQ index re-ranked by exact distance
 * ({@link VectorQuery#refineFactor()}); building and refreshing the index; scalar indexes for the prefilter's columns
 * ({@link ScalarIndex}).
 */
final class Vectors {
    private Vectors() {}

    /**
     * @param where the dataset's URI (for messages)
     * @return the dimension D of a fixed_size_list&lt;float32, D&gt; column
     * @throws BadInputException when the column is missing or not such a column (naming both)
     */
    static int dimension(Dataset ds, String column, String where) {
        Field f = null;
        for (Field x : ds.getSchema().getFields()) {
            if (x.getName().equals(column)) {
                f = x;
            }
        }
        if (f == null) {
            throw new BadInputException("table " + where + " has no column '" + column + "'");
        }
        if (!(f.getType() instanceof ArrowType.FixedSizeList l) || f.getChildren().size() != 1
                || !(f.getChildren().get(0).getType() instanceof ArrowType.FloatingPoint)) {
            throw new BadInputException("table " + where + ": column '" + column + "' is " + f.getType()
                    + ", expected fixed_size_list<float32, D> (a vector column)");
        }
        return l.getListSize();
    }

    /** @return the vector index on {@code column}, if the dataset has one */
    static Optional<VectorIndexInfo> index(Dataset ds, String column) {
        int fieldId = -1;
        for (org.lance.schema.LanceField f : ds.getLanceSchema().fields()) {
            if (f.getName().equals(column)) {
                fieldId = f.getId();
            }
        }
        if (fieldId < 0) {
            return Optional.empty();
        }
        for (IndexDescription d : ds.describeIndices()) {
            String type = String.valueOf(d.getIndexType());
            if (d.getFieldIds().equals(List.of(fieldId)) && (type.startsWith("IVF") || type.contains("VECTOR"))) {
                long indexed = d.getRowsIndexed();
                return Optional.of(new VectorIndexInfo(d.getName(), type, indexed, Math.max(0, ds.countRows() - indexed)));
            }
        }
        return Optional.empty();
    }

    /**
     * Creates (or replaces) the IVF-PQ index a choice describes, one new dataset version.
     *
     * @throws StorageUnavailableException when Lance fails to build it (naming the table)
     */
    static void createVectorIndex(Dataset ds, IndexChoice choice, VectorIndexOptions o, String name, String where) {
        IvfBuildParams ivf = new IvfBuildParams.Builder().setNumPartitions(choice.partitions())
                .setMaxIters(o.maxIterations()).setSampleRate(o.sampleRate()).build();
        PQBuildParams pq = new PQBuildParams.Builder().setNumSubVectors(choice.subVectors()).setNumBits(8)
                .setMaxIters(o.pqMaxIterations()).setSampleRate(o.sampleRate()).build();
        VectorIndexParams vp = VectorIndexParams.withIvfPqParams(DistanceType.Cosine, ivf, pq);
        try {
            ds.createIndex(List.of(choice.column()), IndexType.IVF_PQ, Optional.of(name),
                    IndexParams.builder().setVectorIndexParams(vp).build(), o.replace());
        } catch (Exception e) {
            throw new StorageUnavailableException("table " + where + ": cannot build " + choice.reason() + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Adds the rows appended or updated since the index was built to it (Lance's index optimisation: new rows go to
     * their nearest partitions, the centroids are kept), one new dataset version.
     */
    static void optimize(Dataset ds, String indexName, String where) {
        try {
            ds.optimizeIndices(OptimizeOptions.builder().indexNames(List.of(indexName)).build());
        } catch (Exception e) {
            throw new StorageUnavailableException("table " + where + ": cannot refresh index " + indexName + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Builds a scalar index on each listed column, one new dataset version each.
     *
     * @throws BadInputException when a column is missing or is a list/struct column
     * @throws StorageUnavailableException when Lance fails to build an index (naming the table and column)
     */
    static void buildScalarIndexes(Dataset ds, List<ScalarIndex> indexes, boolean replace, String where) {
        for (ScalarIndex si : indexes) {
            checkScalarColumn(ds, si, where);
        }
        for (ScalarIndex si : indexes) {
            ScalarIndexParams params = si.kind() == ScalarIndex.Kind.BITMAP ? BitmapIndexParams.builder().build()
                    : BTreeIndexParams.builder().build();
            IndexType type = si.kind() == ScalarIndex.Kind.BITMAP ? IndexType.BITMAP : IndexType.BTREE;
            try {
                ds.createIndex(List.of(si.column()), type, Optional.of(si.indexName()),
                        IndexParams.builder().setScalarIndexParams(params).build(), replace);
            } catch (Exception e) {
                throw new StorageUnavailableException("table " + where + ": cannot build the " + si.kind()
                        + " index on column '" + si.column() + "': " + e.getMessage(), e);
            }
        }
    }

    static void checkScalarColumn(Dataset ds, ScalarIndex si, String where) {
        Field f = ds.getSchema().getFields().stream().filter(x -> x.getName().equals(si.column())).findFirst()
                .orElseThrow(() -> new BadInputException("table " + where + " has no column '" + si.column()
                        + "' to build a " + si.kind() + " index on"));
        if (!f.getChildren().isEmpty()) {
            throw new BadInputException("table " + where + ": column '" + si.column() + "' is " + f.getType()
                    + "; a " + si.kind() + " index needs a scalar column (string, number, boolean, time)");
        }
    }

    /** @return the dataset's indexes, name to Lance index type ({@code BITMAP}, {@code BTREE}, {@code VECTOR}) */
    static Map<String, String> indexTypes(Dataset ds) {
        Map<String, String> out = new LinkedHashMap<>();
        for (org.lance.index.Index i : ds.getIndexes()) {
            out.put(i.name(), i.indexType() == null ? "?" : i.indexType().name());
        }
        return out;
    }

    /**
     * The k nearest rows to the query that pass its prefilter, nearest first, with cosine distances.
     *
     * @param dim the column's dimension
     * @throws BadInputException when the query's dimension differs from the column's, or the filter is not valid SQL
     *     for the table (naming the table and the filter)
     */
    static List<VectorHit> knn(Dataset ds, VectorQuery q, int dim, String where) {
        if (q.vector().length != dim) {
            throw new BadInputException("table " + where + ": query has dimension " + q.vector().length + ", column '"
                    + q.column() + "' has " + dim);
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
        List<VectorHit> hits = new ArrayList<>(q.k());
        try (LanceScanner scanner = ds.newScan(sb.build()); ArrowReader reader = scanner.scanBatches()) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                FieldVector ids = root.getVector(q.idColumn());
                Float4Vector dist = (Float4Vector) root.getVector("_distance");
                for (int r = 0; r < root.getRowCount(); r++) {
                    if (!dist.isNull(r)) {
                        hits.add(new VectorHit(idText(ids, r), dist.get(r)));
                    }
                }
            }
        } catch (FlywheelException e) {
            throw e;
        } catch (Exception e) {
            FlywheelException f = Lake.failure("table " + where + ": search " + q + " failed", e);
            if (f instanceof StorageUnavailableException && String.valueOf(e.getMessage()).contains("filter")) {
                throw new BadInputException(f.getMessage(), e);
            }
            throw f;
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
}
