package io.flywheel.lake;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@link Lake#cleanup} removed (or, for a dry run, would remove).
 *
 * @param dryRun whether nothing was removed
 * @param cutoff versions committed before this instant were candidates
 * @param commitSeq the newest lake commit when cleanup ran (its table versions are kept)
 * @param tables one entry per table of the lake
 */
public record CleanupResult(boolean dryRun, Instant cutoff, long commitSeq, List<TableCleanup> tables) {
    public CleanupResult {
        tables = List.copyOf(tables);
    }

    /** @return the versions removed, summed over the tables */
    public long versionsRemoved() {
        return tables.stream().mapToLong(t -> t.removedVersions().size()).sum();
    }

    /** @return the files removed (data, deletion, index and transaction files), summed over the tables */
    public long filesRemoved() {
        return tables.stream().mapToLong(TableCleanup::filesRemoved).sum();
    }

    /** @return the bytes removed, summed over the tables (manifests included) */
    public long bytesRemoved() {
        return tables.stream().mapToLong(TableCleanup::bytesRemoved).sum();
    }

    /** @return the entry of {@code table}, or null */
    public TableCleanup table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst().orElse(null);
    }

    /**
     * One table's cleanup.
     *
     * @param table table name
     * @param committedVersion its version in the newest lake commit (kept, with every later version)
     * @param versionsBefore how many versions it had
     * @param removedVersions the versions removed (would be, for a dry run), ascending
     * @param keptOld versions older than the cutoff that were kept, each with why (a lake tag, a training set's
     *     lineage, the newest lake commit, a version after it, a Lance tag that is no lake tag, or the floor below a
     *     kept version that has no Lance tag)
     * @param dataFilesRemoved data files removed; for a dry run, the data files only the removed versions reference
     * @param deletionFilesRemoved deletion files removed (0 for a dry run)
     * @param indexFilesRemoved index files removed (0 for a dry run)
     * @param transactionFilesRemoved transaction files removed (0 for a dry run)
     * @param bytesRemoved bytes removed, manifests included; for a dry run, the size of those data files
     */
    public record TableCleanup(String table, long committedVersion, int versionsBefore, List<Long> removedVersions,
            Map<Long, List<String>> keptOld, long dataFilesRemoved, long deletionFilesRemoved, long indexFilesRemoved,
            long transactionFilesRemoved, long bytesRemoved) {
        public TableCleanup {
            removedVersions = List.copyOf(removedVersions);
            TreeMap<Long, List<String>> k = new TreeMap<>();
            keptOld.forEach((v, why) -> k.put(v, List.copyOf(why)));
            keptOld = java.util.Collections.unmodifiableMap(k);
        }

        /** @return data, deletion, index and transaction files removed */
        public long filesRemoved() {
            return dataFilesRemoved + deletionFilesRemoved + indexFilesRemoved + transactionFilesRemoved;
        }
    }
}
