package io.flywheel.lake;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.index.OptimizeOptions;

import io.flywheel.error.NotFoundException;

/**
 * The refresh of a table's vector and scalar indexes after appends (kind {@code index}): Lance's
 * {@code optimizeIndices} indexes the rows no index covers yet, as a delta of each index. Lance writes and commits the
 * index files in one call, so this runs under the commit lock ({@link PendingChange.Staged#direct}); it reads only
 * the unindexed rows. Commutes with every change (rows not indexed are still found, by a flat scan).
 */
final class IndexRefreshChange extends PendingChange {
    private volatile List<String> refreshed = List.of();

    IndexRefreshChange(String table) {
        super(table, "index");
    }

    /** @return the indexes that had unindexed rows when the change was staged */
    List<String> refreshed() {
        return refreshed;
    }

    @Override
    Set<String> keys() {
        return Set.of();
    }

    @Override
    Staged stage(Lake lake, Dataset base, BufferAllocator alloc) {
        if (base == null) {
            throw new NotFoundException("cannot refresh the indexes of table " + lake.tableUri(table)
                    + ": it does not exist");
        }
        List<String> names = stale(base);
        refreshed = names;
        if (names.isEmpty()) {
            return new Staged(null, List.of(), null, false, Map.of(), 0, 0, 0);
        }
        return Staged.direct(ds -> ds.optimizeIndices(OptimizeOptions.builder().indexNames(names).build()), Map.of());
    }

    /** One {@code CreateIndex} version, or none when a concurrent refresh left nothing to index. */
    @Override
    boolean ownsDirectVersions(Dataset after, long before) {
        return after.version() == before || after.version() == before + 1;
    }

    /**
     * @param ds a table version
     * @return the names of its indexes that do not cover every row (Lance's {@code num_unindexed_rows} &gt; 0)
     */
    static List<String> stale(Dataset ds) {
        List<String> out = new ArrayList<>();
        for (String name : ds.listIndexes()) {
            Map<String, Object> stats;
            try {
                stats = ds.getIndexStatistics(name);
            } catch (RuntimeException e) {
                continue; // a system index (fragment reuse, MemWAL) has no statistics to refresh
            }
            if (stats.get("num_unindexed_rows") instanceof Number n && n.longValue() > 0) {
                out.add(name);
            }
        }
        return out;
    }
}
