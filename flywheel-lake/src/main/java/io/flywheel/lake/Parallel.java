package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Independent pieces of one staged change (one per fragment) run on the machine's cores, results in task order. */
final class Parallel {
    private Parallel() {}

    /**
     * @return each task's result, in the order given
     * @throws Exception the first failed task's exception, as it was thrown (the others are cancelled)
     */
    static <T> List<T> run(List<Callable<T>> tasks) throws Exception {
        int threads = Math.min(tasks.size(), Runtime.getRuntime().availableProcessors());
        if (threads <= 1) {
            List<T> out = new ArrayList<>(tasks.size());
            for (Callable<T> t : tasks) {
                out.add(t.call());
            }
            return out;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "lake-stage");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<T>> futures = new ArrayList<>(tasks.size());
            for (Callable<T> t : tasks) {
                futures.add(pool.submit(t));
            }
            List<T> out = new ArrayList<>(tasks.size());
            for (Future<T> f : futures) {
                try {
                    out.add(f.get());
                } catch (ExecutionException e) {
                    futures.forEach(x -> x.cancel(true));
                    if (e.getCause() instanceof Exception x) {
                        throw x;
                    }
                    throw e;
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
