package io.flywheel.lake;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.Version;
import org.lance.cleanup.CleanupPolicy;
import org.lance.cleanup.RemovalStats;

import io.flywheel.error.FlywheelException;

/**
 * Removes old table versions and the files only they reference (Lance cleanup), keeping every version that
 *
 * <ul>
 *   <li>the newest lake commit names, and every later one (an uncommitted version of a writer in flight or dead);</li>
 *   <li>a lake tag pins (a training set's tag pins its own tables and the versions its lineage names);</li>
 *   <li>the training-set registry names ({@link TrainsetLineage}: samples and episodes versions, lineage
 *       {@code source_versions}), tagged or not;</li>
 *   <li>has a Lance tag (the lake writes one per lake tag; one that is no lake tag, say a killed commit's or one made
 *       outside Flywheel, is kept and reported).</li>
 * </ul>
 *
 * Lance keeps, of a dataset opened at version v, v and every later version and every Lance-tagged version; a kept
 * version that has no Lance tag (a lineage version nothing tags) lowers the floor: Lance then keeps every version from
 * it on ({@code before_version}), which keeps more than needed, never less. Lance removes data files that no kept
 * version references; data files that no version references (a killed writer's staged data) are removed here, once
 * they are older than the cutoff and than {@link #ORPHAN_MIN_AGE}, since a writer in flight stages its files outside
 * the commit lock. Lance looks only at files written before the oldest version it keeps, so an old tag keeps
 * the files written after it until the tag's version goes too. The non-dry run holds the lake's commit lock, so the
 * newest commit and the tags cannot move meanwhile.
 */
final class Cleaner {
    /** The youngest a file that no version references may be for cleanup to remove it. */
    static final java.time.Duration ORPHAN_MIN_AGE = java.time.Duration.ofHours(1);

    private Cleaner() {}

    static CleanupResult run(Lake lake, CleanupRequest request) {
        Instant cutoff = Instant.now().minus(request.olderThan());
        CommitLock.Held held = request.dryRun() ? null : lake.commitLock().acquire(CommitProtocol.lockTimeout());
        try {
            LakeSnapshot head = lake.refresh();
            Map<String, Map<Long, List<String>>> keep = new HashMap<>();
            head.tags().forEach((tag, pins) -> pins.forEach((t, v) -> add(keep, t, v, "lake tag '" + tag + "'")));
            for (TrainsetLineage.Pin p : TrainsetLineage.pins(lake)) {
                add(keep, p.table(), p.version(), "training set '" + p.trainset() + "' (" + p.why() + ")");
            }
            List<CleanupResult.TableCleanup> out = new ArrayList<>();
            for (String t : head.tables().keySet()) {
                out.add(table(lake, t, head, keep.getOrDefault(t, Map.of()), cutoff, request.dryRun()));
            }
            return new CleanupResult(request.dryRun(), cutoff, head.seq(), out);
        } finally {
            if (held != null) {
                held.close();
            }
        }
    }

    private static void add(Map<String, Map<Long, List<String>>> keep, String table, long version, String why) {
        keep.computeIfAbsent(table, k -> new TreeMap<>()).computeIfAbsent(version, k -> new ArrayList<>()).add(why);
    }

