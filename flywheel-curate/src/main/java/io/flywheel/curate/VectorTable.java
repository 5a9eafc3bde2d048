package io.flywheel.curate;

import java.io.IOException;
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

/**
 * Writes a Lance vector table: {@code id} utf8, any number of utf8 scalar columns (for SQL
 * prefilters, e.g. {@code quality_status}, {@code robot_type}, {@code task}), and an embedding
 * column {@code FixedSizeList<float32>[D]}, in batches of 65,536 rows. The pool tables that
 * {@link VectorSearch} reads may come from elsewhere (the lake's episodes table) as long as they
 * have an id column and such an embedding column.
 */
public final class VectorTable {
    /** Default name of the id column. */
    public static final String ID = "id";
    /** Default name of the embedding column. */
    public static final String EMBEDDING = "embedding";
    private static final int BATCH = 65_536;

    private VectorTable() {}

    /**
     * Creates the dataset at {@code uri} (which must not exist).
     *
     * @param uri dataset location (a local path or an object-store URI)
     * @param ids row ids, n of them, unique (not checked)
     * @param scalars scalar columns by name, each with n values (null allowed), in column order
     * @param rowMajor n * dim floats, row i at {@code [i * dim, (i + 1) * dim)}
     * @param dim embedding dimension D
     * @return number of rows written
     * @throws IllegalArgumentException when a column has another length than {@code ids}, or a
     *     scalar column is named like the id or embedding column
     * @throws IllegalStateException when Lance cannot write the dataset (message names the URI)
     */
    public static long write(String uri, String[] ids, Map<String, String[]> scalars, float[] rowMajor, int dim) {
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
        try (BufferAllocator alloc = new RootAllocator(Long.MAX_VALUE)) {
            BatchReader reader = new BatchReader(alloc, schema, ids, cols, rowMajor, dim);
            try (Dataset ds = Dataset.write().allocator(alloc).reader(reader).uri(uri)
                    .mode(WriteParams.WriteMode.CREATE).execute()) {
                return ds.countRows();
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) { // Lance's JNI throws undeclared checked exceptions too
            throw new IllegalStateException("cannot write vector table " + uri + ": " + e.getMessage(), e);
        }
    }

    /** @return the Arrow field {@code name: FixedSizeList<float32>[dim]}, not nullable */
    public static Field embeddingField(String name, int dim) {
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
