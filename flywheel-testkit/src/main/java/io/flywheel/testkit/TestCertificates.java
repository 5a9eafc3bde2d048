package io.flywheel.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A test CA and certificates it signs (EC P-256, PEM, keys in PKCS#8), made with the {@code openssl} command, for TLS
 * tests. Without openssl the test is skipped, and fails under {@code CI=true} ({@code .ci/run} installs it).
 *
 * @param dir where the files are
 */
public record TestCertificates(Path dir) {
    /** @return a CA ({@code ca.pem}, {@code ca.key}) in {@code dir} */
    public static TestCertificates ca(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        TestCertificates c = new TestCertificates(dir);
        c.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ca.key");
        c.openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=Flywheel test CA", "-days", "2",
                "-out", "ca.pem");
        return c;
    }

    /** @return the CA's certificate */
    public Path caCert() {
        return dir.resolve("ca.pem");
    }

    /**
     * Issues a certificate signed by the CA: {@code <name>.pem} and {@code <name>.key}.
     *
     * @param name the files' name and the certificate's common name
     * @param subjectAltNames e.g. {@code IP:127.0.0.1,DNS:localhost}; null for none
     * @return the certificate; its key is {@link #key(String)}
     */
    public Path issue(String name, String subjectAltNames) throws IOException, InterruptedException {
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key");
        openssl("req", "-new", "-key", name + ".key", "-subj", "/CN=" + name, "-out", name + ".csr");
        List<String> sign = new ArrayList<>(List.of("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey",
                "ca.key", "-CAcreateserial", "-days", "2", "-out", name + ".pem"));
        if (subjectAltNames != null) {
            Path ext = dir.resolve(name + ".ext");
            Files.writeString(ext, "subjectAltName=" + subjectAltNames + "\n");
            sign.addAll(List.of("-extfile", ext.getFileName().toString()));
        }
        openssl(sign.toArray(String[]::new));
        return dir.resolve(name + ".pem");
    }

    /** @return the private key of {@link #issue issued} certificate {@code name} */
    public Path key(String name) {
        return dir.resolve(name + ".key");
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        String bin = Files.isExecutable(Path.of("/usr/bin/openssl")) ? "/usr/bin/openssl" : null;
        if (bin == null) {
            String why = "openssl is not installed (apt-get install -y openssl)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(why);
            }
            Assumptions.abort(why + ": skipped");
        }
        List<String> cmd = new ArrayList<>(List.of(bin));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }
}
