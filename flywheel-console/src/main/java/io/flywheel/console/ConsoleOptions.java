package io.flywheel.console;

/**
 * How the console listens. Build with {@link #builder()}.
 *
 * @param host interface to bind, e.g. {@code 127.0.0.1} (the default: this machine only)
 * @param port TCP port, 0..65535; 0 picks a free one ({@link ConsoleServer#port()} tells which)
 * @param threads most request threads, &ge; 4
 * @param mapMaxPoints most episodes drawn on the embedding map, &ge; 1
 */
public record ConsoleOptions(String host, int port, int threads, int mapMaxPoints) {
    public ConsoleOptions {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host must not be empty");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        if (threads < 4) {
            throw new IllegalArgumentException("threads must be >= 4, got " + threads);
        }
        if (mapMaxPoints < 1) {
            throw new IllegalArgumentException("map max points must be >= 1, got " + mapMaxPoints);
        }
    }

    /** @return a builder: 127.0.0.1, port 8080, 16 threads, 20,000 map points */
    public static Builder builder() {
        return new Builder();
    }

    /** Builder of {@link ConsoleOptions}. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port = 8080;
        private int threads = 16;
        private int mapMaxPoints = 20_000;

        private Builder() {}

        public Builder host(String host) {
            this.host = host;
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        public Builder mapMaxPoints(int n) {
            this.mapMaxPoints = n;
            return this;
        }

        public ConsoleOptions build() {
            return new ConsoleOptions(host, port, threads, mapMaxPoints);
        }
    }
}
