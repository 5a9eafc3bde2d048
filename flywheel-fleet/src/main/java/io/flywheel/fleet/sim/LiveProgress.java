package io.flywheel.fleet.sim;

/**
 * Where a {@link LiveFleet} run stands.
 *
 * @param recorded episodes recorded so far
 * @param uploaded episodes the gateway has (landed in this run or before)
 * @param total episodes of the fleet
 * @param bytesUploaded bytes of the uploaded episodes
 * @param published messages published, all QoS classes
 * @param uploadCuts gRPC connections cut mid-upload so far
 * @param mqttCuts MQTT connections cut so far
 * @param elapsedNanos since the run started
 */
public record LiveProgress(int recorded, int uploaded, int total, long bytesUploaded, long published, long uploadCuts,
        long mqttCuts, long elapsedNanos) {

    /** Receives progress, from one thread at a time, about twice a second and once at the end. */
    @FunctionalInterface
    public interface Listener {
        /** Ignores progress. */
        Listener NONE = p -> { };

        /** @param p where the run stands */
        void onProgress(LiveProgress p);
    }

    /** @return uploaded episodes per wall second so far */
    public double episodesPerSecond() {
        return uploaded / Math.max(1e-9, elapsedNanos / 1e9);
    }

    /** @return seconds until every episode is uploaded at the rate so far; 0 when done or unknown */
    public double etaSeconds() {
        double rate = episodesPerSecond();
        return rate > 0 ? (total - uploaded) / rate : 0;
    }
}
