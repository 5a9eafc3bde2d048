package io.flywheel.cli;

import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Graceful stops of the long-running commands ({@code gateway}, {@code serve}). */
final class Signals {
    private Signals() {
    }

    /**
     * SIGINT (Ctrl-C) and SIGTERM count {@code stop} down, so the command finishes its work, prints its summary
     * and exits 0: a stop asked for is not a failure. A second signal while stopping halts at once (exit 130).
     * Where the JVM has no {@code sun.misc.Signal}, the caller's shutdown hook is what stops the command.
     *
     * @param stop the latch the command waits on
     */
    static void stopOn(CountDownLatch stop) {
        try {
            for (String name : List.of("INT", "TERM")) {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> {
                    if (stop.getCount() == 0) {
                        Runtime.getRuntime().halt(130);
                    }
                    stop.countDown();
                });
            }
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
            // no signal handling here: the shutdown hook stops the command
        }
    }
}
