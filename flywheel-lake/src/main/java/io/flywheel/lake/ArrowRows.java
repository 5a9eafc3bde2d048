package io.flywheel.lake;

import io.flywheel.rows.EpisodeEmbedding;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.StreamLabel;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.StreamMatch;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Converts the row records to and from Arrow vectors of the {@link TableSchemas} schemas, with the lake's embedding
 * model columns ({@link EmbeddingModels}): rows are written into a root of the table's actual schema (its model
 * columns filled from the rows' per-model embeddings, null where a row has none), and read from any projection that
 * has every fixed column. Reading also understands schema version 3's {@code episodes.embedding} /
 * {@code embedding_model} and {@code frames.images[].embedding} (list&lt;float32&gt;; tagged old versions, and
 * {@link Lake#migrate}): their vectors come back under the episode's model id.
 */
final class ArrowRows {
    private ArrowRows() {}

    // ---------------------------------------------------------------- writing

    static VectorSchemaRoot rawFiles(List<RawFileRow> rows, BufferAllocator alloc) {
        return rawFiles(rows, TableSchemas.rawFiles(), EmbeddingModels.none(), alloc);
    }

    /** Raw files rows in a root of {@code schema}: the table's, or a projection of it (only its columns written). */
    static VectorSchemaRoot rawFiles(List<RawFileRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            for (int i = 0; i < rows.size(); i++) {
                RawFileRow r = rows.get(i);
                str(root, "uri", i, r.uri());
                i64(root, "bytes", i, r.bytes());
                str(root, "sha256", i, r.sha256());
                str(root, "format", i, r.format());
                str(root, "recording_id", i, r.recordingId());
                str(root, "robot_id", i, r.robotId());
                i64(root, "recorded_at_ns", i, r.recordedAtNs());
                str(root, "topics", i, r.topicsJson());
                str(root, "ingest_status", i, r.ingestStatus());
                i64(root, "ingested_at_ns", i, r.ingestedAtNs());
            }
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    /** Episodes rows in a root of the episodes schema without model columns. */
    static VectorSchemaRoot episodes(List<EpisodeRow> rows, BufferAllocator alloc) {
        return episodes(rows, TableSchemas.episodes(), EmbeddingModels.none(), alloc);
    }

    /**
     * @param schema the table's schema (fixed columns, then model columns)
     * @param models the lake's models, naming the model of each {@code emb_<key>} column of {@code schema}
     * @throws IllegalArgumentException when a row's vector has another dimension than its model's column, or names a
     *     model the schema has no column of
     */
    static VectorSchemaRoot episodes(List<EpisodeRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            ListVector flags = (ListVector) root.getVector("quality_flags");
            for (int i = 0; i < rows.size(); i++) {
                EpisodeRow r = rows.get(i);
                str(root, "episode_id", i, r.episodeId());
                str(root, "recording_id", i, r.recordingId());
                str(root, "robot_id", i, r.robotId());
                str(root, "task", i, r.task());
                str(root, "scene", i, r.scene());
                str(root, "operator", i, r.operator());
                str(root, "outcome", i, r.outcome());
                i64(root, "start_ns", i, r.startNs());
                i64(root, "end_ns", i, r.endNs());
                i64(root, "duration_ns", i, r.durationNs());
                str(root, "master_topic", i, r.masterTopic());
                i64(root, "frame_count", i, r.frameCount());
                str(root, "quality_status", i, r.qualityStatus());
                strList(flags, i, r.qualityFlags());
                str(root, "quality_metrics", i, r.qualityMetricsJson());
                str(root, "metadata", i, r.metadataJson());
                i64(root, "enriched_at_ns", i, r.enrichedAtNs());
                str(root, "enrichment", i, r.enrichmentJson());
                strList((ListVector) root.getVector(TableSchemas.STATE_NAMES), i, r.stateNames());
                strList((ListVector) root.getVector(TableSchemas.ACTION_NAMES), i, r.actionNames());
                StreamLabel sl = r.streamLabel();
                str(root, TableSchemas.STREAM_OUTCOME, i, sl == null ? null : sl.outcome());
                str(root, TableSchemas.STREAM_RULE, i, sl == null ? null : sl.rule());
                str(root, TableSchemas.STREAM_RULES_VERSION, i, sl == null ? null : sl.rulesVersion());
                i64(root, TableSchemas.STREAM_LABELLED_AT_NS, i, sl == null ? null : sl.labelledAtNs());
                str(root, TableSchemas.STREAM_EPISODE_ID, i, sl == null ? null : sl.streamEpisodeId());
            }
            episodeModels(root, rows, models);
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    /** Frames rows in a root of the frames schema without model columns. */
    static VectorSchemaRoot frames(List<FrameRow> rows, BufferAllocator alloc) {
        return frames(rows, TableSchemas.frames(), EmbeddingModels.none(), alloc);
    }

    /** As {@link #episodes(List, Schema, EmbeddingModels, BufferAllocator)}, for frames. */
    static VectorSchemaRoot frames(List<FrameRow> rows, Schema schema, EmbeddingModels models,
            BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        try {
            root.allocateNew();
            FrameWriter w = new FrameWriter(root);
            for (int i = 0; i < rows.size(); i++) {
                w.row(i, rows.get(i));
            }
            frameModels(root, rows, models);
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    /**
     * Writes frames rows into the vectors of one root: every vector looked up once (not by name per value), and
     * the UTF-8 bytes of the repeating strings (episode ids, topics, URIs, compressions, stream names, flags)
     * encoded once.
     */
    private static final class FrameWriter {
        private final VarCharVector episodeId;
        private final IntVector frameIndex;
        private final BigIntVector timestamp;
        private final ListVector state;
        private final ListVector action;
        private final Float8Vector gripper;
        private final ListVector images;
        private final StructVector img;
        private final VarCharVector imgTopic;
        private final VarCharVector imgUri;
        private final BigIntVector imgChunkOffset;
        private final BigIntVector imgOffset;
        private final BigIntVector imgLength;
        private final VarCharVector imgCompression;
        private final BigIntVector imgResidual;
        private final ListVector streams;
        private final StructVector stm;
        private final VarCharVector stmName;
        private final BitVector stmMatched;
        private final BigIntVector stmResidual;
        private final ListVector flags;
        private final VarCharVector imgFormat;
        private final IntVector imgWidth;
        private final IntVector imgHeight;
        private final VarCharVector gripperState;
        private final VarCharVector phase;

        FrameWriter(VectorSchemaRoot root) {
            episodeId = (VarCharVector) root.getVector("episode_id");
            frameIndex = (IntVector) root.getVector("frame_index");
            timestamp = (BigIntVector) root.getVector("timestamp_ns");
            state = (ListVector) root.getVector("state");
            action = (ListVector) root.getVector("action");
            gripper = (Float8Vector) root.getVector("gripper");
            images = (ListVector) root.getVector("images");
            img = images == null ? null : (StructVector) images.getDataVector();
            imgTopic = img == null ? null : (VarCharVector) img.getChild("topic");
            imgUri = img == null ? null : (VarCharVector) img.getChild("raw_uri");
            imgChunkOffset = img == null ? null : (BigIntVector) img.getChild("chunk_offset");
            imgOffset = img == null ? null : (BigIntVector) img.getChild("offset");
            imgLength = img == null ? null : (BigIntVector) img.getChild("length");
            imgCompression = img == null ? null : (VarCharVector) img.getChild("compression");
            imgResidual = img == null ? null : (BigIntVector) img.getChild("residual_ns");
            streams = (ListVector) root.getVector("streams");
            stm = streams == null ? null : (StructVector) streams.getDataVector();
            stmName = stm == null ? null : (VarCharVector) stm.getChild("stream");
            stmMatched = stm == null ? null : (BitVector) stm.getChild("matched");
            stmResidual = stm == null ? null : (BigIntVector) stm.getChild("residual_ns");
            flags = (ListVector) root.getVector("flags");
            imgFormat = img == null ? null : (VarCharVector) img.getChild("format");
            imgWidth = img == null ? null : (IntVector) img.getChild("width");
            imgHeight = img == null ? null : (IntVector) img.getChild("height");
            gripperState = (VarCharVector) root.getVector("gripper_state");
            phase = (VarCharVector) root.getVector("phase");
        }

        /** Writes row i: every column of the root (a projection's absent columns are null fields, skipped). */
        void row(int i, FrameRow r) {
            str(episodeId, i, r.episodeId());
            if (frameIndex != null) {
                frameIndex.setSafe(i, r.frameIndex());
            }
            if (timestamp != null) {
                timestamp.setSafe(i, r.timestampNs());
            }
            if (state != null) {
                f64List(state, i, r.state());
            }
            if (action != null) {
                f64List(action, i, r.action());
            }
            if (gripper != null && r.gripper() == null) {
                gripper.setNull(i);
            } else if (gripper != null) {
                gripper.setSafe(i, r.gripper());
            }
            if (images != null) {
                images(i, r.images(), r.enrichment());
            }
            if (streams != null) {
                streams(i, r.streams());
            }
            if (flags != null) {
                strList(i, r.flags());
            }
            str(gripperState, i, r.gripperState());
            str(phase, i, r.phase());
        }

        // Per-row list fields in their own methods: one huge method took C2 about a second to compile on one core.

        private void images(int i, List<ImageLocator> list, List<ImageEnrichment> enrichment) {
            int at = images.startNewValue(i);
            for (int k = 0; k < list.size(); k++) {
                ImageLocator l = list.get(k);
                img.setIndexDefined(at);
                str(imgTopic, at, l.topic());
                str(imgUri, at, l.rawUri());
                imgChunkOffset.setSafe(at, l.chunkOffset());
                imgOffset.setSafe(at, l.offset());
                imgLength.setSafe(at, l.length());
                str(imgCompression, at, l.compression());
                i64(imgResidual, at, l.residualNs());
                str(imgFormat, at, l.format());
                i32(imgWidth, at, l.width());
                i32(imgHeight, at, l.height());
                enrichment(img, at, enrichment.isEmpty() ? null : enrichment.get(k));
                at++;
            }
            images.endValue(i, list.size());
        }

        private void streams(int i, List<StreamMatch> list) {
            int at = streams.startNewValue(i);
            for (StreamMatch m : list) {
                stm.setIndexDefined(at);
                str(stmName, at, m.stream());
                stmMatched.setSafe(at, m.matched() ? 1 : 0);
                i64(stmResidual, at, m.residualNs());
                at++;
            }
            streams.endValue(i, list.size());
        }

        private void strList(int i, List<String> values) {
            if (values == null) {
                flags.setNull(i);
                return;
            }
            VarCharVector data = (VarCharVector) flags.getDataVector();
            int at = flags.startNewValue(i);
            for (String s : values) {
                str(data, at++, s);
            }
            flags.endValue(i, values.size());
        }

        private void str(VarCharVector v, int i, String s) {
            if (v == null) {
                return;
            }
            if (s == null) {
                v.setNull(i);
                return;
            }
            v.setSafe(i, utf8(s));
        }

        /**
         * UTF-8 of a string, from a small cache keyed by identity: the repeating values of a batch (one episode
         * id per episode, one topic per stream, one URI per file) are the same String instances row after row.
         */
        private byte[] utf8(String s) {
            for (int k = 0; k < CACHE; k++) {
                if (keys[k] == s) {
                    return bytes[k];
                }
            }
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            keys[next] = s;
            bytes[next] = b;
            next = (next + 1) % CACHE;
            return b;
        }

        private static final int CACHE = 16;
        private final String[] keys = new String[CACHE];
        private final byte[][] bytes = new byte[CACHE][];
        private int next;
    }

    /** @return the model of each model column of the schema, by column name */
    private static Map<String, EmbeddingModel> modelColumns(Schema schema, EmbeddingModels models) {
        Map<String, EmbeddingModel> out = new HashMap<>();
        for (Field f : schema.getFields()) {
            models.byColumn(f.getName()).ifPresent(m -> out.put(f.getName(), m));
        }
        return out;
    }

    private static void episodeModels(VectorSchemaRoot root, List<EpisodeRow> rows, EmbeddingModels models) {
        Map<String, EmbeddingModel> cols = modelColumns(root.getSchema(), models);
        for (int i = 0; i < rows.size() && !projection(root, "episode_id"); i++) {
            for (String model : rows.get(i).embeddings().keySet()) {
                if (models.get(model).map(m -> !cols.containsKey(m.column())).orElse(true)) {
                    throw new IllegalArgumentException("episode " + rows.get(i).episodeId() + " has an embedding of"
                            + " model '" + model + "', which has no column in the episodes table (models: "
                            + models.all().stream().map(EmbeddingModel::id).toList() + ")");
                }
            }
        }
        for (EmbeddingModel m : cols.values()) {
            FixedSizeListVector vec = (FixedSizeListVector) root.getVector(m.column());
            FieldVector at = root.getVector(m.embeddedAtColumn());
            for (int i = 0; i < rows.size(); i++) {
                EpisodeEmbedding e = rows.get(i).embeddings().get(m.id());
                fixed(vec, i, e == null ? null : e.vector(), m, "episode " + rows.get(i).episodeId());
                if (at != null) {
                    i64(at, i, e == null ? null : e.embeddedAtNs());
                }
            }
        }
    }

    private static void frameModels(VectorSchemaRoot root, List<FrameRow> rows, EmbeddingModels models) {
        Map<String, EmbeddingModel> cols = modelColumns(root.getSchema(), models);
        for (FrameRow r : projection(root, "episode_id") ? List.<FrameRow>of() : rows) {
            for (ImageEnrichment e : r.enrichment()) {
                for (String model : e == null ? java.util.Set.<String>of() : e.embeddings().keySet()) {
                    if (models.get(model).map(m -> !cols.containsKey(m.column())).orElse(true)) {
                        throw new IllegalArgumentException("frame " + r.episodeId() + "#" + r.frameIndex() + " has an"
                                + " embedding of model '" + model + "', which has no column in the frames table");
                    }
                }
            }
        }
        for (EmbeddingModel m : cols.values()) {
            ListVector lv = (ListVector) root.getVector(m.column());
            FixedSizeListVector inner = (FixedSizeListVector) lv.getDataVector();
            for (int i = 0; i < rows.size(); i++) {
                FrameRow r = rows.get(i);
                boolean any = false;
                for (ImageEnrichment e : r.enrichment()) {
                    any |= e != null && e.embeddings().containsKey(m.id());
                }
                if (!any) {
                    lv.setNull(i);
                    continue;
                }
                int at = lv.startNewValue(i);
                for (int k = 0; k < r.images().size(); k++) {
                    ImageEnrichment e = r.enrichment().get(k);
                    fixed(inner, at + k, e == null ? null : e.embeddings().get(m.id()), m, "frame " + r.episodeId()
                            + "#" + r.frameIndex() + " camera " + r.images().get(k).topic());
                }
                lv.endValue(i, r.images().size());
            }
        }
    }

    /** Sets row i of a fixed_size_list&lt;float32, D&gt; vector (null for a null vector). */
    private static void fixed(FixedSizeListVector v, int i, float[] values, EmbeddingModel m, String what) {
        if (values == null) {
            v.setNull(i);
            return;
        }
        if (values.length != m.dimension()) {
            throw new IllegalArgumentException(what + ": model " + m.id() + " vector has " + values.length
                    + " values; column " + m.column() + " is float32[" + m.dimension() + "]");
        }
        v.setNotNull(i);
        Float4Vector d = (Float4Vector) v.getDataVector();
        int base = i * m.dimension();
        for (int k = 0; k < values.length; k++) {
            d.setSafe(base + k, values[k]);
        }
    }

    private static void enrichment(StructVector img, int at, ImageEnrichment e) {
        f64(img.getChild("sharpness"), at, e == null ? null : e.sharpness());
        bool(img.getChild("blurry"), at, e == null ? null : e.blurry());
        f64(img.getChild("mean_abs_diff"), at, e == null ? null : e.meanAbsDiff());
        bool(img.getChild("is_static"), at, e == null ? null : e.isStatic());
        i64(img.getChild("phash"), at, e == null ? null : e.phash());
        VarBinaryVector hot = (VarBinaryVector) img.getChild("hot_jpeg");
        if (e == null || e.hotJpeg() == null) {
            hot.setNull(at);
        } else {
            hot.setSafe(at, e.hotJpeg());
        }
        str(img.getChild("decode_error"), at, e == null ? null : e.decodeError());
    }

    private static void i32(FieldVector vec, int i, Integer v) {
        IntVector b = (IntVector) vec;
        if (v == null) {
            b.setNull(i);
        } else {
            b.setSafe(i, v);
        }
    }

    private static void f64(FieldVector vec, int i, Double v) {
        Float8Vector b = (Float8Vector) vec;
        if (v == null) {
            b.setNull(i);
        } else {
            b.setSafe(i, v);
        }
    }

    private static void bool(FieldVector vec, int i, Boolean v) {
        BitVector b = (BitVector) vec;
        if (v == null) {
            b.setNull(i);
        } else {
            b.setSafe(i, v ? 1 : 0);
        }
    }

    /**
     * @return whether the root holds only some of its table's columns (an update's: the key column is absent), whose
     *     absent columns are not written
     */
    private static boolean projection(VectorSchemaRoot root, String keyColumn) {
        return root.getVector(keyColumn) == null;
    }

    private static void str(VectorSchemaRoot root, String name, int i, String v) {
        FieldVector vec = root.getVector(name);
        if (vec != null) {
            str(vec, i, v);
        }
    }

    private static void str(FieldVector vec, int i, String v) {
        VarCharVector s = (VarCharVector) vec;
        if (v == null) {
            s.setNull(i);
        } else {
            s.setSafe(i, v.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void i64(VectorSchemaRoot root, String name, int i, Long v) {
        FieldVector vec = root.getVector(name);
        if (vec != null) {
            i64(vec, i, v);
        }
    }

    private static void i64(FieldVector vec, int i, Long v) {
        BigIntVector b = (BigIntVector) vec;
        if (v == null) {
            b.setNull(i);
        } else {
            b.setSafe(i, v);
        }
    }

    private static void strList(ListVector lv, int i, List<String> values) {
        if (lv == null) {
            return;
        }
        if (values == null) {
            lv.setNull(i);
            return;
        }
        VarCharVector data = (VarCharVector) lv.getDataVector();
        int at = lv.startNewValue(i);
        for (String s : values) {
            str(data, at++, s);
        }
        lv.endValue(i, values.size());
    }

    private static void f64List(ListVector lv, int i, double[] values) {
        if (values == null) {
            lv.setNull(i);
            return;
        }
        Float8Vector data = (Float8Vector) lv.getDataVector();
        int at = lv.startNewValue(i);
        for (double d : values) {
            data.setSafe(at++, d);
        }
        lv.endValue(i, values.length);
    }

    // ---------------------------------------------------------------- reading

    /** Decodes every row of {@code root} with {@code f}, appending to {@code out} (no model columns read). */
    static <T> void decode(VectorSchemaRoot root, Function<Cursor, T> f, List<T> out) {
        decode(root, EmbeddingModels.none(), f, out);
    }

    /** Decodes every row of {@code root} with {@code f}, reading the model columns of {@code models}. */
    static <T> void decode(VectorSchemaRoot root, EmbeddingModels models, Function<Cursor, T> f, List<T> out) {
        Cursor c = new Cursor(root, models, null);
        decode(c, f, out);
    }

    /** Decodes every row the cursor's root holds with {@code f}, appending to {@code out}. */
    static <T> void decode(Cursor c, Function<Cursor, T> f, List<T> out) {
        VectorSchemaRoot root = c.root;
        for (int i = 0; i < root.getRowCount(); i++) {
            c.row = i;
            out.add(f.apply(c));
        }
    }

    static RawFileRow rawFile(Cursor c) {
        return new RawFileRow(c.str("uri"), c.i64("bytes"), c.str("sha256"), c.str("format"),
                c.str("recording_id"), c.str("robot_id"), c.i64("recorded_at_ns"), c.str("topics"),
                c.str("ingest_status"), c.i64("ingested_at_ns"));
    }

    static EpisodeRow episode(Cursor c) {
        return new EpisodeRow(c.str("episode_id"), c.str("recording_id"), c.str("robot_id"), c.str("task"),
                c.str("scene"), c.str("operator"), c.str("outcome"), c.i64("start_ns"), c.i64("end_ns"),
                c.i64("duration_ns"), c.str("master_topic"), c.i64("frame_count"), c.str("quality_status"),
                c.strList("quality_flags"), c.str("quality_metrics"), c.str("metadata"), episodeEmbeddings(c),
                c.i64("enriched_at_ns"), c.str("enrichment"), c.strListOrNull(TableSchemas.STATE_NAMES),
                c.strListOrNull(TableSchemas.ACTION_NAMES), streamLabel(c));
    }

    /** The episode's stream label, or null when the batch has no stream columns or the episode no label. */
    private static StreamLabel streamLabel(Cursor c) {
        FieldVector o = c.root.getVector(TableSchemas.STREAM_OUTCOME);
        if (o == null || o.isNull(c.row)) {
            return null;
        }
        FieldVector at = c.root.getVector(TableSchemas.STREAM_LABELLED_AT_NS);
        Long when = at == null ? null : i64(at, c.row);
        return new StreamLabel(str(o, c.row), strOrEmpty(c, TableSchemas.STREAM_RULE),
                strOrEmpty(c, TableSchemas.STREAM_RULES_VERSION), when == null ? 0 : when,
                strOrEmpty(c, TableSchemas.STREAM_EPISODE_ID));
    }

    private static String strOrEmpty(Cursor c, String column) {
        FieldVector v = c.root.getVector(column);
        String s = v == null ? null : str(v, c.row);
        return s == null ? "" : s;
    }

    /** The episode's vectors: each model column of the batch, and a schema version 3 {@code embedding}. */
    private static Map<String, EpisodeEmbedding> episodeEmbeddings(Cursor c) {
        Map<String, EpisodeEmbedding> out = new TreeMap<>();
        for (EmbeddingModel m : c.episodeModels) {
            FixedSizeListVector v = (FixedSizeListVector) c.root.getVector(m.column());
            FieldVector at = c.root.getVector(m.embeddedAtColumn());
            Long when = at == null ? null : i64(at, c.row);
            float[] vec = fixed(v, c.row);
            if (when != null || vec != null) {
                out.put(m.id(), new EpisodeEmbedding(vec, when == null ? 0 : when));
            }
        }
        FieldVector legacy = c.root.getVector(SchemaV3.EMBEDDING);
        FieldVector legacyModel = c.root.getVector(SchemaV3.EMBEDDING_MODEL);
        if (legacy instanceof ListVector l && legacyModel != null && !legacyModel.isNull(c.row)) {
            Long when = c.i64("enriched_at_ns");
            out.put(str(legacyModel, c.row), new EpisodeEmbedding(f32List(l, c.row), when == null ? 0 : when));
        }
        return out;
    }

    static FrameRow frame(Cursor c) {
        List<ImageLocator> images = new ArrayList<>();
        List<ImageEnrichment> enrichment = new ArrayList<>();
        boolean enriched = false;
        ListVector lv = (ListVector) c.root.getVector("images");
        String episodeId = c.str("episode_id");
        if (!lv.isNull(c.row)) {
            StructVector sv = (StructVector) lv.getDataVector();
            String legacyModel = sv.getChild(SchemaV3.EMBEDDING) == null || c.legacyFrameModel == null ? null
                    : c.legacyFrameModel.apply(episodeId);
            int start = lv.getElementStartIndex(c.row);
            for (int k = start; k < lv.getElementEndIndex(c.row); k++) {
                images.add(new ImageLocator(str(sv.getChild("topic"), k), str(sv.getChild("raw_uri"), k),
                        i64(sv.getChild("chunk_offset"), k), i64(sv.getChild("offset"), k),
                        i64(sv.getChild("length"), k), str(sv.getChild("compression"), k),
                        i64(sv.getChild("residual_ns"), k), str(sv.getChild("format"), k), i32(sv.getChild("width"), k),
                        i32(sv.getChild("height"), k)));
                Map<String, float[]> emb = new TreeMap<>();
                for (EmbeddingModel m : c.frameModels) {
                    float[] v = frameVector((ListVector) c.root.getVector(m.column()), c.row, k - start);
                    if (v != null) {
                        emb.put(m.id(), v);
                    }
                }
                if (legacyModel != null) {
                    float[] v = f32List((ListVector) sv.getChild(SchemaV3.EMBEDDING), k);
                    if (v != null) {
                        emb.put(legacyModel, v);
                    }
                }
                ImageEnrichment e = enrichment(sv, k, emb);
                enriched |= e != null;
                enrichment.add(e);
            }
        }
        List<StreamMatch> streams = new ArrayList<>();
        lv = (ListVector) c.root.getVector("streams");
        if (!lv.isNull(c.row)) {
            StructVector sv = (StructVector) lv.getDataVector();
            for (int k = lv.getElementStartIndex(c.row); k < lv.getElementEndIndex(c.row); k++) {
                BitVector m = (BitVector) sv.getChild("matched");
                streams.add(new StreamMatch(str(sv.getChild("stream"), k), m.get(k) == 1,
                        i64(sv.getChild("residual_ns"), k)));
            }
        }
        List<String> flags = c.strList("flags");
        Float8Vector g = (Float8Vector) c.root.getVector("gripper");
        return new FrameRow(episodeId, ((IntVector) c.root.getVector("frame_index")).get(c.row),
                c.i64("timestamp_ns"), c.f64List("state"), c.f64List("action"),
                g.isNull(c.row) ? null : g.get(c.row), images, streams, flags == null ? List.of() : flags,
                enriched ? enrichment : null, c.str("gripper_state"), c.str("phase"));
    }

    private static ImageEnrichment enrichment(StructVector sv, int k, Map<String, float[]> embeddings) {
        Float8Vector sharp = (Float8Vector) sv.getChild("sharpness");
        Float8Vector mad = (Float8Vector) sv.getChild("mean_abs_diff");
        BitVector blurry = (BitVector) sv.getChild("blurry");
        BitVector stat = (BitVector) sv.getChild("is_static");
        VarBinaryVector hot = (VarBinaryVector) sv.getChild("hot_jpeg");
        Long phash = i64(sv.getChild("phash"), k);
        String err = str(sv.getChild("decode_error"), k);
        if (sharp.isNull(k) && phash == null && embeddings.isEmpty() && err == null && hot.isNull(k)) {
            return null;
        }
        return new ImageEnrichment(sharp.isNull(k) ? null : sharp.get(k), blurry.isNull(k) ? null : blurry.get(k) == 1,
                mad.isNull(k) ? null : mad.get(k), stat.isNull(k) ? null : stat.get(k) == 1, phash,
                hot.isNull(k) ? null : hot.get(k), embeddings, err);
    }

    /** @return entry {@code k} of row {@code row} of a list&lt;fixed_size_list&lt;float32&gt;&gt; column, or null */
    private static float[] frameVector(ListVector lv, int row, int k) {
        if (lv == null || lv.isNull(row)) {
            return null;
        }
        int at = lv.getElementStartIndex(row) + k;
        if (at >= lv.getElementEndIndex(row)) {
            return null;
        }
        return fixed((FixedSizeListVector) lv.getDataVector(), at);
    }

    /** @return row {@code i} of a fixed_size_list&lt;float32&gt; vector, or null */
    static float[] fixed(FixedSizeListVector v, int i) {
        if (v == null || v.isNull(i)) {
            return null;
        }
        Float4Vector d = (Float4Vector) v.getDataVector();
        int n = v.getListSize();
        float[] out = new float[n];
        int base = i * n;
        for (int k = 0; k < n; k++) {
            out[k] = d.get(base + k);
        }
        return out;
    }

    private static Integer i32(FieldVector v, int i) {
        IntVector b = (IntVector) v;
        return b.isNull(i) ? null : b.get(i);
    }

    private static float[] f32List(ListVector lv, int row) {
        if (lv.isNull(row)) {
            return null;
        }
        Float4Vector d = (Float4Vector) lv.getDataVector();
        int s = lv.getElementStartIndex(row);
        float[] out = new float[lv.getElementEndIndex(row) - s];
        for (int k = 0; k < out.length; k++) {
            out[k] = d.get(s + k);
        }
        return out;
    }

    private static String str(FieldVector v, int i) {
        VarCharVector s = (VarCharVector) v;
        return s.isNull(i) ? null : new String(s.get(i), StandardCharsets.UTF_8);
    }

    private static Long i64(FieldVector v, int i) {
        BigIntVector b = (BigIntVector) v;
        return b.isNull(i) ? null : b.get(i);
    }

    /** A row position over a batch, with the models whose columns the batch holds. */
    static final class Cursor {
        final VectorSchemaRoot root;
        final List<EmbeddingModel> episodeModels = new ArrayList<>();
        final List<EmbeddingModel> frameModels = new ArrayList<>();
        /** Episode id to the model of its schema version 3 {@code images[].embedding}, or null to skip them. */
        final Function<String, String> legacyFrameModel;
        int row;

        Cursor(VectorSchemaRoot root, EmbeddingModels models, Function<String, String> legacyFrameModel) {
            this.root = root;
            this.legacyFrameModel = legacyFrameModel;
            for (EmbeddingModel m : models.all()) {
                Field f = field(root.getSchema(), m.column());
                if (f == null) {
                    continue;
                }
                if (f.getType() instanceof ArrowType.FixedSizeList) {
                    episodeModels.add(m);
                } else if (f.getType() instanceof ArrowType.List) {
                    frameModels.add(m);
                }
            }
        }

        private static Field field(Schema s, String name) {
            for (Field f : s.getFields()) {
                if (f.getName().equals(name)) {
                    return f;
                }
            }
            return null;
        }

        String str(String name) {
            return ArrowRows.str(root.getVector(name), row);
        }

        Long i64(String name) {
            return ArrowRows.i64(root.getVector(name), row);
        }

        /** @return the int32 value of a not-null column */
        int i32(String name) {
            return ((IntVector) root.getVector(name)).get(row);
        }

        /** @return the float64 value of a not-null column */
        double f64(String name) {
            return ((Float8Vector) root.getVector(name)).get(row);
        }

        /** @return the bool value of a not-null column */
        boolean bool(String name) {
            return ((BitVector) root.getVector(name)).get(row) == 1;
        }

        /** @return the list column's value, or null when the batch has no such column (an older table version) */
        List<String> strListOrNull(String name) {
            return root.getVector(name) == null ? null : strList(name);
        }

        List<String> strList(String name) {
            ListVector lv = (ListVector) root.getVector(name);
            if (lv.isNull(row)) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (int k = lv.getElementStartIndex(row); k < lv.getElementEndIndex(row); k++) {
                out.add(ArrowRows.str(lv.getDataVector(), k));
            }
            return out;
        }

        double[] f64List(String name) {
            ListVector lv = (ListVector) root.getVector(name);
            if (lv.isNull(row)) {
                return null;
            }
            Float8Vector d = (Float8Vector) lv.getDataVector();
            int s = lv.getElementStartIndex(row);
            double[] out = new double[lv.getElementEndIndex(row) - s];
            for (int k = 0; k < out.length; k++) {
                out[k] = d.get(s + k);
            }
            return out;
        }
    }
}
