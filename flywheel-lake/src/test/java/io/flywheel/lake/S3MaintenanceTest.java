package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.testkit.S3TestServer;

/**
 * Maintenance of a lake on {@code s3://} (s3proxy with a filesystem blob store on loopback, as {@link S3LakeTest}):
 * versions, compaction and cleanup through the lake's storage options, every row and value kept. s3proxy does not
 * implement the bulk delete Lance's cleanup sends, so on it cleanup fails, by type and naming the table.
 */
class S3MaintenanceTest {

    @TempDir
    Path dir;
    private S3TestServer s3;
    private String endpoint;

    @BeforeEach
    void startServer() throws Exception {
        s3 = S3TestServer.start(dir.resolve("blobs"), "lakebucket");
        endpoint = s3.endpoint();
    }

    @AfterEach
    void stopServer() throws Exception {
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void versionsCompactAndCleanupThroughS3() {
        Lake.Options opts = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                .endpoint(endpoint).region("us-east-1").credentials(S3TestServer.KEY, S3TestServer.SECRET).build());
        try (Lake lake = Lake.init("s3://lakebucket/lake", opts)) {
            MaintenanceRoutine.configure(lake, 0);
            for (int i = 0; i < 4; i++) {
                Fixtures.ingest(lake, i, 5);
            }
            Map<String, List<String>> before = CompactionTest.dumps(lake);
            CompactionResult r = lake.compact(CompactionPolicy.builder().minSmallFragments(2).build(), List.of());
            assertEquals(1, r.table("frames").after().fragments());
            assertEquals(before, CompactionTest.dumps(lake));
            CleanupResult dry = lake.cleanup(CleanupRequest.olderThan(Duration.ZERO).asDryRun());
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), dry.table("frames").removedVersions(),
                    "init, 4 appends and Lance's ReserveFragments");
            assertEquals(4, dry.table("frames").dataFilesRemoved());
            // s3proxy answers Lance's bulk delete (DeleteObjects with a checksum header) with 501 Not Implemented
            // (gaul/s3proxy#765): the failure is typed and names the table, and the lake reads as before
            io.flywheel.error.StorageUnavailableException e = assertThrows(
                    io.flywheel.error.StorageUnavailableException.class,
                    () -> lake.cleanup(CleanupRequest.olderThan(Duration.ZERO)));
            assertTrue(e.getMessage().startsWith("cleanup of table s3://lakebucket/lake/episodes.lance (lake commit"),
                    e.getMessage());
            LakeVersions v = lake.versions();
            assertEquals(7, v.table("frames").committedVersion());
            assertEquals(20, v.table("frames").rows());
        }
        try (Lake lake = Lake.open("s3://lakebucket/lake", opts)) {
            assertEquals(Map.of("frames", 7L, "episodes", 7L, "raw_files", 7L), lake.snapshot().tables());
            CommitKillTestSupport.assertFiles(lake, 4, 5, "after compaction and a failed cleanup on S3");
        }
        assertTrue(Files.isDirectory(dir.resolve("blobs/lakebucket/lake/frames.lance/_versions")));
    }
}
