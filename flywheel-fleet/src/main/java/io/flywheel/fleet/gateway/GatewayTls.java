package io.flywheel.fleet.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

import javax.net.ssl.SSLException;

import io.flywheel.error.BadInputException;
import io.flywheel.fleet.client.TlsFiles;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;

/** The gateway's TLS context from its {@link TlsFiles}, checked at start. */
final class GatewayTls {
    private GatewayTls() {}

    /** @throws BadInputException when the files cannot be read or the key is not the certificate's, naming them */
    static SslContext sslContext(TlsFiles tls) {
        try {
            checkKeyMatches(tls);
            SslContextBuilder b = GrpcSslContexts.forServer(tls.certChain().toFile(), tls.privateKey().toFile());
            if (tls.trustCerts() != null) {
                b.trustManager(tls.trustCerts().toFile()).clientAuth(ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new BadInputException("TLS: cannot use the certificate " + tls.certChain() + " and key "
                    + tls.privateKey() + (tls.trustCerts() == null ? "" : " with client CA " + tls.trustCerts())
                    + ": " + e.getMessage(), e);
        }
    }

    /**
     * Signs a few bytes with the private key and verifies them with the certificate's public key, so that a key that is
     * not the certificate's is refused at start rather than failing every robot's handshake.
     */
    private static void checkKeyMatches(TlsFiles tls) throws SSLException {
        try {
            X509Certificate cert;
            try (var in = Files.newInputStream(tls.certChain())) {
                cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                        .generateCertificate(in);
            }
            String pem = Files.readString(tls.privateKey());
            int from = pem.indexOf("-----BEGIN PRIVATE KEY-----");
            int to = pem.indexOf("-----END PRIVATE KEY-----");
            if (from < 0 || to < from) {
                throw new SSLException("the key is not a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----; convert"
                        + " with openssl pkcs8 -topk8 -nocrypt)");
            }
            byte[] der = Base64.getMimeDecoder().decode(pem.substring(from + 27, to));
            String alg = cert.getPublicKey().getAlgorithm();
            PrivateKey key = KeyFactory.getInstance(alg)
                    .generatePrivate(new PKCS8EncodedKeySpec(der));
            String sigAlg = alg.equals("EC") ? "SHA256withECDSA" : alg.equals("RSA") ? "SHA256withRSA" : alg;
            Signature sign = Signature.getInstance(sigAlg);
            sign.initSign(key);
            byte[] probe = "flywheel".getBytes(StandardCharsets.US_ASCII);
            sign.update(probe);
            byte[] sig = sign.sign();
            Signature verify = Signature.getInstance(sigAlg);
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            if (!verify.verify(sig)) {
                throw new SSLException("the private key is not the certificate's");
            }
        } catch (IOException | GeneralSecurityException e) {
            if (e instanceof SSLException s) {
                throw s;
            }
            throw new SSLException("cannot read them: " + e.getMessage(), e);
        }
    }
}
