package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.WriteParams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.VersionInfo;
import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel lake versions | log | compact | cleanup | migrate} on lakes of the 25 real BridgeData episodes:
 * exit codes (0 ok, 1 bad input, 2 wrong usage), the --json keys, and after compaction and cleanup every tag opens
 * what it named and every training set loads.
 */
class LakeMaintenanceCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String bridgeLake(Path tmp) {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun ingest = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString());
        assertEquals(0, ingest.exitCode(), ingest.err());
        return lake;
    }

    private static JsonNode json(CliRun r) throws IOException {
        assertEquals(0, r.exitCode(), r.err());
        return JSON.readTree(r.out());
    }

    @Test
    void versionsLogAndCompactOnAnIngestedLake(@TempDir Path tmp) throws IOException {
        String lake = bridgeLake(tmp); // 25 recordings, one lake commit each

        JsonNode v = json(CliRun.of("lake", "versions", lake, "--json"));
        assertEquals(26, v.get("commit").asLong(), "init and 25 ingests");
        assertEquals("ingest", v.get("operation").asText());
        assertEquals(26, v.get("table_versions").get("frames").asLong(), "version 1 by init, one per ingest");
        Map<String, JsonNode> tables = new HashMap<>();
        v.get("tables").forEach(t -> tables.put(t.get("table").asText(), t));
        JsonNode frames = tables.get("frames");
        for (String key : List.of("table", "committed_version", "latest_version", "ahead", "versions", "oldest_version",
                "tags", "rows", "fragments", "data_bytes", "indexes")) {
            assertTrue(frames.has(key), key + " in " + frames);
        }
        assertEquals(26, frames.get("committed_version").asLong());
        assertFalse(frames.get("ahead").asBoolean());
        assertEquals(250, frames.get("rows").asLong());
        assertEquals(25, frames.get("fragments").asLong());
        assertEquals(26, frames.get("versions").asLong());
        CliRun text = CliRun.of("lake", "versions", lake);
        assertTrue(text.out().contains("readers outside Flywheel open these versions for a consistent set:"
                + " episodes@26 frames@26 raw_files@26"), text.out());

        JsonNode log = json(CliRun.of("lake", "log", lake, "--limit", "3", "--json"));
        assertEquals(3, log.get("commits").size());
        JsonNode newest = log.get("commits").get(0);
        assertEquals(26, newest.get("seq").asLong());
        assertEquals(25, newest.get("parent_seq").asLong());
        assertEquals("ingest", newest.get("operation").asText());
        assertTrue(newest.get("summary").has("recording"), newest.toString());
        for (String key : List.of("committed_at", "committed_at_ns", "writer", "txn_id", "tables")) {
            assertTrue(newest.has(key), key);
        }
        JsonNode change = newest.get("tables").get(0);
        for (String key : List.of("table", "kind", "from_version", "to_version", "rows_added", "rows_updated",
                "rows_deleted", "columns")) {
            assertTrue(change.has(key), key + " in " + change);
        }
        assertEquals(25, log.get("commits").get(1).get("seq").asLong(), "newest first");

        JsonNode c = json(CliRun.of("lake", "compact", lake, "--json"));
        Map<String, JsonNode> compacted = new HashMap<>();
        c.get("tables").forEach(t -> compacted.put(t.get("table").asText(), t));
        JsonNode f = compacted.get("frames");
        assertTrue(f.get("compacted").asBoolean());
        assertEquals(25, f.get("before").get("fragments").asLong());
        assertEquals(1, f.get("after").get("fragments").asLong());
        assertEquals(250, f.get("after").get("rows").asLong());
        assertEquals(27, c.get("compact_commit").asLong());
        assertEquals(0, c.get("index_commit").asLong());
        assertEquals(100, c.get("routine_every_commits").asLong(), "the default");
        assertEquals(8, c.get("policy").get("min_small_fragments").asLong());
        for (String key : List.of("reason", "from_version", "to_version", "fragments_removed", "fragments_added",
                "files_removed", "files_added", "indexes_refreshed")) {
            assertTrue(f.has(key), key);
        }
        CliRun again = CliRun.of("lake", "compact", lake, "--table", "frames", "--routine-every", "0");
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("nothing to compact under the policy"), again.out());
        assertTrue(again.out().contains("routine: off"), again.out());
        JsonNode after = json(CliRun.of("lake", "versions", lake, "--json"));
        assertEquals(250, after.get("tables").findValues("rows").stream().mapToLong(JsonNode::asLong).max().orElse(0));
        JsonNode configure = json(CliRun.of("lake", "log", lake, "--limit", "1", "--json")).get("commits").get(0);
        assertEquals("configure", configure.get("operation").asText());
        assertEquals(0, json(CliRun.of("lake", "log", lake, "--json")).get("missing_commits").size());

        // a commit point removed by hand: the log still prints, and says where its hole is
        Files.delete(Path.of(lake, "_lake/commits", String.format("%020d", 5) + ".json"));
        CliRun holed = CliRun.of("lake", "log", lake, "--limit", "100", "--json");
        assertEquals(0, holed.exitCode(), holed.err());
        assertEquals("[5]", json(holed).get("missing_commits").toString());
        assertTrue(holed.err().contains("commit point(s) [5] are missing"), holed.err());
    }

    @Test
    void exitCodesSayBadInputOrWrongUsage(@TempDir Path tmp) {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun missing = CliRun.of("lake", "versions", tmp.resolve("nothing").toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no Flywheel lake at"), missing.err());
        CliRun table = CliRun.of("lake", "compact", lake, "--table", "frams");
        assertEquals(1, table.exitCode());
        assertTrue(table.err().contains("has no table 'frams' (tables: episodes, frames, raw_files)"), table.err());
        assertEquals(2, CliRun.of("lake", "compact", lake, "--max-deleted-fraction", "2").exitCode());
        assertEquals(2, CliRun.of("lake", "compact", lake, "--routine-every", "-1").exitCode());
        assertEquals(2, CliRun.of("lake", "log", lake, "--limit", "0").exitCode());
        CliRun noAge = CliRun.of("lake", "cleanup", lake);
        assertEquals(2, noAge.exitCode());
        assertTrue(noAge.err().contains("--older-than"), noAge.err());
        CliRun badAge = CliRun.of("lake", "cleanup", lake, "--older-than", "soon");
        assertEquals(2, badAge.exitCode());
        assertTrue(badAge.err().contains("'soon' is not an age"), badAge.err());
        assertEquals(2, CliRun.of("lake", "frobnicate", lake).exitCode());
        for (CliRun r : List.of(missing, table, noAge, badAge)) {
            assertTrue(r.noStackTrace(), r.err());
        }
    }

    @Test
    void afterCompactionAndCleanupEveryTagOpensAndEveryTrainingSetLoads(@TempDir Path tmp) throws IOException {
        String lake = bridgeLake(tmp);
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.4", "--seed", "3",
                "--rate-hz", "0").exitCode());
        CliRun more = CliRun.of("ingest", lake, SharedData.data("mcap-real/labelbox-franka").toString());
        assertEquals(0, more.exitCode(), more.err());
        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "train-v2", "--ratio", "0.5", "--seed", "4",
                "--rate-hz", "0").exitCode());
        assertEquals(0, CliRun.of("lake", "compact", lake).exitCode());
        try (Lake l = Lake.open(lake)) {
            for (String tag : List.of("train-v1", "train-v2")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> sources = (Map<String, Object>) io.flywheel.curate.trainset.Trainsets.open(l, tag)
                        .lineage().get("source_versions");
                Map<String, Long> pinned = l.snapshot().tag(tag);
                sources.forEach((t, v) -> assertEquals(((Number) v).longValue(), pinned.get(t),
                        tag + ": the set's tag pins its lineage's " + t + " version"));
            }
        }
        Map<String, Long> rowsBefore = tagRows(lake);
        Map<String, Long> samples = new HashMap<>();
        for (String tag : List.of("train-v1", "train-v2")) {
            samples.put(tag, json(CliRun.of("load", lake, tag, "--batches", "1", "--json")).get("samples").asLong());
        }
        long frames2Before;
        try (Lake l = Lake.open(lake); LakeTable f = l.table("frames")) {
            frames2Before = f.versions().stream().filter(x -> x.version() == 2).count();
        }
        assertEquals(1, frames2Before, "frames version 2 (the first ingest) is there, and no tag names it");

        CliRun dryText = CliRun.of("lake", "cleanup", lake, "--older-than", "0s", "--dry-run");
        assertTrue(dryText.out().contains("\nwould remove "), dryText.out());
        JsonNode dry = json(CliRun.of("lake", "cleanup", lake, "--older-than", "0s", "--dry-run", "--json"));
        assertTrue(dry.get("dry_run").asBoolean());
        assertTrue(dry.get("versions_to_remove").asLong() > 0);
        for (String removed : List.of("versions_removed", "files_removed", "bytes_removed")) {
            assertFalse(dry.has(removed), "a dry run removes nothing, so it has no " + removed + ": " + dry);
        }
        assertTrue(dry.has("files_to_remove") && dry.has("bytes_to_free"), dry.toString());
        assertTrue(dry.get("tables").get(0).has("versions_to_remove"), dry.toString());
        try (Lake l = Lake.open(lake); LakeTable f = l.table("frames")) {
            assertEquals(1, f.versions().stream().filter(x -> x.version() == 2).count(), "the dry run removed nothing");
        }
        JsonNode r = json(CliRun.of("lake", "cleanup", lake, "--older-than", "0s", "--json"));
        for (String key : List.of("lake", "dry_run", "older_than_s", "cutoff", "commit", "versions_removed",
                "files_removed", "bytes_removed", "tables")) {
            assertTrue(r.has(key), key);
        }
        assertFalse(r.get("dry_run").asBoolean());
        assertEquals(dry.get("versions_to_remove").asLong(), r.get("versions_removed").asLong(),
                "the dry run said what cleanup then removed");
        assertTrue(r.get("files_removed").asLong() > 0);
        assertTrue(r.get("bytes_removed").asLong() > 0);
        JsonNode framesCleanup = null;
        for (JsonNode t : r.get("tables")) {
            if (t.get("table").asText().equals("frames")) {
                framesCleanup = t;
            }
        }
        assertTrue(framesCleanup.get("removed_versions").toString().contains("2"), framesCleanup.toString());
        assertTrue(framesCleanup.get("kept_old").size() >= 2, "the two sets' frames versions: " + framesCleanup);

        assertEquals(rowsBefore, tagRows(lake), "every tag opens every table it pins, with the same rows");
        try (Lake l = Lake.open(lake); LakeTable f = l.table("frames")) {
            assertTrue(f.versions().stream().map(VersionInfo::version).noneMatch(x -> x == 2),
                    "frames version 2, older than 0s and named by no tag, is gone");
        }
        for (String tag : List.of("train-v1", "train-v2")) {
            JsonNode load = json(CliRun.of("load", lake, tag, "--batches", "0", "--json"));
            assertEquals(samples.get(tag), load.get("samples").asLong(), tag);
            assertEquals(load.get("batches_per_epoch").asLong(), load.get("batches_timed").asLong(),
                    tag + ": a whole epoch read");
        }
        CliRun text = CliRun.of("lake", "cleanup", lake, "--older-than", "7d");
        assertEquals(0, text.exitCode(), text.err());
        assertTrue(text.out().contains("removed 0 version(s)"), text.out());
    }

    @Test
    void migrateTurnsAVersion2LakeIntoACurrentOne(@TempDir Path tmp) throws IOException {
        String lake = bridgeLake(tmp);
        writeAsVersion2(Path.of(lake));
        CliRun refused = CliRun.of("lake", "versions", lake);
        assertEquals(1, refused.exitCode());
        assertTrue(refused.err().contains("schema version 2") && refused.err().contains("flywheel lake migrate " + lake),
                refused.err());

        JsonNode m = json(CliRun.of("lake", "migrate", lake, "--json"));
        assertTrue(m.get("migrated").asBoolean());
        assertEquals("2", m.get("from_schema_version").asText());
        assertEquals("4", m.get("schema_version").asText());
        assertEquals(2, m.get("commit").asLong(), "commit 1: schema version 3 (commit points); 2: version 4");
        assertEquals(26, m.get("tables").get("frames").asLong(), "the tables keep their versions");
        assertEquals("[\"train-old\"]", m.get("tags").toString());

        JsonNode v = json(CliRun.of("lake", "versions", lake, "--json"));
        assertEquals("migrate", v.get("operation").asText());
        for (JsonNode t : v.get("tables")) {
            if (t.get("table").asText().equals("frames")) {
                assertEquals(250, t.get("rows").asLong());
                assertEquals(5, t.get("tags").get("train-old").asLong());
            }
        }
        try (Lake l = Lake.open(lake); LakeTable old = l.table("frames", TableRef.tag("train-old"))) {
            assertEquals(40, old.countRows(), "the old Lance tag opens frames version 5: 4 recordings");
        }
        CliRun again = CliRun.of("lake", "migrate", lake);
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("is at schema version 4 already"), again.out());
    }

    /** Row counts of every table every lake tag pins, by "tag/table". */
    private static Map<String, Long> tagRows(String lake) {
        Map<String, Long> out = new java.util.TreeMap<>();
        try (Lake l = Lake.open(lake)) {
            LakeSnapshot s = l.snapshot();
            s.tags().forEach((tag, pins) -> pins.keySet().forEach(t -> {
                try (LakeTable table = l.table(t, TableRef.tag(tag))) {
                    out.put(tag + "/" + t, table.countRows());
                }
            }));
        }
        assertTrue(out.containsKey("train-v1/frames") && out.containsKey("train-v2/trainset_samples"), out.toString());
        return out;
    }

    /**
     * Turns a current lake into the layout a schema version 2 Flywheel left: no commit points, a {@code _catalog}
     * table saying version 2, and a Lance tag (version 2 lakes tagged with Lance tags).
     */
    private static void writeAsVersion2(Path lake) throws IOException {
        try (Stream<Path> walk = Files.walk(lake.resolve(Lake.META))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        try (BufferAllocator a = new RootAllocator()) {
            try (Dataset frames = Dataset.open(a, lake.resolve("frames.lance").toString(), new ReadOptions.Builder()
                    .build())) {
                frames.tags().create("train-old", 5);
            }
            Schema kv = new Schema(List.of(new Field("key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
                    new Field("value", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));
            List<String[]> rows = new ArrayList<>(List.of(new String[] {"flywheel.schema_version", "2"},
                    new String[] {"created_at_ns", "1700000000000000000"}));
            // the rows as an Arrow IPC stream, read back as the reader Lance's writer takes
            java.io.ByteArrayOutputStream ipc = new java.io.ByteArrayOutputStream();
            try (VectorSchemaRoot root = VectorSchemaRoot.create(kv, a);
                    ArrowStreamWriter w = new ArrowStreamWriter(root, null, ipc)) {
                root.allocateNew();
                for (int i = 0; i < rows.size(); i++) {
                    ((VarCharVector) root.getVector("key")).setSafe(i, rows.get(i)[0].getBytes(StandardCharsets.UTF_8));
                    ((VarCharVector) root.getVector("value")).setSafe(i, rows.get(i)[1].getBytes(StandardCharsets.UTF_8));
                }
                root.setRowCount(rows.size());
                w.start();
                w.writeBatch();
                w.end();
            }
            try (ArrowStreamReader src = new ArrowStreamReader(new java.io.ByteArrayInputStream(ipc.toByteArray()), a);
                    Dataset cat = Dataset.write().allocator(a).reader(src).uri(lake.resolve("_catalog.lance").toString())
                    .mode(WriteParams.WriteMode.CREATE).execute()) {
                cat.version();
            }
        }
    }
}
