package io.flywheel.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.merge.MergeInsertParams;
import org.lance.merge.MergeInsertResult;

/**
 * Collects the changes of one command and commits them table by table, once per table, in the
 * fixed order {@code frames}, {@code episodes}, {@code raw_files} ({@link TableSchemas#COMMIT_ORDER}).
 * Each table commit is atomic (Lance's manifest commit: data files are written first, then a new
 * manifest is published in one step), so a process killed at any moment leaves every table at a
 * previous valid version with no partial rows visible.
 *
 * <h2>Operations (one kind per table per transaction)</h2>
 * <ul>
 *   <li>{@link #putFrames}, {@link #putEpisodes}, {@link #putRawFiles}: write rows, replacing
 *       any rows whose key is already present (frames and episodes by {@code episode_id},
 *       raw_files by {@code sha256}). When no key is present (the normal ingest) this is one
 *       append commit. When some are (re-ingest after a crash), the old rows are deleted in one
 *       commit and the new ones appended in a second.</li>
 *   <li>{@link #upsertEpisodes}: Lance merge-insert on {@code episode_id} (update the matched rows,
 *       insert the others), one commit; for quality re-runs and enrich.</li>
 *   <li>{@link #upsertFrames}: the same on {@code (episode_id, frame_index)}; for enrich.</li>
 *   <li>{@link #addColumns}: new all-null columns (schema evolution for enrichment), one commit.</li>
 * </ul>
 *
 * <h2>Crash between tables</h2>
 * The tables are three datasets, so there is no commit spanning them. A process killed after
 * {@code frames} committed but before {@code raw_files} leaves frames (and maybe episodes) whose
 * raw file is not in {@code raw_files}. Readers see such frames only if they read {@code frames}
 * without joining {@code episodes}; {@code episodes} is the index of what is visible, and
 * {@code raw_files} (written last) marks a file as done. Re-running the ingest repairs it: the
 * file's sha256 is not in raw_files, so it is ingested again; episode ids are deterministic, so
 * the put operations replace the orphan rows instead of duplicating them. Ingest must therefore
 * (1) derive episode ids from the content hash and (2) put a file's frames, episodes and raw_files
 * rows in one transaction.
 */
public final class LakeTransaction {
    private enum Kind { PUT, UPSERT, ADD_COLUMNS }

    private record Op(Kind kind, List<Object> rows, List<Field> fields) {}

    private final Lake lake;
    private final Map<String, Op> ops = new LinkedHashMap<>();
    private boolean committed;

    LakeTransaction(Lake lake) {
        this.lake = lake;
    }

    /** Adds frames rows (replacing rows of the same episode_id already in the table). */
    public LakeTransaction putFrames(List<FrameRow> rows) {
        return add(TableSchemas.FRAMES, Kind.PUT, rows, null);
    }

    /** Adds episodes rows (replacing rows with the same episode_id). */
    public LakeTransaction putEpisodes(List<EpisodeRow> rows) {
        return add(TableSchemas.EPISODES, Kind.PUT, rows, null);
    }

    /** Adds raw_files rows (replacing rows with the same sha256). */
    public LakeTransaction putRawFiles(List<RawFileRow> rows) {
        return add(TableSchemas.RAW_FILES, Kind.PUT, rows, null);
    }

    /**
     * Updates frames by {@code (episode_id, frame_index)}, inserting those not present, in one merge-insert commit
     * (atomic: unlike {@link #putFrames}'s delete + append, no moment exists at which the episode's frames are
     * gone). Used by enrich to rewrite enriched frames. Lance joins the new rows against the table, so the cost
     * grows with the table, not only with the rows written.
     */
    public LakeTransaction upsertFrames(List<FrameRow> rows) {
        return add(TableSchemas.FRAMES, Kind.UPSERT, rows, null);
    }

    /** Updates episodes by episode_id, inserting those not present, in one merge-insert commit. */
    public LakeTransaction upsertEpisodes(List<EpisodeRow> rows) {
        return add(TableSchemas.EPISODES, Kind.UPSERT, rows, null);
    }

    /**
     * Adds nullable columns, all null in existing rows.
     *
     * @param table table name
     * @param fields new fields (names not yet in the table)
     */
    public LakeTransaction addColumns(String table, List<Field> fields) {
        return add(table, Kind.ADD_COLUMNS, List.of(), fields);
    }

    private LakeTransaction add(String table, Kind kind, List<?> rows, List<Field> fields) {
        if (committed) {
            throw new IllegalStateException("transaction on " + lake.location() + " is already committed");
        }
        TableSchemas.of(table);
        Op op = ops.get(table);
        if (op == null) {
            ops.put(table, new Op(kind, new ArrayList<>(rows), fields == null ? new ArrayList<>() : new ArrayList<>(fields)));
        } else if (op.kind() != kind) {
            throw new IllegalStateException("table " + table + " already has a " + op.kind()
                    + " in this transaction; one kind of change per table per commit (got " + kind + ")");
        } else {
            op.rows().addAll(rows);
            if (fields != null) {
                op.fields().addAll(fields);
            }
        }
        return this;
    }

