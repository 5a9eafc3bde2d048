package io.flywheel.lake;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LakeTest {
    @TempDir
    Path dir;

    @Test
    void initCreatesEmptyTablesAtVersionOneAndTheFirstCommitPoint() {
        Path lakeDir = dir.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            assertEquals(java.util.Set.of(), lake.rawFileSha256s());
            for (String t : TableSchemas.CORE_TABLES) {
                assertTrue(Files.isDirectory(lakeDir.resolve(t + ".lance")), t);
                try (LakeTable table = lake.table(t)) {
                    assertEquals(1, table.version());
                    assertEquals(0, table.countRows());
                    assertEquals(TableSchemas.of(t).getFields().size(), table.schema().getFields().size());
                    String first = TableSchemas.of(t).getFields().get(0).getName();
                    assertEquals(TableSchemas.of(t).findField(first).getMetadata().get(TableSchemas.DOC_KEY),
                            table.schema().findField(first).getMetadata().get(TableSchemas.DOC_KEY));
                }
            }
            LakeSnapshot s = lake.snapshot();
            assertEquals(1, s.seq());
            assertEquals("init", s.operation());
            assertEquals(Map.of("raw_files", 1L, "episodes", 1L, "frames", 1L), s.tables());
            assertEquals("4", lake.catalog().get("flywheel.schema_version"));
            assertTrue(Files.isRegularFile(lakeDir.resolve("_lake/commits/00000000000000000001.json")));
        }
        io.flywheel.error.BadInputException e = assertThrows(io.flywheel.error.BadInputException.class,
                () -> Lake.init(lakeDir));
        assertTrue(e.getMessage().contains(lakeDir.toString()) && e.getMessage().contains("already exists"),
                e.getMessage());
        io.flywheel.error.NotFoundException missing = assertThrows(io.flywheel.error.NotFoundException.class,
                () -> Lake.open(dir.resolve("nothing")));
        assertTrue(missing.getMessage().contains("no Flywheel lake at " + dir.resolve("nothing")), missing.getMessage());
    }

    @Test
    void rowsRoundTripAndPutIsIdempotentByKey() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            CommitResult r = Fixtures.ingest(lake, 0, 5);
            assertEquals(List.of("frames", "episodes", "raw_files"),
                    r.tables().stream().map(CommitResult.TableCommit::table).toList());
            assertEquals(1, r.table("frames").fromVersion());
            assertEquals(2, r.table("frames").toVersion());
            assertEquals(5, r.table("frames").rowsWritten());
            Fixtures.ingest(lake, 1, 4);
            try (LakeTable frames = lake.table("frames"); LakeTable eps = lake.table("episodes");
                    LakeTable raw = lake.table("raw_files")) {
                assertEquals(9, frames.countRows());
                assertEquals(4, frames.countRows("episode_id = '" + Fixtures.episodeId(1) + "'"));
                List<FrameRow> got = frames.frames(ScanRequest.builder()
                        .filter("episode_id = '" + Fixtures.episodeId(0) + "'").build());
                assertEquals(Fixtures.frames(0, 5), got);
                assertEquals(List.of(Fixtures.episode(1, 4)),
                        eps.episodes(ScanRequest.builder().filter("frame_count = 4").build()));
                assertEquals(List.of(Fixtures.rawFile(0), Fixtures.rawFile(1)), raw.rawFiles(ScanRequest.all()));
                // frame 2 of episode 0: gripper unmatched -> null, flagged
                FrameRow f2 = got.get(2);
                assertNull(f2.gripper());
                assertEquals(List.of("unmatched:/gripper"), f2.flags());
                assertFalse(f2.streams().get(1).matched());
            }
            assertTrue(lake.rawFile(Fixtures.sha(1)).isPresent());
            assertTrue(lake.rawFile(Fixtures.sha(7)).isEmpty());
            // the whole-run check: every committed hash, from one scan
            assertEquals(java.util.Set.of(Fixtures.sha(0), Fixtures.sha(1)), lake.rawFileSha256s());

            // re-put file 0 with 3 frames: the 5 old frames of that episode are replaced, not duplicated
            CommitResult again = Fixtures.ingest(lake, 0, 3);
            assertEquals(5, again.table("frames").rowsReplaced());
            assertEquals(1, again.table("raw_files").rowsReplaced());
            try (LakeTable frames = lake.table("frames"); LakeTable eps = lake.table("episodes");
                    LakeTable raw = lake.table("raw_files")) {
                assertEquals(7, frames.countRows());
                assertEquals(2, eps.countRows());
                assertEquals(2, raw.countRows());
                assertEquals(Fixtures.frames(0, 3), frames.frames(ScanRequest.builder()
                        .filter("episode_id = '" + Fixtures.episodeId(0) + "'").build()));
            }
        }
    }

    @Test
    void versionsTagsScanAndTake() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 3); // frames v2
            lake.begin("tag").tag("first", List.of("frames", "episodes")).commit();
            Fixtures.ingest(lake, 1, 4); // frames v3
            assertThrows(CommitConflictException.class, () -> lake.begin("tag").tag("first", List.of("frames")).commit());
            assertThrows(io.flywheel.error.NotFoundException.class,
                    () -> lake.begin("tag").tag("second", List.of("nope")).commit());
            try (LakeTable frames = lake.table("frames")) {
                assertEquals(3, frames.version());
                assertEquals(List.of(1L, 2L, 3L), frames.versions().stream().map(VersionInfo::version).toList());
                assertEquals(List.of(new TagInfo("first", 2)), frames.tags());

                // projection + filter: timestamps of episode 1, frames 1..3
                List<Long> ts = new ArrayList<>();
                List<Integer> idx = new ArrayList<>();
                frames.scan(ScanRequest.builder().columns("frame_index", "timestamp_ns")
                        .filter("episode_id = '" + Fixtures.episodeId(1) + "' AND frame_index >= 1").build(), b -> {
                            assertEquals(List.of("frame_index", "timestamp_ns"), b.columnNames());
                            for (int i = 0; i < b.rowCount(); i++) {
                                idx.add(b.column("frame_index").getInt(i));
                                ts.add(b.column("timestamp_ns").getLong(i));
                            }
                        });
                assertEquals(List.of(1, 2, 3), idx);
                assertEquals(List.of(Fixtures.t0(1) + 100_000_000L, Fixtures.t0(1) + 200_000_000L,
                        Fixtures.t0(1) + 300_000_000L), ts);

                // take by position: rows 4 and 0 are episode 1 frame 1 and episode 0 frame 0
                List<FrameRow> taken = frames.takeFrames(4, 0);
                assertEquals(List.of(Fixtures.frames(1, 4).get(1), Fixtures.frames(0, 3).get(0)), taken);
                IndexOutOfBoundsException oob = assertThrows(IndexOutOfBoundsException.class,
                        () -> frames.takeFrames(0, 7));
                assertTrue(oob.getMessage().contains("row index 7 is outside [0, 7)"), oob.getMessage());
                assertThrows(IndexOutOfBoundsException.class, () -> frames.takeFrames(-1));
                assertThrows(io.flywheel.error.BadInputException.class,
                        () -> frames.scan(ScanRequest.builder().filter("no_such_column = 1").build(), b -> { }));
            }
            try (LakeTable v2 = lake.table("frames", TableRef.version(2));
                    LakeTable tagged = lake.table("frames", TableRef.tag("first"));
                    LakeTable v1 = lake.table("frames", TableRef.version(1))) {
                assertEquals(3, v2.countRows());
                assertEquals(2, tagged.version());
                assertEquals(Fixtures.frames(0, 3), tagged.frames(ScanRequest.all()));
                assertEquals(0, v1.countRows());
            }
            io.flywheel.error.NotFoundException noVersion = assertThrows(io.flywheel.error.NotFoundException.class,
                    () -> lake.table("frames", TableRef.version(42)));
            assertTrue(noVersion.getMessage().contains("frames.lance") && noVersion.getMessage().contains("version 42"),
                    noVersion.getMessage());
            assertThrows(io.flywheel.error.NotFoundException.class, () -> lake.table("frames", TableRef.tag("nope")));
        }
    }

    @Test
    void columnScopedUpdateKeepsEveryOtherColumnAndRow() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 3);
            Fixtures.ingest(lake, 1, 3);
            EpisodeRow e0 = Fixtures.episode(0, 3);
            // the values of every column change, but only the quality columns are named: only they are written
            EpisodeRow changed = new EpisodeRow(e0.episodeId(), "other", "other", "other", "other", "other", "other",
                    0L, 0L, 0L, "other", 99L, "fail", List.of("min_duration"), "{\"duration_s\":0.2}", "{}");
            CommitResult r = lake.begin("qc").updateEpisodes(List.of("quality_status", "quality_flags",
                    "quality_metrics"), List.of(changed)).commit();
            assertEquals(1, r.table("episodes").rowsWritten());
            EpisodeRow expected = new EpisodeRow(e0.episodeId(), e0.recordingId(), e0.robotId(), e0.task(), e0.scene(),
                    e0.operator(), e0.outcome(), e0.startNs(), e0.endNs(), e0.durationNs(), e0.masterTopic(),
                    e0.frameCount(), "fail", List.of("min_duration"), "{\"duration_s\":0.2}", e0.metadataJson(),
                    e0.embeddings(), null, null, e0.stateNames(), e0.actionNames());
            try (LakeTable eps = lake.table("episodes")) {
                assertEquals(2, eps.countRows());
                assertEquals(List.of(expected), eps.episodes(ScanRequest.builder().filter("quality_status = 'fail'").build()));
                assertEquals(List.of(Fixtures.episode(1, 3)), eps.episodes(ScanRequest.builder()
                        .filter("episode_id = '" + Fixtures.episodeId(1) + "'").build()));
            }
            io.flywheel.error.NotFoundException missing = assertThrows(io.flywheel.error.NotFoundException.class,
                    () -> lake.begin("qc").updateEpisodes(List.of("quality_status"), List.of(Fixtures.episode(7, 1)))
                            .commit());
            assertTrue(missing.getMessage().contains(Fixtures.episodeId(7)), missing.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> lake.begin("qc").updateEpisodes(List.of("episode_id"), List.of(e0)));
            assertThrows(IllegalArgumentException.class,
                    () -> lake.begin("qc").updateEpisodes(List.of("no_such_column"), List.of(e0)));
            LakeTransaction tx = lake.begin("x").putEpisodes(List.of(e0));
            assertThrows(IllegalStateException.class, () -> tx.updateEpisodes(List.of("task"), List.of(e0)));
        }
    }

    @Test
    void aFrameUpdateAcrossFragmentsWritesEachNamedRowOnceAndRefusesARowNamedTwice() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            for (int e = 0; e < 5; e++) {
                Fixtures.ingest(lake, e, 4); // one fragment per episode
            }
            // frames 1 and 3 of episodes 0, 2 and 4, given out of order: six rows in three fragments
            List<FrameRow> changed = new java.util.ArrayList<>();
            for (int e : new int[] {4, 0, 2}) {
                for (int j : new int[] {3, 1}) {
                    FrameRow f = Fixtures.frames(e, 4).get(j);
                    changed.add(f.withEnrichment(f.images(), List.of(), null, "phase-" + e + "-" + j));
                }
            }
            CommitResult r = lake.begin("label").updateFrames(List.of("phase"), changed).commit();
            assertEquals(6, r.table("frames").rowsWritten());
            try (LakeTable frames = lake.table("frames")) {
                assertEquals(20, frames.countRows());
                assertEquals(14, frames.countRows("phase IS NULL"));
                for (int e = 0; e < 5; e++) {
                    List<FrameRow> got = frames.frames(ScanRequest.builder().filter("episode_id = '"
                            + Fixtures.episodeId(e) + "'").orderBy(ScanRequest.SortKey.asc("frame_index")).build());
                    for (int j = 0; j < 4; j++) {
                        String phase = e % 2 == 0 && j % 2 == 1 ? "phase-" + e + "-" + j : null;
                        assertEquals(phase, got.get(j).phase(), "episode " + e + " frame " + j);
                        assertEquals(Fixtures.frames(e, 4).get(j).state().length, got.get(j).state().length);
                    }
                }
            }
            List<FrameRow> twice = List.of(changed.get(0), changed.get(1), changed.get(0));
            io.flywheel.error.BadInputException dup = assertThrows(io.flywheel.error.BadInputException.class,
                    () -> lake.begin("label").updateFrames(List.of("phase"), twice).commit());
            assertTrue(dup.getMessage().contains(Fixtures.episodeId(4)) && dup.getMessage().contains("twice"),
                    dup.getMessage());
        }
    }

    @Test
    void aRecordingWhoseRawFilesAreAllInTheLakeIsNotWrittenAgain() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            io.flywheel.rows.RecordingRows rec = new io.flywheel.rows.RecordingRows("rec-0",
                    List.of(Fixtures.rawFile(0)), List.of(Fixtures.episode(0, 3)), Fixtures.frames(0, 3));
            java.util.OptionalLong first = lake.commit(rec);
            assertTrue(first.isPresent());
            // another writer's ingest of the same file, checked before the first committed: skipped at commit time
            try (Lake other = Lake.open(dir.resolve("lake"))) {
                assertTrue(other.commit(rec).isEmpty(), "the same raw file is not ingested twice");
            }
            assertEquals(first.getAsLong(), lake.refresh().seq(), "no commit was made");
            try (LakeTable frames = lake.table("frames"); LakeTable raw = lake.table("raw_files")) {
                assertEquals(3, frames.countRows());
                assertEquals(1, raw.countRows());
            }
        }
    }

    @Test
    void aLakeWhoseEpisodesPredateValueNamesGetsTheirColumnsAtItsNextIngest() {
        try (Lake lake = Lake.init(dir.resolve("lake"));
             org.apache.arrow.memory.BufferAllocator alloc = new org.apache.arrow.memory.RootAllocator()) {
            // the episodes table as a lake created before the names columns has it
            List<org.apache.arrow.vector.types.pojo.Field> old = TableSchemas.episodes().getFields().stream()
                    .filter(f -> !f.getName().endsWith("_names")).toList();
            try (org.apache.arrow.vector.VectorSchemaRoot root = org.apache.arrow.vector.VectorSchemaRoot.create(
                    new org.apache.arrow.vector.types.pojo.Schema(old), alloc)) {
                root.setRowCount(0);
                lake.begin("migrate").rewrite(TableSchemas.EPISODES, new RootReader(root, alloc)).commit();
            }
            try (LakeTable eps = lake.table(TableSchemas.EPISODES)) {
                assertFalse(eps.hasColumn(TableSchemas.STATE_NAMES));
            }
            long before = lake.snapshot().seq();
            lake.commit(new io.flywheel.rows.RecordingRows("rec-0", List.of(Fixtures.rawFile(0)),
                    List.of(Fixtures.episode(0, 3)), Fixtures.frames(0, 3)));
            assertEquals(before + 2, lake.snapshot().seq(), "one schema commit, then the ingest");
            try (LakeTable eps = lake.table(TableSchemas.EPISODES)) {
                assertEquals(List.of(Fixtures.episode(0, 3)), eps.episodes(ScanRequest.all()));
                assertEquals(List.of("x", "left.y", "right.y"), eps.episodes(ScanRequest.all()).get(0).stateNames());
            }
        }
    }

    @Test
    void addedColumnsAreNullInExistingRowsAndTheSameColumnTwiceIsAConflict() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 3);
            org.apache.arrow.vector.types.pojo.Field label = new org.apache.arrow.vector.types.pojo.Field("label",
                    org.apache.arrow.vector.types.pojo.FieldType.nullable(TableSchemas.UTF8), null);
            CommitResult r = lake.begin("schema").addColumns("episodes", List.of(label)).commit();
            assertEquals(r.table("episodes").fromVersion() + 1, r.table("episodes").toVersion());
            assertEquals("schema", r.snapshot().changes().get(0).kind());
            try (LakeTable eps = lake.table("episodes")) {
                assertTrue(eps.schema().findField("label") != null);
                assertEquals(1, eps.countRows("label IS NULL"));
            }
            Fixtures.ingest(lake, 1, 3); // rows written without the column read it as null
            try (LakeTable eps = lake.table("episodes")) {
                assertEquals(2, eps.countRows("label IS NULL"));
            }
            assertThrows(io.flywheel.error.ConflictException.class,
                    () -> lake.begin("schema").addColumns("episodes", List.of(label)).commit());
            assertThrows(IllegalArgumentException.class, () -> lake.begin("schema").addColumns("episodes",
                    List.of(new org.apache.arrow.vector.types.pojo.Field("x",
                            org.apache.arrow.vector.types.pojo.FieldType.notNullable(TableSchemas.UTF8), null))));
        }
    }

    @Test
    void aDeadWritersNewTableIsReplacedNotAppendedTo() {
        org.apache.arrow.vector.types.pojo.Schema notes = new org.apache.arrow.vector.types.pojo.Schema(List.of(
                TableSchemas.field("note", TableSchemas.UTF8, false, "a note")));
        try (Lake lake = Lake.init(dir.resolve("lake"));
                org.apache.arrow.memory.BufferAllocator a = lake.newAllocator("test")) {
            System.setProperty("flywheel.lake.fail-at", "table-committed:notes");
            try {
                assertThrows(io.flywheel.error.StorageUnavailableException.class, () -> lake.begin("notes")
                        .append("notes", rows(notes, a, "a", "b"), java.util.Set.of()).commit());
            } finally {
                System.clearProperty("flywheel.lake.fail-at");
            }
            assertFalse(lake.refresh().tables().containsKey("notes"), "the failed commit created no lake table");
            assertTrue(Files.isDirectory(dir.resolve("lake/notes.lance")), "though its dataset exists");
            CommitResult r = lake.begin("notes").append("notes", rows(notes, a, "c"), java.util.Set.of()).commit();
            assertEquals("create", r.snapshot().changes().get(0).kind());
            try (LakeTable t = lake.table("notes")) {
                assertEquals(1, t.countRows(), "only the committed row, not the dead writer's two");
                assertEquals(1, t.countRows("note = 'c'"));
            }
        }
    }

    private static BatchSource rows(org.apache.arrow.vector.types.pojo.Schema schema,
            org.apache.arrow.memory.BufferAllocator a, String... values) {
        return BatchSource.single(schema, a, root -> {
            for (int i = 0; i < values.length; i++) {
                ((org.apache.arrow.vector.VarCharVector) root.getVector("note")).setSafe(i,
                        values[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            root.setRowCount(values.length);
        });
    }

    @Test
    void storageConfigSources() throws Exception {
        Path yaml = dir.resolve("flywheel.yaml");
        Files.writeString(yaml, "storage:\n  endpoint: http://127.0.0.1:9000\n  region: eu-west-1\n"
                + "  access_key_id: FILEKEY\n  secret_access_key: FILESECRET\n"
                + "  options:\n    aws_virtual_hosted_style_request: \"false\"\n");
        StorageConfig file = StorageConfig.fromYaml(yaml);
        assertEquals("http://127.0.0.1:9000", file.options().get("aws_endpoint"));
        assertEquals("true", file.options().get("allow_http"));
        assertEquals("false", file.options().get("aws_virtual_hosted_style_request"));
        StorageConfig env = StorageConfig.fromEnvironment(Map.of("AWS_ENDPOINT_URL", "https://s3.example",
                "AWS_ACCESS_KEY_ID", "ENVKEY", "AWS_SECRET_ACCESS_KEY", "ENVSECRET", "AWS_REGION", "us-east-1"));
        assertEquals("https://s3.example", env.options().get("aws_endpoint"));
        assertNull(env.options().get("allow_http"));
        StorageConfig merged = StorageConfig.resolve(StorageConfig.builder().region("ap-south-1").build(), file, env);
        assertEquals("ap-south-1", merged.options().get("aws_region"));
        assertEquals("FILEKEY", merged.options().get("aws_access_key_id"));
        assertFalse(merged.toString().contains("FILESECRET"));
        Files.writeString(yaml, "storage:\n  endpont: x\n");
        io.flywheel.error.BadInputException bad = assertThrows(io.flywheel.error.BadInputException.class,
                () -> StorageConfig.fromYaml(yaml));
        assertTrue(bad.getMessage().contains(yaml.toString()) && bad.getMessage().contains("storage.endpont"),
                bad.getMessage());
    }
}
