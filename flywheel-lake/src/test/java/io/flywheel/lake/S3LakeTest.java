package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.testkit.S3TestServer;

/**
 * A lake on {@code s3://} against a real S3-compatible server: s3proxy with a filesystem blob
 * store, in this JVM on a free loopback port, with AWS v2/v4 signature checking.
 */
class S3LakeTest {

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
    void initAppendAndReadThroughS3() {
        Lake.Options opts = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                .endpoint(endpoint).region("us-east-1").credentials(S3TestServer.KEY, S3TestServer.SECRET).build());
        try (Lake lake = Lake.init("s3://lakebucket/fleet/lake1/", opts)) {
            assertEquals("s3://lakebucket/fleet/lake1", lake.location());
            Fixtures.ingest(lake, 0, 3);
            Fixtures.ingest(lake, 1, 2);
        }
        // open again with the options from the environment variables instead
        Lake.Options fromEnv = Lake.Options.defaults().withEnvironment(Map.of("AWS_ENDPOINT_URL", endpoint,
                "AWS_ACCESS_KEY_ID", S3TestServer.KEY, "AWS_SECRET_ACCESS_KEY", S3TestServer.SECRET, "AWS_REGION", "us-east-1"));
        try (Lake lake = Lake.open("s3://lakebucket/fleet/lake1", fromEnv); LakeTable frames = lake.table("frames");
                LakeTable v2 = lake.table("frames", TableRef.version(2))) {
            assertEquals("4", lake.catalog().get("flywheel.schema_version"));
            assertEquals(3, lake.snapshot().seq());
            assertEquals(5, frames.countRows());
            assertEquals(3, frames.version());
            assertEquals(3, v2.countRows());
            assertEquals(Fixtures.frames(1, 2), frames.frames(ScanRequest.builder()
                    .filter("episode_id = '" + Fixtures.episodeId(1) + "'").build()));
            assertTrue(lake.rawFile(Fixtures.sha(0)).isPresent());
        }
        // vectors on S3: a model's columns, its rows, a search through the lake's storage options
        try (Lake lake = Lake.open("s3://lakebucket/fleet/lake1", fromEnv)) {
            EmbeddingModel m = lake.registerModel("m", 2, "");
            lake.begin("enrich").updateEpisodes(TableSchemas.episodeModelColumns(m), List.of(
                    Fixtures.episode(0, 3).withEmbedding("m", new float[] {1f, 0f}, 5L),
                    Fixtures.episode(1, 2).withEmbedding("m", new float[] {0.6f, 0.8f}, 5L))).commit();
            try (LakeTable eps = lake.table("episodes")) {
                List<VectorHit> hits = eps.nearest(VectorQuery.builder(new float[] {0f, 1f}).column(m.column())
                        .idColumn("episode_id").k(2).build());
                assertEquals(List.of(Fixtures.episodeId(1), Fixtures.episodeId(0)), hits.stream().map(VectorHit::id)
                        .toList());
                assertEquals(0.2f, hits.get(0).distance(), 1e-6f);
            }
        }
        // the objects are really in the bucket
        assertTrue(s3.blobStore().list("lakebucket").size() > 0);
        assertTrue(Files.isDirectory(dir.resolve("blobs/lakebucket/fleet/lake1/frames.lance/_versions")),
                "frames versions not found in the blob store folder");

        // a wrong secret is refused by the server, and the error names the table
        Lake.Options wrong = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                .endpoint(endpoint).region("us-east-1").credentials(S3TestServer.KEY, "not-the-secret").build());
        io.flywheel.error.StorageUnavailableException e = assertThrows(
                io.flywheel.error.StorageUnavailableException.class, () -> Lake.open("s3://lakebucket/fleet/lake1", wrong));
        assertTrue(e.getMessage().contains("s3://lakebucket/fleet/lake1/_lake/")
                && e.getMessage().contains("403"), e.getMessage());
    }
}
