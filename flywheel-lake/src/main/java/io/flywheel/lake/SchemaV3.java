package io.flywheel.lake;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.error.FlywheelException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;

/**
 * Schema version 3's embedding columns, and the migration from version 3 to 4 ({@link Lake#migrate}).
 *
 * <p>Version 3 stored one embedding per episode in {@code episodes.embedding} list&lt;float32&gt;, with
 * {@code embedding_model} and {@code embedding_sha256} naming its model, and each frame image's in the list&lt;float32&gt;
 * field {@code embedding} of the {@code frames.images} struct. Vector search cannot use variable-length lists
 * (LanceDB: "Data type is not a vector"), and one column cannot hold two models' vectors.
 *
 * <p>The migration, one lake commit: each model named by {@code embedding_model} (with the dimension of its vectors
 * and its {@code embedding_sha256}) is registered ({@link EmbeddingModels}) with its columns; {@code episodes} and
 * {@code frames} are rewritten as one new version each (a {@code migrate} change), every row with the same values,
 * its vectors moved into its model's {@code emb_<key>} columns (the same float32 values, as fixed-size lists;
 * {@code emb_<key>_at_ns} = the episode's {@code enriched_at_ns}) and the old columns and struct field gone. The frames
 * table is rewritten whole because Lance cannot drop a field of a struct inside a list in place (dropping
 * {@code images.item.embedding} drops {@code images}). The rows are staged to Arrow files in the scratch folder
 * ({@code java.io.tmpdir}) first, then written as the tables' new data files before the commit lock is taken; killed
 * at any moment before its commit point, the migration leaves the lake at version 3 (its files are named by no
 * version) and runs again from the start. Older table versions (lake tags) keep their version 3 layout and stay
 * readable ({@link ArrowRows} reads both).
 */
final class SchemaV3 {
    /** Version 3's episode embedding column, list&lt;float32&gt;; also the name of its field of the images struct. */
    static final String EMBEDDING = "embedding";
    /** Version 3's episodes column naming the model of the episode's embeddings. */
    static final String EMBEDDING_MODEL = "embedding_model";
    /** Version 3's episodes column with the SHA-256 of that model's file. */
    static final String EMBEDDING_SHA256 = "embedding_sha256";
    /** Frames rows decoded per batch: the images column (hot JPEGs included) is streamed. */
    private static final long FRAME_BATCH_ROWS = 256;

    private SchemaV3() {}

    /** What the migration found and did. */
    record Result(EmbeddingModels models, long episodes, long frames, LakeSnapshot snapshot) {}

    /**
     * Migrates the lake (whose snapshot is at schema version 3) to version 4 in one lake commit.
     *
     * @param scratch the folder for the staged rows
     * @param from the schema version the migration started from (recorded as {@code migrated_from_schema_version})
     *
     * @throws LakeFormatException when the stored vectors of one model differ in dimension (naming the episode)
     */
    static Result migrate(Lake lake, Path scratch, String from) {
        LakeSnapshot head = lake.snapshot();
        Map<String, String> episodeModel = new HashMap<>();
        EmbeddingModels models = findModels(lake, episodeModel);
        boolean legacyEpisodes;
        boolean legacyFrames;
        try (LakeTable e = lake.table(TableSchemas.EPISODES); LakeTable f = lake.table(TableSchemas.FRAMES)) {
            legacyEpisodes = has(e.schema(), EMBEDDING) || has(e.schema(), EMBEDDING_MODEL);
            legacyFrames = imagesHaveEmbedding(f.schema());
        }
        Path dir;
        try {
            dir = Files.createTempDirectory(scratch, "migrate-v4");
        } catch (IOException x) {
            throw new StorageUnavailableException("cannot create a scratch folder in " + scratch + " for the migration: "
                    + x.getMessage(), x);
        }
        try (BufferAllocator alloc = lake.newAllocator("migrate-v4")) {
            LakeTransaction tx = lake.begin("migrate").summary("from_schema_version", "3");
            long[] counts = {0, 0};
            List<AutoCloseable> open = new ArrayList<>();
            try {
                if (legacyEpisodes || !models.isEmpty()) {
                    Path file = dir.resolve("episodes.arrow");
                    counts[0] = stageEpisodes(lake, models, file, alloc);
                    open.add(addRewrite(tx, TableSchemas.EPISODES, file, alloc));
                }
                if (legacyFrames || !models.isEmpty()) {
                    Path file = dir.resolve("frames.arrow");
                    counts[1] = stageFrames(lake, models, episodeModel, file, alloc);
                    open.add(addRewrite(tx, TableSchemas.FRAMES, file, alloc));
                }
                tx.propertyIfUnchanged(Lake.SCHEMA_VERSION, "4").property("migrated_from_schema_version", from);
                if (!models.isEmpty()) {
                    tx.propertyIfUnchanged(EmbeddingModels.PROPERTY, models.toJson());
                }
                CommitResult r = tx.commit();
                return new Result(models, counts[0], counts[1], r.snapshot());
            } finally {
                for (AutoCloseable c : open) {
                    try {
                        c.close();
                    } catch (Exception x) {
                        // the staged Arrow file's reader: nothing left to do
                    }
                }
            }
        } finally {
            try {
                LocalFiles.deleteTree(dir);
            } catch (IOException x) {
                // the scratch folder goes with the run's scratch folder
            }
        }
    }

