package io.flywheel.cli;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.CleanupRequest;
import io.flywheel.lake.CleanupResult;
import io.flywheel.lake.CompactionPolicy;
import io.flywheel.lake.CompactionResult;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import io.flywheel.lake.LakeVersions;
import io.flywheel.lake.MaintenanceRoutine;
import io.flywheel.lake.TableLayout;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel lake ...}: the lake's own maintenance. */
@Command(name = "lake", mixinStandardHelpOptions = true, description = "Lake maintenance: versions, log, compact, "
        + "cleanup, migrate.",
        subcommands = {LakeCommand.Versions.class, LakeCommand.Log.class, LakeCommand.Compact.class,
                LakeCommand.Cleanup.class, LakeCommand.Migrate.class})
final class LakeCommand implements Runnable {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    /** {@code flywheel lake versions LAKE}: the newest lake commit's table versions, then each table's versions. */
    @Command(name = "versions", mixinStandardHelpOptions = true,
            description = "The table versions of the newest lake commit (what readers outside Flywheel open for a"
                    + " consistent set), then per table: Lance's latest version, versions, tags, rows, fragments, size.")
    static final class Versions implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            LakeVersions v;
            try (Lake lake = at.open()) {
                v = lake.versions();
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", at.uri());
                m.put("commit", v.commitSeq());
                m.put("committed_at", instant(v.committedAtNs()).toString());
                m.put("operation", v.operation());
                m.put("table_versions", v.tableVersions());
                List<Map<String, Object>> tables = new ArrayList<>();
                for (LakeVersions.TableVersions t : v.tables()) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("table", t.table());
                    x.put("committed_version", t.committedVersion());
                    x.put("latest_version", t.latestVersion());
                    x.put("ahead", t.ahead());
                    x.put("versions", t.versions());
                    x.put("oldest_version", t.oldestVersion());
                    x.put("tags", t.tags());
                    x.put("rows", t.rows());
                    x.put("fragments", t.fragments());
                    x.put("data_bytes", t.dataBytes());
                    x.put("indexes", t.indexes());
                    tables.add(x);
                }
                m.put("tables", tables);
                Json.print(System.out, m);
                return 0;
            }
            System.out.println(at.uri() + ": newest lake commit " + v.commitSeq() + " (" + v.operation() + ", "
                    + instant(v.committedAtNs()) + ")");
            StringBuilder set = new StringBuilder();
            v.tableVersions().forEach((t, n) -> set.append(set.isEmpty() ? "" : " ").append(t).append('@').append(n));
            System.out.println("readers outside Flywheel open these versions for a consistent set: " + set);
            System.out.printf(Locale.ROOT, "%n%-20s %8s %8s %9s %12s %10s %10s  %s%n", "table", "version", "latest",
                    "versions", "rows", "fragments", "data", "tags");
            List<String> ahead = new ArrayList<>();
            for (LakeVersions.TableVersions t : v.tables()) {
                StringBuilder tags = new StringBuilder();
                t.tags().forEach((tag, n) -> tags.append(tags.isEmpty() ? "" : ", ").append(tag).append('@').append(n));
                System.out.printf(Locale.ROOT, "%-20s %8d %8s %9d %12d %10d %10s  %s%n", t.table(), t.committedVersion(),
                        t.latestVersion() + (t.ahead() ? "*" : ""), t.versions(), t.rows(), t.fragments(),
                        bytes(t.dataBytes()), tags.isEmpty() ? "-" : tags);
                if (t.ahead()) {
                    ahead.add(t.table());
                }
            }
            if (!ahead.isEmpty()) {
                System.out.println("\n* Lance is ahead of the lake commit for " + String.join(", ", ahead)
                        + ": an uncommitted version of a writer in flight, or of a dead writer (the next commit to the"
                        + " table rolls it back)");
            }
            return 0;
        }
    }

    /** {@code flywheel lake log LAKE}: the lake commits, newest first. */
    @Command(name = "log", mixinStandardHelpOptions = true,
            description = "The lake commits, newest first: sequence number, time, operation, writer, what each table"
                    + " got, summary lines.")
    static final class Log implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
                description = "at most N commits (default ${DEFAULT-VALUE})")
        int limit;

        @Mixin
        JsonOutput json;

        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            Usage.require(spec, limit >= 1, "--limit must be >= 1, got " + limit);
            List<LakeSnapshot> log;
            List<Long> missing;
            try (Lake lake = at.open()) {
                log = lake.log(limit);
                missing = lake.missingCommits();
            }
            if (!missing.isEmpty()) {
                System.err.println("flywheel lake log: the log has a hole: commit point(s) " + missing + " are missing"
                        + " from _lake/commits/ (removed outside Flywheel; the commits after them still name them as"
                        + " parents)");
            }
            if (json.enabled()) {
                List<Map<String, Object>> commits = new ArrayList<>();
                for (LakeSnapshot s : log) {
                    Map<String, Object> c = new LinkedHashMap<>();
                    c.put("seq", s.seq());
                    c.put("parent_seq", s.parentSeq());
                    c.put("committed_at", instant(s.committedAtNs()).toString());
                    c.put("committed_at_ns", s.committedAtNs());
                    c.put("operation", s.operation());
                    c.put("writer", s.writer());
                    c.put("txn_id", s.txnId());
                    List<Map<String, Object>> tables = new ArrayList<>();
                    for (LakeSnapshot.TableChange t : s.changes()) {
                        Map<String, Object> x = new LinkedHashMap<>();
                        x.put("table", t.table());
                        x.put("kind", t.kind());
                        x.put("from_version", t.fromVersion());
                        x.put("to_version", t.toVersion());
                        x.put("rows_added", t.rowsAdded());
                        x.put("rows_updated", t.rowsUpdated());
                        x.put("rows_deleted", t.rowsDeleted());
                        x.put("columns", t.columns());
                        tables.add(x);
                    }
                    c.put("tables", tables);
                    c.put("summary", s.summary());
                    commits.add(c);
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", at.uri());
                m.put("commits", commits);
                m.put("missing_commits", missing);
                Json.print(System.out, m);
                return 0;
            }
            for (LakeSnapshot s : log) {
                System.out.printf(Locale.ROOT, "%-6d %s  %-10s %s%n", s.seq(), instant(s.committedAtNs()), s.operation(),
                        s.writer());
                for (LakeSnapshot.TableChange t : s.changes()) {
                    System.out.printf(Locale.ROOT, "         %-18s %-9s %d -> %d%s%n", t.table(), t.kind(),
                            t.fromVersion(), t.toVersion(), rows(t));
                }
                s.summary().forEach((k, v) -> System.out.println("         " + k + ": " + v));
            }
            return 0;
        }

        private static String rows(LakeSnapshot.TableChange t) {
            StringBuilder b = new StringBuilder();
            if (t.rowsAdded() > 0) {
                b.append(" +").append(t.rowsAdded());
            }
            if (t.rowsUpdated() > 0) {
                b.append(" ~").append(t.rowsUpdated()).append(" (").append(String.join(", ", t.columns())).append(')');
            }
            if (t.rowsDeleted() > 0) {
                b.append(" -").append(t.rowsDeleted());
            }
            return b.isEmpty() ? "" : "  rows" + b;
        }
    }

    /** {@code flywheel lake compact LAKE}: Lance compaction under a policy, then index refresh. */
    @Command(name = "compact", mixinStandardHelpOptions = true,
            description = "Compact tables with many small fragments or many deleted rows (Lance compaction, as a lake"
                    + " commit; other writers keep committing), then refresh their indexes where appends left rows"
                    + " unindexed. The routine does the same after a commit that takes a table past N commits since its"
                    + " last compaction (N = " + MaintenanceRoutine.DEFAULT_EVERY_COMMITS + " unless set with"
                    + " --routine-every; 0 turns it off).")
    static final class Compact implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Option(names = "--table", paramLabel = "T", description = "compact this table (repeatable; default: all)")
        List<String> tables = new ArrayList<>();

        @Option(names = "--target-rows", paramLabel = "N",
                description = "rows per rewritten fragment (default 1048576)")
        Long targetRows;

        @Option(names = "--min-small-fragments", paramLabel = "N",
                description = "compact a table with more than N fragments below the target rows (default 8)")
        Integer minSmallFragments;

        @Option(names = "--max-deleted-fraction", paramLabel = "F",
                description = "compact a table whose deleted rows are more than F of its rows (default 0.1)")
        Double maxDeletedFraction;

        @Option(names = "--routine-every", paramLabel = "N",
                description = "also set the routine: compact a table after more than N commits since its last"
                        + " compaction; 0 turns it off (a lake property, kept)")
        Integer routineEvery;

        @Mixin
        JsonOutput json;

        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            if (targetRows != null) {
                Usage.atLeast(spec, "--target-rows", targetRows, 1);
            }
            if (minSmallFragments != null) {
                Usage.atLeast(spec, "--min-small-fragments", minSmallFragments, 0);
            }
            Usage.require(spec, maxDeletedFraction == null || maxDeletedFraction >= 0 && maxDeletedFraction <= 1,
                    "--max-deleted-fraction must be in [0, 1], got " + maxDeletedFraction);
            CompactionPolicy policy = Usage.check(spec, null, () -> {
                CompactionPolicy.Builder b = CompactionPolicy.builder();
                if (targetRows != null) {
                    b.targetRowsPerFragment(targetRows);
                }
                if (minSmallFragments != null) {
                    b.minSmallFragments(minSmallFragments);
                }
                if (maxDeletedFraction != null) {
                    b.maxDeletedFraction(maxDeletedFraction);
                }
                return b.build();
            });
            Usage.require(spec, routineEvery == null || routineEvery >= 0,
                    "--routine-every must be >= 0 (0 turns the routine off), got " + routineEvery);
            CompactionResult r;
            int every;
            try (Lake lake = at.open()) {
                if (routineEvery != null) {
                    MaintenanceRoutine.configure(lake, routineEvery);
                }
                r = lake.compact(policy, tables);
                every = MaintenanceRoutine.everyCommits(lake.snapshot().properties());
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", at.uri());
                m.put("policy", Map.of("target_rows_per_fragment", policy.targetRowsPerFragment(),
                        "min_small_fragments", policy.minSmallFragments(),
                        "max_deleted_fraction", policy.maxDeletedFraction()));
                m.put("compact_commit", r.compactCommit());
                m.put("index_commit", r.indexCommit());
                m.put("routine_every_commits", every);
                List<Map<String, Object>> tables = new ArrayList<>();
                for (CompactionResult.TableCompaction t : r.tables()) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("table", t.table());
                    x.put("compacted", t.compacted());
                    x.put("reason", t.reason());
                    x.put("from_version", t.fromVersion());
                    x.put("to_version", t.toVersion());
                    x.put("before", layout(t.before()));
                    x.put("after", layout(t.after()));
                    x.put("fragments_removed", t.fragmentsRemoved());
                    x.put("fragments_added", t.fragmentsAdded());
                    x.put("files_removed", t.filesRemoved());
                    x.put("files_added", t.filesAdded());
                    x.put("indexes_refreshed", t.indexesRefreshed());
                    tables.add(x);
                }
                m.put("tables", tables);
                Json.print(System.out, m);
                return 0;
            }
            for (CompactionResult.TableCompaction t : r.tables()) {
                String idx = t.indexesRefreshed().isEmpty() ? ""
                        : "; indexes refreshed: " + String.join(", ", t.indexesRefreshed());
                if (t.compacted()) {
                    System.out.printf(Locale.ROOT, "%-20s %d -> %d fragments, %d -> %d data files, %d rows (%s);"
                            + " version %d -> %d%s%n", t.table(), t.before().fragments(), t.after().fragments(),
                            t.before().dataFiles(), t.after().dataFiles(), t.after().rows(), t.reason(), t.fromVersion(),
                            t.toVersion(), idx);
                } else {
                    System.out.printf(Locale.ROOT, "%-20s left as it is: %d fragments (%d small), %d of %d rows deleted%s%n",
                            t.table(), t.before().fragments(), t.before().smallFragments(), t.before().deletedRows(),
                            t.before().physicalRows(), idx);
                }
            }
            System.out.println(r.changedAnything()
                    ? "lake commit " + (r.compactCommit() > 0 ? r.compactCommit() + " (compact)" : "")
                            + (r.compactCommit() > 0 && r.indexCommit() > 0 ? ", " : "")
                            + (r.indexCommit() > 0 ? r.indexCommit() + " (index)" : "")
                    : "nothing to compact under the policy (more than " + policy.minSmallFragments()
                            + " fragments below " + policy.targetRowsPerFragment() + " rows, or more than "
                            + policy.maxDeletedFraction() + " of the rows deleted)");
            System.out.println("routine: " + (every == 0 ? "off"
                    : "compacts a table after more than " + every + " commits since its last compaction"));
            return 0;
        }

        private static Map<String, Object> layout(TableLayout l) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("fragments", l.fragments());
            m.put("small_fragments", l.smallFragments());
            m.put("data_files", l.dataFiles());
            m.put("rows", l.rows());
            m.put("deleted_rows", l.deletedRows());
            return m;
        }
    }

    /** {@code flywheel lake cleanup LAKE --older-than D}: old versions and the files only they reference, removed. */
    @Command(name = "cleanup", mixinStandardHelpOptions = true,
            description = "Remove table versions older than D and the files only they reference (Lance cleanup). Never"
                    + " removes a version that the newest lake commit names (or a later one), that a lake tag pins or"
                    + " that a training set's lineage names.")
    static final class Cleanup implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Option(names = "--older-than", paramLabel = "D", required = true, converter = AgeArg.class,
                description = "remove versions committed longer ago than D: 90s, 30m, 12h, 7d, 2w, or ISO-8601 (P7D)")
        Duration olderThan;

        @Option(names = "--dry-run", description = "say what would be removed; remove nothing")
        boolean dryRun;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            CleanupResult r;
            try (Lake lake = at.open()) {
                CleanupRequest req = CleanupRequest.olderThan(olderThan);
                r = lake.cleanup(dryRun ? req.asDryRun() : req);
            }
            boolean dry = dryRun || r.dryRun();
            if (json.enabled()) { // a dry run removes nothing: its counts are named as what would be removed
                String versions = dry ? "versions_to_remove" : "versions_removed";
                String files = dry ? "files_to_remove" : "files_removed";
                String bytes = dry ? "bytes_to_free" : "bytes_removed";
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", at.uri());
                m.put("dry_run", dry);
                m.put("older_than_s", olderThan.getSeconds());
                m.put("cutoff", r.cutoff().toString());
                m.put("commit", r.commitSeq());
                m.put(versions, r.versionsRemoved());
                m.put(files, r.filesRemoved());
                m.put(bytes, r.bytesRemoved());
                List<Map<String, Object>> tables = new ArrayList<>();
                for (CleanupResult.TableCleanup t : r.tables()) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("table", t.table());
                    x.put("committed_version", t.committedVersion());
                    x.put("versions_before", t.versionsBefore());
                    x.put(dry ? "versions_to_remove" : "removed_versions", t.removedVersions());
                    x.put("kept_old", t.keptOld());
                    String f = dry ? "_to_remove" : "_removed";
                    x.put("data_files" + f, t.dataFilesRemoved());
                    x.put("deletion_files" + f, t.deletionFilesRemoved());
                    x.put("index_files" + f, t.indexFilesRemoved());
                    x.put("transaction_files" + f, t.transactionFilesRemoved());
                    x.put(bytes, t.bytesRemoved());
                    tables.add(x);
                }
                m.put("tables", tables);
                Json.print(System.out, m);
                return 0;
            }
            String verb = dry ? "would remove" : "removed";
            System.out.println("cleanup of " + at.uri() + (dry ? " (dry run)" : "") + ": versions committed before "
                    + r.cutoff() + " (older than " + AgeArg.format(olderThan) + "), keeping lake commit "
                    + r.commitSeq() + "'s versions, tagged versions and training-set lineage");
            System.out.printf(Locale.ROOT, "%n%-20s %9s %9s %8s %10s  %s%n", "table", "versions", verb.split(" ")[0]
                    .equals("would") ? "would rm" : "removed", "files", "bytes", "older versions kept");
            for (CleanupResult.TableCleanup t : r.tables()) {
                System.out.printf(Locale.ROOT, "%-20s %9d %9d %8d %10s  %s%n", t.table(), t.versionsBefore(),
                        t.removedVersions().size(), t.filesRemoved(), bytes(t.bytesRemoved()), kept(t.keptOld()));
            }
            System.out.println("\n" + verb + " " + r.versionsRemoved() + " version(s), " + r.filesRemoved()
                    + " file(s), " + bytes(r.bytesRemoved()) + (dry ? " (data files only; Lance also removes"
                            + " the versions' manifests and transaction files)" : ""));
            return 0;
        }

        private static String kept(Map<Long, List<String>> kept) {
            if (kept.isEmpty()) {
                return "-";
            }
            List<String> out = new ArrayList<>();
            int shown = 0;
            for (Map.Entry<Long, List<String>> e : kept.entrySet()) {
                if (shown++ == 3) {
                    out.add("and " + (kept.size() - 3) + " more (--json lists them)");
                    break;
                }
                out.add(e.getKey() + " (" + String.join("; ", e.getValue()) + ")");
            }
            return String.join(", ", out);
        }
    }

    /** {@code flywheel lake migrate LAKE}: migrates a lake of an older schema version in place. */
    @Command(name = "migrate", mixinStandardHelpOptions = true,
            description = "Migrate a lake of an older schema version in place (tables and raw files are kept).")
    static final class Migrate implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            String lake = at.uri();
            Lake.Migration r = Lake.migrate(lake, at.options());
            LakeSnapshot s = r.snapshot();
            String from = r.fromSchemaVersion();
            boolean migrated = r.migrated();
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", lake);
                m.put("migrated", migrated);
                m.put("from_schema_version", from);
                m.put("schema_version", r.toSchemaVersion());
                m.put("commit", s.seq());
                m.put("tables", s.tables());
                m.put("tags", s.tags().keySet());
                Map<String, String> models = new LinkedHashMap<>();
                io.flywheel.lake.EmbeddingModels.of(s.properties()).all().forEach(x -> models.put(x.id(), x.column()));
                m.put("embedding_models", models);
                Json.print(System.out, m);
            } else if (migrated) {
                System.out.println("migrated " + lake + " from schema version " + from + " to " + r.toSchemaVersion()
                        + " in lake commit " + s.seq() + ": tables "
                        + s.tables() + ", " + s.tags().size() + " tag(s)");
            } else {
                System.out.println(lake + " is at schema version " + r.toSchemaVersion()
                        + " already (lake commit " + s.seq() + "); nothing to do");
            }
            return 0;
        }
    }

    static Instant instant(long ns) {
        return Instant.ofEpochSecond(Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L));
    }

    static String bytes(long n) {
        if (n < 10_000) {
            return n + " B";
        }
        if (n < 10_000_000) {
            return String.format(Locale.ROOT, "%.1f kB", n / 1e3);
        }
        if (n < 10_000_000_000L) {
            return String.format(Locale.ROOT, "%.1f MB", n / 1e6);
        }
        return String.format(Locale.ROOT, "%.1f GB", n / 1e9);
    }
}
