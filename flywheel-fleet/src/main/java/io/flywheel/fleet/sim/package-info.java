/**
 * A simulated robot fleet living its day against a fleet gateway ({@code flywheel sim --live}):
 * {@link io.flywheel.fleet.sim.LiveFleet} runs each robot of the fleet simulator's plan as a recorder and an uploader
 * thread, recording on the robot's clock at a chosen speed, uploading every episode as soon as it ends and publishing
 * telemetry, alerts and audit records over MQTT while it records, with faults injected
 * ({@link io.flywheel.fleet.sim.Faults}: connections cut mid-upload through a
 * {@link io.flywheel.fleet.sim.CuttableLink}, alerts published twice, MQTT connections cut); {@link io.flywheel.fleet.sim.LiveCheck} checks a run against the
 * gateway's lake. The robot side needs the gateway's address and the robots' tokens
 * ({@link io.flywheel.fleet.sim.TokenFile}), not the lake.
 */
package io.flywheel.fleet.sim;
