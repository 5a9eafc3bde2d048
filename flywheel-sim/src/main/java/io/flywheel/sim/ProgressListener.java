package io.flywheel.sim;

import java.io.PrintStream;
import java.util.Locale;

/** Receives progress of a fleet simulation; called from worker threads, one call at a time. */
@FunctionalInterface
public interface ProgressListener {

    /**
     * @param done episodes finished
     * @param total episodes in the fleet
     * @param messages messages written so far
     * @param bytes bytes written so far
     * @param elapsedNanos since the simulation started
     */
    void onProgress(int done, int total, long messages, long bytes, long elapsedNanos);

    /** A listener that does nothing. */
    ProgressListener NONE = (done, total, messages, bytes, elapsed) -> {};

    /**
     * @param err where to draw, e.g. System.err
     * @return a listener that redraws one line (episodes done/total, episodes/s, MB/s, ETA) at most
     *     four times a second and on the last episode
     */
    static ProgressListener printingTo(PrintStream err) {
        long[] last = {0};
        return (done, total, messages, bytes, elapsed) -> {
            long now = System.nanoTime();
            if (done < total && now - last[0] < 250_000_000L) {
                return;
            }
            last[0] = now;
            double s = Math.max(1e-9, elapsed / 1e9);
            double rate = done / s;
            double eta = rate > 0 ? (total - done) / rate : 0;
            err.printf(Locale.ROOT, "\rsim: %d/%d episodes (%.0f%%), %.1f episodes/s, %.1f MB/s, ETA %.0fs   %s",
                    done, total, 100.0 * done / total, rate, bytes / s / 1e6, eta, done == total ? "\n" : "");
            err.flush();
        };
    }
}
