package io.flywheel.fleet.gateway;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

import io.flywheel.fleet.client.TlsFiles;

import io.flywheel.fleet.upload.IngestSettings;
import io.flywheel.fleet.upload.UploadLimits;

/**
 * Options of a {@link FleetGateway}; immutable, built with {@link #builder()}. Defaults: 127.0.0.1, port 0 (a free
 * one), {@link UploadLimits#defaults()}, {@link IngestSettings#defaults()}, tokens read again every 5 s, 1 s for
 * uploads in flight to finish at shutdown, 2 x the cores (at least 8) threads for the calls.
 *
 * @param host interface to listen on
 * @param port TCP port, 0 for a free one
 * @param limits upload limits
 * @param ingest how landed files are ingested
 * @param tokenRefresh how often the lake's tokens are read again (a revoked token works at most this long)
 * @param shutdownGrace how long {@link FleetGateway#close()} lets calls in flight go on before cutting them
 * @param threads threads that run the calls (each blocked write of a slow disk holds one)
 * @param log receives a line for what happens by itself while serving (staged uploads expired); default: nowhere
 * @param tls the gateway's certificate and key ({@link TlsFiles#server}), with a client CA for mutual TLS; null (the
 *     default) for plain-text HTTP/2, for a trusted network only: tokens travel in the clear
 * @param spool for a lake on S3: the local folder uploads are staged in on their way into the bucket (keep it across
 *     restarts: staged uploads resume from it); null (the default) for
 *     {@code ~/.cache/flywheel/gateway-spool/<hash of the lake URI>}; unused for a local lake
 */
public record GatewayOptions(String host, int port, UploadLimits limits, IngestSettings ingest, Duration tokenRefresh,
        Duration shutdownGrace, int threads, Consumer<String> log, TlsFiles tls, Path spool) {
    /**
     * @param lakeUri the lake
     * @return where uploads to it are spooled: {@link #spool()}, or the default for the lake
     */
    public Path spoolFor(String lakeUri) {
        if (spool != null) {
            return spool;
        }
        byte[] digest = io.flywheel.fleet.upload.UploadIds.sha256()
                .digest(lakeUri.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String h = java.util.HexFormat.of().formatHex(digest, 0, 8);
        return Path.of(System.getProperty("user.home"), ".cache", "flywheel", "gateway-spool", h);
    }

    /** @throws IllegalArgumentException when a value is out of range */
    public GatewayOptions {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(ingest, "ingest");
        Objects.requireNonNull(log, "log");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("the port must be in 0..65535, got " + port);
        }
        if (tokenRefresh.isNegative() || shutdownGrace.isNegative()) {
            throw new IllegalArgumentException("durations must be >= 0");
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link GatewayOptions}. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private UploadLimits limits = UploadLimits.defaults();
        private IngestSettings ingest = IngestSettings.defaults();
        private Duration tokenRefresh = Duration.ofSeconds(5);
        private Duration shutdownGrace = Duration.ofSeconds(1);
        private int threads = Math.max(8, 2 * Runtime.getRuntime().availableProcessors());
        private Consumer<String> log = line -> { };
        private TlsFiles tls;
        private Path spool;

        private Builder() {}

        /** @param h interface to listen on, e.g. {@code 0.0.0.0} for every one */
        public Builder host(String h) {
            host = h;
            return this;
        }

        /** @param p TCP port, 0 for a free one */
        public Builder port(int p) {
            port = p;
            return this;
        }

        /** @param l upload limits */
        public Builder limits(UploadLimits l) {
            limits = l;
            return this;
        }

        /** @param s how landed files are ingested */
        public Builder ingest(IngestSettings s) {
            ingest = s;
            return this;
        }

        /** @param d how often the lake's tokens are read again */
        public Builder tokenRefresh(Duration d) {
            tokenRefresh = d;
            return this;
        }

        /** @param d how long calls in flight may go on at shutdown; 0 cuts them at once (they stay staged) */
        public Builder shutdownGrace(Duration d) {
            shutdownGrace = d;
            return this;
        }

        /** @param n threads that run the calls */
        public Builder threads(int n) {
            threads = n;
            return this;
        }

        /** @param l receives a line for what happens by itself while serving */
        public Builder log(Consumer<String> l) {
            log = l;
            return this;
        }

        /** @param files certificate and key (and client CA) for TLS; null for plain text */
        public Builder tls(TlsFiles files) {
            tls = files;
            return this;
        }

        /** @param dir the local spool of uploads to a lake on S3; null for the default */
        public Builder spool(Path dir) {
            spool = dir;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range */
        public GatewayOptions build() {
            return new GatewayOptions(host, port, limits, ingest, tokenRefresh, shutdownGrace, threads, log, tls,
                    spool);
        }
    }
}
