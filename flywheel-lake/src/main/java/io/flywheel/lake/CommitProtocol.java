package io.flywheel.lake;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import org.apache.arrow.memory.BufferAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.Transaction;
import org.lance.operation.Append;
import org.lance.operation.Operation;
import org.lance.operation.Overwrite;

import io.flywheel.error.ConflictException;
import io.flywheel.error.FlywheelException;
import io.flywheel.error.NotFoundException;
import io.flywheel.error.StorageUnavailableException;

/**
 * Commits one {@link LakeTransaction}. The steps, each with a test hook ({@link CommitHooks}) so that tests can kill
 * the process at every one of them:
 *
 * <ol>
 *   <li>{@code begin}: the commit starts (nothing written yet).</li>
 *   <li>{@code staged}: the changes' data files are written into the tables' folders, invisible (no table version
 *       names them). Concurrent writers overlap here: this is where the time goes.</li>
 *   <li>{@code locked}: the lake's commit lock is taken ({@link CommitLock}); it covers the steps below only.</li>
 *   <li>{@code validated}: the newest commit point (head) is read; every commit after the transaction's base is
 *       checked against it (a change that does not commute is a {@link CommitConflictException}); each table it
 *       changes is rolled back to the head's version if a dead writer left a later, uncommitted Lance version
 *       ({@code restore}); changes whose data files were computed from fragments that changed since are staged
 *       again (after releasing the lock, with backoff).</li>
 *   <li>{@code table-committed:<table>}: each table's Lance transaction is committed on top of the head's version,
 *       and must land on the next version (otherwise a writer outside the protocol interfered and the commit is
 *       abandoned, uncommitted).</li>
 *   <li>{@code tagged}: the Lance tags of the transaction's lake tags are written (for readers outside Flywheel).</li>
 *   <li>{@code published}: the commit point {@code _lake/commits/<head+1>.json} is created with put-if-absent. This
 *       is the commit: before it, readers see none of the transaction (they read the tables at the versions the head
 *       names); after it, all of it.</li>
 *   <li>{@code released}: the lock is released.</li>
 * </ol>
 *
 * A process killed before {@code published} leaves Lance versions that no commit point names; the next commit that
 * touches those tables rolls them back, and a re-run of the work commits it whole.
 */
final class CommitProtocol {
    static final int MAX_ATTEMPTS = 12;
    static final String TXN_PROPERTY = "flywheel.lake.txn";
    static final String SEQ_PROPERTY = "flywheel.lake.seq";

    private final Lake lake;
    private final LakeTransaction tx;
    private final String txnId = UUID.randomUUID().toString();

    CommitProtocol(Lake lake, LakeTransaction tx) {
        this.lake = lake;
        this.tx = tx;
    }

