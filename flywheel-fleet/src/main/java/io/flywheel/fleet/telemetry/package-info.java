/**
 * MQTT telemetry into the lake: {@link io.flywheel.fleet.telemetry.TelemetrySubscriber} reads the fleet's topics
 * ({@code fleet/<robot>/telemetry|alert|audit/<kind>}, QoS 0, 1 and 2) from a broker and appends
 * {@link io.flywheel.rows.TelemetryRow}s to the {@code telemetry} table in micro-batches, acknowledging QoS 1 and 2
 * messages only after their batch is committed; {@link io.flywheel.fleet.telemetry.TelemetryMessages} is the topic and
 * payload format; {@link io.flywheel.fleet.telemetry.EmbeddedBroker} the broker of the one-machine default.
 */
package io.flywheel.fleet.telemetry;
