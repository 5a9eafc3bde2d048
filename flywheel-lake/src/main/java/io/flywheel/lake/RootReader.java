package io.flywheel.lake;

import java.io.IOException;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowReader} that yields one in-memory batch, for handing rows to Lance's writer.
 * The source root stays owned by the caller; this reader's own root is closed by whoever closes
 * the reader (Lance, once it has consumed the exported stream).
 */
final class RootReader extends ArrowReader {
    private final VectorSchemaRoot source;
    private boolean done;

    RootReader(VectorSchemaRoot source, BufferAllocator allocator) {
        super(allocator);
        this.source = source;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
        if (done) {
            return false;
        }
        done = true;
        prepareLoadNextBatch();
        try (ArrowRecordBatch batch = new VectorUnloader(source).getRecordBatch()) {
            new VectorLoader(getVectorSchemaRoot()).load(batch);
        }
        return true;
    }

    @Override
    public long bytesRead() {
        return 0;
    }

    @Override
    protected void closeReadSource() {
        // the source root belongs to the caller
    }

    @Override
    protected Schema readSchema() {
        return source.getSchema();
    }
}