    CommitResult run() {
        if (tx.isEmpty()) {
            return new CommitResult(tx.base(), List.of(), 0);
        }
        CommitHooks.at("begin");
        List<PendingChange> changes = tx.changes();
        Map<String, PendingChange.Staged> staged = new LinkedHashMap<>();
        long backoff = 20;
        try (BufferAllocator alloc = lake.newAllocator("commit-" + tx.operation())) {
            try {
                for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
                    LakeSnapshot stageAt = attempt == 1 ? tx.base() : lake.log().latest().orElseThrow();
                    for (PendingChange c : changes) {
                        if (!staged.containsKey(c.table)) {
                            staged.put(c.table, stage(c, stageAt, alloc));
                        }
                    }
                    CommitHooks.at("staged");
                    Optional<CommitResult> done;
                    try (CommitLock.Held held = lake.commitLock().acquire(lockTimeout())) {
                        CommitHooks.at("locked");
                        done = publish(changes, staged, alloc, attempt);
                    }
                    if (done.isPresent()) {
                        CommitHooks.at("released");
                        lake.advance(done.get().snapshot());
                        return done.get();
                    }
                    sleep(backoff);
                    backoff = Math.min(2_000, backoff * 2);
                }
                throw new ConflictException("commit of " + tx.operation() + " to " + lake.location() + " gave up after "
                        + MAX_ATTEMPTS + " attempts: concurrent commits kept changing the fragments it writes; nothing"
                        + " of it was committed, run it again");
            } finally {
                // the operations hold Arrow schemas exported through the allocator: released before it closes
                staged.values().forEach(s -> {
                    if (s.operation() != null) {
                        s.operation().release();
                    }
                });
            }
        }
    }

    /**
     * The locked part. @return the result, or empty when the transaction must be staged again (its stale changes are
     *     removed from {@code staged}) or lost its sequence number
     */
    private Optional<CommitResult> publish(List<PendingChange> changes, Map<String, PendingChange.Staged> staged,
            BufferAllocator alloc, int attempt) {
        LakeSnapshot head = lake.log().latest().orElseThrow(
                () -> new NotFoundException("no Flywheel lake at " + lake.location() + ": its commit points are gone"));
        checkConflicts(changes, head);
        for (String tag : tx.tags().keySet()) {
            if (head.tags().containsKey(tag)) {
                throw new CommitConflictException("tag '" + tag + "' exists already in " + lake.location()
                        + " (lake commit " + tagCommit(head, tag) + "); tags are immutable", tag,
                        -1, -1, head.seq());
            }
        }
        for (String key : tx.guardedProperties()) {
            String was = tx.base().properties().get(key);
            String now = head.properties().get(key);
            if (!java.util.Objects.equals(was, now)) {
                // a property is written whole: a later writer that did not read the other's value would drop it
                throw new CommitConflictException("lake property '" + key + "' of " + lake.location() + " was changed by"
                        + " a commit since this " + tx.operation() + " began (lake commit " + tx.base().seq() + "; now "
                        + head.seq() + "); nothing of this " + tx.operation() + " was committed, run it again", key, -1,
                        -1, head.seq());
            }
        }
        Set<String> touched = new LinkedHashSet<>();
        changes.forEach(c -> touched.add(c.table));
        List<LakeSnapshot.TableChange> records = new ArrayList<>();
        Map<String, Long> versions = new TreeMap<>(head.tables());
        Map<String, Dataset> latest = new HashMap<>();
        try {
            for (String t : touched) {
                Dataset ds = lake.openLatestOrNull(t, alloc);
                if (ds != null && head.tables().containsKey(t) && ds.version() != head.version(t)) {
                    long orphan = ds.version();
                    Dataset at = ds.checkoutVersion(head.version(t));
                    ds.close();
                    at.restore(); // a dead writer's uncommitted versions: the table goes back to the head's content
                    ds = at;
                    records.add(new LakeSnapshot.TableChange(t, "rollback", orphan, ds.version(), 0, 0, 0, List.of(),
                            List.of()));
                    versions.put(t, ds.version());
                }
                latest.put(t, ds);
            }
            CommitHooks.at("validated");
            boolean stale = false;
            for (PendingChange c : changes) {
                PendingChange.Staged s = staged.get(c.table);
                if (c.dependsOnFragments() && !c.basisHolds(s, latest.get(c.table))) {
                    staged.remove(c.table);
                    if (s.operation() != null) {
                        s.operation().release();
                    }
                    stale = true;
                }
            }
            if (stale) {
                return Optional.empty();
            }
            long seq = head.seq() + 1;
            List<CommitResult.TableCommit> commits = new ArrayList<>();
            for (PendingChange c : changes) {
                PendingChange.Staged s = staged.get(c.table);
                Dataset ds = latest.get(c.table);
                long from = head.tables().getOrDefault(c.table, 0L);
                long to = commitTable(c, s, ds, head.tables().containsKey(c.table), seq, alloc);
                versions.put(c.table, to);
                commits.add(new CommitResult.TableCommit(c.table, from, to, s.rowsAdded() + s.rowsUpdated(),
                        s.rowsDeleted()));
                String kind = head.tables().containsKey(c.table) ? c.kind : "create";
                records.add(new LakeSnapshot.TableChange(c.table, kind, from, to, s.rowsAdded(), s.rowsUpdated(),
                        s.rowsDeleted(), new ArrayList<>(c.keys()), c.columns()));
                CommitHooks.at("table-committed:" + c.table);
            }
            Map<String, Map<String, Long>> tags = new LinkedHashMap<>(head.tags());
            for (Map.Entry<String, Map<String, Long>> e : tx.tags().entrySet()) {
                Map<String, Long> pinned = new TreeMap<>();
                for (Map.Entry<String, Long> p : e.getValue().entrySet()) {
                    String t = p.getKey();
                    Long v = p.getValue() != null ? p.getValue() : versions.get(t);
                    if (v == null || !versions.containsKey(t)) {
                        throw new NotFoundException("cannot tag table '" + t + "' as '" + e.getKey() + "': the lake has"
                                + " no such table");
                    }
                    pinned.put(t, v);
                    lake.writeLanceTag(t, e.getKey(), v, alloc);
                }
                tags.put(e.getKey(), pinned);
            }
            CommitHooks.at("tagged");
            Map<String, String> props = new TreeMap<>(head.properties());
            props.putAll(tx.properties());
            MaintenanceRoutine.countCommits(props, records);
            LakeSnapshot next = new LakeSnapshot(seq, head.seq(), txnId, tx.operation(), System.currentTimeMillis()
                    * 1_000_000L, ManagementFactory.getRuntimeMXBean().getName(), versions, tags, props, records,
                    tx.summaryLines());
            if (!lake.log().publish(next)) {
                return Optional.empty(); // another writer took this sequence number (its lock lease ran out)
            }
            CommitHooks.at("published");
            return Optional.of(new CommitResult(next, commits, attempt));
        } catch (FlywheelException | IllegalStateException | IllegalArgumentException e) {
            throw e;
        } catch (Exception e) { // Lance's JNI throws undeclared IOException and RuntimeException
            throw new StorageUnavailableException("commit of " + tx.operation() + " to " + lake.location()
                    + " failed; nothing of it is committed: " + e.getMessage(), e);
        } finally {
            latest.values().forEach(d -> {
                if (d != null) {
                    d.close();
                }
            });
        }
    }

    private PendingChange.Staged stage(PendingChange c, LakeSnapshot at, BufferAllocator alloc) {
        Long v = at.tables().get(c.table);
        try {
            if (v == null) {
                return c.stage(lake, null, alloc);
            }
            try (Dataset base = lake.openDataset(c.table, v, alloc)) {
                return c.stage(lake, base, alloc);
            }
        } catch (FlywheelException | IllegalStateException | IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new StorageUnavailableException("cannot write the data files of " + c.kind + " of table "
                    + lake.tableUri(c.table) + ": " + e.getMessage(), e);
        }
    }

    /** @return the new version of the table */
    /**
     * @param inHead whether the head snapshot has the table (a dataset that exists without being in the head is a dead
     *     writer's creation: its rows are replaced, never appended to)
     */
    private long commitTable(PendingChange c, PendingChange.Staged s, Dataset ds, boolean inHead, long seq,
            BufferAllocator alloc) {
        if (ds == null) { // the table does not exist yet: created with the rows
            org.apache.arrow.vector.types.pojo.Schema schema = s.schema() != null ? s.schema()
                    : TableSchemas.of(c.table);
            try (Dataset created = new FragmentOperation.Overwrite(s.newFragments(), schema)
                    .commit(alloc, lake.tableUri(c.table), Optional.empty(), lake.storage().options())) {
                return created.version();
            }
        }
        if (s.direct() != null) {
            long before = ds.version();
            s.direct().accept(ds);
            try (Dataset after = lake.openDataset(c.table, null, alloc)) {
                if (after.version() == before) {
                    return before; // nothing to commit (an index that is current): the table keeps its version
                }
                if (!c.ownsDirectVersions(after, before)) {
                    throw new ConflictException("table " + lake.tableUri(c.table) + " is at version " + after.version()
                            + " after a " + c.kind + " on version " + before + " (expected " + (before + 1)
                            + "): written outside the lake's commit protocol; nothing of this transaction is committed");
                }
                return after.version();
            }
        }
        Operation op = s.operation();
        if (op == null && s.createOrAppend()) {
            op = !inHead ? Overwrite.builder().fragments(s.newFragments()).schema(s.schema()).build()
                    : s.newFragments().isEmpty() ? null : Append.builder().fragments(s.newFragments()).build();
        }
        if (op == null) {
            return ds.version(); // nothing to write (an empty put): the table keeps its version
        }
        Map<String, String> props = Map.of(TXN_PROPERTY, txnId, SEQ_PROPERTY, Long.toString(seq),
                "flywheel.operation", tx.operation());
        Transaction t = new Transaction.Builder().readVersion(ds.version()).operation(op).transactionProperties(props)
                .build();
        try (Dataset after = new CommitBuilder(ds).skipAutoCleanup(true).execute(t)) {
            if (after.version() != ds.version() + 1) {
                throw new ConflictException("table " + lake.tableUri(c.table) + " was written outside the lake's commit"
                        + " protocol while this commit held its lock (expected version " + (ds.version() + 1) + ", got "
                        + after.version() + "); nothing of this transaction is committed");
            }
            return after.version();
        } finally {
            if (s.operation() == null) {
                op.release();
            }
        }
    }

    /** @return whether the fragments a change was staged against are unchanged in {@code latest} */
    static boolean basisHolds(PendingChange.Staged s, Dataset latest) {
        if (s.basis().isEmpty()) {
            return true;
        }
        if (latest == null) {
            return false;
        }
        Map<Integer, FragmentMetadata> now = new HashMap<>();
        for (org.lance.Fragment f : latest.getFragments()) {
            now.put(f.getId(), f.metadata());
        }
        for (Map.Entry<Integer, FragmentMetadata> e : s.basis().entrySet()) {
            if (!e.getValue().equals(now.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Checks this transaction against every commit after its base: a change to the same table commutes when it
     * writes other keys (or, for two updates, disjoint columns), or is an overwrite of ours, or only rewrites
     * fragments (compaction, rollback, index); otherwise it is a conflict.
     */
    private void checkConflicts(List<PendingChange> changes, LakeSnapshot head) {
        if (head.seq() == tx.base().seq()) {
            return;
        }
        Map<String, PendingChange> ours = new HashMap<>();
        changes.forEach(c -> ours.put(c.table, c));
        for (long seq = tx.base().seq() + 1; seq <= head.seq(); seq++) {
            LakeSnapshot other = seq == head.seq() ? head : lake.log().read(seq);
            for (LakeSnapshot.TableChange x : other.changes()) {
                PendingChange w = ours.get(x.table());
                if (w == null) {
                    continue;
                }
                String why = conflict(w, x);
                if (why != null) {
                    long baseVersion = tx.base().tables().getOrDefault(x.table(), 0L);
                    throw new CommitConflictException("commit conflict on table " + x.table() + " of " + lake.location()
                            + ": this " + tx.operation() + " (" + w.kind + ", based on lake commit " + tx.base().seq()
                            + ", " + x.table() + " version " + baseVersion + ") and lake commit " + other.seq() + " ("
                            + other.operation() + " by " + other.writer() + ", " + x.table() + " version "
                            + x.toVersion() + ") " + why + "; nothing of this " + tx.operation()
                            + " was committed", x.table(), baseVersion, x.toVersion(), other.seq());
                }
            }
        }
    }

    /** @return why the two changes conflict, or null when they commute */
    static String conflict(PendingChange w, LakeSnapshot.TableChange x) {
        if (w.kind.equals("compact")) {
            return null; // ours only rewrites fragments: its basis check (fragments, schema) stages it again if needed
        }
        switch (x.kind()) {
            case "rollback", "compact", "index":
                return null;
            case "migrate":
                return "the table was migrated to a new schema meanwhile";
            case "schema": {
                Set<String> cols = new LinkedHashSet<>(w.columns());
                cols.retainAll(x.columns());
                return w.kind.equals("schema") && !cols.isEmpty() ? "both add column(s) " + String.join(", ", cols)
                        : null;
            }
            default:
                break;
        }
        if (w.kind.equals("schema") || w.kind.equals("index")) {
            return null; // a schema change or an index is applied to the table's latest version under the lock
        }
        if (w.kind.equals("overwrite")) {
            return null;
        }
        if (x.kind().equals("overwrite") || x.kind().equals("create")) {
            return w.kind.equals("append") ? null : "the table's rows were replaced meanwhile";
        }
        Set<String> both = new LinkedHashSet<>(w.keys());
        both.retainAll(x.keys());
        if (both.isEmpty()) {
            return null;
        }
        if (w.kind.equals("update") && x.kind().equals("update")) {
            Set<String> cols = new LinkedHashSet<>(w.columns());
            cols.retainAll(x.columns());
            if (cols.isEmpty()) {
                return null;
            }
            return "both update column(s) " + String.join(", ", cols) + " of " + describe(both);
        }
        return "both write " + describe(both);
    }

    private static String describe(Set<String> keys) {
        List<String> l = new ArrayList<>(keys);
        return l.size() == 1 ? "'" + l.get(0) + "'" : l.size() + " keys ('" + String.join("', '", l.subList(0,
                Math.min(3, l.size()))) + "'" + (l.size() > 3 ? ", ..." : "") + ")";
    }

    private long tagCommit(LakeSnapshot head, String tag) {
        for (long s = head.seq(); s >= 1; s--) {
            LakeSnapshot x = s == head.seq() ? head : lake.log().read(s);
            if (!x.tags().containsKey(tag)) {
                return s + 1;
            }
        }
        return 1;
    }

    /** @return how long a writer waits for the commit lock ({@code -Dflywheel.lake.lock-timeout-s}, default 600) */
    static Duration lockTimeout() {
        return Duration.ofSeconds(Long.getLong("flywheel.lake.lock-timeout-s", 600));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms + (long) (Math.random() * ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConflictException("interrupted while retrying a commit", e);
        }
    }
}
