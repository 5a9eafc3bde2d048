package io.flywheel.fleet.telemetry;

/**
 * Counts of a {@link TelemetrySubscriber} since it started.
 *
 * @param connected whether it is connected to the broker now
 * @param received messages received (every one: committed, duplicate, malformed, or waiting)
 * @param committed rows committed to the telemetry table
 * @param duplicates redeliveries (or repeats of a message id) dropped
 * @param malformed messages refused (bad topic or payload), never written
 * @param batches micro-batches committed (one lake commit each)
 * @param pending messages received and not committed yet
 * @param lagMs how long the oldest message not committed yet has waited, ms (0 when none waits)
 * @param linkedAtWrite alerts written with their episode (the episode was in the lake first)
 * @param linkedLater alerts given their episode after their episode was ingested
 * @param commitFailures failed commit attempts (each retried; the messages stay unacknowledged meanwhile)
 */
public record TelemetryStats(boolean connected, long received, long committed, long duplicates, long malformed,
        long batches, int pending, long lagMs, long linkedAtWrite, long linkedLater, long commitFailures) {}