    private static CleanupResult.TableCleanup table(Lake lake, String table, LakeSnapshot head,
            Map<Long, List<String>> keep, Instant cutoff, boolean dryRun) {
        long committed = head.version(table);
        try (BufferAllocator a = lake.newAllocator("cleanup-" + table); Dataset ds = lake.openDataset(table, committed, a)) {
            List<Version> versions = new ArrayList<>(ds.listVersions());
            versions.sort(Comparator.comparingLong(Version::getId));
            Map<Long, List<String>> lanceTags = new HashMap<>();
            for (org.lance.Tag tag : ds.tags().list()) {
                lanceTags.computeIfAbsent(tag.getVersion(), k -> new ArrayList<>()).add(tag.getName());
            }
            Set<Long> present = new HashSet<>();
            versions.forEach(v -> present.add(v.getId()));
            Long floor = null;
            for (long v : keep.keySet()) {
                if (v < committed && present.contains(v) && !lanceTags.containsKey(v)) {
                    floor = floor == null ? v : Math.min(floor, v);
                }
            }
            List<Long> candidates = new ArrayList<>();
            Map<Long, List<String>> keptOld = new LinkedHashMap<>();
            for (Version v : versions) {
                if (!v.getDataTime().toInstant().isBefore(cutoff)) {
                    continue;
                }
                List<String> why = why(table, v.getId(), committed, head, keep, lanceTags, floor);
                if (why.isEmpty()) {
                    candidates.add(v.getId());
                } else {
                    keptOld.put(v.getId(), why);
                }
            }
            if (dryRun) {
                long[] files = onlyReferencedBy(ds, versions, new HashSet<>(candidates));
                return new CleanupResult.TableCleanup(table, committed, versions.size(), candidates, keptOld, files[0], 0,
                        0, 0, files[1]);
            }
            CleanupPolicy.Builder policy = CleanupPolicy.builder().withBeforeTimestampMillis(cutoff.toEpochMilli())
                    .withErrorIfTaggedOldVersions(false).withDeleteUnverified(false);
            if (floor != null) {
                policy.withBeforeVersion(floor);
            }
            RemovalStats stats = ds.cleanupWithPolicy(policy.build());
            long[] orphans = removeOrphans(lake, table, ds, cutoff);
            Set<Long> left = new TreeSet<>();
            try (Dataset again = lake.openDataset(table, committed, a)) {
                again.listVersions().forEach(v -> left.add(v.getId()));
            }
            List<Long> removed = new ArrayList<>();
            for (Version v : versions) {
                if (!left.contains(v.getId())) {
                    removed.add(v.getId());
                }
            }
            return new CleanupResult.TableCleanup(table, committed, versions.size(), removed, keptOld,
                    stats.getDataFilesRemoved() + orphans[0], stats.getDeletionFilesRemoved(),
                    stats.getIndexFilesRemoved(), stats.getTransactionFilesRemoved(),
                    stats.getBytesRemoved() + orphans[1]);
        } catch (FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw Lake.failure("cleanup of table " + lake.tableUri(table) + " (lake commit " + head.seq() + ", version "
                    + committed + ")" + (dryRun ? "" : " failed; what it removed was old versions only"), e);
        }
    }

