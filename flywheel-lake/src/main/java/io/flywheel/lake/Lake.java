package io.flywheel.lake;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.WriteParams;

import io.flywheel.error.BadInputException;
import io.flywheel.error.FlywheelException;
import io.flywheel.error.NotFoundException;
import io.flywheel.error.StorageUnavailableException;
import io.flywheel.raw.RawStorage;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * A Flywheel lake: a folder (local directory or {@code s3://bucket/prefix}) holding one Lance dataset per table,
 * {@code <lake>/<table>.lance} (what {@code @lancedb/lancedb}'s {@code connect(lake).openTable(name)} expects), and
 * the lake's commit points under {@code <lake>/_lake/}.
 *
 * <h2>Commits</h2>
 * Every change goes through one API, {@link LakeTransaction} ({@link #begin}): changes to any set of tables, tags and
 * properties are built up, then committed once. A commit writes the tables' data files first, then under a short
 * lock commits each table's Lance transaction and finally creates the commit point
 * {@code _lake/commits/<seq>.json}, a {@link LakeSnapshot} naming the version of every table (Iceberg's metadata
 * pointer swap, with Lance datasets as the tables). Readers open each table at the version the snapshot names, so
 * they see a transaction's tables all or not at all; a process killed at any instant leaves the last snapshot as it
 * was, and the table versions it had written are rolled back by the next commit to those tables. See
 * {@link CommitProtocol} for the steps and {@link LakeTransaction} for concurrent writers.
 *
 * <h2>Reads</h2>
 * A Lake reads the snapshot it opened ({@link #snapshot()}) until {@link #refresh()} or its own commits move it on.
 * {@link #table} opens a table at the snapshot's version, a version number, or a lake tag.
 *
 * <h2>Maintenance</h2>
 * {@link #versions()} names the newest commit's table versions and each table's Lance versions; {@link #log} lists
 * the commits. {@link #compact} rewrites small fragments (Lance compaction, as a lake transaction through the commit
 * protocol) and refreshes indexes; the {@link MaintenanceRoutine} does the same after a commit that takes a table past
 * N commits since its last compaction. {@link #cleanup} removes old versions that no lake commit, tag or training-set
 * lineage needs.
 *
 * <p>A Lake owns one Arrow {@link RootAllocator}; close the lake after every {@link LakeTable} opened from it.
 * Thread-safe: threads may share a Lake, each committing its own transactions.
 */
public final class Lake implements AutoCloseable, RowSink {
    /** Folder of the commit points, under the lake's root. */
    public static final String META = "_lake";
    /** The key/value catalog table of schema version 2 lakes (replaced by the commit points). */
    static final String LEGACY_CATALOG = "_catalog";
    /** Config file looked up inside a local lake directory. */
    public static final String CONFIG_FILE = "flywheel.yaml";
    /** Lake property: the table schema version. */
    public static final String SCHEMA_VERSION = "flywheel.schema_version";

    final String root;
    final StorageConfig storage;
    private S3RawStorage rawStorage;
    private final BufferAllocator allocator;
    private final MetaStore meta;
    final CommitLog log;
    final CommitLock lock;
    private volatile LakeSnapshot snapshot;
    private boolean created;

    private Lake(String root, StorageConfig storage) {
        this.root = root;
        this.storage = storage;
        this.allocator = new RootAllocator(Long.MAX_VALUE);
        this.meta = isRemote(root) ? new S3MetaStore(root + "/" + META, storage)
                : new LocalMetaStore(Path.of(root, META));
        this.log = new CommitLog(meta);
        this.lock = isRemote(root) ? new S3CommitLock(meta) : new LocalCommitLock(Path.of(root, META, "commit.lock"));
    }

    /**
     * Options for opening or creating a lake.
     *
     * @param storage explicit storage options (win over the config file and the environment)
     * @param configFile a {@code flywheel.yaml} to read storage options from, or null to look it up (inside a local
     *     lake, then {@code FLYWHEEL_CONFIG})
     * @param environment the variables read for {@code FLYWHEEL_CONFIG} and the {@code AWS_*} settings
     * @param existOk for {@link #init}: open a lake that already exists at the location, changing nothing, instead of
     *     refusing it (ignored by {@link #open})
     */
    public record Options(StorageConfig storage, Path configFile, Map<String, String> environment, boolean existOk) {
        /** @return defaults: no explicit storage options, config file looked up, the process environment */
        public static Options defaults() {
            return new Options(StorageConfig.none(), null, System.getenv(), false);
        }

        public Options withStorage(StorageConfig s) {
            return new Options(s, configFile, environment, existOk);
        }

        public Options withConfigFile(Path f) {
            return new Options(storage, f, environment, existOk);
        }

        public Options withEnvironment(Map<String, String> env) {
            return new Options(storage, configFile, env, existOk);
        }

        /** @return these options with {@link #existOk} set */
        public Options withExistOk(boolean ok) {
            return new Options(storage, configFile, environment, ok);
        }
    }

    /**
     * Creates a lake: the three ingest tables, empty, and commit point 1 naming them. The lake-init policy, the same
     * for every caller:
     * <ul>
     *   <li>a location that holds a lake (of any schema version) is refused, naming it; with
     *       {@link Options#existOk()} it is opened instead and nothing is written ({@link #created()} is false);</li>
     *   <li>a local folder that holds other files is refused, naming a few of them: hidden entries and the lake's own
     *       names ({@code _lake}, {@code flywheel.yaml}, {@code <table>.lance}) do not count (see {@code InitFolder});
     *       a local path that is a file is refused;</li>
     *   <li>a missing local folder is created; an {@code s3://} prefix is not checked for other objects.</li>
     * </ul>
     *
     * @param location local directory (created if missing) or {@code s3://bucket/prefix}
     * @param options storage options, and whether an existing lake is opened
     * @return the open lake
     * @throws BadInputException when a lake already exists there (naming it) and {@code existOk} is not set, the
     *     location is a file, or a local folder holds other files (naming the folder and a few of them)
     * @throws LakeFormatException with {@code existOk}, when the existing lake has another schema version (as
     *     {@link #open})
     * @throws StorageUnavailableException when the storage cannot be written
     */
    public static Lake init(String location, Options options) {
        String root = normalize(location);
        if (!isRemote(root) && Files.exists(Path.of(root)) && !Files.isDirectory(Path.of(root))) {
            throw new BadInputException("cannot init lake at " + root + ": it is a file, not a folder");
        }
        Lake lake = new Lake(root, storageFor(root, options));
        boolean made;
        try {
            made = lake.create(options.existOk());
        } catch (FlywheelException e) {
            lake.close();
            throw e;
        } catch (Exception e) {
            lake.close();
            throw new StorageUnavailableException("cannot init lake at " + root + ": "
                    + (e instanceof IOException io ? LocalFiles.reason(io) : e.getMessage()), e);
        }
        if (!made) { // existOk, and a lake is there (or a concurrent init committed first): open it
            lake.close();
            return open(location, options);
        }
        return lake;
    }

    /**
     * Creates the tables and commit point 1 (see {@link #init}).
     *
     * @return true when this call created the lake; false when one exists and {@code existOk} is set
     */
    private boolean create(boolean existOk) throws IOException {
        if (log.latest().isPresent() || exists(LEGACY_CATALOG)) {
            if (existOk) {
                return false;
            }
            throw new BadInputException("a lake already exists at " + root + " (" + meta.describe("commits/")
                    + "); refusing to init over it");
        }
        if (!isRemote(root)) {
            InitFolder.requireOwnFolder(Path.of(root));
            Files.createDirectories(Path.of(root));
        }
        Map<String, Long> versions = new TreeMap<>();
        List<LakeSnapshot.TableChange> changes = new ArrayList<>();
        for (String t : TableSchemas.CORE_TABLES) {
            long v = createEmpty(t, TableSchemas.of(t));
            versions.put(t, v);
            changes.add(new LakeSnapshot.TableChange(t, "create", 0, v, 0, 0, 0, List.of(), List.of()));
        }
        Map<String, String> props = new TreeMap<>();
        props.put(SCHEMA_VERSION, Integer.toString(TableSchemas.SCHEMA_VERSION));
        props.put("created_at_ns", Long.toString(System.currentTimeMillis() * 1_000_000L));
        LakeSnapshot first = new LakeSnapshot(1, 0, java.util.UUID.randomUUID().toString(), "init",
                System.currentTimeMillis() * 1_000_000L,
                java.lang.management.ManagementFactory.getRuntimeMXBean().getName(), versions, Map.of(), props,
                changes);
        if (!log.publish(first)) {
            if (existOk) {
                return false;
            }
            throw new BadInputException("a lake already exists at " + root + " (created by a concurrent init)");
        }
        snapshot = first;
        created = true;
        return true;
    }

    /** {@link #init(String, Options)} with {@link Options#defaults()}. */
    public static Lake init(String location) {
        return init(location, Options.defaults());
    }

    /** {@link #init(String)} for a local directory. */
    public static Lake init(Path dir) {
        return init(dir.toString());
    }

    /**
     * @return whether this handle created the lake ({@link #init} found none there); false for a lake opened, also by
     *     {@link #init} with {@link Options#existOk()}
     */
    public boolean created() {
        return created;
    }

    /**
     * Opens an existing lake at its newest snapshot.
     *
     * @param location local directory or {@code s3://bucket/prefix}
     * @param options storage options
     * @return the open lake
     * @throws NotFoundException when there is no lake at the location
     * @throws LakeFormatException when the lake has another schema version (naming the command that migrates it), or
     *     its newest commit point is damaged (naming the file)
     */
    public static Lake open(String location, Options options) {
        String root = normalize(location);
        if (!isRemote(root) && Files.exists(Path.of(root)) && !Files.isDirectory(Path.of(root))) {
            throw new NotFoundException("no Flywheel lake at " + root + ": it is a file, not a folder");
        }
        Lake lake = new Lake(root, storageFor(root, options));
        try {
            Optional<LakeSnapshot> head = lake.log.latest();
            if (head.isEmpty()) {
                if (lake.exists(LEGACY_CATALOG)) {
                    throw new LakeFormatException("the lake at " + lake.root + " has table schema version "
                            + SchemaV2.catalog(lake).getOrDefault(SCHEMA_VERSION, "?") + "; this Flywheel reads and writes"
                            + " version " + TableSchemas.SCHEMA_VERSION + " (lake-level commit points). Migrate it in"
                            + " place with `flywheel lake migrate " + location + "` (the tables and raw files are kept)");
                }
                throw new NotFoundException("no Flywheel lake at " + lake.root + ": " + lake.meta.describe("commits/")
                        + " is missing (run `flywheel init " + location + "` first)");
            }
            String v = head.get().properties().get(SCHEMA_VERSION);
            if (!Integer.toString(TableSchemas.SCHEMA_VERSION).equals(v)) {
                throw new LakeFormatException("the lake at " + lake.root + " has table schema version " + v
                        + "; this Flywheel reads and writes version " + TableSchemas.SCHEMA_VERSION
                        + ("3".equals(v) ? ". Migrate it in place with `flywheel lake migrate " + location + "`"
                                : v != null && v.compareTo(Integer.toString(TableSchemas.SCHEMA_VERSION)) > 0
                                        ? " (a newer Flywheel wrote it)"
                                        : ", and it cannot be migrated: create a new lake with `flywheel init` and"
                                                + " ingest the raw files again (they were never changed)"));
            }
            lake.snapshot = head.get();
            return lake;
        } catch (RuntimeException e) {
            lake.close();
            throw e;
        }
    }

    /**
     * @param location local directory or {@code s3://bucket/prefix}
     * @param options storage options
     * @return whether a lake (of any schema version) exists at the location
     * @throws StorageUnavailableException when the storage cannot be reached
     */
    public static boolean exists(String location, Options options) {
        try (Lake lake = new Lake(normalize(location), storageFor(normalize(location), options))) {
            return lake.log.latest().isPresent() || lake.exists(LEGACY_CATALOG);
        }
    }

    /** {@link #open(String, Options)} with {@link Options#defaults()}. */
    public static Lake open(String location) {
        return open(location, Options.defaults());
    }

    /** {@link #open(String)} for a local directory. */
    public static Lake open(Path dir) {
        return open(dir.toString());
    }

    /**
     * Migrates a lake of an older schema version in place, each step one lake commit, up to
     * {@link TableSchemas#SCHEMA_VERSION}:
     * <ul>
     *   <li>2 to 3: a lake of per-table commits and a {@code _catalog} table gets its first commit point, naming each
     *       table's latest version and each Lance tag as a lake tag; nothing is rewritten;</li>
     *   <li>3 to 4: embeddings move from list&lt;float32&gt; columns into one fixed-size-list column per model
     *       ({@link SchemaV3}: the models are registered, episodes and frames are rewritten as one new version each
     *       with the same values); killed before its commit point, the lake stays at version 3 and a re-run starts
     *       over.</li>
     * </ul>
     * The raw files are never touched; older table versions (lake tags) stay readable.
     *
     * @return what was done, and the snapshot after it (the newest one, unchanged, when the lake was current)
     * @throws NotFoundException when there is no lake at the location
     * @throws LakeFormatException when its schema version cannot be migrated (version 1, or a newer one)
     */
    public static Migration migrate(String location, Options options) {
        try (Lake lake = new Lake(normalize(location), storageFor(normalize(location), options))) {
            Optional<LakeSnapshot> head = lake.log.latest();
            String from;
            LakeSnapshot s;
            if (head.isPresent()) {
                s = head.get();
                from = s.properties().get(SCHEMA_VERSION);
            } else {
                if (!lake.exists(LEGACY_CATALOG)) {
                    throw new NotFoundException("no Flywheel lake at " + lake.root + " to migrate");
                }
                Map<String, String> catalog = SchemaV2.catalog(lake);
                from = catalog.getOrDefault(SCHEMA_VERSION, "?");
                if (!"2".equals(from)) {
                    throw new LakeFormatException("the lake at " + lake.root + " has table schema version " + from
                            + ", which cannot be migrated (version 2 added image format/size and the enrichment columns);"
                            + " create a new lake with `flywheel init` and ingest the raw files again: they were never"
                            + " changed");
                }
                s = SchemaV2.firstCommitPoint(lake, catalog);
            }
            String current = Integer.toString(TableSchemas.SCHEMA_VERSION);
            if ("3".equals(s.properties().get(SCHEMA_VERSION))) {
                lake.snapshot = s;
                try {
                    s = SchemaV3.migrate(lake, Path.of(System.getProperty("java.io.tmpdir")), from).snapshot();
                } catch (CommitConflictException e) { // a concurrent migrate committed first
                    s = lake.refresh();
                    if (!current.equals(s.properties().get(SCHEMA_VERSION))) {
                        throw e;
                    }
                    return new Migration(false, from, current, s);
                }
            }
            String to = s.properties().get(SCHEMA_VERSION);
            if (!current.equals(to)) {
                throw new LakeFormatException("the lake at " + lake.root + " has table schema version " + to
                        + ", which this Flywheel (version " + current + ") cannot migrate"
                        + (to != null && to.compareTo(current) > 0 ? ": a newer Flywheel wrote it" : ""));
            }
            SchemaV2.markMigrated(lake);
            return new Migration(!current.equals(from), from, to, s);
        }
    }

    /**
     * What {@link #migrate} did.
     *
     * @param migrated whether this call migrated the lake (false: it was current already)
     * @param fromSchemaVersion the schema version before
     * @param toSchemaVersion the schema version after
     * @param snapshot the newest snapshot after it
     */
    public record Migration(boolean migrated, String fromSchemaVersion, String toSchemaVersion, LakeSnapshot snapshot) {}

    /** @return the lake's root: an absolute local path or an s3:// URI, without trailing slash */
    public String location() {
        return root;
    }

    /** @return the resolved storage options (secret masked in toString) */
    public StorageConfig storage() {
        return storage;
    }

    /** @return the snapshot this lake reads (the one it opened, or its own newest commit, or the one refreshed to) */
    public LakeSnapshot snapshot() {
        return snapshot;
    }

    /**
     * Moves this lake's reads to the newest commit point.
     *
     * @return the newest snapshot
     */
    public LakeSnapshot refresh() {
        LakeSnapshot s = log.latest().orElseThrow(() -> new NotFoundException("the lake at " + root
                + " has no commit point any more"));
        advance(s);
        return snapshot;
    }

    /**
     * @param seq a lake commit's sequence number
     * @return that commit's snapshot
     * @throws NotFoundException when there is no such commit
     */
    public LakeSnapshot snapshot(long seq) {
        return log.read(seq);
    }

    /** @return the sequence numbers of every commit point, oldest first */
    public List<Long> history() {
        return log.seqs();
    }

    /**
     * @return the files (relative to the lake's root) that opening the current snapshot reads besides the tables:
     *     the head hint and the snapshot's commit point; a cache of the lake needs them
     */
    public List<String> commitPointFiles() {
        return List.of(META + "/" + CommitLog.HEAD, META + "/" + CommitLog.key(snapshot.seq()));
    }

    /**
     * @param limit at most this many commits, &ge; 1
     * @return the lake's commits, newest first
     * @throws IllegalArgumentException when {@code limit} is below 1
     * @throws BadInputException naming the file when a commit point is damaged
     */
    public List<LakeSnapshot> log(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("the log limit must be >= 1, got " + limit);
        }
        List<Long> seqs = log.seqs();
        List<LakeSnapshot> out = new ArrayList<>();
        for (int i = seqs.size() - 1; i >= 0 && out.size() < limit; i--) {
            out.add(log.read(seqs.get(i)));
        }
        return out;
    }

    /**
     * @return the sequence numbers below the newest commit whose commit point is missing (a file removed from
     *     {@code _lake/commits/} by hand), oldest first; empty for a whole log
     */
    public List<Long> missingCommits() {
        List<Long> seqs = log.seqs();
        List<Long> missing = new ArrayList<>();
        long expect = 1;
        for (long seq : seqs) {
            for (; expect < seq; expect++) {
                missing.add(expect);
            }
            expect = seq + 1;
        }
        return missing;
    }

    /**
     * The newest lake commit and the table versions it names (readers outside Flywheel open these versions for a
     * consistent set of tables), then per table: its Lance versions, tags, rows, fragments and data size. Moves this
     * lake's reads to the newest commit.
     *
     * @throws StorageUnavailableException naming the table when one cannot be read
     */
    public LakeVersions versions() {
        return LakeVersions.of(this);
    }

    /**
     * Compacts tables (Lance compaction under the policy) and then refreshes their indexes where they miss rows, as
     * lake transactions ({@code compact}, then {@code index}) through the commit protocol: the rewrites are written
     * before the commit lock is taken and committed under it, on top of whatever other writers committed meanwhile.
     * Every row and value is kept. Moves this lake's reads to the newest commit.
     *
     * @param policy when and how to compact
     * @param tables the tables to look at, or none for every table
     * @return what was done per table
     * @throws NotFoundException naming the lake's tables when one of {@code tables} is not among them
     * @throws io.flywheel.error.ConflictException when concurrent commits kept changing the fragments to rewrite
     */
    public CompactionResult compact(CompactionPolicy policy, List<String> tables) {
        return Compactor.run(this, tables, policy);
    }

    /**
     * Removes table versions older than the request's age, and the files only they reference, keeping every version
     * the newest lake commit names (and later ones), every version a lake tag pins and every version a training set's
     * lineage names (see {@link Cleaner}). Old lake commit points stay readable as history; opening a table at a
     * version they name that was removed fails. Holds the commit lock while it removes (not for a dry run).
     *
     * @return what was removed per table (for a dry run, what would be)
     * @throws StorageUnavailableException naming the table when Lance's cleanup fails
     */
    public CleanupResult cleanup(CleanupRequest request) {
        return Cleaner.run(this, request);
    }

    /** @return the lake properties of the current snapshot: schema_version, created_at_ns, ... */
    public Map<String, String> catalog() {
        return snapshot.properties();
    }

    /**
     * Opens a table at the version of the current snapshot. Close it (try-with-resources).
     *
     * @param name {@code raw_files}, {@code episodes}, {@code frames} or another table of the lake
     * @throws NotFoundException when the lake has no such table
     */
    public LakeTable table(String name) {
        return table(name, TableRef.latest());
    }

    /**
     * Opens a table at the snapshot's version ({@link TableRef#latest()}), at a version number, or at a lake tag.
     * Close it (try-with-resources).
     *
     * @throws NotFoundException when the table, version or tag does not exist, or the tag does not pin the table
     * @throws StorageUnavailableException when the table's version cannot be opened (naming table and version)
     */
    public LakeTable table(String name, TableRef ref) {
        LakeSnapshot s = snapshot;
        long version;
        if (ref.tag() != null) {
            Map<String, Long> pinned = s.tag(ref.tag());
            Long v = pinned.get(name);
            if (v == null) {
                throw new NotFoundException("tag '" + ref.tag() + "' pins " + pinned.keySet() + ", not table " + name);
            }
            version = v;
        } else if (ref.version() != null) {
            version = ref.version();
        } else {
            version = s.version(name);
        }
        BufferAllocator child = allocator.newChildAllocator(name, 0, Long.MAX_VALUE);
        String which = ref.tag() != null ? "tag '" + ref.tag() + "'" : "lake commit " + s.seq();
        try {
            return new LakeTable(this, name, openDataset(name, version, child), child);
        } catch (NotFoundException e) {
            child.close();
            throw new NotFoundException(e.getMessage() + " (" + which + " names its version " + version + ")", e);
        } catch (RuntimeException e) {
            child.close();
            if (String.valueOf(e.getMessage()).contains("not found")) {
                throw new NotFoundException("table " + tableUri(name) + " has no version " + version
                        + (ref.version() != null ? "" : " (" + which + " names it)"), e);
            }
            throw new StorageUnavailableException("cannot open table " + tableUri(name) + " at version " + version
                    + " (" + which + "): " + lanceMessage(e), e);
        }
    }

    /** @return the embedding models of the current snapshot ({@link EmbeddingModels}) */
    public EmbeddingModels models() {
        return EmbeddingModels.of(snapshot.properties());
    }

    /**
     * Registers an embedding model, adding its columns ({@code episodes.emb_<key>} fixed_size_list&lt;float32, D&gt;,
     * {@code episodes.emb_<key>_at_ns} int64, {@code frames.emb_<key>} list&lt;fixed_size_list&lt;float32, D&gt;&gt;,
     * null in every row) and its entry of {@value EmbeddingModels#PROPERTY} in one lake commit ({@code model});
     * a model registered already is returned as it is. Two writers registering at once: one commits, the other finds
     * the model (or registers its own on top).
     *
     * @param id the model id
     * @param dimension D
     * @param sha256 the model file's SHA-256, or "" when unknown
     * @return the registered model (its column)
     * @throws BadInputException when the id is registered with another dimension or SHA-256 (naming both): its
     *     vectors and these would be mixed in one column
     */
    public EmbeddingModel registerModel(String id, int dimension, String sha256) {
        for (int attempt = 1; ; attempt++) {
            EmbeddingModels models = EmbeddingModels.of(refresh().properties());
            Optional<EmbeddingModel> known = models.get(id);
            if (known.isPresent()) {
                EmbeddingModel m = known.get();
                boolean shaDiffers = !m.sha256().isEmpty() && sha256 != null && !sha256.isEmpty()
                        && !m.sha256().equals(sha256);
                if (m.dimension() != dimension || shaDiffers) {
                    throw new BadInputException("embedding model '" + id + "' is registered in " + root + " with dimension "
                            + m.dimension() + " and sha256 " + m.sha256() + " (column " + m.column() + "); this model has"
                            + " dimension " + dimension + " and sha256 " + sha256 + ": give it another model id");
                }
                return m;
            }
            EmbeddingModel m = new EmbeddingModel(id, dimension, sha256, models.columnFor(id),
                    System.currentTimeMillis() * 1_000_000L);
            try {
                begin("model").summary("model", id + " -> " + m.column())
                        .addColumns(TableSchemas.EPISODES, TableSchemas.episodeModelFields(m))
                        .addColumns(TableSchemas.FRAMES, List.of(TableSchemas.frameModelField(m)))
                        .propertyIfUnchanged(EmbeddingModels.PROPERTY, models.with(m).toJson()).commit();
                return m;
            } catch (CommitConflictException e) {
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /**
     * Builds or refreshes the vector index of a model's episodes column ({@link LakeTransaction#indexVectors}) when
     * there is work: no index and at least {@code options.flatBelowRows()} episode vectors (an IVF-PQ index is built),
     * or an index with rows it does not cover (they are added). Otherwise nothing is committed.
     *
     * @param model a registered model
     * @param options IVF-PQ parameters and flat threshold (the column is the model's)
     * @return the column's index after it, if it has one
     */
    public Optional<VectorIndexInfo> refreshVectorIndex(EmbeddingModel model, VectorIndexOptions options) {
        refresh();
        boolean work;
        try (LakeTable t = table(TableSchemas.EPISODES)) {
            Optional<VectorIndexInfo> idx = t.vectorIndex(model.column());
            work = idx.isPresent() ? idx.get().rowsUnindexed() > 0
                    : t.countRows(model.column() + " IS NOT NULL") >= options.flatBelowRows();
            if (!work) {
                return idx;
            }
        }
        begin("index").summary("model", model.id()).indexVectors(TableSchemas.EPISODES, model.column(),
                model.indexName(), options).commit();
        try (LakeTable t = table(TableSchemas.EPISODES)) {
            return t.vectorIndex(model.column());
        }
    }

    /**
     * Idempotency check for ingest.
     *
     * @param sha256 lower-case hex SHA-256 of a raw file
     * @return the raw_files row with that hash, if it was committed
     */
    public Optional<RawFileRow> rawFile(String sha256) {
        try (LakeTable t = table(TableSchemas.RAW_FILES)) {
            List<RawFileRow> rows = t.rawFiles(ScanRequest.builder().filter("sha256 = " + Sql.quote(sha256)).limit(1).build());
            return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
        }
    }

    /**
     * @param name table name (without {@code .lance})
     * @return whether the current snapshot has the table
     */
    public boolean hasTable(String name) {
        return snapshot.tables().containsKey(name);
    }

    /**
     * @param name a name for memory accounting
     * @return a child of the lake's Arrow allocator; batches handed to a {@link LakeTransaction} must be allocated
     *     from one (Lance imports them through the same root). Close it after use.
     */
    BufferAllocator newAllocator(String name) {
        return allocator.newChildAllocator(name, 0, Long.MAX_VALUE);
    }

    /**
     * Idempotency check for a whole ingest run: the SHA-256 of every committed raw file, read in one scan
     * of the {@code sha256} column (one scan per run rather than one filtered scan per recording).
     *
     * @return lower-case hex SHA-256 digests, one per raw_files row; empty for a new lake
     */
    public Set<String> rawFileSha256s() {
        return rawFileSha256s(null);
    }

    /** @param filter a filter on raw_files, or null for every row */
    private Set<String> rawFileSha256s(String filter) {
        Set<String> out = new HashSet<>();
        try (LakeTable t = table(TableSchemas.RAW_FILES)) {
            t.scanArrow(ScanRequest.builder().columns("sha256").filter(filter).build(), batch -> {
                VarCharVector v = (VarCharVector) batch.getVector("sha256");
                for (int i = 0; i < batch.getRowCount(); i++) {
                    if (!v.isNull(i)) {
                        out.add(new String(v.get(i), StandardCharsets.UTF_8));
                    }
                }
            });
        }
        return out;
    }

    /**
     * @param operation what the transaction does, recorded in its commit point ({@code ingest}, {@code enrich}, ...)
     * @return a new transaction based on the current snapshot; nothing is written until
     *     {@link LakeTransaction#commit()}
     */
    public LakeTransaction begin(String operation) {
        return new LakeTransaction(this, operation, snapshot);
    }

    /** @return the SHA-256 of every raw file in the lake's newest snapshot (the ingest's idempotency check) */
    @Override
    public Set<String> committedRawFiles() {
        refresh();
        return rawFileSha256s();
    }

    /**
     * Commits one recording as one transaction ({@code ingest}): its raw_files, episodes and frames rows. Rows of
     * episodes new to the lake are appended without scanning the frames table for their keys (the lake's commits
     * are atomic across tables, so frames of an episode exist only with its episodes row). A recording whose raw
     * files are all in the lake already (a concurrent writer ingested the same content after this one checked) is
     * not written again; one of which only some episodes or files are present replaces their rows.
     *
     * @return the commit's sequence number, or empty when a concurrent writer committed the same raw files first
     */
    @Override
    public java.util.OptionalLong commit(RecordingRows r) {
        return commit(r, tx -> { });
    }

    /**
     * {@link #commit(RecordingRows)} with more changes in the same transaction: a recording and rows that belong to
     * it (an evaluation rollout's {@code eval_episodes} row) are committed together or not at all.
     *
     * @param also adds its changes to the recording's transaction (other tables than the three ingest tables); not
     *     called when the recording's raw files are all in the lake already
     * @return the commit's sequence number, or empty when a concurrent writer committed the same raw files first
     *     (nothing of the recording nor of {@code also} is written then)
     */
    public java.util.OptionalLong commit(RecordingRows r, java.util.function.Consumer<LakeTransaction> also) {
        List<String> episodeIds = r.episodes().stream().map(EpisodeRow::episodeId).toList();
        List<String> shas = r.rawFiles().stream().map(RawFileRow::sha256).distinct().toList();
        refresh();
        if (r.episodes().stream().anyMatch(e -> e.stateNames() != null || e.actionNames() != null)) {
            addValueNameColumns();
        }
        Set<String> filesPresent = shas.isEmpty() ? Set.of() : rawFileSha256s(Sql.in("sha256", shas));
        if (!shas.isEmpty() && filesPresent.containsAll(shas)) {
            return java.util.OptionalLong.empty();
        }
        boolean present = !filesPresent.isEmpty();
        if (!present && !episodeIds.isEmpty()) {
            try (LakeTable e = table(TableSchemas.EPISODES)) {
                present = e.countRows(Sql.in("episode_id", episodeIds)) > 0;
            }
        }
        LakeTransaction tx = begin("ingest").summary("recording", r.recordingId());
        if (present) {
            tx.putFrames(r.frames()).putEpisodes(r.episodes()).putRawFiles(r.rawFiles());
        } else {
            tx.appendFrames(r.frames()).appendEpisodes(r.episodes()).appendRawFiles(r.rawFiles());
        }
        also.accept(tx);
        try {
            return java.util.OptionalLong.of(tx.commit().snapshot().seq());
        } catch (CommitConflictException e) {
            refresh();
            if (rawFileSha256s().containsAll(shas)) {
                return java.util.OptionalLong.empty(); // a concurrent ingest of the same content committed first
            }
            throw e;
        }
    }

    /**
     * Adds the episodes columns of per-value names ({@code state_names}, {@code action_names}) when the table lacks
     * them (a lake created before them), in a commit of its own ({@code schema}): null in every row already there,
     * no data rewritten. A concurrent writer adding them first is no error.
     */
    private void addValueNameColumns() {
        for (int attempt = 1; ; attempt++) {
            List<org.apache.arrow.vector.types.pojo.Field> missing = new ArrayList<>();
            try (LakeTable t = table(TableSchemas.EPISODES)) {
                for (org.apache.arrow.vector.types.pojo.Field f : TableSchemas.VALUE_NAME_COLUMNS) {
                    if (!t.hasColumn(f.getName())) {
                        missing.add(f);
                    }
                }
            }
            if (missing.isEmpty()) {
                return;
            }
            try {
                begin("schema").summary("columns", TableSchemas.EPISODES + ": " + missing.stream()
                        .map(org.apache.arrow.vector.types.pojo.Field::getName).toList())
                        .addColumns(TableSchemas.EPISODES, missing).commit();
                return;
            } catch (CommitConflictException e) {
                refresh();
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /**
     * What {@link #commitRecordings} did.
     *
     * @param seq the commit's sequence number; empty when nothing was new (every recording was in the lake already)
     * @param committed ids of the recordings written, in the order given
     * @param skipped ids of the recordings whose raw files were all in the lake already (nothing of them written)
     */
    public record RecordingsCommit(java.util.OptionalLong seq, List<String> committed, List<String> skipped) {
        public RecordingsCommit {
            committed = List.copyOf(committed);
            skipped = List.copyOf(skipped);
        }
    }

    /**
     * Commits many recordings as ONE transaction ({@code ingest}): the raw_files, episodes and frames rows of every
     * recording that is not in the lake yet; readers see all of them or none. A recording whose raw files are all in
     * the lake already is skipped (idempotent by content hash, as {@link #commit(RecordingRows)}); when some episode or
     * file of the others is present, their rows replace the present ones. When a concurrent writer commits first and
     * the commit conflicts, the recordings are checked again and the commit is tried once more without the ones that
     * writer committed.
     *
     * @param recordings the recordings' rows (for example those a Spark job staged)
     * @return the commit and which recordings it wrote or skipped
     * @throws CommitConflictException when the second try conflicts as well (nothing of this call is visible)
     */
    public RecordingsCommit commitRecordings(List<RecordingRows> recordings) {
        refresh();
        if (recordings.stream().flatMap(r -> r.episodes().stream())
                .anyMatch(e -> e.stateNames() != null || e.actionNames() != null)) {
            addValueNameColumns();
        }
        for (int attempt = 0; ; attempt++) {
            refresh();
            List<String> shas = recordings.stream().flatMap(r -> r.rawFiles().stream()).map(RawFileRow::sha256)
                    .distinct().toList();
            Set<String> filesPresent = shas.isEmpty() ? Set.of() : rawFileSha256s(Sql.in("sha256", shas));
            List<RecordingRows> fresh = new ArrayList<>();
            List<String> skipped = new ArrayList<>();
            for (RecordingRows r : recordings) {
                List<String> own = r.rawFiles().stream().map(RawFileRow::sha256).toList();
                if (!own.isEmpty() && filesPresent.containsAll(own)) {
                    skipped.add(r.recordingId());
                } else {
                    fresh.add(r);
                }
            }
            if (fresh.isEmpty()) {
                return new RecordingsCommit(java.util.OptionalLong.empty(), List.of(), skipped);
            }
            List<String> episodeIds = fresh.stream().flatMap(r -> r.episodes().stream()).map(EpisodeRow::episodeId)
                    .toList();
            boolean present = !filesPresent.isEmpty();
            if (!present && !episodeIds.isEmpty()) {
                try (LakeTable e = table(TableSchemas.EPISODES)) {
                    present = e.countRows(Sql.in("episode_id", episodeIds)) > 0;
                }
            }
            List<FrameRow> frames = new ArrayList<>();
            List<EpisodeRow> episodes = new ArrayList<>();
            List<RawFileRow> raw = new ArrayList<>();
            for (RecordingRows r : fresh) {
                frames.addAll(r.frames());
                episodes.addAll(r.episodes());
                raw.addAll(r.rawFiles());
            }
            LakeTransaction tx = begin("ingest").summary("recordings", Integer.toString(fresh.size()));
            if (present) {
                tx.putFrames(frames).putEpisodes(episodes).putRawFiles(raw);
            } else {
                tx.appendFrames(frames).appendEpisodes(episodes).appendRawFiles(raw);
            }
            try {
                long seq = tx.commit().snapshot().seq();
                return new RecordingsCommit(java.util.OptionalLong.of(seq),
                        fresh.stream().map(RecordingRows::recordingId).toList(), skipped);
            } catch (CommitConflictException e) {
                if (attempt > 0) {
                    throw e;
                }
            }
        }
    }

    /** Closes the lake's metadata store and allocator. */
    @Override
    public void close() {
        try {
            meta.close();
        } finally {
            try {
                synchronized (this) {
                    if (rawStorage != null) {
                        rawStorage.close();
                    }
                }
            } finally {
                allocator.close();
            }
        }
    }

    /**
     * Opens the lake's raw files by their recorded URI ({@code raw_files.uri}, image locators): {@code file:} URIs,
     * and on a lake on S3 also {@code s3://} objects, read by byte range with the lake's storage options.
     *
     * @return the lake's raw storage (closed with the lake)
     */
    public synchronized RawStorage rawStorage() {
        if (!root.startsWith("s3://")) {
            return RawStorage.local();
        }
        if (rawStorage == null) {
            rawStorage = new S3RawStorage(root, storage);
        }
        return rawStorage;
    }

    // ------------------------------------------------------------------ internals

    String tableUri(String table) {
        return root + "/" + table + ".lance";
    }

    CommitLog log() {
        return log;
    }

    CommitLock commitLock() {
        return lock;
    }

    synchronized void advance(LakeSnapshot s) {
        if (snapshot == null || s.seq() > snapshot.seq()) {
            snapshot = s;
        }
    }

    Dataset openDataset(String table, Long version, BufferAllocator alloc) {
        ReadOptions.Builder ro = new ReadOptions.Builder().setStorageOptions(storage.options());
        if (version != null) {
            ro.setVersion(version);
        }
        if (!isRemote(root) && !Files.isDirectory(Path.of(tableUri(table)))) {
            throw new NotFoundException("the folder of table " + table + " (" + tableUri(table) + ") is missing");
        }
        try {
            return Dataset.open().allocator(alloc).uri(tableUri(table)).readOptions(ro.build()).build();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) { // Lance's native side throws IOException undeclared (a damaged manifest)
            throw new StorageUnavailableException(lanceMessage(e), e);
        }
    }

    /** @return the table's dataset at its latest Lance version, or null when it does not exist */
    Dataset openLatestOrNull(String table, BufferAllocator alloc) {
        if (!isRemote(root) && !Files.isDirectory(Path.of(tableUri(table), "_versions"))) {
            return null;
        }
        try {
            return openDataset(table, null, alloc);
        } catch (RuntimeException e) {
            if (notFound(e)) {
                return null;
            }
            throw new StorageUnavailableException("cannot read lake table " + tableUri(table) + ": " + e.getMessage(), e);
        }
    }

    /** Creates (or, after a killed init, re-creates) an empty table. @return its version */
    private long createEmpty(String table, Schema schema) {
        try (BufferAllocator a = newAllocator("create-" + table); Dataset existing = openLatestOrNull(table, a)) {
            // an orphan of a killed init is replaced by an empty version
            WriteParams.WriteMode mode = existing != null ? WriteParams.WriteMode.OVERWRITE : WriteParams.WriteMode.CREATE;
            try (Dataset ds = Dataset.write().allocator(a).schema(schema).uri(tableUri(table)).mode(mode)
                    .storageOptions(storage.options()).execute()) {
                return ds.version();
            }
        }
    }

    void writeLanceTag(String table, String tag, long version, BufferAllocator alloc) {
        try (Dataset ds = openDataset(table, null, alloc)) {
            for (org.lance.Tag t : ds.tags().list()) {
                if (t.getName().equals(tag)) {
                    ds.tags().delete(tag); // an orphan of a killed commit: the lake has no such tag
                }
            }
            ds.tags().create(tag, version);
        }
    }

    /** @return whether the table's dataset exists */
    boolean exists(String table) {
        try (BufferAllocator a = allocator.newChildAllocator("probe", 0, Long.MAX_VALUE);
                Dataset ds = openLatestOrNull(table, a)) {
            return ds != null;
        }
    }

    /**
     * @return a typed error for a failed Lance call: bad input when Lance says the request was invalid (an unknown
     *     column, a filter that does not parse), else storage unavailable
     */
    static FlywheelException failure(String what, Exception e) {
        String m = String.valueOf(e.getMessage());
        String first = lanceMessage(e);
        if (m.contains("Invalid user input") || m.contains("Schema error") || m.contains("No field named")
                || m.contains("SQL") || m.contains("sql parser") || m.contains("not found in schema")) {
            return new BadInputException(what + ": " + first, e);
        }
        return new StorageUnavailableException(what + ": " + first, e);
    }

    /**
     * @return the first line of a Lance error without the positions in Lance's Rust sources it appends
     *     ({@code , /workspace/rust/lance-io/src/local.rs:133:40})
     */
    static String lanceMessage(Throwable e) {
        String m = String.valueOf(e.getMessage());
        String first = m.lines().findFirst().orElse(m);
        return first.replaceAll(",?\\s*/[\\w./-]*\\.rs:\\d+:\\d+", "").strip();
    }

    static boolean notFound(Throwable e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("not found") || m.contains("NotFound") || m.contains("was not found")
                || m.contains("does not exist");
    }

    static boolean isRemote(String root) {
        return root.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*");
    }

    private static String normalize(String location) {
        if (location == null || location.isBlank()) {
            throw new IllegalArgumentException("lake location must not be empty");
        }
        String s = location.strip();
        if (s.startsWith("file://")) {
            s = s.substring("file://".length());
        }
        if (isRemote(s)) {
            while (s.endsWith("/")) {
                s = s.substring(0, s.length() - 1);
            }
            return s;
        }
        return Path.of(s).toAbsolutePath().normalize().toString();
    }

    private static StorageConfig storageFor(String root, Options o) {
        Path cfg = o.configFile();
        if (cfg == null && !isRemote(root) && Files.isRegularFile(Path.of(root, CONFIG_FILE))) {
            cfg = Path.of(root, CONFIG_FILE);
        }
        if (cfg == null && o.environment().get("FLYWHEEL_CONFIG") != null) {
            cfg = Path.of(o.environment().get("FLYWHEEL_CONFIG"));
        }
        StorageConfig file = cfg == null ? StorageConfig.none() : StorageConfig.fromYaml(cfg);
        StorageConfig env = isRemote(root) ? StorageConfig.fromEnvironment(o.environment()) : StorageConfig.none();
        return StorageConfig.resolve(o.storage(), file, env);
    }
}
