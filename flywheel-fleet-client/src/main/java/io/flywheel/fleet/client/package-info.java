/**
 * The robot-side client of the fleet gateway: {@link io.flywheel.fleet.client.FleetClient} uploads files (resuming
 * after a cut, with retries and backoff) and asks for their state. It needs gRPC and the generated
 * {@code io.flywheel.fleet.v1} classes only: no Lance, no lake.
 */
package io.flywheel.fleet.client;
