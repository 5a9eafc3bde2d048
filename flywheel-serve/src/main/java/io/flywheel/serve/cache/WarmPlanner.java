package io.flywheel.serve.cache;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.DataFileRef;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableRef;

/**
 * Works out a {@link WarmPlan}: exactly the files and byte ranges that reading a training set
 * touches.
 *
 * <ul>
 *   <li>Lance metadata, whole: the manifest of {@code trainset_samples} at the set's version and its
 *       tag file; the latest manifests and data files of {@code _catalog} and {@code trainsets}
 *       (read by {@link Lake#open} and {@code Trainsets.open}); the latest manifests and tag files
 *       of {@code trainset_samples}/{@code trainset_episodes} (the tag check).</li>
 *   <li>Each data file of {@code trainset_samples} at the version: the metadata region
 *       ({@code [column_meta_start, size)}) and the last {@link #TAIL_READ} bytes (Lance's first read
 *       of a file), the global buffers (schema), and every
 *       page and column buffer of the columns read, found through the manifest's field-to-column
 *       map and the file's column metadata ({@link LanceFileLayout}). Ranges closer than
 *       {@code gap} bytes are merged (Lance coalesces nearby reads into one request).</li>
 *   <li>Raw files, for images without a hot copy: the image's own byte range when its locator is a
 *       plain range ({@code chunk_offset = -1}), else the whole MCAP Chunk record at
 *       {@code chunk_offset} (opcode, length and body: MCAP spec, "Chunk").</li>
 * </ul>
 */
public final class WarmPlanner {
    /**
     * Gap below which two ranges of a data file are merged: Lance pads every buffer to a 64-byte
     * boundary and coalesces reads of neighbouring buffers across that padding, so the padding
     * between two listed buffers is listed too.
     */
    public static final long DEFAULT_GAP = 64;
    /**
     * Bytes at the end of a data file that Lance reads in one request when it opens the file (its
     * object-store block size, 64 KiB for S3, which is how the cache endpoint serves the lake):
     * footer and metadata usually fit, and a file smaller than this is read whole.
     */
    public static final long TAIL_READ = 64 * 1024;

    private WarmPlanner() {}

