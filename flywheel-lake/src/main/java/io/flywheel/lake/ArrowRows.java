package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.rows.ImageLocator;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.StreamMatch;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/** Converts the row records to and from Arrow vectors of the {@link TableSchemas} schemas. */
final class ArrowRows {
    private ArrowRows() {}

    // ---------------------------------------------------------------- writing

    static VectorSchemaRoot rawFiles(List<RawFileRow> rows, BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(TableSchemas.rawFiles(), alloc);
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

    static VectorSchemaRoot episodes(List<EpisodeRow> rows, BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(TableSchemas.episodes(), alloc);
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
                f32List((ListVector) root.getVector("embedding"), i, r.embedding());
                str(root, "embedding_model", i, r.embeddingModel());
                str(root, "embedding_sha256", i, r.embeddingSha256());
                i64(root, "enriched_at_ns", i, r.enrichedAtNs());
                str(root, "enrichment", i, r.enrichmentJson());
            }
            root.setRowCount(rows.size());
            return root;
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
    }

    static VectorSchemaRoot frames(List<FrameRow> rows, BufferAllocator alloc) {
        VectorSchemaRoot root = VectorSchemaRoot.create(TableSchemas.frames(), alloc);
        try {
            root.allocateNew();
            FrameWriter w = new FrameWriter(root);
            for (int i = 0; i < rows.size(); i++) {
                w.row(i, rows.get(i));
            }
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
            img = (StructVector) images.getDataVector();
            imgTopic = (VarCharVector) img.getChild("topic");
            imgUri = (VarCharVector) img.getChild("raw_uri");
            imgChunkOffset = (BigIntVector) img.getChild("chunk_offset");
            imgOffset = (BigIntVector) img.getChild("offset");
            imgLength = (BigIntVector) img.getChild("length");
            imgCompression = (VarCharVector) img.getChild("compression");
            imgResidual = (BigIntVector) img.getChild("residual_ns");
            streams = (ListVector) root.getVector("streams");
            stm = (StructVector) streams.getDataVector();
            stmName = (VarCharVector) stm.getChild("stream");
            stmMatched = (BitVector) stm.getChild("matched");
            stmResidual = (BigIntVector) stm.getChild("residual_ns");
            flags = (ListVector) root.getVector("flags");
            imgFormat = (VarCharVector) img.getChild("format");
            imgWidth = (IntVector) img.getChild("width");
            imgHeight = (IntVector) img.getChild("height");
            gripperState = (VarCharVector) root.getVector("gripper_state");
            phase = (VarCharVector) root.getVector("phase");
        }

        void row(int i, FrameRow r) {
            str(episodeId, i, r.episodeId());
            frameIndex.setSafe(i, r.frameIndex());
            timestamp.setSafe(i, r.timestampNs());
            f64List(state, i, r.state());
            f64List(action, i, r.action());
            if (r.gripper() == null) {
                gripper.setNull(i);
            } else {
                gripper.setSafe(i, r.gripper());
            }
            images(i, r.images(), r.enrichment());
            streams(i, r.streams());
            strList(i, r.flags());
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
        f32List((ListVector) img.getChild("embedding"), at, e == null ? null : e.embedding());
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

    private static void f32List(ListVector lv, int i, float[] values) {
        if (values == null) {
            lv.setNull(i);
            return;
        }
        Float4Vector data = (Float4Vector) lv.getDataVector();
        int at = lv.startNewValue(i);
        for (float f : values) {
            data.setSafe(at++, f);
        }
        lv.endValue(i, values.length);
    }

    private static void str(VectorSchemaRoot root, String name, int i, String v) {
        str(root.getVector(name), i, v);
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
        i64(root.getVector(name), i, v);
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

    /** Decodes every row of {@code root} with {@code f}, appending to {@code out}. */
    static <T> void decode(VectorSchemaRoot root, Function<Cursor, T> f, List<T> out) {
        Cursor c = new Cursor(root);
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
                c.strList("quality_flags"), c.str("quality_metrics"), c.str("metadata"),
                f32List((ListVector) c.root.getVector("embedding"), c.row), c.str("embedding_model"),
                c.str("embedding_sha256"), c.i64("enriched_at_ns"), c.str("enrichment"));
    }

    static FrameRow frame(Cursor c) {
        List<ImageLocator> images = new ArrayList<>();
        List<ImageEnrichment> enrichment = new ArrayList<>();
        boolean enriched = false;
        ListVector lv = (ListVector) c.root.getVector("images");
        if (!lv.isNull(c.row)) {
            StructVector sv = (StructVector) lv.getDataVector();
            for (int k = lv.getElementStartIndex(c.row); k < lv.getElementEndIndex(c.row); k++) {
                images.add(new ImageLocator(str(sv.getChild("topic"), k), str(sv.getChild("raw_uri"), k),
                        i64(sv.getChild("chunk_offset"), k), i64(sv.getChild("offset"), k),
                        i64(sv.getChild("length"), k), str(sv.getChild("compression"), k),
                        i64(sv.getChild("residual_ns"), k), str(sv.getChild("format"), k), i32(sv.getChild("width"), k),
                        i32(sv.getChild("height"), k)));
                ImageEnrichment e = enrichment(sv, k);
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
        return new FrameRow(c.str("episode_id"), ((IntVector) c.root.getVector("frame_index")).get(c.row),
                c.i64("timestamp_ns"), c.f64List("state"), c.f64List("action"),
                g.isNull(c.row) ? null : g.get(c.row), images, streams, flags == null ? List.of() : flags,
                enriched ? enrichment : null, c.str("gripper_state"), c.str("phase"));
    }

    private static ImageEnrichment enrichment(StructVector sv, int k) {
        Float8Vector sharp = (Float8Vector) sv.getChild("sharpness");
        Float8Vector mad = (Float8Vector) sv.getChild("mean_abs_diff");
        BitVector blurry = (BitVector) sv.getChild("blurry");
        BitVector stat = (BitVector) sv.getChild("is_static");
        VarBinaryVector hot = (VarBinaryVector) sv.getChild("hot_jpeg");
        Long phash = i64(sv.getChild("phash"), k);
        float[] emb = f32List((ListVector) sv.getChild("embedding"), k);
        String err = str(sv.getChild("decode_error"), k);
        if (sharp.isNull(k) && phash == null && emb == null && err == null && hot.isNull(k)) {
            return null;
        }
        return new ImageEnrichment(sharp.isNull(k) ? null : sharp.get(k), blurry.isNull(k) ? null : blurry.get(k) == 1,
                mad.isNull(k) ? null : mad.get(k), stat.isNull(k) ? null : stat.get(k) == 1, phash,
                hot.isNull(k) ? null : hot.get(k), emb, err);
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

    /** A row position over a batch. */
    static final class Cursor {
        final VectorSchemaRoot root;
        int row;

        Cursor(VectorSchemaRoot root) {
            this.root = root;
        }

        String str(String name) {
            return ArrowRows.str(root.getVector(name), row);
        }

        Long i64(String name) {
            return ArrowRows.i64(root.getVector(name), row);
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
