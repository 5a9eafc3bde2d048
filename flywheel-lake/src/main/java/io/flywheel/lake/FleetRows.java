package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.TelemetryRow;

/** The codec of the {@link FleetTables}: row records to and from Arrow vectors of their schemas. */
final class FleetRows {
    private FleetRows() {}

    /**
     * @param schema the table's schema, or a projection of it (an update writes {@code episode_id} only): only the
     *     columns it has are filled
     */
    static VectorSchemaRoot telemetry(List<TelemetryRow> rows, Schema schema, EmbeddingModels models,
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

    private static void fill(FieldVector v, List<TelemetryRow> rows) {
        switch (v.getName()) {
            case TableSchemas.ROBOT_ID -> strings(v, rows, TelemetryRow::robotId);
            case FleetTables.TS_NS -> longs(v, rows, TelemetryRow::tsNs);
            case FleetTables.RECEIVED_NS -> longs(v, rows, TelemetryRow::receivedNs);
            case FleetTables.KIND -> strings(v, rows, TelemetryRow::kind);
            case FleetTables.MESSAGE_CLASS -> strings(v, rows, TelemetryRow::messageClass);
            case FleetTables.QOS -> {
                IntVector q = (IntVector) v;
                for (int i = 0; i < rows.size(); i++) {
                    q.setSafe(i, rows.get(i).qos());
                }
            }
            case FleetTables.MESSAGE_ID -> strings(v, rows, TelemetryRow::messageId);
            case FleetTables.TOPIC -> strings(v, rows, TelemetryRow::topic);
            case FleetTables.VALUES -> values((ListVector) v, rows);
            case FleetTables.TEXT -> strings(v, rows, TelemetryRow::text);
            case TableSchemas.EPISODE_ID -> strings(v, rows, TelemetryRow::episodeId);
            default -> throw new LakeFormatException("table " + FleetTables.TELEMETRY + " has a column '" + v.getName()
                    + "' this version of Flywheel does not write; its columns: " + FleetTables.TELEMETRY_TABLE
                    .columnNames());
        }
        v.setValueCount(rows.size());
    }

    private static void strings(FieldVector v, List<TelemetryRow> rows,
            java.util.function.Function<TelemetryRow, String> f) {
        VarCharVector s = (VarCharVector) v;
        for (int i = 0; i < rows.size(); i++) {
            String x = f.apply(rows.get(i));
            if (x == null) {
                s.setNull(i);
            } else {
                s.setSafe(i, x.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private static void longs(FieldVector v, List<TelemetryRow> rows,
            java.util.function.ToLongFunction<TelemetryRow> f) {
        BigIntVector b = (BigIntVector) v;
        for (int i = 0; i < rows.size(); i++) {
            b.setSafe(i, f.applyAsLong(rows.get(i)));
        }
    }

    private static void values(ListVector list, List<TelemetryRow> rows) {
        StructVector item = (StructVector) list.getDataVector();
        VarCharVector name = (VarCharVector) item.getChild(FleetTables.VALUE_NAME);
        Float8Vector value = (Float8Vector) item.getChild(FleetTables.VALUE);
        int child = 0;
        for (int i = 0; i < rows.size(); i++) {
            list.startNewValue(i);
            Map<String, Double> vs = rows.get(i).values();
            for (Map.Entry<String, Double> e : vs.entrySet()) {
                item.setIndexDefined(child);
                name.setSafe(child, e.getKey().getBytes(StandardCharsets.UTF_8));
                value.setSafe(child, e.getValue());
                child++;
            }
            list.endValue(i, vs.size());
        }
        name.setValueCount(child);
        value.setValueCount(child);
        item.setValueCount(child);
    }

    static TelemetryRow telemetry(ArrowRows.Cursor c) {
        Map<String, Double> values = new LinkedHashMap<>();
        ListVector list = (ListVector) c.root.getVector(FleetTables.VALUES);
        if (list != null && !list.isNull(c.row)) {
            StructVector item = (StructVector) list.getDataVector();
            VarCharVector name = (VarCharVector) item.getChild(FleetTables.VALUE_NAME);
            Float8Vector value = (Float8Vector) item.getChild(FleetTables.VALUE);
            for (int k = list.getElementStartIndex(c.row); k < list.getElementEndIndex(c.row); k++) {
                values.put(new String(name.get(k), StandardCharsets.UTF_8), value.get(k));
            }
        }
        return new TelemetryRow(c.str(TableSchemas.ROBOT_ID), c.i64(FleetTables.TS_NS), c.i64(FleetTables.RECEIVED_NS),
                c.str(FleetTables.KIND), c.str(FleetTables.MESSAGE_CLASS), c.i32(FleetTables.QOS),
                c.str(FleetTables.MESSAGE_ID), c.str(FleetTables.TOPIC), values, c.str(FleetTables.TEXT),
                c.str(TableSchemas.EPISODE_ID));
    }
}