    /**
     * @param lake the lake, opened on its origin
     * @param origin the same lake's storage, keys relative to its root
     * @param tag training-set tag
     * @param columns top-level columns of trainset_samples the reads need
     * @param gap merge ranges of a data file closer than this many bytes
     * @return the plan
     * @throws io.flywheel.error.NotFoundException when there is no such set
     * @throws IllegalArgumentException when a column is not one of trainset_samples'
     * @throws IOException when a file cannot be read or is not a Lance v2 file
     */
    public static WarmPlan plan(Lake lake, Origin origin, String tag, List<String> columns, long gap) throws IOException {
        Trainset set = Trainsets.open(lake, tag);
        String root = lake.location();
        List<WarmPlan.FileRanges> files = new ArrayList<>();
        // metadata files, whole
        TreeSet<String> meta = new TreeSet<>();
        String samplesDir = TrainsetTables.SAMPLES + ".lance/";
        meta.add(manifest(origin, TrainsetTables.SAMPLES, set.samplesVersion()));
        meta.addAll(lake.commitPointFiles()); // how a reader finds the snapshot: the head hint and its commit point
        for (String t : List.of(TrainsetTables.TRAINSETS, TrainsetTables.SAMPLES, TrainsetTables.EPISODES)) {
            try (LakeTable lt = lake.table(t)) {
                meta.add(manifest(origin, t, lt.version()));
                if (t.equals(TrainsetTables.TRAINSETS)) {
                    for (DataFileRef d : lt.dataFiles()) {
                        meta.add(t + ".lance/data/" + d.path());
                    }
                }
            }
            if (t.equals(TrainsetTables.SAMPLES) || t.equals(TrainsetTables.EPISODES)) {
                for (Origin.Entry e : origin.list(t + ".lance/_refs/tags/")) {
                    meta.add(e.key()); // the tag check lists and reads every tag of the two tables
                }
            }
        }
        for (String k : meta) {
            long size = origin.size(k);
            files.add(new WarmPlan.FileRanges(k, root + "/" + k, WarmPlan.Kind.LANCE_META, size,
                    List.of(new ByteRange(0, size))));
        }
        // data files of the samples at the set's version
        List<DataFileRef> dataFiles;
        Map<String, List<Integer>> ids = new LinkedHashMap<>();
        try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.version(set.samplesVersion()))) {
            dataFiles = t.dataFiles();
            for (String c : columns) {
                ids.put(c, t.fieldIds(c));
            }
        }
        for (DataFileRef d : dataFiles) {
            String key = samplesDir + "data/" + d.path();
            long size = d.sizeBytes() > 0 ? d.sizeBytes() : origin.size(key);
            LanceFileLayout layout = LanceFileLayout.read(origin, key, size);
            List<ByteRange> ranges = new ArrayList<>();
            ranges.add(layout.metadata());
            ranges.add(new ByteRange(Math.max(0, size - TAIL_READ), size));
            ranges.addAll(layout.globalBuffers());
            for (List<Integer> fieldIds : ids.values()) {
                for (int id : fieldIds) {
                    int col = d.columnOf(id);
                    if (col >= 0) {
                        if (col >= layout.columns().size()) {
                            throw new IOException(key + ": the manifest maps field " + id + " to column " + col
                                    + " but the file has " + layout.columns().size() + " columns");
                        }
                        ranges.addAll(layout.columns().get(col).dataRanges());
                    }
                }
            }
            files.add(new WarmPlan.FileRanges(key, root + "/" + key, WarmPlan.Kind.LANCE_DATA, size,
                    ByteRange.merge(ranges, gap)));
        }
        if (columns.contains("images")) {
            files.addAll(rawRanges(lake, set));
        }
        return new WarmPlan(root, tag, set.samplesVersion(), columns, files);
    }

    /** The raw byte ranges of every image of the set that has no hot copy. */
    private static List<WarmPlan.FileRanges> rawRanges(Lake lake, Trainset set) throws IOException {
        Map<String, List<ByteRange>> plain = new LinkedHashMap<>();
        Map<String, TreeSet<Long>> chunks = new LinkedHashMap<>();
        try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.version(set.samplesVersion()))) {
            t.scan(ScanRequest.builder().columns(List.of("images")).build(), b -> {
                ColumnView list = b.column("images");
                ColumnView s = list.items();
                ColumnView hot = s.hasField("hot_jpeg") ? s.field("hot_jpeg") : null;
                ColumnView uri = s.field("raw_uri");
                ColumnView chunk = s.field("chunk_offset");
                ColumnView off = s.field("offset");
                ColumnView len = s.field("length");
                for (int r = 0; r < b.rowCount(); r++) {
                    if (list.isNull(r)) {
                        continue;
                    }
                    for (int i = list.listStart(r); i < list.listEnd(r); i++) {
                        if (hot != null && !hot.isNull(i)) {
                            continue;
                        }
                        String path = Path.of(URI.create(uri.getString(i))).toString();
                        if (chunk.getLong(i) < 0) {
                            plain.computeIfAbsent(path, k -> new ArrayList<>())
                                    .add(new ByteRange(off.getLong(i), off.getLong(i) + len.getLong(i)));
                        } else {
                            chunks.computeIfAbsent(path, k -> new TreeSet<>()).add(chunk.getLong(i));
                        }
                    }
                }
            });
        }
        LocalOrigin raw = new LocalOrigin(Path.of("/"));
        Map<String, List<ByteRange>> all = new LinkedHashMap<>(plain);
        for (Map.Entry<String, TreeSet<Long>> e : chunks.entrySet()) {
            long size = raw.size(e.getKey());
            for (long at : e.getValue()) {
                if (at + 9 > size) {
                    throw new IOException(e.getKey() + " at byte " + at + ": expected an MCAP Chunk record, the file ends"
                            + " at byte " + size);
                }
                ByteBuffer h = ByteBuffer.wrap(raw.read(e.getKey(), new ByteRange(at, at + 9))).order(ByteOrder.LITTLE_ENDIAN);
                long recLen = h.getLong(1);
                if ((h.get(0) & 0xFF) != 0x06 || recLen < 0 || at + 9 + recLen > size) {
                    throw new IOException(e.getKey() + " at byte " + at + ": expected an MCAP Chunk record (opcode 0x06)"
                            + " inside the file, found opcode " + (h.get(0) & 0xFF) + " with length " + recLen);
                }
                all.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(new ByteRange(at, at + 9 + recLen));
            }
        }
        List<WarmPlan.FileRanges> out = new ArrayList<>();
        for (Map.Entry<String, List<ByteRange>> e : all.entrySet()) {
            out.add(new WarmPlan.FileRanges(rawKey(e.getKey()), e.getKey(), WarmPlan.Kind.RAW, raw.size(e.getKey()),
                    ByteRange.merge(e.getValue(), 0)));
        }
        return out;
    }

    /** @return the cache key of a raw file given by absolute path */
    public static String rawKey(String absolutePath) {
        return "raw/" + (absolutePath.startsWith("/") ? absolutePath.substring(1) : absolutePath);
    }

    /**
     * @return the manifest key of {@code table} at {@code version}: {@code _versions/<u64::MAX - v, 20 digits>.manifest}
     *     (Lance V2 naming) or {@code _versions/<v>.manifest} (V1), whichever exists
     */
    static String manifest(Origin origin, String table, long version) throws IOException {
        String dir = table + ".lance/_versions/";
        String v2 = dir + String.format("%20s", Long.toUnsignedString(-1L - version)).replace(' ', '0') + ".manifest";
        String v1 = dir + version + ".manifest";
        for (String k : List.of(v2, v1)) {
            try {
                origin.size(k);
                return k;
            } catch (NoSuchFileException e) {
                // try the other naming scheme
            }
        }
        throw new NoSuchFileException(origin.describe() + "/" + v1, null, "no manifest for version " + version
                + " (looked for " + v2 + " and " + v1 + ")");
    }
}
