package io.flywheel.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Progress of a long command on standard error: done/total, rate and ETA, redrawn at most a few
 * times a second; silent when {@code quiet} (e.g. with {@code --json}, or when stderr is not a
 * terminal and the work is short).
 */
final class Progress {
    private final String what;
    private final String unit;
    private final long total;
    private final boolean quiet;
    private final PrintStream err;
    private final long startNanos = System.nanoTime();
    private long lastDraw;
    private long done;

    /**
     * @param what label, e.g. "reading"
     * @param unit unit of the counts, e.g. "MB"
     * @param total expected total, or -1 when unknown
     * @param quiet draw nothing
     */
    Progress(String what, String unit, long total, boolean quiet) {
        this.what = what;
        this.unit = unit;
        this.total = total;
        this.quiet = quiet || System.console() == null && !"1".equals(System.getenv("FLYWHEEL_PROGRESS"));
        this.err = System.err;
    }

    /** Sets the amount done so far and redraws when due. */
    void update(long doneSoFar) {
        done = doneSoFar;
        long now = System.nanoTime();
        if (!quiet && now - lastDraw > 250_000_000L) {
            lastDraw = now;
            draw(now);
        }
    }

    private void draw(long now) {
        double secs = Math.max(1e-9, (now - startNanos) / 1e9);
        double rate = done / secs;
        StringBuilder sb = new StringBuilder("\r").append(what).append(": ").append(done);
        if (total > 0) {
            sb.append('/').append(total).append(' ').append(unit);
            sb.append(String.format(Locale.ROOT, " (%.0f%%)", 100.0 * done / total));
            if (rate > 0) {
                sb.append(String.format(Locale.ROOT, " ETA %.0fs", (total - done) / rate));
            }
        } else {
            sb.append(' ').append(unit);
        }
        sb.append(String.format(Locale.ROOT, ", %.1f %s/s   ", rate, unit));
        err.print(sb);
        err.flush();
    }

    /** Clears the progress line. */
    void finish() {
        if (!quiet && lastDraw != 0) {
            err.print("\r" + " ".repeat(78) + "\r");
            err.flush();
        }
    }
}
