package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;

/**
 * Cleanup removes the versions older than the cutoff that nothing keeps, and the data files only they reference; it
 * keeps the newest lake commit's versions and later ones (a dead writer's), every lake tag's, every version the
 * training-set registry names, and Lance tags that are no lake tag. Versions named below are counted by hand from the
 * commits each test makes (frames: 1 = init, then one version per commit to it; a compaction makes two).
 */
class CleanupTest {
    @TempDir
    Path dir;

    @Test
    void cleanupKeepsTaggedLineageCommittedAndLaterVersionsAndRemovesTheRestWithTheirFiles() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 4; i++) {
                Fixtures.ingest(lake, i, 5); // frames v2..v5: fragments f0..f3
            }
            lake.compact(CompactionPolicy.builder().minSmallFragments(2).build(), List.of("frames")); // v6, v7: F
            trainset(lake, "set-a", Map.of("frames", 7L, "episodes", 5L), true);
            Fixtures.ingest(lake, 4, 5); // v8: F f4, the newest lake commit's
            CompactionTest.appendOutsideTheProtocol(lake, 90); // v9: a dead writer's
            Map<String, List<String>> committed = CompactionTest.dumps(lake);
            List<String> tagged;
            try (LakeTable t = lake.table("frames", TableRef.tag("set-a"))) {
                tagged = TableDump.of(t);
            }

            long smallFiles;
            try (LakeTable v5 = lake.table("frames", TableRef.version(5))) {
                smallFiles = v5.dataFiles().stream().mapToLong(DataFileRef::sizeBytes).sum();
            }
            CleanupResult dry = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO).asDryRun());
            CleanupResult.TableCleanup df = dry.table("frames");
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), df.removedVersions());
            assertEquals(4, df.dataFilesRemoved(), "f0..f3: F is in v7, F and f4 in v8");
            assertEquals(smallFiles, df.bytesRemoved(), "the sizes of f0..f3");
            assertEquals(9, versions(lake, "frames").size(), "a dry run removes nothing");

            CleanupResult r = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO));
            CleanupResult.TableCleanup f = r.table("frames");
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), f.removedVersions());
            assertEquals(4, f.dataFilesRemoved());
            assertTrue(f.bytesRemoved() > smallFiles, "f0..f3, and the manifests and transaction files");
            assertEquals(List.of(7L, 8L, 9L), versions(lake, "frames"));
            assertEquals(List.of("lake tag 'set-a'", "training set 'set-a' (lineage.source_versions)"),
                    f.keptOld().get(7L));
            assertEquals(List.of("newest lake commit " + r.commitSeq()), f.keptOld().get(8L));
            assertTrue(f.keptOld().get(9L).get(0).startsWith("after the newest lake commit"), f.keptOld().toString());
            assertEquals(committed, CompactionTest.dumps(lake), "the newest commit reads as before");
            try (LakeTable t = lake.table("frames", TableRef.tag("set-a"))) {
                assertEquals(tagged, TableDump.of(t), "the tag opens what it named");
            }
            assertThrows(RuntimeException.class, () -> lake.table("frames", TableRef.version(5)).close(),
                    "version 5 is gone");

            CleanupResult again = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO));
            assertEquals(0, again.versionsRemoved());
            Fixtures.ingest(lake, 5, 5); // and the lake takes commits (rolling back the dead writer's v9)
            CommitKillTestSupport.assertFiles(lake, 6, 5, "after cleanup");
        }
    }

    @Test
    void aLineageVersionNoTagPinsKeepsEveryVersionFromItAndLanceTagsAreKept() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 5; i++) {
                Fixtures.ingest(lake, i, 5); // frames v2..v6
            }
            trainset(lake, "set-b", Map.of("frames", 4L), false); // names v4, tags nothing
            try (BufferAllocator a = lake.newAllocator("t"); Dataset ds = lake.openDataset("frames", null, a)) {
                ds.tags().create("made-elsewhere", 2); // a Lance tag that is no lake tag
            }
            CleanupResult r = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO));
            CleanupResult.TableCleanup f = r.table("frames");
            assertEquals(List.of(1L, 3L), f.removedVersions());
            assertEquals(List.of("Lance tag 'made-elsewhere' (no lake tag)"), f.keptOld().get(2L));
            assertEquals(List.of("training set 'set-b' (lineage.source_versions)"), f.keptOld().get(4L));
            assertEquals(List.of("not below version 4, which training set 'set-b' (lineage.source_versions) names and"
                    + " no Lance tag pins"), f.keptOld().get(5L));
            try (LakeTable t = lake.table("frames", TableRef.version(4))) {
                assertEquals(15, t.countRows());
            }
        }
    }

    @Test
    void versionsYoungerThanTheCutoffAreKept() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            for (int i = 0; i < 3; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            CleanupResult r = lake.cleanup(CleanupRequest.olderThan(Duration.ofDays(1)));
            assertEquals(0, r.versionsRemoved());
            assertEquals(List.of(1L, 2L, 3L, 4L), versions(lake, "frames"));
            assertThrows(IllegalArgumentException.class, () -> CleanupRequest.olderThan(Duration.ofSeconds(-1)));
        }
    }

    @Test
    void aKilledWritersDataFilesGoOnceOlderThanAnHourAndAFreshOnesStay() throws Exception {
        java.nio.file.Path data = dir.resolve("lake/frames.lance/data");
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 5);
            java.util.Set<java.nio.file.Path> committed = dataFiles(data);
            failAtStaged(lake, 1); // a writer dies after writing its data files, before any commit
            java.util.Set<java.nio.file.Path> old = dataFiles(data);
            old.removeAll(committed);
            assertEquals(1, old.size(), "the dead writer's frames data file");
            java.nio.file.Files.setLastModifiedTime(old.iterator().next(), java.nio.file.attribute.FileTime.from(
                    java.time.Instant.now().minus(Duration.ofHours(2))));
            Fixtures.ingest(lake, 2, 5);
            Fixtures.ingest(lake, 3, 5);
            java.util.Set<java.nio.file.Path> beforeFresh = dataFiles(data);
            failAtStaged(lake, 4); // another one dies now: its file is minutes old, as a writer's in flight would be
            java.util.Set<java.nio.file.Path> fresh = dataFiles(data);
            fresh.removeAll(beforeFresh);
            assertEquals(1, fresh.size());
            Fixtures.ingest(lake, 5, 5);

            lake.cleanup(CleanupRequest.olderThan(Duration.ZERO));
            java.util.Set<java.nio.file.Path> left = dataFiles(data);
            assertFalse(left.containsAll(old), "the two-hour-old orphan is removed");
            assertTrue(left.containsAll(fresh), "the fresh orphan is kept");
            try (LakeTable t = lake.table("frames")) {
                assertEquals(20, t.countRows(), "episodes 0, 2, 3 and 5, every committed row");
                assertEquals(5, t.countRows("episode_id = '" + Fixtures.episodeId(5) + "'"));
            }
        }
    }

    private static void failAtStaged(Lake lake, int episode) {
        System.setProperty("flywheel.lake.fail-at", "staged");
        try {
            // a put stages new data files and commits them only with the lake commit: killed before it, they are in
            // no Lance version at all (an append commits its Lance version first and is rolled back instead)
            assertThrows(io.flywheel.error.StorageUnavailableException.class,
                    () -> lake.begin("put").putFrames(Fixtures.frames(episode, 5)).commit());
        } finally {
            System.clearProperty("flywheel.lake.fail-at");
        }
    }

    private static java.util.Set<java.nio.file.Path> dataFiles(java.nio.file.Path data) throws java.io.IOException {
        try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.list(data)) {
            return new java.util.TreeSet<>(s.toList());
        }
    }

    static List<Long> versions(Lake lake, String table) {
        try (LakeTable t = lake.table(table)) {
            return t.versions().stream().map(VersionInfo::version).toList();
        }
    }

    /**
     * A training set's registry row (as {@code io.flywheel.curate.trainset.TrainsetBuilder} writes it) whose lineage
     * names {@code sources}; with {@code tag}, the set's lake tag pins them as the builder's does.
     */
    static void trainset(Lake lake, String name, Map<String, Long> sources, boolean tag) {
        Schema schema = new Schema(List.of(TableSchemas.field("tag", TableSchemas.UTF8, false, "set"),
                TableSchemas.field("samples_version", TableSchemas.I64, false, "v"),
                TableSchemas.field("episodes_version", TableSchemas.I64, false, "v"),
                TableSchemas.field("lineage", TableSchemas.UTF8, false, "json")));
        StringBuilder json = new StringBuilder("{\"seed\":1,\"source_versions\":{");
        sources.forEach((t, v) -> json.append(json.charAt(json.length() - 1) == '{' ? "" : ",").append('"').append(t)
                .append("\":").append(v));
        json.append("}}");
        try (BufferAllocator a = lake.newAllocator("registry")) {
            LakeTransaction tx = lake.begin("trainset").append(TrainsetLineage.TRAINSETS,
                    BatchSource.single(schema, a, root -> {
                        ((VarCharVector) root.getVector("tag")).setSafe(0, name.getBytes(StandardCharsets.UTF_8));
                        ((BigIntVector) root.getVector("samples_version")).setSafe(0, 1);
                        ((BigIntVector) root.getVector("episodes_version")).setSafe(0, 1);
                        ((VarCharVector) root.getVector("lineage")).setSafe(0,
                                json.toString().getBytes(StandardCharsets.UTF_8));
                        root.setRowCount(1);
                    }), Set.of(name));
            if (tag) {
                tx.tag(name, List.of(), sources);
            }
            tx.commit();
        }
    }
}
