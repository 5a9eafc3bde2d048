package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;

import io.flywheel.error.FlywheelException;

/**
 * The lake's versions: the newest lake commit and the table versions it names (what a reader outside Flywheel opens
 * for a consistent set of tables), then per table its Lance versions, tags and size.
 *
 * @param commitSeq the newest lake commit's sequence number
 * @param committedAtNs its commit time, int64 ns since the Unix epoch
 * @param operation its operation
 * @param tableVersions the version of every table it names
 * @param tables one entry per table, by name
 */
public record LakeVersions(long commitSeq, long committedAtNs, String operation, Map<String, Long> tableVersions,
        List<TableVersions> tables) {
    public LakeVersions {
        tableVersions = java.util.Collections.unmodifiableMap(new TreeMap<>(tableVersions));
        tables = List.copyOf(tables);
    }

    /** @return the entry of {@code table}, or null */
    public TableVersions table(String table) {
        return tables.stream().filter(t -> t.table().equals(table)).findFirst().orElse(null);
    }

    /**
     * One table's versions.
     *
     * @param table table name
     * @param committedVersion its version in the newest lake commit
     * @param latestVersion Lance's latest version of it; ahead of {@code committedVersion} while a commit is in flight
     *     or after a writer died mid-commit (the next commit to the table rolls such a version back)
     * @param versions how many versions it has (Lance's, committed or not)
     * @param oldestVersion its oldest version still present
     * @param tags the lake tags that pin it, each with the version it pins
     * @param rows rows at the committed version
     * @param fragments fragments at the committed version
     * @param dataBytes bytes of the data files of the committed version (deletion and index files not counted)
     * @param indexes the names of its indexes at the committed version
     */
    public record TableVersions(String table, long committedVersion, long latestVersion, int versions,
            long oldestVersion, Map<String, Long> tags, long rows, int fragments, long dataBytes, List<String> indexes) {
        public TableVersions {
            tags = java.util.Collections.unmodifiableMap(new TreeMap<>(tags));
            indexes = List.copyOf(indexes);
        }

        /** @return whether Lance has a version later than the newest lake commit names */
        public boolean ahead() {
            return latestVersion > committedVersion;
        }
    }

    /**
     * @param lake the lake, read at its newest commit (refreshed)
     * @return its versions
     * @throws io.flywheel.error.StorageUnavailableException naming the table when one cannot be read
     */
    static LakeVersions of(Lake lake) {
        LakeSnapshot head = lake.refresh();
        List<TableVersions> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : head.tables().entrySet()) {
            String t = e.getKey();
            long committed = e.getValue();
            Map<String, Long> tags = new TreeMap<>();
            head.tags().forEach((tag, pins) -> {
                if (pins.containsKey(t)) {
                    tags.put(tag, pins.get(t));
                }
            });
            try (BufferAllocator a = lake.newAllocator("versions-" + t); Dataset ds = lake.openDataset(t, committed, a)) {
                long oldest = Long.MAX_VALUE;
                int n = 0;
                for (org.lance.Version v : ds.listVersions()) {
                    oldest = Math.min(oldest, v.getId());
                    n++;
                }
                long bytes = 0;
                int fragments = 0;
                for (org.lance.Fragment f : ds.getFragments()) {
                    fragments++;
                    for (org.lance.fragment.DataFile d : f.metadata().getFiles()) {
                        bytes += d.getFileSizeBytes() == null ? 0 : d.getFileSizeBytes();
                    }
                }
                out.add(new TableVersions(t, committed, ds.latestVersion(), n, n == 0 ? committed : oldest, tags,
                        ds.countRows(), fragments, bytes, ds.listIndexes()));
            } catch (FlywheelException ex) {
                throw ex;
            } catch (Exception ex) {
                throw Lake.failure("cannot read the versions of table " + lake.tableUri(t) + " (version " + committed
                        + " in lake commit " + head.seq() + ")", ex);
            }
        }
        return new LakeVersions(head.seq(), head.committedAtNs(), head.operation(), head.tables(), out);
    }
}
