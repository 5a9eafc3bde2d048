package io.flywheel.fleet;

import static io.flywheel.fleet.UploadServiceTest.begin;
import static io.flywheel.fleet.UploadServiceTest.bridge;
import static io.flywheel.fleet.UploadServiceTest.chunk;
import static io.flywheel.fleet.UploadServiceTest.end;
import static io.flywheel.fleet.UploadServiceTest.filesUnder;
import static io.flywheel.fleet.UploadServiceTest.req;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.LiveEpisode;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.live.McapReplay;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.RawLocator;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageLocator;
import io.flywheel.testkit.S3TestServer;
import io.grpc.Status;

/**
 * The gateway in front of a lake on S3 (s3proxy): an upload goes into a multipart upload to its raw key and appears
 * in the bucket only when complete and verified; the lake's rows name the object ({@code s3://}), whose images read
 * back by range equal the file's; the spooled copy is gone after ingest; a wrong hash leaves nothing in the bucket; a
 * live episode lands in the bucket the same way.
 */
class S3GatewayTest {
    @TempDir
    Path tmp;

    @Test
    void uploadsAndLiveEpisodesLandInTheBucketAndIngestWithS3Uris() throws Exception {
        Path src = bridge(8);
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        String key = "lake/raw/arm-1/" + sha + ".mcap";
        try (S3TestServer s3 = S3TestServer.start(tmp.resolve("blobs"), "fleetlake");
                Lake lake = Lake.init("s3://fleetlake/lake", Lake.Options.defaults().withEnvironment(s3.environment()))) {
            String token = RobotTokens.add(lake, "arm-1").token();
            Path spool = tmp.resolve("spool");
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().spool(spool).build());
                    FleetClient c = FleetClient.builder(gw.target()).token(token).chunkBytes(8192).build()) {
                // a wrong hash: DATA_LOSS, and nothing in the bucket
                try (RawUpload u = new RawUpload(gw.target(), token)) {
                    u.send(req(begin("arm-1", src, "0".repeat(64))));
                    u.send(chunk(bytes, 0, bytes.length)).send(end());
                    assertEquals(Status.Code.DATA_LOSS, u.end().getCode());
                }
                assertEquals(List.of(), s3.blobStore().list("fleetlake").stream()
                        .filter(m -> m.getName().contains("raw")).toList());

                c.upload(src, "arm-1", "ep-8", FileKind.MCAP, UploadListener.NONE);
                UploadStatus s = c.awaitIngested("arm-1", sha, Duration.ofSeconds(60));
                assertEquals(UploadState.INGESTED, s.getState(), s.toString());
                assertEquals("s3://fleetlake/" + key, s.getLandedUri());
                assertEquals("raw/arm-1/" + sha + ".mcap", s.getLandedPath());
            }
            try (var in = s3.blobStore().getBlob("fleetlake", key).getPayload().openStream()) {
                assertArrayEquals(bytes, in.readAllBytes());
            }
            assertEquals(List.of(), filesUnder(spool.resolve("raw")), "the spooled copy is removed after ingest");
            lake.refresh();
            assertEquals("s3://fleetlake/" + key, lake.rawFile(sha).orElseThrow().uri());
            List<FrameRow> frames;
            try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
                frames = t.frames(ScanRequest.all());
            }
            assertEquals(10, frames.size());
            String local = src.toAbsolutePath().normalize().toUri().toString();
            try (LocatorReader fromS3 = new LocatorReader(lake.rawStorage()); LocatorReader here = new LocatorReader()) {
                for (FrameRow f : frames) {
                    for (ImageLocator l : f.images()) {
                        assertEquals("s3://fleetlake/" + key, l.rawUri());
                        assertArrayEquals(here.read(RawLocator.fromStored(local, l.chunkOffset(), l.offset(),
                                l.length(), l.compression(), l.format(), l.width(), l.height())),
                                fromS3.read(RawLocator.fromStored(l.rawUri(), l.chunkOffset(), l.offset(), l.length(),
                                        l.compression(), l.format(), l.width(), l.height())));
                    }
                }
            }

            // a live episode: its MCAP lands in the bucket too
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().spool(spool).build());
                    FleetClient c = FleetClient.builder(gw.target()).token(token).build()) {
                LiveEpisode.Result r = McapReplay.stream(c, bridge(9), "arm-1", "ep-live", null, m -> true);
                String liveSha = r.done().getUpload().getSha256();
                UploadStatus s = c.awaitIngested("arm-1", liveSha, Duration.ofSeconds(60));
                assertEquals(UploadState.INGESTED, s.getState(), s.toString());
                assertEquals("s3://fleetlake/lake/raw/arm-1/" + liveSha + ".mcap", s.getLandedUri());
                assertTrue(s3.blobStore().blobExists("fleetlake", "lake/raw/arm-1/" + liveSha + ".mcap"));
            }
            assertFalse(Files.exists(spool.resolve("raw/arm-1/" + sha + ".mcap")));
        }
    }
}
