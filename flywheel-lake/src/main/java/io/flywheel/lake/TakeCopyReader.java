package io.flywheel.lake;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;

/**
 * The rows of a {@link RowCopy} as an Arrow stream for Lance's writer: the source is taken chunk by chunk
 * ({@link RowCopy#ROWS_PER_TAKE} offsets per {@code take}), and each batch Lance returns becomes one batch here, its
 * columns transferred (buffers moved, not copied) behind the position and group columns. Lance's {@code take} returns
 * the rows in the order of the offsets asked; the reader checks the count of every chunk.
 */
final class TakeCopyReader extends ArrowReader {
    private final Dataset source;
    private final String sourceName;
    private final RowCopy copy;
    private final Schema schema;
    private final List<String> columns;
    private final long total;
    private long next;       // position of the next row to emit
    private int group;       // group of the row at position next
    private int inGroup;     // index of that row inside its group
    private ArrowReader chunk;
    private long chunkEnd;   // position one past the chunk's last row
    private long chunkRows;  // rows the chunk has returned so far
    private long chunkStart;
    private int[] chunkGroups;
    private boolean emitted;

    /**
     * @param source the source table at the copy's version (stays open while the reader is read; the caller closes it)
     * @param sourceName the source's URI and version, for messages
     */
    TakeCopyReader(Dataset source, String sourceName, RowCopy copy, BufferAllocator allocator) {
        super(allocator);
        this.source = source;
        this.sourceName = sourceName;
        this.copy = copy;
        List<Field> fields = new ArrayList<>();
        fields.add(new Field(copy.positionColumn(), FieldType.notNullable(new ArrowType.Int(64, true)), null));
        fields.add(new Field(copy.groupColumn(), FieldType.notNullable(new ArrowType.Int(32, true)), null));
        columns = new ArrayList<>();
        for (Field f : source.getSchema().getFields()) {
            if (f.getName().equals(copy.positionColumn()) || f.getName().equals(copy.groupColumn())) {
                throw new IllegalArgumentException("copy from " + sourceName + ": the source has a column '"
                        + f.getName() + "' already");
            }
            fields.add(f);
            columns.add(f.getName());
        }
        this.schema = new Schema(fields);
        this.total = copy.rowCount();
        long n = source.countRows();
        for (int g = 0; g < copy.groups().length; g++) {
            for (long o : copy.groups()[g]) {
                if (o < 0 || o >= n) { // Lance aborts the JVM on some out-of-range ids: none reaches it
                    throw new IllegalArgumentException("copy from " + sourceName + ": row offset " + o + " of group "
                            + g + " is outside [0, " + n + ")");
                }
            }
        }
    }

    /** @return the schema of the rows written: position, group, then the source's columns */
    Schema writeSchema() {
        return schema;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
        prepareLoadNextBatch();
        VectorSchemaRoot out = getVectorSchemaRoot();
        while (true) {
            if (chunk == null) {
                if (next >= total) {
                    if (!emitted) {
                        emitted = true; // one empty batch, so that an empty copy still writes an empty version
                        copy.progress().update(copy.groups().length, copy.groups().length);
                        out.setRowCount(0);
                        return true;
                    }
                    return false;
                }
                openChunk();
            }
            if (chunk.loadNextBatch()) {
                VectorSchemaRoot in = chunk.getVectorSchemaRoot();
                int n = in.getRowCount();
                if (n == 0) {
                    continue;
                }
                if (chunkStart + chunkRows + n > chunkEnd) {
                    throw new IOException("copy from " + sourceName + ": a take of " + (chunkEnd - chunkStart)
                            + " rows returned more");
                }
                BigIntVector pos = (BigIntVector) out.getVector(copy.positionColumn());
                IntVector grp = (IntVector) out.getVector(copy.groupColumn());
                pos.allocateNew(n);
                grp.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    long p = chunkStart + chunkRows + r;
                    pos.set(r, p);
                    grp.set(r, chunkGroups[(int) (p - chunkStart)]);
                }
                pos.setValueCount(n);
                grp.setValueCount(n);
                for (String c : columns) {
                    FieldVector from = in.getVector(c);
                    FieldVector to = out.getVector(c);
                    from.makeTransferPair(to).transfer();
                    to.setValueCount(n);
                }
                chunkRows += n;
                out.setRowCount(n);
                emitted = true;
                return true;
            }
            if (chunkStart + chunkRows != chunkEnd) {
                throw new IOException("copy from " + sourceName + ": a take of " + (chunkEnd - chunkStart)
                        + " rows returned " + chunkRows);
            }
            chunk.close();
            chunk = null;
            copy.progress().update(group, copy.groups().length); // the groups whose rows are all taken
        }
    }

    /** Takes the next chunk of offsets, in position order. */
    private void openChunk() throws IOException {
        int n = (int) Math.min(RowCopy.ROWS_PER_TAKE, total - next);
        List<Long> ids = new ArrayList<>(n);
        chunkGroups = new int[n];
        long[][] groups = copy.groups();
        for (int i = 0; i < n; i++) {
            while (inGroup == groups[group].length) {
                group++;
                inGroup = 0;
            }
            ids.add(groups[group][inGroup++]);
            chunkGroups[i] = group;
        }
        while (group < groups.length && inGroup == groups[group].length) { // groups done with this chunk
            group++;
            inGroup = 0;
        }
        chunkStart = next;
        chunkEnd = next + n;
        chunkRows = 0;
        next = chunkEnd;
        chunk = source.take(ids, columns);
    }

    @Override
    public long bytesRead() {
        return 0;
    }

    @Override
    protected void closeReadSource() throws IOException {
        if (chunk != null) {
            chunk.close();
            chunk = null;
        }
    }

    @Override
    protected Schema readSchema() {
        return schema;
    }
}