    /**
     * The models of the version 3 episodes: id, dimension of the stored vectors (episodes' or, lacking any, their
     * frames'), file SHA-256; each gets its column.
     */
    private static EmbeddingModels findModels(Lake lake, Map<String, String> episodeModel) {
        Map<String, Integer> dims = new TreeMap<>();
        Map<String, String> sha = new TreeMap<>();
        Map<String, String> dimFrom = new HashMap<>();
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            if (!has(t.schema(), EMBEDDING_MODEL)) {
                return EmbeddingModels.none();
            }
            boolean withSha = has(t.schema(), EMBEDDING_SHA256);
            List<String> cols = new ArrayList<>(List.of("episode_id", EMBEDDING_MODEL));
            if (has(t.schema(), EMBEDDING)) {
                cols.add(EMBEDDING);
            }
            if (withSha) {
                cols.add(EMBEDDING_SHA256);
            }
            t.scanArrow(ScanRequest.builder().columns(cols).filter(EMBEDDING_MODEL + " IS NOT NULL").build(), b -> {
                for (int r = 0; r < b.getRowCount(); r++) {
                    String ep = text(b.getVector("episode_id"), r);
                    String m = text(b.getVector(EMBEDDING_MODEL), r);
                    episodeModel.put(ep, m);
                    sha.putIfAbsent(m, withSha ? text(b.getVector(EMBEDDING_SHA256), r) : "");
                    FieldVector emb = b.getVector(EMBEDDING);
                    if (emb instanceof ListVector l && !l.isNull(r)) {
                        int d = l.getElementEndIndex(r) - l.getElementStartIndex(r);
                        Integer known = dims.putIfAbsent(m, d);
                        if (known == null) {
                            dimFrom.put(m, "episode " + ep);
                        } else if (known != d) {
                            throw new LakeFormatException("cannot migrate " + lake.location() + ": episode " + ep
                                    + " has a " + d + "-d embedding of model " + m + ", " + dimFrom.get(m) + " a "
                                    + known + "-d one");
                        }
                    }
                }
            });
        }
        for (String m : sha.keySet()) {
            if (!dims.containsKey(m)) {
                frameDimension(lake, m, episodeModel).ifPresent(d -> dims.put(m, d));
            }
        }
        EmbeddingModels out = EmbeddingModels.none();
        long now = System.currentTimeMillis() * 1_000_000L;
        for (String m : sha.keySet()) {
            // a model none of whose episodes or frames holds a vector has no dimension to register: its episodes keep
            // their enrichment state, and the next enrich with the model embeds them
            if (dims.containsKey(m)) {
                out = out.with(new EmbeddingModel(m, dims.get(m), sha.get(m), out.columnFor(m), now));
            }
        }
        return out;
    }

    /** @return the dimension of the first frame image vector of the model's episodes, if any holds one */
    private static java.util.Optional<Integer> frameDimension(Lake lake, String model, Map<String, String> episodeModel) {
        List<String> eps = episodeModel.entrySet().stream().filter(e -> e.getValue().equals(model))
                .map(Map.Entry::getKey).toList();
        int[] found = {-1};
        try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
            if (!imagesHaveEmbedding(t.schema())) {
                return java.util.Optional.empty();
            }
            t.scanArrow(ScanRequest.builder().columns("images").filter(Sql.in("episode_id", eps))
                    .batchSize(FRAME_BATCH_ROWS).build(), b -> {
                ListVector images = (ListVector) b.getVector("images");
                ListVector emb = (ListVector) ((StructVector) images.getDataVector()).getChild(EMBEDDING);
                for (int i = 0; found[0] < 0 && i < emb.getValueCount(); i++) {
                    if (!emb.isNull(i)) {
                        found[0] = emb.getElementEndIndex(i) - emb.getElementStartIndex(i);
                    }
                }
            });
        }
        return found[0] < 0 ? java.util.Optional.empty() : java.util.Optional.of(found[0]);
    }

    private static long stageEpisodes(Lake lake, EmbeddingModels models, Path file, BufferAllocator alloc) {
        Schema schema = TableSchemas.withModels(TableSchemas.EPISODES, models);
        try (LakeTable t = lake.table(TableSchemas.EPISODES)) {
            long n = stage(t, schema, file, alloc, 4096, c -> ArrowRows.episode(c), null,
                    (rows, a) -> ArrowRows.episodes(keepRegistered(rows, models), schema, models, a));
            check(t, n);
            return n;
        }
    }

    private static long stageFrames(Lake lake, EmbeddingModels models, Map<String, String> episodeModel, Path file,
            BufferAllocator alloc) {
        Schema schema = TableSchemas.withModels(TableSchemas.FRAMES, models);
        try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
            long n = stage(t, schema, file, alloc, FRAME_BATCH_ROWS, c -> ArrowRows.frame(c), episodeModel::get,
                    (rows, a) -> ArrowRows.frames(rows, schema, models, a));
            check(t, n);
            return n;
        }
    }

    /** Episode rows without entries of models that got no column (no vector to take a dimension from). */
    private static List<EpisodeRow> keepRegistered(List<EpisodeRow> rows, EmbeddingModels models) {
        List<EpisodeRow> out = new ArrayList<>(rows.size());
        for (EpisodeRow r : rows) {
            Map<String, io.flywheel.rows.EpisodeEmbedding> keep = new TreeMap<>(r.embeddings());
            keep.keySet().removeIf(m -> models.get(m).isEmpty());
            out.add(keep.size() == r.embeddings().size() ? r : new EpisodeRow(r.episodeId(), r.recordingId(),
                    r.robotId(), r.task(), r.scene(), r.operator(), r.outcome(), r.startNs(), r.endNs(), r.durationNs(),
                    r.masterTopic(), r.frameCount(), r.qualityStatus(), r.qualityFlags(), r.qualityMetricsJson(),
                    r.metadataJson(), keep, r.enrichedAtNs(), r.enrichmentJson()));
        }
        return out;
    }

    @FunctionalInterface
    private interface Encode<R> {
        VectorSchemaRoot apply(List<R> rows, BufferAllocator alloc);
    }

    /**
     * Scans the table at the snapshot's version batch by batch, decodes each batch (version 3 layout), encodes it in
     * the version 4 schema and appends it to an Arrow IPC file.
     *
     * @return rows staged
     */
    private static <R> long stage(LakeTable t, Schema schema, Path file, BufferAllocator alloc, long batchRows,
            java.util.function.Function<ArrowRows.Cursor, R> decode, java.util.function.Function<String, String> legacy,
            Encode<R> encode) {
        long[] n = {0};
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                VectorSchemaRoot out = VectorSchemaRoot.create(schema, alloc);
                ArrowFileWriter w = new ArrowFileWriter(out, null, ch)) {
            w.start();
            List<R> rows = new ArrayList<>();
            t.scanArrow(ScanRequest.builder().batchSize(batchRows).build(), b -> {
                rows.clear();
                ArrowRows.decode(new ArrowRows.Cursor(b, EmbeddingModels.none(), legacy), decode, rows);
                try (VectorSchemaRoot enc = encode.apply(rows, alloc)) {
                    copy(enc, out);
                    w.writeBatch();
                } catch (IOException x) {
                    throw new StorageUnavailableException("cannot stage rows of " + t.uri() + " in " + file + ": "
                            + x.getMessage(), x);
                }
                n[0] += rows.size();
            });
            w.end();
        } catch (FlywheelException | IllegalArgumentException x) {
            throw x;
        } catch (IOException x) {
            throw new StorageUnavailableException("cannot stage rows of " + t.uri() + " in " + file + ": "
                    + x.getMessage(), x);
        }
        return n[0];
    }

    /** Moves {@code from}'s buffers into {@code to} (same schema): a transfer, no copy of the values. */
    private static void copy(VectorSchemaRoot from, VectorSchemaRoot to) {
        for (int i = 0; i < from.getFieldVectors().size(); i++) {
            from.getVector(i).makeTransferPair(to.getVector(i)).transfer();
        }
        to.setRowCount(from.getRowCount());
    }

    private static void check(LakeTable t, long staged) {
        if (staged != t.countRows()) {
            throw new StorageUnavailableException("table " + t.uri() + " at version " + t.version() + ": the migration"
                    + " read " + staged + " rows, the table has " + t.countRows() + "; nothing was committed");
        }
    }

    /** Adds the rewrite of {@code table} from the staged file to the transaction. @return the file's reader */
    private static AutoCloseable addRewrite(LakeTransaction tx, String table, Path file, BufferAllocator alloc) {
        try {
            FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
            ArrowFileReader r = new ArrowFileReader(ch, alloc);
            tx.rewrite(table, r);
            return () -> {
                r.close();
                ch.close();
            };
        } catch (IOException x) {
            throw new StorageUnavailableException("cannot read the staged rows " + file + ": " + x.getMessage(), x);
        }
    }

    static boolean has(Schema s, String column) {
        return s.getFields().stream().anyMatch(f -> f.getName().equals(column));
    }

    /** @return whether {@code frames.images}' struct has version 3's {@code embedding} field */
    static boolean imagesHaveEmbedding(Schema frames) {
        for (Field f : frames.getFields()) {
            if (f.getName().equals("images") && !f.getChildren().isEmpty()) {
                return f.getChildren().get(0).getChildren().stream().anyMatch(c -> c.getName().equals(EMBEDDING));
            }
        }
        return false;
    }

    private static String text(FieldVector v, int i) {
        return v == null || v.isNull(i) ? "" : new String(((VarCharVector) v).get(i), java.nio.charset.StandardCharsets.UTF_8);
    }
}
