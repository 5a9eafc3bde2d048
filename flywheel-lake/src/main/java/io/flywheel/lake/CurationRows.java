package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.EpisodeGroupRow;
import io.flywheel.rows.FrameGroupRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.TrainsetEpisodeRow;
import io.flywheel.rows.TrainsetRow;
import io.flywheel.rows.TrainsetSampleRow;

/** The codecs of the {@link CurationTables}: row records to and from Arrow vectors of their schemas. */
final class CurationRows {
    private CurationRows() {}

    // ---------------------------------------------------------------- writing

    static VectorSchemaRoot trainsets(List<TrainsetRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            Columns c = new Columns(root);
            for (int i = 0; i < rows.size(); i++) {
                TrainsetRow r = rows.get(i);
                c.str(CurationTables.TAG, i, r.tag());
                c.i64(CurationTables.CREATED_AT_NS, i, r.createdAtNs());
                c.i64(CurationTables.SAMPLES_VERSION, i, r.samplesVersion());
                c.i64(CurationTables.EPISODES_VERSION, i, r.episodesVersion());
                c.i64(CurationTables.EPISODE_COUNT, i, r.episodeCount());
                c.i64(CurationTables.SAMPLE_COUNT, i, r.sampleCount());
                c.i64(CurationTables.BASE_COUNT, i, r.baseCount());
                c.i64(CurationTables.MINED_COUNT, i, r.minedCount());
                c.str(CurationTables.LINEAGE, i, r.lineageJson());
            }
        });
    }

    static VectorSchemaRoot trainsetEpisodes(List<TrainsetEpisodeRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            Columns c = new Columns(root);
            ListVector mined = (ListVector) root.getVector(CurationTables.MINED_BY);
            StructVector item = (StructVector) mined.getDataVector();
            VarCharVector q = (VarCharVector) item.getChild(CurationTables.MINED_BY_QUERY_EPISODE_ID);
            Float8Vector d = (Float8Vector) item.getChild(CurationTables.MINED_BY_DISTANCE);
            IntVector rank = (IntVector) item.getChild(CurationTables.MINED_BY_RANK);
            int child = 0;
            for (int i = 0; i < rows.size(); i++) {
                TrainsetEpisodeRow r = rows.get(i);
                c.i32(CurationTables.EPISODE_INDEX, i, r.episodeIndex());
                c.str(TableSchemas.EPISODE_ID, i, r.episodeId());
                c.str(TableSchemas.ROBOT_ID, i, r.robotId());
                c.str(TableSchemas.TASK, i, r.task());
                c.str(TableSchemas.SCENE, i, r.scene());
                c.str(CurationTables.OBJECT, i, r.object());
                c.str(TableSchemas.OUTCOME, i, r.outcome());
                ((BitVector) root.getVector(CurationTables.IN_BASE)).setSafe(i, r.inBase() ? 1 : 0);
                mined.startNewValue(i);
                for (TrainsetEpisodeRow.MinedBy m : r.minedBy()) {
                    item.setIndexDefined(child);
                    q.setSafe(child, m.queryEpisodeId().getBytes(StandardCharsets.UTF_8));
                    d.setSafe(child, m.distance());
                    rank.setSafe(child, m.rank());
                    child++;
                }
                mined.endValue(i, r.minedBy().size());
                c.i64(CurationTables.FIRST_SAMPLE, i, r.firstSample());
                c.i64(CurationTables.SAMPLE_COUNT, i, r.sampleCount());
            }
        });
    }

    /** Samples rows: the frames columns (model columns of {@code models} included), then the two leading columns. */
    static VectorSchemaRoot trainsetSamples(List<TrainsetSampleRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        List<FrameRow> frames = new ArrayList<>(rows.size());
        rows.forEach(r -> frames.add(r.frame()));
        VectorSchemaRoot root = ArrowRows.frames(frames, schema, models, alloc);
        try {
            BigIntVector sample = (BigIntVector) root.getVector(CurationTables.SAMPLE_INDEX);
            IntVector episode = (IntVector) root.getVector(CurationTables.EPISODE_INDEX);
            for (int i = 0; i < rows.size(); i++) {
                sample.setSafe(i, rows.get(i).sampleIndex());
                episode.setSafe(i, rows.get(i).episodeIndex());
            }
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    static VectorSchemaRoot episodeGroups(List<EpisodeGroupRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            Columns c = new Columns(root);
            for (int i = 0; i < rows.size(); i++) {
                EpisodeGroupRow r = rows.get(i);
                c.str(TableSchemas.EPISODE_ID, i, r.episodeId());
                c.str(CurationTables.REPRESENTATIVE_ID, i, r.representativeId());
                c.f64(CurationTables.DISTANCE, i, r.distance());
                c.i32(CurationTables.GROUP_SIZE, i, r.groupSize());
                c.f64(CurationTables.THRESHOLD, i, r.threshold());
                c.str(CurationTables.EMBEDDING_MODEL, i, r.embeddingModel());
            }
        });
    }

    static VectorSchemaRoot frameGroups(List<FrameGroupRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        return fill(schema, alloc, rows.size(), root -> {
            Columns c = new Columns(root);
            for (int i = 0; i < rows.size(); i++) {
                FrameGroupRow r = rows.get(i);
                c.str(TableSchemas.EPISODE_ID, i, r.episodeId());
                c.i32(TableSchemas.FRAME_INDEX, i, r.frameIndex());
                c.str(CurationTables.REPRESENTATIVE_EPISODE_ID, i, r.representativeEpisodeId());
                c.i32(CurationTables.REPRESENTATIVE_FRAME_INDEX, i, r.representativeFrameIndex());
                c.i32(CurationTables.HAMMING, i, r.hamming());
                c.i32(CurationTables.THRESHOLD, i, r.threshold());
            }
        });
    }

    private static VectorSchemaRoot fill(Schema schema, BufferAllocator alloc, int rows,
            java.util.function.Consumer<VectorSchemaRoot> filler) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            filler.accept(root);
            root.setRowCount(rows);
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    /** The vectors of a root looked up once each. */
    private static final class Columns {
        private final VectorSchemaRoot root;
        private final java.util.Map<String, org.apache.arrow.vector.FieldVector> byName = new java.util.HashMap<>();

        Columns(VectorSchemaRoot root) {
            this.root = root;
        }

        private org.apache.arrow.vector.FieldVector v(String name) {
            return byName.computeIfAbsent(name, root::getVector);
        }

        void str(String col, int i, String value) {
            VarCharVector v = (VarCharVector) v(col);
            if (value == null) {
                v.setNull(i);
            } else {
                v.setSafe(i, value.getBytes(StandardCharsets.UTF_8));
            }
        }

        void i64(String col, int i, long value) {
            ((BigIntVector) v(col)).setSafe(i, value);
        }

        void i32(String col, int i, int value) {
            ((IntVector) v(col)).setSafe(i, value);
        }

        void f64(String col, int i, double value) {
            ((Float8Vector) v(col)).setSafe(i, value);
        }
    }

    // ---------------------------------------------------------------- reading

    static TrainsetRow trainset(ArrowRows.Cursor c) {
        return new TrainsetRow(c.str(CurationTables.TAG), c.i64(CurationTables.CREATED_AT_NS), c.i64(CurationTables.SAMPLES_VERSION),
                c.i64(CurationTables.EPISODES_VERSION), c.i64(CurationTables.EPISODE_COUNT), c.i64(CurationTables.SAMPLE_COUNT), c.i64(CurationTables.BASE_COUNT),
                c.i64(CurationTables.MINED_COUNT), c.str(CurationTables.LINEAGE));
    }

    static TrainsetEpisodeRow trainsetEpisode(ArrowRows.Cursor c) {
        List<TrainsetEpisodeRow.MinedBy> by = new ArrayList<>();
        ListVector mined = (ListVector) c.root.getVector(CurationTables.MINED_BY);
        if (!mined.isNull(c.row)) {
            StructVector item = (StructVector) mined.getDataVector();
            VarCharVector q = (VarCharVector) item.getChild(CurationTables.MINED_BY_QUERY_EPISODE_ID);
            Float8Vector d = (Float8Vector) item.getChild(CurationTables.MINED_BY_DISTANCE);
            IntVector rank = (IntVector) item.getChild(CurationTables.MINED_BY_RANK);
            for (int k = mined.getElementStartIndex(c.row); k < mined.getElementEndIndex(c.row); k++) {
                by.add(new TrainsetEpisodeRow.MinedBy(new String(q.get(k), StandardCharsets.UTF_8), d.get(k),
                        rank.get(k)));
            }
        }
        return new TrainsetEpisodeRow(c.i32(CurationTables.EPISODE_INDEX), c.str(TableSchemas.EPISODE_ID), c.str(TableSchemas.ROBOT_ID), c.str(TableSchemas.TASK),
                c.str(TableSchemas.SCENE), c.str(CurationTables.OBJECT), c.str(TableSchemas.OUTCOME), c.bool(CurationTables.IN_BASE), by, c.i64(CurationTables.FIRST_SAMPLE),
                c.i64(CurationTables.SAMPLE_COUNT));
    }

    static TrainsetSampleRow trainsetSample(ArrowRows.Cursor c) {
        return new TrainsetSampleRow(c.i64(CurationTables.SAMPLE_INDEX), c.i32(CurationTables.EPISODE_INDEX),
                ArrowRows.frame(c));
    }

    static EpisodeGroupRow episodeGroup(ArrowRows.Cursor c) {
        return new EpisodeGroupRow(c.str(TableSchemas.EPISODE_ID), c.str(CurationTables.REPRESENTATIVE_ID), c.f64(CurationTables.DISTANCE),
                c.i32(CurationTables.GROUP_SIZE), c.f64(CurationTables.THRESHOLD), c.str(CurationTables.EMBEDDING_MODEL));
    }

    static FrameGroupRow frameGroup(ArrowRows.Cursor c) {
        return new FrameGroupRow(c.str(TableSchemas.EPISODE_ID), c.i32(TableSchemas.FRAME_INDEX), c.str(CurationTables.REPRESENTATIVE_EPISODE_ID),
                c.i32(CurationTables.REPRESENTATIVE_FRAME_INDEX), c.i32(CurationTables.HAMMING), c.i32(CurationTables.THRESHOLD));
    }
}
