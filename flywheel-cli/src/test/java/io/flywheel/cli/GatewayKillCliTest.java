package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.client.UploadResult;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableSchemas;
import io.flywheel.testkit.SharedData;

/**
 * Nothing lost, nothing landed twice, when the gateway process is SIGKILLed in the middle of an upload: a gateway
 * started again on the lake (same port) takes up the staged bytes, the robot's client resumes from the offset it
 * names, and the file lands once, byte for byte, with one raw_files row.
 */
class GatewayKillCliTest {
    @TempDir
    Path tmp;

    @Test
    void anUploadSurvivesAKill9OfTheGateway() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        String token;
        try (Lake l = Lake.open(lake)) {
            token = RobotTokens.add(l, "arm-k").token();
        }
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String[] args = {"gateway", lake, "--grpc-port", Integer.toString(port), "--stats-every", "0", "--json"};
        Path src = SharedData.data("camera/bridge-mcap/bridge_ep11.mcap");
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        AtomicReference<GatewayProcess> gw = new AtomicReference<>(GatewayProcess.start(tmp.resolve("a"), null, args));
        gw.get().await(l -> l.contains("\"event\":\"listening\""));
        AtomicBoolean killed = new AtomicBoolean();
        UploadResult r;
        try (FleetClient c = FleetClient.builder("127.0.0.1:" + port).token(token).chunkBytes(4096).window(1)
                .maxAttempts(30).backoff(Duration.ofMillis(200), Duration.ofSeconds(1)).build()) {
            r = c.upload(src, "arm-k", "ep-k", FileKind.MCAP, new UploadListener() {
                @Override
                public void progress(Path file, long acked, long total) {
                    if (acked >= 8 * 4096 && killed.compareAndSet(false, true)) {
                        try {
                            gw.get().kill9();
                            gw.set(GatewayProcess.start(tmp.resolve("b"), null, args));
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }
            });
            assertTrue(killed.get(), "the gateway was killed mid-upload");
            assertTrue(r.attempts() >= 2 && r.resumedFrom() >= 8 * 4096, r.attempts() + " attempts, resumed from "
                    + r.resumedFrom());
            assertEquals(UploadState.INGESTED, c.awaitIngested("arm-k", sha, Duration.ofSeconds(60)).getState());
        } finally {
            gw.get().process().destroy();
            gw.get().process().waitFor();
        }
        Path landed = tmp.resolve("lake/raw/arm-k/" + sha + ".mcap");
        assertArrayEquals(bytes, Files.readAllBytes(landed));
        try (Stream<Path> s = Files.list(landed.getParent())) {
            assertEquals(1, s.count());
        }
        try (Lake l = Lake.open(lake); LakeTable t = l.table(TableSchemas.RAW_FILES)) {
            assertEquals(1, t.countRows("sha256 = '" + sha + "'"));
        }
    }
}
