package io.flywheel.lake;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * Lakes of table schema version 2: no commit points, a {@code _catalog} table of key/value pairs (the schema version
 * among them) and Lance tags per table. {@link Lake#migrate} reads the catalog, writes the first commit point from
 * each table's latest version (schema version 3, then {@link SchemaV3} takes it on), and marks the catalog migrated.
 */
final class SchemaV2 {
    private SchemaV2() {}

    /** Schema version 2 to 3: the first commit point, naming each table's latest version; its Lance tags as lake tags. */
    static LakeSnapshot firstCommitPoint(Lake lake, Map<String, String> catalog) {
        try (CommitLock.Held held = lake.lock.acquire(java.time.Duration.ofMinutes(10))) {
            Map<String, Long> versions = new TreeMap<>();
            Map<String, Map<String, Long>> tags = new TreeMap<>();
            List<LakeSnapshot.TableChange> changes = new ArrayList<>();
            try (BufferAllocator a = lake.newAllocator("migrate")) {
                for (String t : TableSchemas.KNOWN_TABLES) {
                    try (Dataset ds = lake.openLatestOrNull(t, a)) {
                        if (ds == null) {
                            continue;
                        }
                        versions.put(t, ds.version());
                        changes.add(new LakeSnapshot.TableChange(t, "migrate", ds.version(), ds.version(), 0, 0, 0,
                                List.of(), List.of()));
                        for (org.lance.Tag tag : ds.tags().list()) {
                            tags.computeIfAbsent(tag.getName(), k -> new TreeMap<>()).put(t, tag.getVersion());
                        }
                    }
                }
            }
            for (String t : TableSchemas.CORE_TABLES) {
                if (!versions.containsKey(t)) {
                    throw new LakeFormatException("the lake at " + lake.root + " has no table " + t
                            + "; it cannot be migrated");
                }
            }
            Map<String, String> props = new TreeMap<>();
            props.put(Lake.SCHEMA_VERSION, "3");
            props.put("created_at_ns", catalog.getOrDefault("created_at_ns", "0"));
            props.put("migrated_from_schema_version", "2");
            LakeSnapshot first = new LakeSnapshot(1, 0, java.util.UUID.randomUUID().toString(), "migrate",
                    System.currentTimeMillis() * 1_000_000L,
                    java.lang.management.ManagementFactory.getRuntimeMXBean().getName(), versions, tags, props, changes);
            if (!lake.log.publish(first)) { // a concurrent migrate
                return lake.log.latest().orElseThrow();
            }
            return first;
        }
    }

    /** @return the {@code _catalog} table's key/value pairs */
    static Map<String, String> catalog(Lake lake) {
        Map<String, String> out = new LinkedHashMap<>();
        try (BufferAllocator a = lake.newAllocator("catalog");
                Dataset ds = lake.openDataset(Lake.LEGACY_CATALOG, null, a);
                org.lance.ipc.LanceScanner s = ds.newScan(); ArrowReader r = s.scanBatches()) {
            while (r.loadNextBatch()) {
                VectorSchemaRoot b = r.getVectorSchemaRoot();
                VarCharVector k = (VarCharVector) b.getVector("key");
                VarCharVector v = (VarCharVector) b.getVector("value");
                for (int i = 0; i < b.getRowCount(); i++) {
                    out.put(new String(k.get(i), StandardCharsets.UTF_8), new String(v.get(i), StandardCharsets.UTF_8));
                }
            }
        } catch (Exception e) {
            throw new LakeFormatException("the catalog " + lake.tableUri(Lake.LEGACY_CATALOG) + " cannot be read: "
                    + e.getMessage(), e);
        }
        return out;
    }

    /**
     * After a migration, the schema version 2 catalog says the lake's new version, so that an older Flywheel refuses
     * the lake instead of writing to it outside the commit protocol.
     */
    static void markMigrated(Lake lake) {
        if (!lake.exists(Lake.LEGACY_CATALOG)) {
            return;
        }
        Map<String, String> c = catalog(lake);
        if (Integer.toString(TableSchemas.SCHEMA_VERSION).equals(c.get(Lake.SCHEMA_VERSION))) {
            return;
        }
        c.put(Lake.SCHEMA_VERSION, Integer.toString(TableSchemas.SCHEMA_VERSION));
        Schema schema = new Schema(List.of(TableSchemas.field("key", TableSchemas.UTF8, false, "catalog key"),
                TableSchemas.field("value", TableSchemas.UTF8, false, "catalog value")));
        try (BufferAllocator a = lake.newAllocator("catalog"); VectorSchemaRoot r = VectorSchemaRoot.create(schema, a)) {
            r.allocateNew();
            int i = 0;
            for (Map.Entry<String, String> e : c.entrySet()) {
                ((VarCharVector) r.getVector("key")).setSafe(i, e.getKey().getBytes(StandardCharsets.UTF_8));
                ((VarCharVector) r.getVector("value")).setSafe(i, e.getValue().getBytes(StandardCharsets.UTF_8));
                i++;
            }
            r.setRowCount(i);
            try (Dataset ds = Dataset.write().allocator(a).reader(new RootReader(r, a))
                    .uri(lake.tableUri(Lake.LEGACY_CATALOG)).mode(WriteParams.WriteMode.OVERWRITE).storageOptions(lake.storage.options()).execute()) {
                ds.version();
            }
        }
    }
}