    /**
     * Removes the table's data files that no remaining version references (a killed writer's staged files), when they
     * were last modified before the cutoff and more than {@link #ORPHAN_MIN_AGE} ago. Lance's own option for these
     * ({@code delete_unverified}) removes them whatever their age, which would take the files of a writer staging now;
     * here only files listed before the scan of the versions and old enough are candidates.
     *
     * @return data files removed and their bytes
     */
    private static long[] removeOrphans(Lake lake, String table, Dataset ds, Instant cutoff) throws Exception {
        Instant before = Instant.now().minus(ORPHAN_MIN_AGE);
        if (cutoff.isBefore(before)) {
            before = cutoff;
        }
        String dataDir = lake.tableUri(table) + "/data";
        Map<String, long[]> listed = new TreeMap<>(); // file name -> {last modified ms, bytes}
        if (Lake.isRemote(dataDir) && !dataDir.startsWith("s3://")) {
            return new long[] {0, 0}; // listing other object stores is not built
        }
        S3Location s3 = Lake.isRemote(dataDir) ? S3Location.parse(dataDir + "/") : null;
        if (s3 == null) {
            java.nio.file.Path dir = java.nio.file.Path.of(dataDir);
            if (!java.nio.file.Files.isDirectory(dir)) {
                return new long[] {0, 0};
            }
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
                for (java.nio.file.Path f : files.toList()) {
                    java.nio.file.attribute.BasicFileAttributes at = java.nio.file.Files.readAttributes(f,
                            java.nio.file.attribute.BasicFileAttributes.class);
                    listed.put(f.getFileName().toString(), new long[] {at.lastModifiedTime().toMillis(), at.size()});
                }
            }
        }
        try (software.amazon.awssdk.services.s3.S3Client client = s3 == null ? null : s3.client(lake.storage, 4)) {
            if (client != null) {
                for (software.amazon.awssdk.services.s3.model.S3Object o : client.listObjectsV2Paginator(r -> r
                        .bucket(s3.bucket()).prefix(s3.prefix())).contents()) {
                    listed.put(o.key().substring(s3.prefix().length()),
                            new long[] {o.lastModified().toEpochMilli(), o.size()});
                }
            }
            Set<String> referenced = new HashSet<>();
            for (Version v : ds.listVersions()) {
                try (Dataset at = ds.checkoutVersion(v.getId())) {
                    for (org.lance.Fragment f : at.getFragments()) {
                        for (org.lance.fragment.DataFile file : f.metadata().getFiles()) {
                            String path = file.getPath();
                            referenced.add(path.substring(path.lastIndexOf('/') + 1));
                        }
                    }
                }
            }
            long files = 0;
            long bytes = 0;
            for (Map.Entry<String, long[]> e : listed.entrySet()) {
                if (referenced.contains(e.getKey()) || e.getValue()[0] >= before.toEpochMilli()) {
                    continue;
                }
                if (client == null) {
                    java.nio.file.Files.deleteIfExists(java.nio.file.Path.of(dataDir, e.getKey()));
                } else {
                    client.deleteObject(r -> r.bucket(s3.bucket()).key(s3.key(e.getKey())));
                }
                files++;
                bytes += e.getValue()[1];
            }
            return new long[] {files, bytes};
        }
    }

    /** @return why version {@code v} older than the cutoff is kept; empty when it may be removed */
    private static List<String> why(String table, long v, long committed, LakeSnapshot head, Map<Long, List<String>> keep,
            Map<Long, List<String>> lanceTags, Long floor) {
        List<String> why = new ArrayList<>();
        if (v == committed) {
            why.add("newest lake commit " + head.seq());
        } else if (v > committed) {
            why.add("after the newest lake commit (an uncommitted version of a writer in flight or dead)");
        }
        why.addAll(keep.getOrDefault(v, List.of()));
        for (String name : lanceTags.getOrDefault(v, List.of())) {
            Map<String, Long> lakeTag = head.tags().get(name);
            if (lakeTag == null || !Long.valueOf(v).equals(lakeTag.get(table))) {
                why.add("Lance tag '" + name + "' (no lake tag)");
            }
        }
        if (why.isEmpty() && floor != null && v >= floor) {
            why.add("not below version " + floor + ", which " + String.join(", ", keep.get(floor))
                    + " names and no Lance tag pins");
        }
        return why;
    }

    /**
     * The data files a cleanup would remove, as Lance decides: those that the versions in {@code doomed} reference and
     * no kept version does, and that are older than the oldest kept version (Lance lists only files written before
     * its oldest retained manifest, so a file written after it stays even when nothing references it any more).
     *
     * @return {data files, bytes} (the sizes their fragment metadata records)
     */
    private static long[] onlyReferencedBy(Dataset ds, List<Version> versions, Set<Long> doomed) {
        if (doomed.isEmpty()) {
            return new long[] {0, 0};
        }
        Map<String, Long> doomedFiles = new HashMap<>();
        Map<String, Long> firstSeen = new HashMap<>();
        Set<String> keptFiles = new HashSet<>();
        long oldestKept = Long.MAX_VALUE;
        for (Version v : versions) {
            boolean d = doomed.contains(v.getId());
            if (!d) {
                oldestKept = Math.min(oldestKept, v.getId());
            }
            try (Dataset at = ds.checkoutVersion(v.getId())) {
                for (org.lance.Fragment f : at.getFragments()) {
                    for (org.lance.fragment.DataFile file : f.metadata().getFiles()) {
                        firstSeen.merge(file.getPath(), v.getId(), Math::min);
                        if (d) {
                            Long size = file.getFileSizeBytes();
                            doomedFiles.put(file.getPath(), size == null ? 0 : size);
                        } else {
                            keptFiles.add(file.getPath());
                        }
                    }
                }
            }
        }
        long files = 0;
        long bytes = 0;
        for (Map.Entry<String, Long> e : doomedFiles.entrySet()) {
            if (!keptFiles.contains(e.getKey()) && firstSeen.get(e.getKey()) < oldestKept) {
                files++;
                bytes += e.getValue();
            }
        }
        return new long[] {files, bytes};
    }
}
