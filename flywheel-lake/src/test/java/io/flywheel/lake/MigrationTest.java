package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * A lake of schema version 2 (per-table commits, a {@code _catalog} table, Lance tags) is refused by name with the
 * command that migrates it, and migrated in place: its tables keep their data and versions, its Lance tags become
 * lake tags, the chain continues to version 4 (tables without version 3 embeddings need no rewrite), and the old
 * catalog then says version 4 so that an older Flywheel refuses it.
 */
class MigrationTest {
    @TempDir
    Path dir;

    @Test
    void aVersion2LakeIsRefusedByNameThenMigratedInPlace() {
        Path lakeDir = dir.resolve("old");
        writeVersion2Lake(lakeDir);
        LakeFormatException refused = assertThrows(LakeFormatException.class, () -> Lake.open(lakeDir));
        assertTrue(refused.getMessage().contains("schema version 2")
                && refused.getMessage().contains("flywheel lake migrate " + lakeDir), refused.getMessage());

        Lake.Migration m = Lake.migrate(lakeDir.toString(), Lake.Options.defaults());
        assertTrue(m.migrated());
        assertEquals("2", m.fromSchemaVersion());
        assertEquals("4", m.toSchemaVersion());
        LakeSnapshot s = m.snapshot();
        assertEquals(2, s.seq(), "commit 1: version 3 (the commit points); commit 2: version 4");
        assertEquals("migrate", s.operation());
        assertEquals(Map.of("raw_files", 3L, "episodes", 3L, "frames", 3L), s.tables(), "nothing rewritten");
        assertEquals(Map.of("train-old", Map.of("frames", 2L)), s.tags());
        assertEquals("2", s.properties().get("migrated_from_schema_version"));
        assertEquals("4", s.properties().get(Lake.SCHEMA_VERSION));
        try (Lake lake = Lake.open(lakeDir)) {
            assertEquals("3", lake.snapshot(1).properties().get(Lake.SCHEMA_VERSION));
        }

        try (Lake lake = Lake.open(lakeDir)) {
            CommitKillTestSupport.assertFiles(lake, 2, 4, "after migration");
            try (LakeTable old = lake.table("frames", TableRef.tag("train-old"))) {
                assertEquals(4, old.countRows(), "the old tag opens the version it named");
            }
            Fixtures.ingest(lake, 2, 4); // and the migrated lake takes commits
            CommitKillTestSupport.assertFiles(lake, 3, 4, "after a commit on the migrated lake");
        }
        Lake.Migration again = Lake.migrate(lakeDir.toString(), Lake.Options.defaults());
        assertTrue(!again.migrated() && again.snapshot().seq() == 3, "a second migrate is a no-op");
        try (BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
                Dataset cat = Dataset.open(a, lakeDir.resolve("_catalog.lance").toString(),
                        new org.lance.ReadOptions.Builder().build())) {
            assertEquals(1, cat.countRows("key = 'flywheel.schema_version' AND value = '4'"),
                    "an older Flywheel now refuses the lake instead of writing around its commit points");
        }
    }

    /** The layout an older Flywheel wrote: one commit per table per file, a catalog, a Lance tag. */
    static void writeVersion2Lake(Path lakeDir) {
        String root = lakeDir.toString();
        try (BufferAllocator a = new org.apache.arrow.memory.RootAllocator()) {
            for (String t : TableSchemas.CORE_TABLES) {
                Dataset.write().allocator(a).schema(TableSchemas.of(t)).uri(root + "/" + t + ".lance")
                        .mode(WriteParams.WriteMode.CREATE).execute().close();
            }
            for (int i = 0; i < 2; i++) {
                append(a, root, "frames", ArrowRows.frames(Fixtures.frames(i, 4), a));
                append(a, root, "episodes", ArrowRows.episodes(List.of(Fixtures.episode(i, 4)), a));
                append(a, root, "raw_files", ArrowRows.rawFiles(List.of(Fixtures.rawFile(i)), a));
            }
            try (Dataset f = Dataset.open(a, root + "/frames.lance", new org.lance.ReadOptions.Builder().build())) {
                f.tags().create("train-old", 2);
            }
            Schema kv = new Schema(List.of(TableSchemas.field("key", TableSchemas.UTF8, false, "k"),
                    TableSchemas.field("value", TableSchemas.UTF8, false, "v")));
            try (VectorSchemaRoot r = VectorSchemaRoot.create(kv, a)) {
                r.allocateNew();
                String[][] rows = {{"flywheel.schema_version", "2"}, {"created_at_ns", "1700000000000000000"},
                        {"tables", "frames,episodes,raw_files"}};
                for (int i = 0; i < rows.length; i++) {
                    ((VarCharVector) r.getVector("key")).setSafe(i, rows[i][0].getBytes(StandardCharsets.UTF_8));
                    ((VarCharVector) r.getVector("value")).setSafe(i, rows[i][1].getBytes(StandardCharsets.UTF_8));
                }
                r.setRowCount(rows.length);
                Dataset.write().allocator(a).reader(new RootReader(r, a)).uri(root + "/_catalog.lance")
                        .mode(WriteParams.WriteMode.CREATE).execute().close();
            }
        }
    }

    private static void append(BufferAllocator a, String root, String table, VectorSchemaRoot rows) {
        try (rows) {
            Dataset.write().allocator(a).reader(new RootReader(rows, a)).uri(root + "/" + table + ".lance")
                    .mode(WriteParams.WriteMode.APPEND).execute().close();
        }
    }
}
