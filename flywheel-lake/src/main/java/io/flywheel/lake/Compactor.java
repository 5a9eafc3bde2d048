package io.flywheel.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.compaction.CompactionMetrics;

import io.flywheel.error.NotFoundException;

/**
 * Compacts tables of a lake and refreshes their indexes, as two lake transactions: {@code compact} (one
 * {@link CompactChange} per table the policy selects) and then {@code index} (one {@link IndexRefreshChange} per table
 * whose indexes miss rows). Used by {@link Lake#compact} and by the {@link MaintenanceRoutine}.
 */
final class Compactor {
    private Compactor() {}

    /**
     * @param lake the lake; its snapshot is refreshed to the newest commit first
     * @param tables tables to look at, or empty for every table of the lake
     * @param policy when and how to compact
     * @return what was done per table
     * @throws NotFoundException naming the lake's tables when one of {@code tables} is not among them
     */
    static CompactionResult run(Lake lake, List<String> tables, CompactionPolicy policy) {
        LakeSnapshot head = lake.refresh();
        List<String> names = new ArrayList<>(new LinkedHashSet<>(tables.isEmpty() ? head.tables().keySet() : tables));
        for (String t : names) {
            if (!head.tables().containsKey(t)) {
                throw new NotFoundException("the lake at " + lake.location() + " has no table '" + t + "' (tables: "
                        + String.join(", ", head.tables().keySet()) + ")");
            }
        }
        Map<String, TableLayout> before = new LinkedHashMap<>();
        Map<String, CompactChange> compactions = new LinkedHashMap<>();
        for (String t : names) {
            TableLayout layout = layout(lake, t, head.version(t), policy);
            before.put(t, layout);
            if (policy.reason(layout) != null) {
                compactions.put(t, new CompactChange(t, policy));
            }
        }
        long compactSeq = 0;
        if (!compactions.isEmpty()) {
            LakeTransaction tx = lake.begin("compact").summary("tables", String.join(", ", compactions.keySet()));
            compactions.values().forEach(tx::add);
            compactSeq = tx.commit().snapshot().seq();
        }
        LakeSnapshot compacted = lake.snapshot();
        Map<String, IndexRefreshChange> refreshes = new LinkedHashMap<>();
        for (String t : names) {
            if (hasStaleIndexes(lake, t, compacted.version(t))) {
                refreshes.put(t, new IndexRefreshChange(t));
            }
        }
        long indexSeq = 0;
        if (!refreshes.isEmpty()) {
            LakeTransaction tx = lake.begin("index").summary("tables", String.join(", ", refreshes.keySet()));
            refreshes.values().forEach(tx::add);
            indexSeq = tx.commit().snapshot().seq();
        }
        LakeSnapshot after = lake.snapshot();
        List<CompactionResult.TableCompaction> out = new ArrayList<>();
        for (String t : names) {
            CompactChange c = compactions.get(t);
            CompactionMetrics m = c == null ? null : c.metrics();
            String reason = c == null || c.planned() == null ? null : c.planned().reason();
            IndexRefreshChange r = refreshes.get(t);
            long to = after.version(t);
            out.add(new CompactionResult.TableCompaction(t, reason, head.version(t), to, before.get(t),
                    to == head.version(t) ? before.get(t) : layout(lake, t, to, policy),
                    m == null ? 0 : m.getFragmentsRemoved(), m == null ? 0 : m.getFragmentsAdded(),
                    m == null ? 0 : m.getFilesRemoved(), m == null ? 0 : m.getFilesAdded(),
                    r == null ? List.of() : r.refreshed()));
        }
        return new CompactionResult(policy, out, compactSeq, indexSeq, null);
    }

    private static TableLayout layout(Lake lake, String table, long version, CompactionPolicy policy) {
        try (BufferAllocator a = lake.newAllocator("layout-" + table); Dataset ds = lake.openDataset(table, version, a)) {
            return TableLayout.of(ds, policy.targetRowsPerFragment());
        } catch (io.flywheel.error.FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw Lake.failure("cannot read the fragments of table " + lake.tableUri(table) + " at version " + version, e);
        }
    }

    private static boolean hasStaleIndexes(Lake lake, String table, long version) {
        try (BufferAllocator a = lake.newAllocator("indexes-" + table); Dataset ds = lake.openDataset(table, version, a)) {
            return !IndexRefreshChange.stale(ds).isEmpty();
        } catch (io.flywheel.error.FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw Lake.failure("cannot read the indexes of table " + lake.tableUri(table) + " at version " + version, e);
        }
    }
}
