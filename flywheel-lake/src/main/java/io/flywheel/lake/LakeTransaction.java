package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * A change to any set of the lake's tables, tags and properties, built up and then committed once: after
 * {@link #commit()} every reader that opens the lake sees all of it, and before it (or when the commit fails, or
 * the process is killed at any instant) none of it. One transaction per unit of work: the ingest of one recording,
 * one enrich batch, one dedup, one training-set build, one label batch.
 *
 * <h2>Changes (one per table per transaction)</h2>
 * <ul>
 *   <li>{@link #putFrames}, {@link #putEpisodes}, {@link #putRawFiles}: rows appended, replacing rows with the same
 *       partition key (frames and episodes: {@code episode_id}; raw_files: {@code sha256});
 *       {@link #appendFrames} and friends when the keys are known to be new.</li>
 *   <li>{@link #updateEpisodes}, {@link #updateFrames}: column-scoped updates of existing rows. The update names the
 *       columns it changes; every other column keeps its bytes (Lance writes new data files of those columns
 *       only). Quality status, enrichment, labels and outcomes are written this way, so an update of one never
 *       touches another.</li>
 *   <li>{@link #append(TypedTable, Iterable, Set)}, {@link #overwrite(TypedTable, Iterable)}: typed rows of a
 *       curation table ({@link CurationTables}: training sets, duplicate groups); an overwrite replaces the table's
 *       rows (and schema) as a new version. {@link #overwrite(String, RowCopy)}: a table's rows replaced by rows of
 *       another table taken by offset (a training set's samples, copied from {@code frames} inside the lake).</li>
 *   <li>{@link #addColumns}: schema evolution, new nullable columns (an embedding model's columns:
 *       {@link Lake#registerModel}).</li>
 *   <li>{@link #indexVectors}: the vector index of an embedding column, built or refreshed.</li>
 *   <li>{@link #tag}: a lake tag pinning tables at their versions in this commit (immutable once committed).</li>
 *   <li>{@link #property}: a lake property ({@link #propertyIfUnchanged}: only if no commit changed it since the
 *       base).</li>
 * </ul>
 *
 * <h2>Concurrency</h2>
 * Transactions of other threads and processes may commit between {@link Lake#begin} and {@link #commit()}. At commit
 * the transaction is checked against each of them: changes that commute (appends of other keys, updates of other
 * rows or of disjoint columns, an overwrite of a table) are applied on top, staged again with backoff where their
 * data files depend on rewritten fragments; changes that do not (the same rows written twice, an update of a row
 * replaced meanwhile, an existing tag) fail with {@link CommitConflictException}, naming the table and both versions.
 * The protocol is described in {@link Lake}.
 */
public final class LakeTransaction {
    private final Lake lake;
    private final String operation;
    private final LakeSnapshot base;
    private final Map<String, PendingChange> changes = new LinkedHashMap<>();
    private final Map<String, Map<String, Long>> tags = new LinkedHashMap<>();
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final Set<String> guarded = new java.util.LinkedHashSet<>();
    private final Map<String, String> summary = new LinkedHashMap<>();
    private boolean committed;

    LakeTransaction(Lake lake, String operation, LakeSnapshot base) {
        this.lake = lake;
        this.operation = operation;
        this.base = base;
    }

    /** @return the snapshot this transaction reads and is checked against at commit */
    public LakeSnapshot base() {
        return base;
    }

    /** @return the operation name recorded in the commit point */
    public String operation() {
        return operation;
    }

    /** Adds frames rows, replacing the frames of any episode_id already present (whole episodes). */
    public LakeTransaction putFrames(List<FrameRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.FRAMES, rows, true));
    }

    /** Adds episodes rows, replacing rows with the same episode_id. */
    public LakeTransaction putEpisodes(List<EpisodeRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.EPISODES, rows, true));
    }

    /** Adds raw_files rows, replacing rows with the same sha256. */
    public LakeTransaction putRawFiles(List<RawFileRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.RAW_FILES, rows, true));
    }

    /**
     * Appends frames rows of episodes not in the table (no scan for their keys, unlike {@link #putFrames}: for a
     * table as large as frames, the difference is a scan of its episode_id column per commit). A concurrent commit of
     * the same episodes is still a conflict.
     */
    public LakeTransaction appendFrames(List<FrameRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.FRAMES, rows, false));
    }

    /** Appends episodes rows whose episode_id is not in the table, as {@link #appendFrames}. */
    public LakeTransaction appendEpisodes(List<EpisodeRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.EPISODES, rows, false));
    }

    /** Appends raw_files rows whose sha256 is not in the table, as {@link #appendFrames}. */
    public LakeTransaction appendRawFiles(List<RawFileRow> rows) {
        return add(new PendingChange.PutRows<>(Codecs.RAW_FILES, rows, false));
    }

    /**
     * Updates the named columns of existing episodes (matched by episode_id) to the values in {@code rows}; every
     * other column of those rows, and every other row, keeps its bytes.
     *
     * @param columns columns of {@code episodes} to write (not {@code episode_id}); a model's columns
     *     ({@link TableSchemas#episodeModelColumns}) are written from the rows' {@link EpisodeRow#embeddings()}
     * @param rows the new values; only the named columns are read from them
     * @throws IllegalArgumentException when a column is not in the table or is the key (a model column the table's
     *     schema lacks: at commit, when the update is staged against the table's schema)
     */
    public LakeTransaction updateEpisodes(List<String> columns, List<EpisodeRow> rows) {
        return add(new PendingChange.UpdateColumns<>(Codecs.EPISODES, columns, rows));
    }

    /**
     * Updates the named columns of existing frames (matched by episode_id and frame_index), as
     * {@link #updateEpisodes}.
     */
    public LakeTransaction updateFrames(List<String> columns, List<FrameRow> rows) {
        return add(new PendingChange.UpdateColumns<>(Codecs.FRAMES, columns, rows));
    }

    /**
     * Adds nullable columns to a table, null in every existing row (schema evolution; no data is rewritten). A change
     * of its own: the columns' values are written by a later transaction.
     *
     * @param table table name
     * @param fields the new columns, nullable, names not in the table
     */
    LakeTransaction addColumns(String table, List<org.apache.arrow.vector.types.pojo.Field> fields) {
        return add(new PendingChange.AddColumns(table, fields));
    }

    /**
     * Builds or refreshes the vector index of an embedding column ({@code index}, committed by Lance under the commit
     * lock on the table's latest version): without an index, an IVF-PQ index named {@code indexName} once the column
     * holds {@link VectorIndexOptions#flatBelowRows()} vectors (below that a flat scan is searched and nothing is
     * written); with one, the rows appended or updated since are added to it (Lance's index optimisation). Commutes
     * with every concurrent change but a migration.
     *
     * @param table the table, e.g. {@code episodes}
     * @param column its fixed_size_list&lt;float32, D&gt; column, e.g. {@link EmbeddingModel#column()}
     * @param indexName the index's name, e.g. {@link EmbeddingModel#indexName()}
     * @param options the IVF-PQ parameters and the flat threshold (its column is replaced by {@code column})
     */
    public LakeTransaction indexVectors(String table, String column, String indexName, VectorIndexOptions options) {
        return add(new PendingChange.IndexVectors(table, column, indexName, options));
    }

    /** A schema migration's rewrite of a table ({@code migrate}): the reader's rows and schema replace its rows. */
    LakeTransaction rewrite(String table, ArrowReader rows) {
        return add(new PendingChange.WriteReader(table, rows, true, Set.of(), "migrate"));
    }

    /**
     * Appends typed rows to a curation table ({@link CurationTables}), creating it when missing. The rows are read
     * once, at commit, a batch at a time (an {@link Iterable} that computes them keeps memory at one batch).
     *
     * @param table the table
     * @param rows the rows
     * @param keys partition keys of the rows for the conflict check (e.g. a training set's tag), or none
     * @throws IllegalArgumentException for an ingest table (written with put/update rows only)
     */
    public <R> LakeTransaction append(TypedTable<R> table, Iterable<R> rows, Set<String> keys) {
        requireOther(table.name());
        return add(new PendingChange.WriteRows<>(table, rows, false, keys));
    }

    /**
     * Replaces a curation table's rows (and schema: the table's declared columns) with typed rows, as a new version;
     * older versions stay readable by number or tag. An empty {@code rows} writes an empty version.
     *
     * @param table the table
     * @param rows the rows, read once at commit, a batch at a time
     */
    public <R> LakeTransaction overwrite(TypedTable<R> table, Iterable<R> rows) {
        requireOther(table.name());
        return add(new PendingChange.WriteRows<>(table, rows, true, Set.of()));
    }

    /**
     * Replaces a table's rows with rows of another table at a version, taken by row offset, numbered and grouped
     * ({@link RowCopy}: a training set's samples, copied from {@code frames}); the new version's columns are the two
     * the copy adds, then the source version's. Staged before the commit lock, streaming from the source into new data
     * files; nothing passes through a scratch file.
     *
     * @param table the table to overwrite, e.g. {@link TableSchemas#TRAINSET_SAMPLES}
     * @param copy what to copy
     * @throws IllegalArgumentException at commit, when an offset is outside the source version's rows (naming it)
     * @throws io.flywheel.error.NotFoundException at commit, when the source table has no such version
     */
    public LakeTransaction overwrite(String table, RowCopy copy) {
        requireOther(table);
        return add(new PendingChange.CopyRows(table, copy));
    }

    /**
     * Appends the reader's rows to a table other than the three ingest tables, creating it when missing (the lake's
     * own tests; other modules write typed rows).
     *
     * @param table table name
     * @param rows the rows; consumed and closed at commit
     * @param keys partition keys of the rows for the conflict check (e.g. a training set's tag), or none
     */
    LakeTransaction append(String table, ArrowReader rows, Set<String> keys) {
        requireOther(table);
        return add(new PendingChange.WriteReader(table, rows, false, keys));
    }

    /**
     * Replaces a table's rows (and schema) with the reader's as a new version; older versions stay readable by number
     * or tag.
     */
    LakeTransaction overwrite(String table, ArrowReader rows) {
        requireOther(table);
        return add(new PendingChange.WriteReader(table, rows, true, Set.of()));
    }

    /**
     * Tags the tables at their versions in this commit (a table this transaction does not change keeps its current
     * version). Tags are immutable: a tag that exists when the transaction commits is a conflict.
     *
     * @param tag tag name
     * @param tables the tables it pins
     */
    public LakeTransaction tag(String tag, List<String> tables) {
        return tag(tag, tables, Map.of());
    }

    /**
     * Tags the tables at their versions in this commit, and other tables at given versions (a training set's tag
     * also pins the versions of episodes and frames it was built from, so that cleanup keeps them).
     *
     * @param tag tag name
     * @param tables tables pinned at their versions in this commit
     * @param versions tables pinned at these versions
     */
    public LakeTransaction tag(String tag, List<String> tables, Map<String, Long> versions) {
        check();
        if (tag == null || tag.isBlank()) {
            throw new IllegalArgumentException("tag name must not be blank");
        }
        if (tables.isEmpty() && versions.isEmpty()) {
            throw new IllegalArgumentException("tag '" + tag + "' pins no table");
        }
        Map<String, Long> pins = new LinkedHashMap<>();
        for (String t : tables) {
            pins.put(t, null);
        }
        versions.forEach((t, v) -> {
            if (v == null || v < 1) {
                throw new IllegalArgumentException("tag '" + tag + "': version " + v + " of " + t + " is not a version");
            }
            pins.put(t, v);
        });
        tags.put(tag, pins);
        return this;
    }

    /** Sets a lake property (kept in every later snapshot until changed). */
    public LakeTransaction property(String key, String value) {
        check();
        properties.put(key, value);
        return this;
    }

    /**
     * Sets a lake property computed from its value in {@link #base()} (compare and set): when a commit since the base
     * changed it, this transaction fails with {@link CommitConflictException} instead of overwriting that change (a
     * registry such as {@link EmbeddingModels#PROPERTY}, where two writers adding entries would otherwise drop one).
     */
    public LakeTransaction propertyIfUnchanged(String key, String value) {
        property(key, value);
        guarded.add(key);
        return this;
    }

    /** Sets a line of this commit's summary (shown by {@code flywheel lake log}); not kept in later snapshots. */
    public LakeTransaction summary(String key, String value) {
        check();
        summary.put(key, value);
        return this;
    }

    /** @return whether the transaction holds no change, tag or property */
    public boolean isEmpty() {
        return changes.isEmpty() && tags.isEmpty() && properties.isEmpty();
    }

    /**
     * Commits every change, tag and property in one lake commit. Call once.
     *
     * @return the new snapshot and per-table versions and row counts; an empty transaction commits nothing and returns
     *     the base snapshot. When the commit made a table due for the {@link MaintenanceRoutine}, the routine runs
     *     after it, in this thread (the commit stands whatever happens to the routine), and the result says what it
     *     did ({@link CommitResult#maintenance()}).
     * @throws CommitConflictException when a concurrent commit does not commute with this one (nothing of this
     *     transaction is visible)
     * @throws io.flywheel.error.StorageUnavailableException when the storage fails (nothing of this transaction is
     *     visible, unless the failure came after its commit point was written: then all of it is)
     */
    public CommitResult commit() {
        check();
        committed = true;
        CommitResult done = new CommitProtocol(lake, this).run();
        CompactionResult maintenance = MaintenanceRoutine.afterCommit(lake, operation, done);
        return maintenance == null ? done : done.withMaintenance(maintenance);
    }

    // ------------------------------------------------------------------ used by the protocol

    List<PendingChange> changes() {
        return new ArrayList<>(changes.values());
    }

    /** @return tag to pinned tables, each with its explicit version or null for its version in this commit */
    Map<String, Map<String, Long>> tags() {
        return tags;
    }

    Map<String, String> properties() {
        return properties;
    }

    /** @return the properties set with {@link #propertyIfUnchanged} */
    Set<String> guardedProperties() {
        return guarded;
    }

    Map<String, String> summaryLines() {
        return summary;
    }

    /** Adds a change (one per table); package-private so that the maintenance changes and tests add theirs. */
    LakeTransaction add(PendingChange c) {
        check();
        if (changes.containsKey(c.table)) {
            throw new IllegalStateException("table " + c.table + " already has a " + changes.get(c.table).kind
                    + " in this transaction; one change per table per commit (got " + c.kind + ")");
        }
        changes.put(c.table, c);
        return this;
    }

    private void check() {
        if (committed) {
            throw new IllegalStateException("transaction on " + lake.location() + " is already committed");
        }
    }

    private static void requireOther(String table) {
        if (TableSchemas.CORE_TABLES.contains(table)) {
            throw new IllegalArgumentException("table '" + table + "' is written with put/update rows only");
        }
        TableSchemas.checkName(table);
    }
}
