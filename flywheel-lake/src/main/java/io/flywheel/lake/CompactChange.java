package io.flywheel.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.compaction.Compaction;
import org.lance.compaction.CompactionMetrics;
import org.lance.compaction.CompactionOptions;
import org.lance.compaction.CompactionPlan;
import org.lance.compaction.CompactionTask;
import org.lance.compaction.RewriteResult;

import io.flywheel.error.NotFoundException;

/**
 * A table's compaction inside a lake transaction (kind {@code compact}). Staging plans the compaction on the version
 * the transaction is based on and runs its rewrite tasks: the new data files are written next to the table's,
 * invisible, before the commit lock is taken. Under the lock, Lance commits the rewrite ({@link Compaction}
 * {@code commitCompaction}: a {@code ReserveFragments} version for the new fragment ids, then the {@code Rewrite},
 * which also remaps the table's indexes) on top of whatever was committed meanwhile.
 *
 * <p>Basis: the source fragments must be unchanged (same ids, files and deletions) and the schema the same; otherwise
 * the protocol stages the compaction again on the newest version, where the policy is evaluated afresh (so a
 * concurrent compaction leaves nothing to do). When the basis holds, the rewrite is committed as computed on the
 * latest version (its results' read version is set to it): the rewritten rows are exactly those of the source
 * fragments there, so Lance's own conflict resolution, which refuses a rewrite across a restore (the protocol's
 * rollback of a dead writer's version) or an index change, has nothing to resolve, and the indexes of the latest version
 * are the ones remapped. Compaction commutes with every other change; changes that depend on the rewritten fragments
 * (updates, puts) are staged again by their own basis check.
 */
final class CompactChange extends PendingChange {
    private final CompactionPolicy policy;
    private volatile Planned planned;
    private volatile CompactionMetrics metrics;

    /**
     * What the last staging found.
     *
     * @param version the table version it was planned on
     * @param before the table's layout at that version
     * @param reason why the policy compacts it, or null when it does not
     * @param tasks rewrite tasks run
     * @param schema the table's schema at that version
     */
    record Planned(long version, TableLayout before, String reason, int tasks, Schema schema) {}

    CompactChange(String table, CompactionPolicy policy) {
        super(table, "compact");
        this.policy = policy;
    }

    /** @return what the last staging found, or null before staging */
    Planned planned() {
        return planned;
    }

    /** @return Lance's metrics of the committed rewrite, or null when nothing was rewritten */
    CompactionMetrics metrics() {
        return metrics;
    }

    @Override
    Set<String> keys() {
        return Set.of();
    }

    @Override
    boolean dependsOnFragments() {
        return true;
    }

    @Override
    Staged stage(Lake lake, Dataset base, BufferAllocator alloc) {
        if (base == null) {
            throw new NotFoundException("cannot compact table " + lake.tableUri(table) + ": it does not exist");
        }
        metrics = null;
        TableLayout layout = TableLayout.of(base, policy.targetRowsPerFragment());
        String reason = policy.reason(layout);
        Schema schema = base.getSchema();
        if (reason == null) {
            planned = new Planned(base.version(), layout, null, 0, schema);
            return nothing();
        }
        CompactionOptions options = policy.lanceOptions();
        CompactionPlan plan = Compaction.planCompaction(base, options);
        List<CompactionTask> tasks = plan.getCompactionTasks();
        if (tasks.isEmpty()) {
            planned = new Planned(base.version(), layout, null, 0, schema);
            return nothing();
        }
        Map<Integer, FragmentMetadata> basis = new LinkedHashMap<>();
        List<RewriteResult> results = new ArrayList<>();
        for (CompactionTask t : tasks) {
            for (FragmentMetadata m : t.getTaskData().getFragments()) {
                basis.put(m.getId(), base.getFragment(m.getId()).metadata());
            }
            results.add(t.execute(base)); // the rewritten data files, invisible until the commit names them
        }
        planned = new Planned(base.version(), layout, reason, tasks.size(), schema);
        return Staged.direct(ds -> metrics = Compaction.commitCompaction(ds, rebased(results, ds.version()), options),
                basis);
    }

    /** @return the results as computed on {@code version}, whose source fragments are those they were computed on */
    private static List<RewriteResult> rebased(List<RewriteResult> results, long version) {
        List<RewriteResult> out = new ArrayList<>(results.size());
        for (RewriteResult r : results) {
            out.add(new RewriteResult(r.getMetrics(), r.getNewFragments(), r.getOriginalFragments(), version,
                    r.getRowAddrs()));
        }
        return out;
    }

    private static Staged nothing() {
        return new Staged(null, List.of(), null, false, Map.of(), 0, 0, 0);
    }

    @Override
    boolean basisHolds(Staged staged, Dataset latest) {
        if (staged.basis().isEmpty()) {
            return true; // nothing to rewrite
        }
        return latest != null && super.basisHolds(staged, latest) && latest.getSchema().equals(planned.schema());
    }

    /** A {@code ReserveFragments} version then the {@code Rewrite} (tables without stable row ids), or the rewrite. */
    @Override
    boolean ownsDirectVersions(Dataset after, long before) {
        long n = after.version() - before;
        return n == 1 || (n == 2 && "ReserveFragments".equals(operation(after, before + 1)));
    }

    /** @return the Lance operation that made version {@code v} of the table, or "?" when it cannot be read */
    static String operation(Dataset ds, long v) {
        try (Dataset at = ds.checkoutVersion(v)) {
            Optional<Transaction> t = at.readTransaction();
            try {
                return t.map(x -> x.operation().name()).orElse("?");
            } finally {
                t.ifPresent(Transaction::close);
            }
        } catch (RuntimeException e) { // Lance 7.0.0's JNI cannot read a Rewrite that remapped indexes
            return "?";
        }
    }
}
