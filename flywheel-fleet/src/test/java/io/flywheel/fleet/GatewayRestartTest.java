package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.client.UploadResult;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableSchemas;
import io.flywheel.testkit.SharedData;

/**
 * Graceful shutdown mid-upload: the gateway is stopped (no grace) once 3 chunks of 8 KiB of bridge_ep07.mcap (94,711
 * bytes) are acknowledged, the staged bytes stay, a new gateway on the same lake and port takes the upload up, and the
 * client, retrying, continues from the 24,576 bytes staged: the file lands once, with its SHA-256.
 */
class GatewayRestartTest {
    @TempDir
    Path tmp;

    @Test
    void aGatewayRestartedMidUploadResumesIt() throws Exception {
        Path src = SharedData.data("camera/bridge-mcap/bridge_ep07.mcap");
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        Path lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            String token = RobotTokens.add(lake, "arm-7").token();
            GatewayOptions first = GatewayOptions.builder().shutdownGrace(Duration.ZERO).build();
            FleetGateway[] gw = {FleetGateway.start(lake, first)};
            int port = gw[0].port();
            List<Long> stagedAtStop = new ArrayList<>();
            List<String> retries = new ArrayList<>();
            UploadResult r;
            try (FleetClient c = FleetClient.builder("127.0.0.1:" + port).token(token).chunkBytes(8192).window(1)
                    .backoff(Duration.ofMillis(100), Duration.ofMillis(400)).build()) {
                r = c.upload(src, "arm-7", "ep-7", FileKind.MCAP, new UploadListener() {
                    @Override
                    public void progress(Path file, long acked, long total) {
                        if (acked >= 3 * 8192 && stagedAtStop.isEmpty()) {
                            gw[0].close(); // while the client waits: in-flight upload cut, staged bytes kept
                            try (Stream<Path> s = Files.list(lakeDir.resolve("_staging/uploads/arm-7"))) {
                                for (Path p : s.filter(p -> p.toString().endsWith(".part")).toList()) {
                                    stagedAtStop.add(Files.size(p));
                                }
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                            gw[0] = FleetGateway.start(lake, GatewayOptions.builder().port(port).build());
                        }
                    }

                    @Override
                    public void retrying(Path file, int attempt, String status, Duration backoff) {
                        retries.add(status);
                    }
                });
                assertEquals(List.of(3L * 8192), stagedAtStop);
                assertTrue(r.attempts() >= 2, "attempts " + r.attempts());
                // the attempt that finished began where the cut one had stopped
                assertEquals(3L * 8192, r.resumedFrom());
                assertTrue(!retries.isEmpty() && retries.get(0).startsWith("UNAVAILABLE"), retries.toString());
                // sent: everything once, plus at most the one chunk lost in the cut
                assertTrue(r.bytesSent() >= bytes.length && r.bytesSent() <= bytes.length + 8192, "" + r.bytesSent());
                assertEquals(UploadState.INGESTED, c.awaitIngested("arm-7", sha, Duration.ofSeconds(30)).getState());
            } finally {
                gw[0].close();
            }
            Path landed = lakeDir.resolve("raw/arm-7/" + sha + ".mcap");
            assertArrayEquals(bytes, Files.readAllBytes(landed));
            try (Stream<Path> s = Files.list(lakeDir.resolve("raw/arm-7"))) {
                assertEquals(List.of(landed), s.toList());
            }
            lake.refresh();
            try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
                assertEquals(1, t.countRows());
                assertEquals(1, t.countRows("sha256 = '" + sha + "'"));
            }
        }
    }
}
