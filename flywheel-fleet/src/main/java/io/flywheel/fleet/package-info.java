/**
 * The fleet side of Flywheel: robots send their recordings to a gateway in front of the lake.
 *
 * <ul>
 *   <li>{@link io.flywheel.fleet.gateway}: the gRPC server ({@code flywheel gateway}), its options and statistics;</li>
 *   <li>{@link io.flywheel.fleet.upload}: the resumable episode upload (staging, verification, landing in the raw
 *       layer, the ingest queue behind it);</li>
 *   <li>{@link io.flywheel.fleet.live}: live episodes streamed message by message, journaled, written as MCAP at
 *       their end and landed as uploads;</li>
 *   <li>{@link io.flywheel.fleet.auth}: per-robot bearer tokens, stored hashed in a lake property;</li>
 *   <li>{@link io.flywheel.fleet.telemetry}: MQTT telemetry into the lake's {@code telemetry} table;</li>
 *   <li>{@link io.flywheel.fleet.sim}: a simulated fleet that drives a gateway live, with faults
 *       ({@code flywheel sim --live}).</li>
 * </ul>
 *
 * The wire protocol ({@code flywheel-fleet-client/src/main/proto/flywheel/fleet/v1/gateway.proto}, generated classes
 * in {@code io.flywheel.fleet.v1}) and the robot-side client ({@code io.flywheel.fleet.client}, {@code flywheel
 * upload}) are the module {@code flywheel-fleet-client}, which needs gRPC only: no Lance, no lake.
 */
package io.flywheel.fleet;
