package io.flywheel.lake;

import java.io.IOException;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowReader} whose batches are filled on demand, for the tests that hand raw Arrow rows to the
 * transaction's package-private {@code append}/{@code overwrite} (tables of no typed row, a registry written by hand):
 * each {@link #fill} call writes the next batch into the reader's own root, which Lance consumes before asking for the
 * next one.
 */
abstract class BatchSource extends ArrowReader {
    private final Schema schema;
    private boolean closed;

    /**
     * @param schema the schema of every batch
     * @param allocator allocator for the batch vectors
     */
    protected BatchSource(Schema schema, BufferAllocator allocator) {
        super(allocator);
        this.schema = schema;
    }

    /**
     * @param schema the batch's schema
     * @param allocator allocator for its vectors
     * @param filler sets the values of the one batch and its row count
     * @return a source of exactly one batch
     */
    static BatchSource single(Schema schema, BufferAllocator allocator,
                                     java.util.function.Consumer<VectorSchemaRoot> filler) {
        return new BatchSource(schema, allocator) {
            private boolean done;

            @Override
            protected boolean fill(VectorSchemaRoot root) {
                if (done) {
                    return false;
                }
                done = true;
                filler.accept(root);
                return true;
            }
        };
    }

    /**
     * Fills the next batch: the root's vectors are allocated and empty; set values and call
     * {@link VectorSchemaRoot#setRowCount}.
     *
     * @param root the reader's root, reused from batch to batch
     * @return false when there are no more rows (the root is then ignored)
     * @throws IOException when the rows cannot be produced
     */
    protected abstract boolean fill(VectorSchemaRoot root) throws IOException;

    @Override
    public final boolean loadNextBatch() throws IOException {
        prepareLoadNextBatch();
        VectorSchemaRoot root = getVectorSchemaRoot();
        root.allocateNew();
        return fill(root);
    }

    /** Closes the root; idempotent (Lance closes the reader once it has consumed the stream). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            super.close();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public long bytesRead() {
        return 0;
    }

    @Override
    protected void closeReadSource() {
        // nothing beyond the root, which ArrowReader closes
    }

    @Override
    protected Schema readSchema() {
        return schema;
    }
}
