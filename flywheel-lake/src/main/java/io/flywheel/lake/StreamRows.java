package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.LabelHistoryRow;

/** The codec of the {@link StreamTables}: row records to and from Arrow vectors of their schemas. */
final class StreamRows {
    private StreamRows() {}

    static VectorSchemaRoot labels(List<LabelHistoryRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            for (FieldVector v : root.getFieldVectors()) {
                fill(v, rows);
            }
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    private static void fill(FieldVector v, List<LabelHistoryRow> rows) {
        switch (v.getName()) {
            case TableSchemas.EPISODE_ID -> strings(v, rows, LabelHistoryRow::episodeId);
            case TableSchemas.ROBOT_ID -> strings(v, rows, LabelHistoryRow::robotId);
            case StreamTables.LABEL -> strings(v, rows, LabelHistoryRow::label);
            case StreamTables.RULE -> strings(v, rows, LabelHistoryRow::rule);
            case StreamTables.RULES_VERSION -> strings(v, rows, LabelHistoryRow::rulesVersion);
            case StreamTables.OFFSETS -> strings(v, rows, LabelHistoryRow::offsets);
            case StreamTables.CHECKPOINT_ID -> longs(v, rows, LabelHistoryRow::checkpointId);
            case StreamTables.CONSUMER_GROUP -> strings(v, rows, LabelHistoryRow::consumerGroup);
            case StreamTables.LABELLED_AT_NS -> longs(v, rows, LabelHistoryRow::labelledAtNs);
            default -> throw new LakeFormatException("table " + StreamTables.LABEL_HISTORY + " has a column '"
                    + v.getName() + "' this version of Flywheel does not write; its columns: "
                    + StreamTables.LABEL_HISTORY_TABLE.columnNames());
        }
        v.setValueCount(rows.size());
    }

    private static void strings(FieldVector v, List<LabelHistoryRow> rows, Function<LabelHistoryRow, String> f) {
        VarCharVector s = (VarCharVector) v;
        for (int i = 0; i < rows.size(); i++) {
            s.setSafe(i, f.apply(rows.get(i)).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void longs(FieldVector v, List<LabelHistoryRow> rows, ToLongFunction<LabelHistoryRow> f) {
        BigIntVector b = (BigIntVector) v;
        for (int i = 0; i < rows.size(); i++) {
            b.setSafe(i, f.applyAsLong(rows.get(i)));
        }
    }

    static LabelHistoryRow label(ArrowRows.Cursor c) {
        return new LabelHistoryRow(c.str(TableSchemas.EPISODE_ID), c.str(TableSchemas.ROBOT_ID),
                c.str(StreamTables.LABEL), c.str(StreamTables.RULE), c.str(StreamTables.RULES_VERSION),
                c.str(StreamTables.OFFSETS), c.i64(StreamTables.CHECKPOINT_ID), c.str(StreamTables.CONSUMER_GROUP),
                c.i64(StreamTables.LABELLED_AT_NS));
    }
}
