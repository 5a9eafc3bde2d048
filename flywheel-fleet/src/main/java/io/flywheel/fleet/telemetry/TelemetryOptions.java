package io.flywheel.fleet.telemetry;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * Options of a {@link TelemetrySubscriber}; immutable, built with {@link #builder(String)}.
 *
 * <p>Defaults: MQTT 5, client id {@code flywheel-gateway} (one subscriber per broker and lake: the persistent session
 * is the client id's), session expiry 1 day (QoS 1 and 2 messages published while the gateway is down wait that long
 * in the broker), micro-batches of at most 1 s and 5,000 rows, redeliveries recognised within 1 h (and 1,000,000 ids),
 * unlinked alerts looked at every 5 s, 5 s to connect.
 *
 * @param broker {@code tcp://host:port}
 * @param mqtt5 true for MQTT 5 (message ids may come as user properties), false for MQTT 3.1.1 (Moquette 0.17)
 * @param clientId the MQTT client id, stable across restarts (it names the broker's session)
 * @param username user name for the broker, or null
 * @param password password, or null
 * @param sessionExpiry how long the broker keeps the session (and its queued messages) while the gateway is away
 *     (MQTT 5; MQTT 3.1.1 brokers keep it until a clean session)
 * @param batchInterval the longest a received message waits for its micro-batch's commit
 * @param batchRows the most rows in a micro-batch (one lake commit)
 * @param dedupWindow a redelivered QoS 1 or 2 message is recognised when its first copy was committed at most this
 *     long before the newest row of the table (at start) or before now (running)
 * @param dedupMaxIds the most message ids kept for that (the oldest go first)
 * @param linkInterval how often the alerts without an episode are matched against newly ingested episodes
 * @param connectTimeout how long {@link TelemetrySubscriber#start} waits for the broker
 */
public record TelemetryOptions(String broker, boolean mqtt5, String clientId, String username, String password,
        Duration sessionExpiry, Duration batchInterval, int batchRows, Duration dedupWindow, int dedupMaxIds,
        Duration linkInterval, Duration connectTimeout) {
    /** @throws IllegalArgumentException when a value is out of range or the broker is not tcp://host:port */
    public TelemetryOptions {
        Objects.requireNonNull(broker, "broker");
        Objects.requireNonNull(clientId, "clientId");
        hostPort(broker);
        if (clientId.isEmpty() || clientId.length() > 23 && !mqtt5) {
            throw new IllegalArgumentException("MQTT client id '" + clientId + "': 1-23 characters for MQTT 3.1.1");
        }
        if (batchRows < 1 || batchRows > 1_000_000) {
            throw new IllegalArgumentException("batch rows must be in 1..1000000, got " + batchRows);
        }
        if (batchInterval.isNegative() || batchInterval.isZero()) {
            throw new IllegalArgumentException("the batch interval must be > 0, got " + batchInterval);
        }
        if (dedupMaxIds < 1) {
            throw new IllegalArgumentException("dedup ids must be >= 1, got " + dedupMaxIds);
        }
        if (sessionExpiry.isNegative() || dedupWindow.isNegative() || linkInterval.isNegative()
                || connectTimeout.isNegative()) {
            throw new IllegalArgumentException("durations must be >= 0");
        }
        if (username == null && password != null) {
            throw new IllegalArgumentException("a broker password needs a user name");
        }
    }

    /**
     * @param broker {@code tcp://host:port}
     * @return a builder starting from the defaults
     */
    public static Builder builder(String broker) {
        return new Builder(broker);
    }

    /** @return host and port of the broker URL */
    public static java.net.InetSocketAddress hostPort(String broker) {
        URI u;
        try {
            u = new URI(broker);
        } catch (Exception e) {
            throw new IllegalArgumentException("MQTT broker '" + broker + "': expected tcp://host:port");
        }
        if (!"tcp".equals(u.getScheme()) && !"mqtt".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 1
                || u.getPath() != null && !u.getPath().isEmpty()) {
            throw new IllegalArgumentException("MQTT broker '" + broker + "': expected tcp://host:port (TLS is not"
                    + " supported yet)");
        }
        return java.net.InetSocketAddress.createUnresolved(u.getHost(), u.getPort());
    }

    /** Builder of {@link TelemetryOptions}. */
    public static final class Builder {
        private final String broker;
        private boolean mqtt5 = true;
        private String clientId = "flywheel-gateway";
        private String username;
        private String password;
        private Duration sessionExpiry = Duration.ofDays(1);
        private Duration batchInterval = Duration.ofSeconds(1);
        private int batchRows = 5_000;
        private Duration dedupWindow = Duration.ofHours(1);
        private int dedupMaxIds = 1_000_000;
        private Duration linkInterval = Duration.ofSeconds(5);
        private Duration connectTimeout = Duration.ofSeconds(5);

        private Builder(String broker) {
            this.broker = broker;
        }

        /** @param v true for MQTT 5 (the default), false for MQTT 3.1.1 */
        public Builder mqtt5(boolean v) {
            mqtt5 = v;
            return this;
        }

        /** @param id the MQTT client id, stable across restarts */
        public Builder clientId(String id) {
            clientId = id;
            return this;
        }

        /** @param user user name, or null; @param pass password, or null */
        public Builder credentials(String user, String pass) {
            username = user;
            password = pass;
            return this;
        }

        /** @param d how long the broker keeps the session while the gateway is away */
        public Builder sessionExpiry(Duration d) {
            sessionExpiry = d;
            return this;
        }

        /** @param d the longest a message waits for its batch's commit */
        public Builder batchInterval(Duration d) {
            batchInterval = d;
            return this;
        }

        /** @param n the most rows per batch */
        public Builder batchRows(int n) {
            batchRows = n;
            return this;
        }

        /** @param d the redelivery window; @param maxIds the most ids kept */
        public Builder dedup(Duration d, int maxIds) {
            dedupWindow = d;
            dedupMaxIds = maxIds;
            return this;
        }

        /** @param d how often unlinked alerts are matched to new episodes */
        public Builder linkInterval(Duration d) {
            linkInterval = d;
            return this;
        }

        /** @param d how long start waits for the broker */
        public Builder connectTimeout(Duration d) {
            connectTimeout = d;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range */
        public TelemetryOptions build() {
            return new TelemetryOptions(broker, mqtt5, clientId, username, password, sessionExpiry, batchInterval,
                    batchRows, dedupWindow, dedupMaxIds, linkInterval, connectTimeout);
        }
    }
}
