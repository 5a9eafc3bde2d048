package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.EvalEpisodeRow;
import io.flywheel.rows.EvalRunRow;
import io.flywheel.rows.PolicyRow;

/** The codecs of the {@link EvalTables}: row records to and from Arrow vectors of their schemas. */
final class EvalRows {
    private EvalRows() {}

    static VectorSchemaRoot policies(List<PolicyRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            for (int i = 0; i < rows.size(); i++) {
                PolicyRow r = rows.get(i);
                str(root, EvalTables.POLICY_VERSION, i, r.policyVersion());
                i64(root, EvalTables.REGISTERED_AT_NS, i, r.registeredAtNs());
                str(root, EvalTables.METADATA, i, r.metadataJson());
            }
        });
    }

    static VectorSchemaRoot runs(List<EvalRunRow> rows, Schema schema, EmbeddingModels models, BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            for (int i = 0; i < rows.size(); i++) {
                EvalRunRow r = rows.get(i);
                str(root, EvalTables.RUN_ID, i, r.runId());
                str(root, EvalTables.POLICY_VERSION, i, r.policyVersion());
                i64(root, EvalTables.STARTED_AT_NS, i, r.startedAtNs());
                str(root, EvalTables.CONFIG, i, r.configJson());
                i64(root, EvalTables.EPISODE_COUNT, i, r.episodeCount());
            }
        });
    }

    static VectorSchemaRoot episodes(List<EvalEpisodeRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            for (int i = 0; i < rows.size(); i++) {
                EvalEpisodeRow r = rows.get(i);
                str(root, EvalTables.RUN_ID, i, r.runId());
                str(root, TableSchemas.EPISODE_ID, i, r.episodeId());
                str(root, TableSchemas.TASK, i, r.task());
                str(root, EvalTables.OBJECT, i, r.object());
                str(root, EvalTables.LIGHTING, i, r.lighting());
                str(root, TableSchemas.SCENE, i, r.scene());
                str(root, TableSchemas.ROBOT_ID, i, r.robotId());
                bool(root, EvalTables.SUCCESS, i, r.success());
                if (r.durationNs() == null) {
                    ((BigIntVector) root.getVector(EvalTables.DURATION_NS)).setNull(i);
                } else {
                    i64(root, EvalTables.DURATION_NS, i, r.durationNs());
                }
                str(root, EvalTables.FAILURE_MODE, i, r.failureMode());
                bool(root, EvalTables.INTERVENTION, i, r.intervention());
            }
        });
    }

    static PolicyRow policy(ArrowRows.Cursor c) {
        return new PolicyRow(c.str(EvalTables.POLICY_VERSION), c.i64(EvalTables.REGISTERED_AT_NS),
                c.str(EvalTables.METADATA));
    }

    static EvalRunRow run(ArrowRows.Cursor c) {
        return new EvalRunRow(c.str(EvalTables.RUN_ID), c.str(EvalTables.POLICY_VERSION),
                c.i64(EvalTables.STARTED_AT_NS), c.str(EvalTables.CONFIG), c.i64(EvalTables.EPISODE_COUNT));
    }

    static EvalEpisodeRow episode(ArrowRows.Cursor c) {
        return new EvalEpisodeRow(c.str(EvalTables.RUN_ID), c.str(TableSchemas.EPISODE_ID), c.str(TableSchemas.TASK),
                c.str(EvalTables.OBJECT), c.str(EvalTables.LIGHTING), c.str(TableSchemas.SCENE),
                c.str(TableSchemas.ROBOT_ID), c.bool(EvalTables.SUCCESS), c.i64(EvalTables.DURATION_NS),
                c.str(EvalTables.FAILURE_MODE), c.bool(EvalTables.INTERVENTION));
    }

    private static VectorSchemaRoot fill(Schema schema, BufferAllocator alloc, int rows,
            java.util.function.Consumer<VectorSchemaRoot> filler) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            filler.accept(root);
            for (FieldVector v : root.getFieldVectors()) {
                v.setValueCount(rows);
            }
            root.setRowCount(rows);
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    private static void str(VectorSchemaRoot root, String col, int i, String value) {
        VarCharVector v = (VarCharVector) root.getVector(col);
        if (v == null) {
            return; // a projection (column-scoped update) without this column
        }
        if (value == null) {
            v.setNull(i);
        } else {
            v.setSafe(i, value.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void i64(VectorSchemaRoot root, String col, int i, long value) {
        BigIntVector v = (BigIntVector) root.getVector(col);
        if (v != null) {
            v.setSafe(i, value);
        }
    }

    private static void bool(VectorSchemaRoot root, String col, int i, boolean value) {
        BitVector v = (BitVector) root.getVector(col);
        if (v != null) {
            v.setSafe(i, value ? 1 : 0);
        }
    }
}
