/** The gRPC gateway robots talk to: {@link io.flywheel.fleet.gateway.FleetGateway} and its options. */
package io.flywheel.fleet.gateway;
