package io.flywheel.fleet.sim;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.sim.SimOptions;

/**
 * Options of a {@link LiveFleet} run; immutable, built with {@link #builder(SimOptions, String)}.
 *
 * @param fleet what to simulate (robots, episodes, durations, resolution, seed); its {@code outDir} is the robots'
 *     disk, where each recording is written before it is uploaded (kept, with {@code ground_truth.json})
 * @param gateway the fleet gateway, {@code host:port}
 * @param mqtt the MQTT broker the gateway reads telemetry from, {@code tcp://host:port}; null: no telemetry
 * @param tokens each robot's gateway token, by robot id; every robot of the fleet needs one
 * @param speed robot time per wall time: 1 is real time, 10 ten times faster; 0 as fast as the machine generates
 * @param faults the faults injected
 * @param chunkBytes upload chunk size (default 64 KiB: small enough that a cut lands mid-file with bytes staged)
 * @param waitForIngest whether each robot waits, at the end, until the gateway has ingested its uploads
 * @param ingestTimeout how long that wait may take, all robots together
 * @param streamEvents whether the robots also publish the fleet stream over MQTT (episode events and per-second
 *     observation summaries on {@code fleet/<robot>/stream/*}, for the gateway's Kafka relay), with operator
 *     interventions in 10% of the episodes, and the stream's ground truth is written beside the other
 *     ({@value LiveFleet#STREAM_TRUTH}); needs {@code mqtt}
 */
public record LiveFleetOptions(SimOptions fleet, String gateway, String mqtt, Map<String, String> tokens, double speed,
        Faults faults, int chunkBytes, boolean waitForIngest, Duration ingestTimeout, boolean streamEvents) {

    /** @throws IllegalArgumentException when a value is out of range or the gateway or broker is malformed */
    public LiveFleetOptions {
        Objects.requireNonNull(fleet, "fleet");
        Objects.requireNonNull(faults, "faults");
        Objects.requireNonNull(ingestTimeout, "ingestTimeout");
        hostPort(gateway);
        if (streamEvents && mqtt == null) {
            throw new IllegalArgumentException("the fleet stream is published over MQTT: it needs an MQTT broker (--mqtt)");
        }
        if (mqtt != null) {
            try {
                TelemetryOptions.hostPort(mqtt);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--mqtt: " + e.getMessage(), e);
            }
        }
        tokens = Map.copyOf(tokens);
        if (!(speed >= 0) || Double.isInfinite(speed)) {
            throw new IllegalArgumentException("--speed must be a number >= 0 (0: as fast as possible), got " + speed);
        }
        if (chunkBytes < 1024 || chunkBytes > 4 << 20) {
            throw new IllegalArgumentException("the chunk size must be 1 KiB..4 MiB, got " + chunkBytes);
        }
    }

    /**
     * @param gateway {@code host:port}
     * @return host and port
     * @throws IllegalArgumentException when it is not {@code host:port}
     */
    public static String[] hostPort(String gateway) {
        int colon = gateway == null ? -1 : gateway.lastIndexOf(':');
        if (colon <= 0 || !gateway.substring(colon + 1).matches("\\d{1,5}")
                || Integer.parseInt(gateway.substring(colon + 1)) > 65535) {
            throw new IllegalArgumentException("--gateway must be HOST:PORT, got '" + gateway + "'");
        }
        return new String[] {gateway.substring(0, colon), gateway.substring(colon + 1)};
    }

    /**
     * @param fleet what to simulate
     * @param gateway the gateway, {@code host:port}
     * @return a builder: no telemetry, no token, real time, no faults, 64 KiB chunks, waiting up to 10 min for ingest
     */
    public static Builder builder(SimOptions fleet, String gateway) {
        return new Builder(fleet, gateway);
    }

    /** Builder of {@link LiveFleetOptions}. */
    public static final class Builder {
        private final SimOptions fleet;
        private final String gateway;
        private String mqtt;
        private final Map<String, String> tokens = new TreeMap<>();
        private double speed = 1;
        private Faults faults = Faults.NONE;
        private int chunkBytes = 64 * 1024;
        private boolean waitForIngest = true;
        private Duration ingestTimeout = Duration.ofMinutes(10);
        private boolean streamEvents;

        private Builder(SimOptions fleet, String gateway) {
            this.fleet = fleet;
            this.gateway = gateway;
        }

        /** @param url the broker, {@code tcp://host:port}; null for no telemetry */
        public Builder mqtt(String url) {
            mqtt = url;
            return this;
        }

        /** @param byRobot robot id to its gateway token (added to those given before) */
        public Builder tokens(Map<String, String> byRobot) {
            tokens.putAll(byRobot);
            return this;
        }

        /** @param x robot seconds per wall second; 0 for as fast as possible */
        public Builder speed(double x) {
            speed = x;
            return this;
        }

        /** @param f the faults to inject */
        public Builder faults(Faults f) {
            faults = f;
            return this;
        }

        /** @param bytes upload chunk size, 1 KiB..4 MiB */
        public Builder chunkBytes(int bytes) {
            chunkBytes = bytes;
            return this;
        }

        /**
         * @param wait whether the robots wait for the gateway to ingest their uploads
         * @param timeout the longest wait, all robots together
         */
        public Builder waitForIngest(boolean wait, Duration timeout) {
            waitForIngest = wait;
            ingestTimeout = timeout;
            return this;
        }

        /** Whether the robots publish the fleet stream too (default false). */
        public Builder streamEvents(boolean on) {
            streamEvents = on;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range */
        public LiveFleetOptions build() {
            return new LiveFleetOptions(fleet, gateway, mqtt, tokens, speed, faults, chunkBytes, waitForIngest,
                    ingestTimeout, streamEvents);
        }
    }
}
