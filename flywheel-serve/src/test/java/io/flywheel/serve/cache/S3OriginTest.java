package io.flywheel.serve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.jclouds.blobstore.BlobStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.lake.StorageConfig;
import io.flywheel.testkit.S3TestServer;

/**
 * The S3 origin (AWS SDK v2) against a real S3-compatible server: s3proxy on a loopback port, filesystem blob store,
 * AWS v4 signatures checked. Objects are put through the blob store with known bytes (byte i of {@code a.bin} is
 * {@code (31 i + 7) mod 256}), then read back through the origin.
 */
class S3OriginTest {
    static final int MANY = 1003; // > 1000, the ListObjectsV2 page size: the listing must follow continuation tokens

    @TempDir
    static Path dir;
    static S3TestServer s3;
    static String endpoint;
    static byte[] a = new byte[300_000];

    @BeforeAll
    static void start() throws Exception {
        s3 = S3TestServer.start(dir.resolve("blobs"), "lakebucket");
        endpoint = s3.endpoint();
        BlobStore bs = s3.blobStore();
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) (31 * i + 7);
        }
        bs.putBlob("lakebucket", bs.blobBuilder("fleet/lake/a.bin").payload(a).build());
        bs.putBlob("lakebucket", bs.blobBuilder("fleet/lake/dir/b c+d.bin").payload(new byte[] {1, 2, 3}).build());
        bs.putBlob("lakebucket", bs.blobBuilder("other/x.bin").payload(new byte[] {9}).build());
        for (int i = 0; i < MANY; i++) {
            bs.putBlob("lakebucket", bs.blobBuilder(String.format("fleet/lake/many/%04d", i)).payload(new byte[i % 7])
                    .build());
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (s3 != null) {
            s3.close();
        }
    }

    static S3Origin origin(String secret) {
        return new S3Origin("s3://lakebucket/fleet/lake/", StorageConfig.builder().endpoint(endpoint).region("us-east-1")
                .credentials(S3TestServer.KEY, secret).build());
    }

    @Test
    void sizesRangesAndKeysNeedingEscapes() throws IOException {
        try (S3Origin o = origin(S3TestServer.SECRET)) {
            assertEquals("s3://lakebucket/fleet/lake/", o.describe());
            assertEquals(300_000, o.size("a.bin"));
            assertArrayEquals(Arrays.copyOfRange(a, 1000, 1100), o.read("a.bin", new ByteRange(1000, 1100)));
            assertArrayEquals(Arrays.copyOfRange(a, 299_990, 300_000), o.read("a.bin", new ByteRange(299_990, 300_000)));
            assertArrayEquals(a, o.read("a.bin", new ByteRange(0, 300_000)));
            assertEquals(0, o.read("a.bin", new ByteRange(5, 5)).length);
            assertEquals(3, o.size("dir/b c+d.bin"));
            assertArrayEquals(new byte[] {2, 3}, o.read("dir/b c+d.bin", new ByteRange(1, 3)));
        }
    }

    @Test
    void listingFollowsContinuationTokensAndStaysUnderThePrefix() throws IOException {
        try (S3Origin o = origin(S3TestServer.SECRET)) {
            List<Origin.Entry> many = o.list("many/");
            assertEquals(MANY, many.size());
            assertEquals(new Origin.Entry("many/0000", 0), many.get(0));
            assertEquals(new Origin.Entry("many/1002", 1002 % 7), many.get(MANY - 1));
            List<Origin.Entry> all = o.list("");
            assertEquals(MANY + 2, all.size()); // not other/x.bin
            assertEquals(new Origin.Entry("a.bin", 300_000), all.get(0));
            assertEquals(new Origin.Entry("dir/b c+d.bin", 3), all.get(1));
            assertEquals(List.of(), o.list("nothing-here/"));
        }
    }

    @Test
    void errorsNameBucketKeyAndRange() throws IOException {
        try (S3Origin o = origin(S3TestServer.SECRET)) {
            NoSuchFileException missing = assertThrows(NoSuchFileException.class, () -> o.size("missing.bin"));
            assertEquals("s3://lakebucket/fleet/lake/missing.bin", missing.getFile());
            NoSuchFileException missingGet = assertThrows(NoSuchFileException.class,
                    () -> o.read("missing.bin", new ByteRange(0, 10)));
            assertTrue(missingGet.getMessage().contains("GET bytes 0-10"), missingGet.getMessage());
            // partly past the end: the server sends what there is, the origin says it is short
            IOException shortRead = assertThrows(IOException.class, () -> o.read("a.bin", new ByteRange(299_000, 301_000)));
            assertTrue(shortRead.getMessage().contains("s3://lakebucket/fleet/lake/a.bin")
                    && shortRead.getMessage().contains("299000-301000") && shortRead.getMessage().contains("1000 bytes"),
                    shortRead.getMessage());
            // wholly past the end: HTTP 416
            IOException past = assertThrows(IOException.class, () -> o.read("a.bin", new ByteRange(400_000, 400_010)));
            assertTrue(past.getMessage().contains("s3://lakebucket/fleet/lake/a.bin: GET bytes 400000-400010 answered HTTP 416"),
                    past.getMessage());
        }
        try (S3Origin bad = origin("wrong-secret")) {
            IOException denied = assertThrows(IOException.class, () -> bad.read("a.bin", new ByteRange(0, 10)));
            assertTrue(denied.getMessage().contains("s3://lakebucket/fleet/lake/a.bin: GET bytes 0-10 answered HTTP 403"),
                    denied.getMessage());
        }
        io.flywheel.error.BadInputException noKeys = assertThrows(io.flywheel.error.BadInputException.class,
                () -> new S3Origin("s3://lakebucket/x", StorageConfig.builder().endpoint(endpoint).build()));
        assertTrue(noKeys.getMessage().contains("aws_access_key_id"), noKeys.getMessage());
    }
}
