package io.flywheel.fleet.client;

import java.nio.file.Files;
import java.nio.file.Path;

import io.flywheel.error.BadInputException;

/**
 * The PEM files of a TLS connection between robots and the gateway (RFC 8446 TLS 1.3 or 1.2, as the JDK negotiates;
 * HTTP/2 over ALPN).
 *
 * <p>On the gateway: {@code certChain} and {@code privateKey} (PKCS#8) are its certificate (its subject alternative
 * names must hold the host robots dial) and key; {@code trustCerts}, when given, is the CA that signs robots'
 * certificates, and every robot must then present one (mutual TLS, on top of its token). On a robot: {@code
 * trustCerts} is the CA that signed the gateway's certificate (null: the JDK's trusted CAs); {@code certChain} and
 * {@code privateKey}, when given, are the robot's own certificate and key for a gateway that asks for one.
 *
 * @param certChain certificate chain, PEM; null on a robot without a client certificate
 * @param privateKey its PKCS#8 private key, PEM; null exactly when certChain is
 * @param trustCerts certificates to trust, PEM; null for the default (gateway: no client certificate asked for)
 */
public record TlsFiles(Path certChain, Path privateKey, Path trustCerts) {
    /** @throws BadInputException when only one of certChain and privateKey is given, or a file is not readable */
    public TlsFiles {
        if ((certChain == null) != (privateKey == null)) {
            throw new BadInputException("TLS: a certificate and its private key go together; got "
                    + (certChain == null ? "a key without a certificate" : "a certificate without a key"));
        }
        for (Path p : new Path[] {certChain, privateKey, trustCerts}) {
            if (p != null && !Files.isReadable(p)) {
                throw new BadInputException("TLS: cannot read " + p);
            }
        }
    }

    /** @return a gateway's files: its certificate and key; no client certificates asked for */
    public static TlsFiles server(Path certChain, Path privateKey) {
        return new TlsFiles(certChain, privateKey, null);
    }

    /** @return a robot's files: the CA that signed the gateway's certificate (null: the JDK's) */
    public static TlsFiles client(Path trustCerts) {
        return new TlsFiles(null, null, trustCerts);
    }

    /** @return these files trusting {@code certs} (on a gateway: asking every robot for a certificate signed so) */
    public TlsFiles trusting(Path certs) {
        return new TlsFiles(certChain, privateKey, certs);
    }

    /** @return these files with a certificate and key of one's own (a robot's, for mutual TLS) */
    public TlsFiles withCertificate(Path chain, Path key) {
        return new TlsFiles(chain, key, trustCerts);
    }
}
