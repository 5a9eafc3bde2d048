package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.lake.Lake;
import io.flywheel.testkit.SharedData;

/**
 * {@code gateway token add|list|revoke} and {@code upload} through the real entry point, against a gateway started in
 * this JVM on the lake; with the exit codes: 0, 1 for a refused upload (the gRPC status and message), 2 for usage.
 */
class GatewayCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void tokenAddThenUploadLandsAndIngests() throws Exception {
        String lake = tmp.resolve("lake").toString();
        Path mcap = SharedData.data("camera/bridge-mcap/bridge_ep08.mcap");
        String sha = FleetClient.sha256(mcap);
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun add = CliRun.of("gateway", "token", "add", "arm-3", lake, "--json");
        assertEquals(0, add.exitCode(), add.err());
        JsonNode t = JSON.readTree(add.out());
        String token = t.get("token").asText();
        assertEquals("arm-3", t.get("robot_id").asText());
        CliRun plain = CliRun.of("gateway", "token", "add", "arm-4", lake);
        assertEquals(0, plain.exitCode(), plain.err());
        assertTrue(plain.out().strip().startsWith("fwt_"), plain.out());
        assertTrue(plain.err().contains("it is shown only now"), plain.err());
        CliRun list = CliRun.of("gateway", "token", "list", lake);
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().contains(t.get("token_id").asText() + "  arm-3"), list.out());
        assertTrue(list.out().contains("2 token(s) in " + lake), list.out());

        try (Lake l = Lake.open(lake); FleetGateway gw = FleetGateway.start(l,
                GatewayOptions.builder().tokenRefresh(java.time.Duration.ofMillis(500)).build())) {
            String target = gw.target();
            CliRun up = CliRun.of("upload", "--gateway", target, "--robot", "arm-3", "--token", token,
                    "--episode", "pick-1", "--chunk-size", "16KiB", mcap.toString(), "--json");
            assertEquals(0, up.exitCode(), up.err());
            JsonNode u = JSON.readTree(up.out());
            JsonNode f = u.get("files").get(0);
            assertEquals(sha, f.get("sha256").asText());
            assertEquals(Files.size(mcap), f.get("bytes").asLong());
            assertEquals("raw/arm-3/" + sha + ".mcap", f.get("landed_path").asText());
            assertEquals("INGESTED", f.get("state").asText());
            assertEquals(1, f.get("episodes").asInt());
            assertEquals(1, u.get("landed").asInt());
            assertEquals(1, u.get("ingested").asInt());
            assertTrue(Files.isRegularFile(tmp.resolve("lake/raw/arm-3/" + sha + ".mcap")));

            // again: already in the lake, nothing sent; text summary
            CliRun again = CliRun.of("upload", "--gateway", target, "--robot", "arm-3", "--token", token,
                    mcap.toString());
            assertEquals(0, again.exitCode(), again.err());
            assertTrue(again.err().contains("already in the lake"), again.err());
            assertTrue(again.out().contains("uploaded 1 file(s) to " + target + " as arm-3: 0 landed"), again.out());

            // refused: another robot's id with this token (exit 1, the status and message)
            CliRun other = CliRun.of("upload", "--gateway", target, "--robot", "arm-4", "--token", token,
                    mcap.toString());
            assertEquals(1, other.exitCode(), other.out() + other.err());
            assertTrue(other.err().contains("PERMISSION_DENIED: the token is robot arm-3's"), other.err());
            assertTrue(other.noStackTrace(), other.err());

            // revoked: UNAUTHENTICATED once the gateway has read the tokens again (every 500 ms here)
            CliRun both = CliRun.of("gateway", "token", "revoke", lake, "someid", "--robot", "arm-3");
            assertEquals(2, both.exitCode(), both.err());
            assertTrue(both.err().contains("not both"), both.err());
            CliRun rv = CliRun.of("gateway", "token", "revoke", lake, "--robot", "arm-3");
            assertEquals(0, rv.exitCode(), rv.err());
            assertTrue(rv.out().contains("1 token(s) revoked"), rv.out());
            Thread.sleep(1100);
            Path other2 = SharedData.data("camera/bridge-mcap/bridge_ep09.mcap");
            CliRun gone = CliRun.of("upload", "--gateway", target, "--robot", "arm-3", "--token", token,
                    other2.toString());
            assertEquals(1, gone.exitCode(), gone.err());
            assertTrue(gone.err().contains("UNAUTHENTICATED: unknown or revoked token"), gone.err());
        }
        // no gateway there: the retries run out; FAILED (try later), not REFUSED; exit 1
        int dead;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            dead = free.getLocalPort();
        }
        CliRun down = CliRun.of("upload", "--gateway", "127.0.0.1:" + dead, "--robot", "arm-3", "--token", "fwt_x",
                "--attempts", "2", mcap.toString(), "--json");
        assertEquals(1, down.exitCode(), down.err());
        JsonNode d = JSON.readTree(down.out());
        assertEquals(0, d.get("refused").asInt(), down.out());
        assertEquals(1, d.get("failed").asInt(), down.out());
        assertEquals("FAILED", d.get("files").get(0).get("state").asText(), down.out());
        assertEquals("UNAVAILABLE", d.get("files").get(0).get("error_code").asText(), down.out());
        assertEquals(2, d.get("files").get(0).get("attempts").asInt(), down.out());
        // usage errors: exit 2
        assertEquals(2, CliRun.of("upload", "--gateway", "nohostport", "--robot", "a", "--token", "x",
                mcap.toString()).exitCode());
        assertEquals(2, CliRun.of("upload", "--gateway", "h:1", "--token", "x", mcap.toString()).exitCode());
        assertEquals(2, CliRun.of("gateway", lake, "--grpc-port", "70000").exitCode());
        assertEquals(2, CliRun.of("gateway", lake, "--max-file-size", "lots").exitCode());
        assertEquals(2, CliRun.of("gateway", "token", "revoke", lake).exitCode());
        assertEquals(2, CliRun.of("gateway", "token", "add", "../x", lake).exitCode());
        // a token id the lake does not have: exit 1, named
        CliRun nf = CliRun.of("gateway", "token", "revoke", lake, "deadbeef0000");
        assertEquals(1, nf.exitCode());
        assertTrue(nf.err().contains("no gateway token 'deadbeef0000'"), nf.err());
    }

    @Test
    void aPortInUseIsAConflictNamingHostAndPort() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            String port = Integer.toString(taken.getLocalPort());
            CliRun r = CliRun.of("gateway", lake, "--grpc-port", port, "--json");
            assertEquals(1, r.exitCode(), r.err());
            JsonNode e = JSON.readTree(r.out()).get("error");
            assertEquals("conflict", e.get("kind").asText(), r.out());
            assertTrue(e.get("message").asText().startsWith("cannot listen on 127.0.0.1:" + port + ": "), r.out());
            assertTrue(e.get("message").asText().contains("--grpc-port 0 picks a free port"), r.out());
        }
        CliRun window = CliRun.of("gateway", lake, "--stream-window", "1KiB");
        assertEquals(2, window.exitCode());
        assertTrue(window.err().contains("--stream-window must be 64KiB..16MiB, got 1024 bytes"), window.err());
    }

    @Test
    void gatewayAndUploadOverTls() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        io.flywheel.testkit.TestCertificates ca = io.flywheel.testkit.TestCertificates.ca(tmp.resolve("pki"));
        Path cert = ca.issue("gateway", "IP:127.0.0.1");
        String token = JSON.readTree(CliRun.of("gateway", "token", "add", "arm-9", lake, "--json").out())
                .get("token").asText();
        GatewayProcess gw = GatewayProcess.start(tmp.resolve("gw"), null, "gateway", lake, "--grpc-port", "0",
                "--tls-cert", cert.toString(), "--tls-key", ca.key("gateway").toString(), "--json");
        try {
            JsonNode l = JSON.readTree(gw.await(x -> x.contains("\"event\":\"listening\"")));
            assertEquals("tls", l.get("tls").asText());
            String target = l.get("target").asText();
            Path mcap = SharedData.data("camera/bridge-mcap/bridge_ep02.mcap");
            CliRun plain = CliRun.of("upload", "--gateway", target, "--robot", "arm-9", "--token", token,
                    "--attempts", "1", mcap.toString());
            assertEquals(1, plain.exitCode(), plain.err());
            CliRun up = CliRun.of("upload", "--gateway", target, "--robot", "arm-9", "--token", token,
                    "--tls-ca", ca.caCert().toString(), mcap.toString(), "--json");
            assertEquals(0, up.exitCode(), up.err());
            assertEquals("INGESTED", JSON.readTree(up.out()).get("files").get(0).get("state").asText());
        } finally {
            gw.process().destroy();
            assertTrue(gw.process().waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        }
        assertEquals(2, CliRun.of("gateway", lake, "--tls-cert", cert.toString()).exitCode());
        assertEquals(2, CliRun.of("gateway", lake, "--tls-client-ca", ca.caCert().toString()).exitCode());
        assertEquals(2, CliRun.of("upload", "--gateway", "h:1", "--robot", "a", "--token", "x", "--tls-cert",
                cert.toString(), "f.mcap").exitCode());
    }

    @Test
    void aRecordingWhoseSidecarIsRefusedIsNotSent() throws Exception {
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        Path dir = tmp.resolve("side");
        Files.createDirectories(dir);
        Path rec = dir.resolve("rec.mcap");
        Files.copy(SharedData.data("camera/bridge-mcap/bridge_ep05.mcap"), rec);
        Files.write(dir.resolve("rec.cam0.mp4"), new byte[4096]); // no ftyp box: refused at END
        try (Lake l = Lake.open(lake)) {
            String token = io.flywheel.fleet.auth.RobotTokens.add(l, "arm-5").token();
            try (FleetGateway gw = FleetGateway.start(l, GatewayOptions.builder().build())) {
                CliRun up = CliRun.of("upload", "--gateway", gw.target(), "--robot", "arm-5", "--token", token,
                        dir.resolve("rec.cam0.mp4").toString(), rec.toString(), "--json");
                assertEquals(1, up.exitCode(), up.err());
                JsonNode u = JSON.readTree(up.out());
                assertEquals(false, u.get("ok").asBoolean());
                assertEquals("REFUSED", u.get("files").get(0).get("state").asText(), up.out());
                assertEquals("NOT_SENT", u.get("files").get(1).get("state").asText(), up.out());
                assertTrue(u.get("files").get(1).get("error").asText().contains("its sidecar rec.cam0.mp4 did not land"),
                        up.out());
                assertEquals(1, u.get("not_sent").asInt());
            }
        }
        assertTrue(!Files.exists(tmp.resolve("lake/raw/arm-5")) || Files.list(tmp.resolve("lake/raw/arm-5")).findAny()
                .isEmpty(), "nothing landed");
    }
}
