package io.flywheel.lake;

import java.util.List;

/**
 * Child process of the commit tests: opens the lake and ingests {@link Fixtures} files {@code from..to-1} with
 * {@code k} frames each, one transaction per file, skipping files already in raw_files (the idempotent re-run),
 * and prints {@code committed i} after each. With a fifth argument, each file's transaction also creates the lake
 * tag {@code <prefix>-<i>} on frames and episodes (so that the protocol's tag step has work). The commit hooks
 * ({@code -Dflywheel.lake.pause-at=STEP}) make it wait at a protocol step to be killed there.
 *
 * <p>Arguments: lake directory or URI, from, to, frames per episode, [tag prefix]; S3 options from the
 * {@code AWS_*} environment variables.
 */
public final class CommitWriter {
    private CommitWriter() {}

    public static void main(String[] args) {
        run(args[0], Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                args.length > 4 ? args[4] : null);
    }

    static void run(String lakeDir, int from, int to, int k, String tagPrefix) {
        run(lakeDir, Lake.Options.defaults(), from, to, k, tagPrefix);
    }

    static void run(String lakeDir, Lake.Options options, int from, int to, int k, String tagPrefix) {
        try (Lake lake = Lake.open(lakeDir, options)) {
            System.out.println("started");
            System.out.flush();
            for (int i = from; i < to; i++) {
                lake.refresh();
                if (lake.rawFile(Fixtures.sha(i)).isPresent()) {
                    continue;
                }
                LakeTransaction tx = lake.begin("ingest").putFrames(Fixtures.frames(i, k))
                        .putEpisodes(List.of(Fixtures.episode(i, k))).putRawFiles(List.of(Fixtures.rawFile(i)));
                if (tagPrefix != null) {
                    tx.tag(tagPrefix + "-" + i, List.of("frames", "episodes"));
                }
                try {
                    tx.commit();
                } catch (CommitConflictException e) {
                    // a concurrent writer committed the same file first: it is in the lake once
                    System.out.println("conflict " + i + ": " + e.getMessage());
                    System.out.flush();
                    continue;
                }
                System.out.println("committed " + i);
                System.out.flush();
            }
        }
        System.out.println("done");
        System.out.flush();
    }
}
