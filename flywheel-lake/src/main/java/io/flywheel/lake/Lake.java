package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.WriteParams;

/**
 * A Flywheel lake: a folder (local directory or {@code s3://bucket/prefix}) holding one Lance
 * dataset per table, {@code <lake>/<table>.lance}: {@code raw_files}, {@code episodes},
 * {@code frames} (schemas in {@link TableSchemas}), and {@code _catalog.lance}, a small key/value
 * table written last by {@link #init} (schema version, creation time, table list). The layout is
 * what {@code @lancedb/lancedb}'s {@code connect(lake).openTable(name)} expects.
 *
 * <p>A Lake owns one Arrow {@link RootAllocator}; close the lake after every {@link LakeTable}
 * opened from it. Not thread-safe for concurrent writers (one ingest at a time).
 */
public final class Lake implements AutoCloseable {
    /** Name of the catalog table. */
    public static final String CATALOG = "_catalog";
    /** Config file looked up inside a local lake directory. */
    public static final String CONFIG_FILE = "flywheel.yaml";

    private final String root;
    private final StorageConfig storage;
    private final BufferAllocator allocator;

    private Lake(String root, StorageConfig storage) {
        this.root = root;
        this.storage = storage;
        this.allocator = new RootAllocator(Long.MAX_VALUE);
    }

    /** Options for opening or creating a lake. */
    public record Options(StorageConfig storage, Path configFile, Map<String, String> environment) {
        /** @return defaults: no explicit storage options, config file looked up, the process environment */
        public static Options defaults() {
            return new Options(StorageConfig.none(), null, System.getenv());
        }

        public Options withStorage(StorageConfig s) {
            return new Options(s, configFile, environment);
        }

        public Options withConfigFile(Path f) {
            return new Options(storage, f, environment);
        }

        public Options withEnvironment(Map<String, String> env) {
            return new Options(storage, configFile, env);
        }
    }

