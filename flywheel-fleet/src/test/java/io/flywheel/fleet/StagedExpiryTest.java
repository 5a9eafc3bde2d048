package io.flywheel.fleet;

import static io.flywheel.fleet.UploadServiceTest.begin;
import static io.flywheel.fleet.UploadServiceTest.bridge;
import static io.flywheel.fleet.UploadServiceTest.chunk;
import static io.flywheel.fleet.UploadServiceTest.filesUnder;
import static io.flywheel.fleet.UploadServiceTest.req;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.lake.Lake;

/**
 * Staged uploads whose robot never comes back expire ({@link UploadLimits#stagedExpiry()}): their staging and state
 * files are removed and the robot's quota is free again; an upload receiving bytes, and files that landed, are not
 * touched. The expiry here is 2 s, so that the gateway's own schedule (every second) removes the abandoned one.
 */
class StagedExpiryTest {
    @TempDir
    Path tmp;

    @Test
    void anAbandonedStagedUploadIsRemovedAfterTheExpiryAndOnlyThatOne() throws Exception {
        Path src = bridge(4);
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        Path landedSrc = bridge(5);
        List<String> log = new CopyOnWriteArrayList<>();
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            String token = RobotTokens.add(lake, "gone").token();
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().log(log::add)
                    .limits(UploadLimits.builder().stagedExpiry(Duration.ofSeconds(2)).build()).build());
                    FleetClient c = FleetClient.builder(gw.target()).token(token).chunkBytes(8192).build()) {
                // one landed file, and one upload cut after two chunks whose robot never returns
                c.upload(landedSrc, "gone", "ep-5", FileKind.MCAP, io.flywheel.fleet.client.UploadListener.NONE);
                try (RawUpload u = new RawUpload(gw.target(), token)) {
                    u.send(req(begin("gone", src, sha)));
                    u.next();
                    u.send(chunk(bytes, 0, 8192));
                    u.next();
                    u.send(chunk(bytes, 8192, 16384));
                    u.next();
                    u.cancel();
                }
                Path staged = tmp.resolve("lake/_staging/uploads/gone");
                assertEquals(UploadState.STAGING, c.status("gone", sha).getState());
                long deadline = System.currentTimeMillis() + 15_000;
                while (c.status("gone", sha).getState() != UploadState.NOT_FOUND) {
                    assertTrue(System.currentTimeMillis() < deadline, "not expired: " + c.status("gone", sha));
                    Thread.sleep(200);
                }
                assertEquals(1, gw.stats().expired());
                assertEquals(0, gw.stats().staged());
                assertEquals(List.of(), filesUnder(staged));
                assertEquals(1, log.size(), log.toString());
                assertTrue(log.get(0).contains("expired the staged upload") && log.get(0).contains("16384 of "
                        + bytes.length + " bytes"), log.get(0));
                // the landed one is untouched and ingested
                assertEquals(UploadState.INGESTED, c.awaitIngested("gone", FleetClient.sha256(landedSrc),
                        Duration.ofSeconds(30)).getState());
                assertTrue(Files.isRegularFile(tmp.resolve("lake/raw/gone/" + FleetClient.sha256(landedSrc)
                        + ".mcap")));
                // the robot comes back after all: a fresh start at offset 0, and it lands
                assertEquals(0, c.upload(src, "gone", "ep-4", FileKind.MCAP,
                        io.flywheel.fleet.client.UploadListener.NONE).resumedFrom());
                assertEquals(UploadState.INGESTED, c.awaitIngested("gone", sha, Duration.ofSeconds(30)).getState());
            }
        }
    }
}
