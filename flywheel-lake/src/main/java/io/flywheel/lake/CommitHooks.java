package io.flywheel.lake;

import java.util.Set;
import java.util.function.Consumer;

import io.flywheel.error.StorageUnavailableException;

/**
 * Test hooks at each named step of the commit protocol ({@link CommitProtocol}): {@code begin}, {@code staged},
 * {@code locked},
 * {@code validated}, {@code table-committed:<table>}, {@code tagged}, {@code published}, {@code released}.
 *
 * <ul>
 *   <li>{@code -Dflywheel.lake.pause-at=STEP[,STEP...]}: the process prints {@code PAUSED <step>} on stdout and
 *       waits forever there, so that a test can kill it with SIGKILL at exactly that step.</li>
 *   <li>{@code -Dflywheel.lake.fail-at=STEP}: the commit fails there as if the storage had died.</li>
 *   <li>{@code -Dflywheel.lake.trace=true}: each step is printed as {@code STEP <epoch microseconds> <thread> <step>}, to show
 *       concurrent writers' commit windows.</li>
 *   <li>{@link #listen}: an in-process listener of every step.</li>
 * </ul>
 */
public final class CommitHooks {
    private static volatile Consumer<String> listener;

    private CommitHooks() {}

    /** Installs (or with null removes) a listener called at every step, on the committing thread. */
    public static void listen(Consumer<String> l) {
        listener = l;
    }

    static void at(String step) {
        Consumer<String> l = listener;
        if (l != null) {
            l.accept(step);
        }
        if (Boolean.getBoolean("flywheel.lake.trace")) {
            java.time.Instant now = java.time.Instant.now();
            long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
            System.out.println("STEP " + micros + " " + Thread.currentThread().getName() + " " + step);
            System.out.flush();
        }
        String fail = System.getProperty("flywheel.lake.fail-at");
        if (fail != null && matches(fail, step)) {
            throw new StorageUnavailableException("injected storage failure at commit step '" + step + "'");
        }
        String pause = System.getProperty("flywheel.lake.pause-at");
        if (pause != null && matches(pause, step)) {
            System.out.println("PAUSED " + step);
            System.out.flush();
            while (true) {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    // wait for the kill
                }
            }
        }
    }

    private static boolean matches(String list, String step) {
        return Set.of(list.split(",")).contains(step);
    }
}