    /**
     * Creates a lake: the three tables, empty, at version 1, then the catalog.
     *
     * @param location local directory (created if missing) or {@code s3://bucket/prefix}
     * @param options storage options
     * @return the open lake
     * @throws LakeException when a lake (or any of its tables) already exists there, naming it, or
     *     when the storage cannot be written
     */
    public static Lake init(String location, Options options) {
        String root = normalize(location);
        Lake lake = new Lake(root, storageFor(root, options));
        try {
            for (String t : allTables()) {
                if (lake.exists(t)) {
                    throw new LakeException("a lake already exists at " + root + " (found table " + lake.tableUri(t)
                            + "); refusing to init over it");
                }
            }
            if (!isRemote(root)) {
                Path dir = Path.of(root);
                if (Files.exists(dir) && !Files.isDirectory(dir)) {
                    throw new LakeException("cannot init lake at " + root + ": it is a file, not a folder");
                }
                Files.createDirectories(dir);
            }
            for (String t : TableSchemas.COMMIT_ORDER) {
                lake.create(t, TableSchemas.of(t));
            }
            lake.writeCatalog();
            return lake;
        } catch (LakeException e) {
            lake.close();
            throw e;
        } catch (Exception e) {
            lake.close();
            throw new LakeException("cannot init lake at " + root + ": " + e.getMessage(), e);
        }
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
     * Opens an existing lake.
     *
     * @param location local directory or {@code s3://bucket/prefix}
     * @param options storage options
     * @return the open lake
     * @throws LakeException when there is no lake catalog at the location, or its schema version is not
     *     {@link TableSchemas#SCHEMA_VERSION} (naming both)
     */
    public static Lake open(String location, Options options) {
        String root = normalize(location);
        Lake lake = new Lake(root, storageFor(root, options));
        boolean found;
        try {
            found = lake.exists(CATALOG);
        } catch (LakeException e) {
            lake.close();
            throw e;
        }
        if (!found) {
            lake.close();
            throw new LakeException("no Flywheel lake at " + root + ": " + lake.tableUri(CATALOG)
                    + " is missing (run `flywheel init " + location + "` first)");
        }
        String version;
        try {
            version = lake.catalog().get("flywheel.schema_version");
        } catch (RuntimeException e) {
            lake.close();
            throw e;
        }
        if (!Integer.toString(TableSchemas.SCHEMA_VERSION).equals(version)) {
            lake.close();
            throw new LakeException("the lake at " + root + " has table schema version " + version + "; this Flywheel"
                    + " reads and writes version " + TableSchemas.SCHEMA_VERSION + " (version 2 added image format/size"
                    + " and the enrichment columns to frames and episodes). Create a new lake with `flywheel init` and"
                    + " ingest the raw files again: they were never changed");
        }
        return lake;
    }

    /**
     * @param location local directory or {@code s3://bucket/prefix}
     * @param options storage options
     * @return whether a lake catalog exists at the location
     * @throws LakeException when the storage cannot be reached
     */
    public static boolean exists(String location, Options options) {
        try (Lake lake = new Lake(normalize(location), storageFor(normalize(location), options))) {
            return lake.exists(CATALOG);
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

    /** @return the lake's root: an absolute local path or an s3:// URI, without trailing slash */
    public String location() {
        return root;
    }

    /** @return the resolved storage options (secret masked in toString) */
    public StorageConfig storage() {
        return storage;
    }

    /** @return the catalog entries: schema_version, created_at_ns, tables, ... */
    public Map<String, String> catalog() {
        Map<String, String> out = new LinkedHashMap<>();
        try (LakeTable t = table(CATALOG)) {
            t.scan(ScanRequest.all(), batch -> {
                VarCharVector k = (VarCharVector) batch.getVector("key");
                VarCharVector v = (VarCharVector) batch.getVector("value");
                for (int i = 0; i < batch.getRowCount(); i++) {
                    out.put(new String(k.get(i), StandardCharsets.UTF_8), new String(v.get(i), StandardCharsets.UTF_8));
                }
            });
        }
        return out;
    }

    /**
     * Opens a table at its latest version. Close it (try-with-resources).
     *
     * @param name {@code raw_files}, {@code episodes}, {@code frames} or another table of the lake
     * @throws LakeException when it cannot be opened
     */
    public LakeTable table(String name) {
        return table(name, TableRef.latest());
    }

    /**
     * Opens a table at a version or tag. Close it (try-with-resources).
     *
     * @throws LakeException when the table, version or tag does not exist
     */
    public LakeTable table(String name, TableRef ref) {
        BufferAllocator child = allocator.newChildAllocator(name, 0, Long.MAX_VALUE);
        Dataset ds = null;
        try {
            ds = openDataset(name, ref.version(), child);
            if (ref.tag() != null) {
                Dataset tagged = ds.checkoutTag(ref.tag());
                ds.close();
                ds = tagged;
            }
            return new LakeTable(this, name, ds, child);
        } catch (Exception e) { // Lance's JNI also throws undeclared IOException
            if (ds != null) {
                ds.close();
            }
            child.close();
            throw new LakeException("cannot open table " + tableUri(name) + " at " + ref + ": " + e.getMessage(), e);
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
     * @return whether the table exists in this lake
     * @throws LakeException when the storage cannot be read
     */
    public boolean hasTable(String name) {
        return exists(name);
    }

    /**
     * Writes a table other than the three ingest tables (training sets, curation results) in one
     * atomic Lance commit: creates it at version 1 when missing, else appends to it or overwrites
     * it as a new version (older versions stay readable by number or tag).
     *
     * @param name table name (without {@code .lance}); not raw_files, episodes or frames
     * @param source the rows, batch by batch; its schema is the table's (overwrite may change it)
     * @param overwrite true to replace the rows as a new version, false to append
     * @return the table's version after the commit
     * @throws LakeException when the write fails; the table keeps its previous version
     */
    public long writeTable(String name, ArrowReader source, boolean overwrite) {
        if (TableSchemas.COMMIT_ORDER.contains(name) || CATALOG.equals(name)) {
            throw new IllegalArgumentException("table '" + name + "' is written through LakeTransaction only");
        }
        WriteParams.WriteMode mode = !exists(name) ? WriteParams.WriteMode.CREATE
                : overwrite ? WriteParams.WriteMode.OVERWRITE : WriteParams.WriteMode.APPEND;
        try (Dataset ds = Dataset.write().allocator(allocator).reader(source).uri(tableUri(name)).mode(mode)
                .storageOptions(storage.options()).execute()) {
            return ds.version();
        } catch (Exception e) { // Lance's JNI also throws undeclared IOException
            throw new LakeException("cannot write table " + tableUri(name) + " (" + mode + "): " + e.getMessage(), e);
        }
    }

    /**
     * @param name a name for memory accounting
     * @return a child of the lake's Arrow allocator; batches handed to {@link #writeTable} must be
     *     allocated from one (Lance imports them through the same root). Close it after use.
     */
    public BufferAllocator newAllocator(String name) {
        return allocator.newChildAllocator(name, 0, Long.MAX_VALUE);
    }

    /**
     * Idempotency check for a whole ingest run: the SHA-256 of every committed raw file, read in one scan
     * of the {@code sha256} column (one scan per run rather than one filtered scan per recording).
     *
     * @return lower-case hex SHA-256 digests, one per raw_files row; empty for a new lake
     * @throws LakeException when the table cannot be read
     */
    public java.util.Set<String> rawFileSha256s() {
        java.util.Set<String> out = new java.util.HashSet<>();
        try (LakeTable t = table(TableSchemas.RAW_FILES)) {
            t.scan(ScanRequest.builder().columns("sha256").build(), batch -> {
                org.apache.arrow.vector.VarCharVector v = (org.apache.arrow.vector.VarCharVector) batch.getVector("sha256");
                for (int i = 0; i < batch.getRowCount(); i++) {
                    if (!v.isNull(i)) {
                        out.add(new String(v.get(i), java.nio.charset.StandardCharsets.UTF_8));
                    }
                }
            });
        }
        return out;
    }

    /** @return a new transaction; nothing is written until {@link LakeTransaction#commit()} */
    public LakeTransaction begin() {
        return new LakeTransaction(this);
    }

    /** Closes the lake's allocator. */
    @Override
    public void close() {
        allocator.close();
    }

    // ------------------------------------------------------------------ internals

    String tableUri(String table) {
        return root + "/" + table + ".lance";
    }

    BufferAllocator allocator() {
        return allocator;
    }

    Dataset openDataset(String table, Long version, BufferAllocator alloc) {
        ReadOptions.Builder ro = new ReadOptions.Builder().setStorageOptions(storage.options());
        if (version != null) {
            ro.setVersion(version);
        }
        return Dataset.open().allocator(alloc).uri(tableUri(table)).readOptions(ro.build()).build();
    }

    /**
     * @return whether the table's dataset exists
     * @throws LakeException when the storage cannot be read (credentials, network): that is not
     *     "absent"
     */
    boolean exists(String table) {
        if (!isRemote(root) && !Files.isDirectory(Path.of(tableUri(table)))) {
            return false;
        }
        try (BufferAllocator a = allocator.newChildAllocator("probe", 0, Long.MAX_VALUE);
                Dataset ds = openDataset(table, null, a)) {
            return ds.version() >= 1;
        } catch (Exception e) { // Lance's JNI also throws undeclared IOException
            String m = String.valueOf(e.getMessage());
            if (m.contains("not found") || m.contains("NotFound") || m.contains("was not found")) {
                return false;
            }
            throw new LakeException("cannot read lake table " + tableUri(table) + ": " + m, e);
        }
    }

    private void create(String table, Schema schema) {
        try (Dataset ds = Dataset.write().allocator(allocator).schema(schema).uri(tableUri(table))
                .mode(WriteParams.WriteMode.CREATE).storageOptions(storage.options()).execute()) {
            if (ds.version() != 1) {
                throw new LakeException("table " + tableUri(table) + ": expected version 1 after create, got "
                        + ds.version());
            }
        }
    }

    private void writeCatalog() {
        Schema schema = new Schema(List.of(
                TableSchemas.field("key", TableSchemas.UTF8, false, "catalog key"),
                TableSchemas.field("value", TableSchemas.UTF8, false, "catalog value")));
        Map<String, String> entries = new LinkedHashMap<>();
        entries.put("flywheel.schema_version", Integer.toString(TableSchemas.SCHEMA_VERSION));
        entries.put("created_at_ns", Long.toString(System.currentTimeMillis() * 1_000_000L));
        entries.put("tables", String.join(",", TableSchemas.COMMIT_ORDER));
        entries.put("commit_order", String.join(",", TableSchemas.COMMIT_ORDER));
        try (VectorSchemaRoot r = VectorSchemaRoot.create(schema, allocator)) {
            r.allocateNew();
            VarCharVector k = (VarCharVector) r.getVector("key");
            VarCharVector v = (VarCharVector) r.getVector("value");
            int i = 0;
            for (Map.Entry<String, String> e : entries.entrySet()) {
                k.setSafe(i, e.getKey().getBytes(StandardCharsets.UTF_8));
                v.setSafe(i, e.getValue().getBytes(StandardCharsets.UTF_8));
                i++;
            }
            r.setRowCount(i);
            try (Dataset ds = Dataset.write().allocator(allocator).reader(new RootReader(r, allocator))
                    .uri(tableUri(CATALOG)).mode(WriteParams.WriteMode.CREATE).storageOptions(storage.options())
                    .execute()) {
                ds.version();
            }
        }
    }

    private static List<String> allTables() {
        List<String> l = new ArrayList<>(TableSchemas.COMMIT_ORDER);
        l.add(CATALOG);
        return l;
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

    static Field keyField(String table) {
        return TableSchemas.of(table).findField(TableSchemas.REPLACE_KEY.get(table));
    }
}
