package io.flywheel.fleet.gateway;

import java.time.Duration;
import java.util.function.Consumer;

import io.flywheel.fleet.telemetry.EmbeddedBroker;
import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.fleet.telemetry.TelemetrySubscriber;
import io.flywheel.lake.Lake;

/**
 * A whole fleet gateway in this process on loopback, for the one-machine default ({@code flywheel quickstart}): the
 * gRPC gateway and an embedded MQTT broker on free ports, and the telemetry subscriber reading the broker into the
 * lake (micro-batches of at most 200 ms, alerts linked every second). {@link #close()} stops the subscriber (its last
 * batch committed), then the gateway (uploads in flight stay staged), then the broker.
 */
public final class LocalGateway implements AutoCloseable {
    private final FleetGateway gateway;
    private final EmbeddedBroker broker;
    private final TelemetrySubscriber subscriber;

    private LocalGateway(FleetGateway gateway, EmbeddedBroker broker, TelemetrySubscriber subscriber) {
        this.gateway = gateway;
        this.broker = broker;
        this.subscriber = subscriber;
    }

    /**
     * @param lake a local lake, kept open by the caller until after {@link #close()}
     * @param clientId the subscriber's MQTT client id (its session in the broker)
     * @param log receives the subscriber's lines (refused messages, failed commits, link runs)
     * @return the running gateway
     * @throws io.flywheel.error.StorageUnavailableException when a port cannot be bound
     */
    public static LocalGateway start(Lake lake, String clientId, Consumer<String> log) {
        FleetGateway gw = FleetGateway.start(lake, GatewayOptions.builder().build());
        EmbeddedBroker broker = null;
        try {
            broker = EmbeddedBroker.start("127.0.0.1", 0);
            TelemetrySubscriber sub = TelemetrySubscriber.start(lake, TelemetryOptions.builder(broker.url())
                    .mqtt5(false).clientId(clientId).batchInterval(Duration.ofMillis(200))
                    .linkInterval(Duration.ofSeconds(1)).build(), log);
            return new LocalGateway(gw, broker, sub);
        } catch (RuntimeException e) {
            gw.close();
            if (broker != null) {
                broker.close();
            }
            throw e;
        }
    }

    /** @return the gRPC gateway, {@code 127.0.0.1:port} */
    public String target() {
        return gateway.target();
    }

    /** @return the broker, {@code tcp://127.0.0.1:port} */
    public String mqttUrl() {
        return broker.url();
    }

    @Override
    public void close() {
        try {
            subscriber.close();
        } finally {
            try {
                gateway.close();
            } finally {
                broker.close();
            }
        }
    }
}
