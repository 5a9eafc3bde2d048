package io.flywheel.lake;

/**
 * Child process for {@link CrashConsistencyTest}: ingests files {@code 0..n-1} of {@link Fixtures}
 * into an existing lake, one transaction each, skipping files whose sha256 is already in
 * raw_files (the idempotent re-ingest), and prints {@code committed i} after each.
 *
 * <p>Arguments: lake directory, n, frames per episode.
 */
public final class CrashWriter {
    private CrashWriter() {}

    public static void main(String[] args) {
        run(args[0], Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    }

    /** The ingest loop; also called in-process for the final repair run. */
    static void run(String lakeDir, int n, int k) {
        try (Lake lake = Lake.open(lakeDir)) {
            System.out.println("started");
            System.out.flush();
            for (int i = 0; i < n; i++) {
                if (lake.rawFile(Fixtures.sha(i)).isPresent()) {
                    continue;
                }
                Fixtures.ingest(lake, i, k);
                System.out.println("committed " + i);
                System.out.flush();
            }
        }
        System.out.println("done");
    }
}
