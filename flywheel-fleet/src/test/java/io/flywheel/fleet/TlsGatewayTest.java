package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.TlsFiles;
import io.flywheel.fleet.client.UploadFailedException;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.lake.Lake;
import io.flywheel.testkit.TestCertificates;
import io.grpc.Status;

/**
 * The gateway over TLS, and over mutual TLS: a robot trusting the gateway's CA uploads; a plain-text client, one that
 * does not trust the gateway's certificate, and (with mutual TLS) one without a certificate of its own do not get a
 * byte through. Certificates from a test CA made with openssl.
 */
class TlsGatewayTest {
    @TempDir
    Path tmp;

    private static FleetClient.Builder client(String target, String token) {
        return FleetClient.builder(target).token(token).maxAttempts(3).chunkBytes(8192)
                .backoff(Duration.ofMillis(10), Duration.ofMillis(20));
    }

    private static void refused(FleetClient c, Path file) {
        UploadFailedException e = assertThrows(UploadFailedException.class,
                () -> c.upload(file, "arm-1", "", FileKind.MCAP, UploadListener.NONE));
        assertEquals(Status.Code.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(!e.getMessage().contains("Channel Pipeline") && !e.getMessage().contains("io.grpc"), e.getMessage());
    }

    /** A TLS failure is refused at once, naming the handshake, not retried as a gateway out of reach. */
    private static void tlsRefused(FleetClient c, Path file) {
        UploadFailedException e = assertThrows(UploadFailedException.class,
                () -> c.upload(file, "arm-1", "", FileKind.MCAP, UploadListener.NONE));
        assertTrue(e.refused() && e.attempts() == 1, e.attempts() + " " + e.getMessage());
        assertTrue(e.getMessage().contains("the TLS handshake with the gateway failed"), e.getMessage());
    }

    @Test
    void robotsUploadOverTlsAndMutualTlsOnlyWithTheRightCertificates() throws Exception {
        TestCertificates ca = TestCertificates.ca(tmp.resolve("pki"));
        Path gwCert = ca.issue("gateway", "IP:127.0.0.1,DNS:localhost");
        Path robotCert = ca.issue("arm-1", null);
        TestCertificates otherCa = TestCertificates.ca(tmp.resolve("other-pki"));
        Path file = UploadServiceTest.bridge(6);
        Path file2 = UploadServiceTest.bridge(7);
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            String token = RobotTokens.add(lake, "arm-1").token();
            // TLS: the gateway's certificate, no client certificate asked for
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder()
                    .tls(TlsFiles.server(gwCert, ca.key("gateway"))).build())) {
                try (FleetClient plain = client(gw.target(), token).build()) {
                    refused(plain, file);
                }
                try (FleetClient stranger = client(gw.target(), token).tls(TlsFiles.client(otherCa.caCert())).build()) {
                    tlsRefused(stranger, file);
                }
                try (FleetClient robot = client(gw.target(), token).tls(TlsFiles.client(ca.caCert())).build()) {
                    robot.upload(file, "arm-1", "ep-6", FileKind.MCAP, UploadListener.NONE);
                    assertEquals(UploadState.INGESTED, robot.awaitIngested("arm-1", FleetClient.sha256(file),
                            Duration.ofSeconds(30)).getState());
                }
            }
            // mutual TLS: every robot shows a certificate signed by the CA, on top of its token
            try (FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder()
                    .tls(TlsFiles.server(gwCert, ca.key("gateway")).trusting(ca.caCert())).build())) {
                try (FleetClient noCert = client(gw.target(), token).tls(TlsFiles.client(ca.caCert())).build()) {
                    tlsRefused(noCert, file2);
                }
                try (FleetClient robot = client(gw.target(), token).tls(TlsFiles.client(ca.caCert())
                        .withCertificate(robotCert, ca.key("arm-1"))).build()) {
                    robot.upload(file2, "arm-1", "ep-7", FileKind.MCAP, UploadListener.NONE);
                    assertEquals(UploadState.INGESTED, robot.awaitIngested("arm-1", FleetClient.sha256(file2),
                            Duration.ofSeconds(30)).getState());
                }
            }
            // a key that is not the certificate's: refused at start, naming the files
            BadInputException bad = assertThrows(BadInputException.class, () -> FleetGateway.start(lake,
                    GatewayOptions.builder().tls(TlsFiles.server(gwCert, ca.key("arm-1"))).build()).close());
            assertTrue(bad.getMessage().startsWith("TLS: cannot use the certificate " + gwCert), bad.getMessage());
        }
    }
}