    /**
     * Commits every table, in {@link TableSchemas#COMMIT_ORDER}. Tables without changes are not
     * touched. Call once.
     *
     * @return per-table versions and row counts
     * @throws LakeException when a table commit fails; tables before it stay committed, it and the
     *     ones after keep their previous version (see the class comment for the repair)
     */
    public CommitResult commit() {
        if (committed) {
            throw new IllegalStateException("transaction on " + lake.location() + " is already committed");
        }
        committed = true;
        List<CommitResult.TableCommit> results = new ArrayList<>();
        for (String table : TableSchemas.COMMIT_ORDER) {
            Op op = ops.get(table);
            if (op != null) {
                results.add(commitTable(table, op));
            }
        }
        return new CommitResult(results);
    }

    private CommitResult.TableCommit commitTable(String table, Op op) {
        BufferAllocator alloc = lake.allocator().newChildAllocator("commit-" + table, 0, Long.MAX_VALUE);
        try (alloc) {
            Dataset ds = lake.openDataset(table, null, alloc);
            try {
                long from = ds.version();
                switch (op.kind()) {
                    case ADD_COLUMNS -> {
                        ds.addColumns(op.fields());
                        return new CommitResult.TableCommit(table, from, ds.latestVersion(), 0, 0);
                    }
                    case UPSERT -> {
                        try (VectorSchemaRoot root = toArrow(table, op.rows(), alloc);
                                ArrowArrayStream stream = ArrowArrayStream.allocateNew(alloc)) {
                            Data.exportArrayStream(alloc, new RootReader(root, alloc), stream);
                            List<String> on = table.equals(TableSchemas.FRAMES) ? List.of("episode_id", "frame_index")
                                    : List.of(TableSchemas.REPLACE_KEY.get(table));
                            MergeInsertParams p = new MergeInsertParams(on)
                                    .withMatchedUpdateAll().withNotMatched(MergeInsertParams.WhenNotMatched.InsertAll);
                            MergeInsertResult r = ds.mergeInsert(p, stream);
                            try (Dataset after = r.dataset()) {
                                return new CommitResult.TableCommit(table, from, after.version(),
                                        r.stats().numInsertedRows() + r.stats().numUpdatedRows(), 0);
                            }
                        }
                    }
                    default -> {
                        if (op.rows().isEmpty()) {
                            return new CommitResult.TableCommit(table, from, from, 0, 0);
                        }
                        try (VectorSchemaRoot root = toArrow(table, op.rows(), alloc)) {
                            String keyCol = TableSchemas.REPLACE_KEY.get(table);
                            String filter = Sql.in(keyCol, distinctKeys(root, keyCol));
                            long replaced = ds.countRows(filter);
                            if (replaced > 0) {
                                ds.delete(filter);
                            }
                            try (Dataset after = Dataset.write().allocator(alloc).reader(new RootReader(root, alloc))
                                    .uri(lake.tableUri(table)).mode(WriteParams.WriteMode.APPEND)
                                    .storageOptions(lake.storage().options()).execute()) {
                                return new CommitResult.TableCommit(table, from, after.version(), root.getRowCount(),
                                        replaced);
                            }
                        }
                    }
                }
            } finally {
                ds.close();
            }
        } catch (LakeException e) {
            throw e;
        } catch (Exception e) { // Lance's JNI also throws undeclared IOException
            throw new LakeException("commit of table " + lake.tableUri(table) + " failed (" + op.kind() + ", "
                    + op.rows().size() + " rows): " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static VectorSchemaRoot toArrow(String table, List<Object> rows, BufferAllocator alloc) {
        BiFunction<List<?>, BufferAllocator, VectorSchemaRoot> f = switch (table) {
            case TableSchemas.RAW_FILES -> (r, a) -> ArrowRows.rawFiles((List<RawFileRow>) r, a);
            case TableSchemas.EPISODES -> (r, a) -> ArrowRows.episodes((List<EpisodeRow>) r, a);
            default -> (r, a) -> ArrowRows.frames((List<FrameRow>) r, a);
        };
        return f.apply(rows, alloc);
    }

    private static List<String> distinctKeys(VectorSchemaRoot root, String column) {
        FieldVector v = root.getVector(column);
        LinkedHashSet<String> keys = new LinkedHashSet<>();
        VarCharVector s = (VarCharVector) v;
        for (int i = 0; i < root.getRowCount(); i++) {
            keys.add(new String(s.get(i), java.nio.charset.StandardCharsets.UTF_8));
        }
        return new ArrayList<>(keys);
    }
}
