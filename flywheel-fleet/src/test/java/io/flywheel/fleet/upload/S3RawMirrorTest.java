package io.flywheel.fleet.upload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.StorageConfig;
import io.flywheel.testkit.S3TestServer;

/**
 * {@link S3RawMirror} against s3proxy: parts go out as the staged bytes pass each part boundary; only a completed
 * upload is an object; a mirror opened again with the staging file keeps its parts; an abort leaves no object.
 */
class S3RawMirrorTest {
    @TempDir
    Path tmp;

    private static final long PART = 5L << 20; // S3 (and s3proxy) refuse smaller parts but the last

    @Test
    void partsFollowTheStagedBytesAndOnlyACompletedUploadIsAnObject() throws Exception {
        byte[] file = new byte[(int) (3 * PART + 1000)];
        new Random(7).nextBytes(file);
        try (S3TestServer s3 = S3TestServer.start(tmp.resolve("blobs"), "fleetbucket")) {
            Map<String, String> env = s3.environment();
            StorageConfig storage = StorageConfig.fromEnvironment(env);
            Staging staging = new Staging(tmp.resolve("spool"));
            StagedUpload u = new StagedUpload("u-1", "arm-1", "ab".repeat(32), file.length, "MCAP", "f.mcap", "", "",
                    "", StagedUpload.STAGING, "", "", 1, 1);
            Path part = staging.partFile(u);
            Files.createDirectories(part.getParent());
            String key = "lake/raw/arm-1/" + "ab".repeat(32) + ".mcap";
            try (S3RawMirror m = new S3RawMirror("s3://fleetbucket/lake", storage, staging, PART)) {
                assertEquals("s3://fleetbucket/" + key, m.uri(u));
                m.opened(u, 0);
                // 1.5 parts staged: one part sent
                Files.write(part, java.util.Arrays.copyOf(file, (int) (PART + PART / 2)));
                m.written(u, PART + PART / 2);
                assertEquals(1, load(staging, u).parts().size());
                assertFalse(s3.blobStore().blobExists("fleetbucket", key), "no object before completion");
            }
            // a gateway restarted on this machine: the same multipart upload goes on
            try (S3RawMirror m = new S3RawMirror("s3://fleetbucket/lake", storage, staging, PART)) {
                m.opened(u, Files.size(part));
                assertEquals(1, load(staging, u).parts().size());
                Files.write(part, java.util.Arrays.copyOfRange(file, (int) (PART + PART / 2), file.length),
                        StandardOpenOption.APPEND);
                m.written(u, file.length);
                assertEquals(3, load(staging, u).parts().size());
                assertEquals("s3://fleetbucket/" + key, m.complete(u, file.length));
            }
            assertTrue(s3.blobStore().blobExists("fleetbucket", key));
            try (var in = s3.blobStore().getBlob("fleetbucket", key).getPayload().openStream()) {
                assertArrayEquals(file, in.readAllBytes());
            }
            assertFalse(Files.exists(part.resolveSibling("u-1.s3.json")), "state forgotten after completion");

            // aborted: nothing in the bucket
            StagedUpload v = new StagedUpload("u-2", "arm-1", "cd".repeat(32), file.length, "MCAP", "g.mcap", "", "",
                    "", StagedUpload.STAGING, "", "", 1, 1);
            Files.write(staging.partFile(v), file);
            try (S3RawMirror m = new S3RawMirror("s3://fleetbucket/lake", storage, staging, PART)) {
                m.opened(v, 0);
                m.written(v, file.length);
                m.abort(v);
            }
            assertFalse(s3.blobStore().blobExists("fleetbucket", "lake/raw/arm-1/" + "cd".repeat(32) + ".mcap"));
        }
    }

    private static S3RawMirror.State load(Staging staging, StagedUpload u) throws Exception {
        return new com.fasterxml.jackson.databind.ObjectMapper()
                .setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE)
                .readValue(staging.partFile(u).resolveSibling(u.uploadId() + ".s3.json").toFile(),
                        S3RawMirror.State.class);
    }
}
