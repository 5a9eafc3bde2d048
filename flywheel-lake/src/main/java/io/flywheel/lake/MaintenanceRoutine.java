package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.flywheel.error.BadInputException;

/**
 * The lake's maintenance routine: after a commit, the committing process compacts each table it changed that has had
 * more than N commits since its last compaction (by {@link CompactionPolicy#fromProperties the lake's policy}), then
 * refreshes that table's indexes where they miss rows. It runs in the committing thread, after the commit is
 * published (the commit stands whatever happens to the routine), as a transaction of its own ({@code compact}, then
 * {@code index}).
 *
 * <p>N is the lake property {@value #EVERY_COMMITS_PROPERTY}; {@value #DEFAULT_EVERY_COMMITS} when it is not set,
 * 0 turns the routine off ({@code flywheel lake compact LAKE --routine-every N} sets it). The count of commits since
 * a table's last compaction is kept by the commit protocol, under the commit lock, in the lake property
 * {@value #COUNTER_PREFIX}{@code <table>}: every change of the table's rows, columns or schema adds one, an overwrite
 * sets it to 1, a compaction or an index refresh sets it to 0. When two processes cross N together, both stage a
 * compaction; the second finds the fragments rewritten, stages again and finds nothing left to do.
 */
public final class MaintenanceRoutine {
    /** Lake property: compact a table after this many commits since its last compaction; 0 = off. */
    public static final String EVERY_COMMITS_PROPERTY = "flywheel.maintenance.compact_every_commits";
    /** The routine's N when {@link #EVERY_COMMITS_PROPERTY} is not set. */
    public static final int DEFAULT_EVERY_COMMITS = 100;
    /** Prefix of the lake properties counting each table's commits since its last compaction. */
    public static final String COUNTER_PREFIX = "flywheel.maintenance.commits_since_compaction.";

    /** Operations that never trigger the routine: its own, and the lake's creation and migration. */
    private static final Set<String> QUIET = Set.of("compact", "index", "init", "migrate");

    private MaintenanceRoutine() {}

    /**
     * @param properties lake properties
     * @return the routine's N: compact after more than N commits; 0 when off
     * @throws BadInputException naming the property when it is not a number &ge; 0
     */
    public static int everyCommits(Map<String, String> properties) {
        String v = properties.get(EVERY_COMMITS_PROPERTY);
        if (v == null) {
            return DEFAULT_EVERY_COMMITS;
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new BadInputException("lake property " + EVERY_COMMITS_PROPERTY + " is '" + v
                + "'; expected a number of commits >= 0 (0 turns the routine off)");
    }

    /**
     * @param snapshot a lake snapshot
     * @param table table name
     * @return the table's commits since its last compaction (0 when it was never changed)
     */
    public static long commitsSinceCompaction(LakeSnapshot snapshot, String table) {
        String v = snapshot.properties().get(COUNTER_PREFIX + table);
        try {
            return v == null ? 0 : Long.parseLong(v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Sets the routine's N for the lake, in a commit of its own ({@code configure}).
     *
     * @param lake the lake
     * @param everyCommits compact a table after more than this many commits since its last compaction; 0 turns the
     *     routine off
     * @return the snapshot holding the setting
     * @throws IllegalArgumentException when {@code everyCommits} is negative
     */
    public static LakeSnapshot configure(Lake lake, int everyCommits) {
        if (everyCommits < 0) {
            throw new IllegalArgumentException("the routine's commit count must be >= 0 (0 turns it off), got "
                    + everyCommits);
        }
        return lake.begin("configure").property(EVERY_COMMITS_PROPERTY, Integer.toString(everyCommits))
                .summary(EVERY_COMMITS_PROPERTY, Integer.toString(everyCommits)).commit().snapshot();
    }

    /**
     * Advances the counters for one commit's changes; called by the commit protocol under the lock, on the properties
     * the new commit point will hold.
     */
    static void countCommits(Map<String, String> properties, List<LakeSnapshot.TableChange> changes) {
        for (LakeSnapshot.TableChange c : changes) {
            String key = COUNTER_PREFIX + c.table();
            switch (c.kind()) {
                case "compact", "index" -> properties.put(key, "0");
                case "rollback", "migrate" -> { }
                case "overwrite", "create" -> properties.put(key, "1");
                default -> {
                    long n = 0;
                    try {
                        n = Long.parseLong(properties.getOrDefault(key, "0"));
                    } catch (NumberFormatException e) {
                        n = 0;
                    }
                    properties.put(key, Long.toString(n + 1));
                }
            }
        }
    }

    /**
     * Runs the routine after a commit, when it is due.
     *
     * @param lake the lake committed to
     * @param operation the committed transaction's operation
     * @param result what the commit did
     * @return what the routine did, or null when it was not due; a routine that failed says why in
     *     {@link CompactionResult#failure()}
     */
    static CompactionResult afterCommit(Lake lake, String operation, CommitResult result) {
        if (QUIET.contains(operation) || result.tables().isEmpty()) {
            return null;
        }
        LakeSnapshot s = result.snapshot();
        int every;
        CompactionPolicy policy;
        try {
            every = everyCommits(s.properties());
            policy = CompactionPolicy.fromProperties(s.properties());
        } catch (BadInputException e) {
            return new CompactionResult(CompactionPolicy.defaults(), List.of(), 0, 0, e.getMessage());
        }
        if (every == 0) {
            return null;
        }
        List<String> due = new ArrayList<>();
        for (CommitResult.TableCommit t : result.tables()) {
            if (commitsSinceCompaction(s, t.table()) > every) {
                due.add(t.table());
            }
        }
        if (due.isEmpty()) {
            return null;
        }
        try {
            return Compactor.run(lake, due, policy);
        } catch (RuntimeException e) {
            return new CompactionResult(policy, List.of(), 0, 0, "compaction of " + due + " after lake commit "
                    + s.seq() + " failed (that commit stands; the next one tries again): " + e.getMessage());
        }
    }
}
