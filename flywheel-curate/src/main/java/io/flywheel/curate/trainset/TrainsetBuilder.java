package io.flywheel.curate.trainset;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.Schema;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.BatchSource;
import io.flywheel.lake.Lake;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;

/**
 * Builds and commits a training set: a seeded uniform sample of ratio r of the pool, plus mined
 * neighbours, merged without repeats, each episode expanded to samples at the training frame rate.
 *
 * <p>The pool: episodes whose quality status is {@code pass} (or {@code warn} when allowed),
 * whose outcome is not a failure (failed demonstrations teach the failure), and that are not a
 * near-duplicate of another episode ({@code duplicate_of}, when a dedup ran). Mined neighbours
 * outside the pool are left out and counted.
 *
 * <p>Commit: one lake transaction overwrites {@code trainset_samples} and {@code trainset_episodes} as new
 * versions, appends the set's row to {@code trainsets} and creates the set's lake tag, which pins those two
 * versions and the versions of {@code episodes}, {@code frames} (and {@code episode_groups}) the set was built
 * from (its lineage's {@code source_versions}, which cleanup then keeps). A process killed at any moment leaves
 * the set committed whole or not at all. Older tags keep opening older sets.
 */
public final class TrainsetBuilder {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROWS_PER_TAKE = 8_192;
    private static final int ROWS_PER_BATCH = 512;

    /** Receives progress: episodes expanded so far out of all of the set's. */
    @FunctionalInterface
    public interface Progress {
        void update(long done, long total);

        Progress NONE = (d, t) -> {};
    }

    /** The result of a build. */
    public record Result(Trainset trainset, int poolSize, int minedOutsidePool) {}

    private TrainsetBuilder() {}

    /**
     * @param lake an open lake
     * @param spec the set to build
     * @param scratch a folder for the temporary Arrow file the samples are staged in (deleted after)
     * @param progress progress receiver
     * @return the committed set and pool statistics
     * @throws io.flywheel.error.ConflictException when the tag exists (tags are immutable; a
     *     {@link io.flywheel.lake.CommitConflictException} when a concurrent build committed the same tag first)
     * @throws io.flywheel.error.BadInputException when the set would hold no episode
     * @throws io.flywheel.error.NotFoundException when a mined episode id is not in the lake
     * @throws io.flywheel.error.StorageUnavailableException when the lake cannot be read or written
     */
    public static Result build(Lake lake, TrainsetSpec spec, Path scratch, Progress progress) throws IOException {
        if (Trainsets.find(lake, spec.tag()).isPresent()) {
            throw new io.flywheel.error.ConflictException("training set '" + spec.tag() + "' already exists in "
                    + lake.location() + "; choose a new tag (tags are immutable)");
        }
        long episodesVersion;
        Map<String, EpisodeInfo> all;
        try (LakeTable t = lake.table("episodes")) {
            episodesVersion = t.version();
            all = Trainsets.episodeInfos(lake, t);
        }
        Set<String> pool = new LinkedHashSet<>();
        for (EpisodeInfo e : all.values()) {
            if (inPool(e, spec.allowWarn())) {
                pool.add(e.episodeId());
            }
        }
        List<String> base = UniformSample.select(pool, spec.baseRatio(), spec.seed());
        Map<String, List<MinedEpisode>> minedBy = new TreeMap<>();
        int outside = 0;
        for (MinedEpisode m : spec.mined()) {
            if (!all.containsKey(m.episodeId())) {
                throw new io.flywheel.error.NotFoundException("mined episode '" + m.episodeId() + "' (queried by '"
                        + m.queryEpisodeId() + "') is not in " + lake.location());
            }
            if (!pool.contains(m.episodeId())) {
                outside++;
                continue;
            }
            minedBy.computeIfAbsent(m.episodeId(), k -> new ArrayList<>()).add(m);
        }
        Set<String> baseSet = new LinkedHashSet<>(base);
        java.util.TreeSet<String> union = new java.util.TreeSet<>(baseSet);
        union.addAll(minedBy.keySet());
        List<String> members = new ArrayList<>(union);
        if (members.isEmpty()) {
            throw new io.flywheel.error.BadInputException("training set '" + spec.tag() + "' would hold no episode: the pool (episodes"
                    + " passing QC, not failures, not near-duplicates) holds " + pool.size() + " of the lake's " + all.size()
                    + ", the ratio " + spec.baseRatio() + " selects none of them and no mined episode is in it;"
                    + " nothing was committed");
        }

        long framesVersion;
        long[] firstSample = new long[members.size()];
        long[] sampleCount = new long[members.size()];
        Files.createDirectories(scratch);
        Path staged = Files.createTempFile(scratch, "trainset-", ".arrow");
        try (LakeTable frames = lake.table("frames"); BufferAllocator alloc = lake.newAllocator("trainset")) {
            framesVersion = frames.version();
            Schema samplesSchema = TrainsetTables.samples(frames.schema());
            long[][] rows = sampledRows(frames, members, spec.sampleRateHz());
            stageSamples(frames, rows, samplesSchema, staged, alloc, firstSample, sampleCount, progress);
            long totalSamples = 0;
            for (long c : sampleCount) {
                totalSamples += c;
            }
            Map<String, Object> lineage = new LinkedHashMap<>();
            List<String> queries = spec.mined().stream().map(MinedEpisode::queryEpisodeId).distinct().sorted().toList();
            lineage.put("query_episode_ids", queries);
            lineage.putAll(spec.lineage());
            lineage.put("seed", spec.seed());
            lineage.put("base_ratio", spec.baseRatio());
            lineage.put("sample_rate_hz", spec.sampleRateHz());
            lineage.put("pool_rule", "quality_status in (" + (spec.allowWarn() ? "pass, warn" : "pass")
                    + "), outcome not failure, not a near-duplicate of another episode");
            lineage.put("pool_size", pool.size());
            lineage.put("mined_requested", spec.mined().size());
            lineage.put("mined_outside_pool", outside);
            Map<String, Long> sources = new LinkedHashMap<>();
            sources.put("episodes", episodesVersion);
            sources.put("frames", framesVersion);
            io.flywheel.curate.pool.DedupTables.latestVersion(lake).ifPresent(v -> sources.put("episode_groups", v));
            lineage.put("source_versions", sources);
            long minedCount = minedBy.size();
            long createdAt = System.currentTimeMillis() * 1_000_000L;
            Trainset row = new Trainset(spec.tag(), createdAt, -1, -1, members.size(), totalSamples, base.size(),
                    minedCount, lineage);
            CommitResult c;
            // one lake commit: the samples, the episodes, the registry row and the tag, which pins the set's tables
            // and the source versions its lineage names (so that cleanup keeps them)
            try (FileChannel ch = FileChannel.open(staged, StandardOpenOption.READ);
                    ArrowFileReader samples = new ArrowFileReader(ch, alloc)) {
                LakeTransaction tx = lake.begin("trainset").summary("tag", spec.tag());
                tx.overwrite(TrainsetTables.SAMPLES, samples);
                tx.overwrite(TrainsetTables.EPISODES, BatchSource.single(TrainsetTables.EPISODES_SCHEMA, alloc,
                        root -> episodeRows(root, members, all, baseSet, minedBy, firstSample, sampleCount)));
                tx.append(TrainsetTables.TRAINSETS, Trainsets.registryRow(row, alloc), Set.of(spec.tag()));
                tx.tag(spec.tag(), List.of(TrainsetTables.SAMPLES, TrainsetTables.EPISODES), sources);
                c = tx.commit();
            }
            Trainset set = new Trainset(spec.tag(), createdAt, c.table(TrainsetTables.SAMPLES).toVersion(),
                    c.table(TrainsetTables.EPISODES).toVersion(), members.size(), totalSamples, base.size(),
                    minedCount, lineage);
            return new Result(set, pool.size(), outside);
        } finally {
            Files.deleteIfExists(staged);
        }
    }

    static boolean inPool(EpisodeInfo e, boolean allowWarn) {
        boolean qc = "pass".equals(e.qualityStatus()) || (allowWarn && "warn".equals(e.qualityStatus()));
        return qc && !e.failed() && !e.duplicate();
    }

    /**
     * One scan of the frames table's episode_id, frame_index and timestamp_ns columns, in table order
     * (so a row's position in the scan is its row offset at this version).
     *
     * @return per member episode (in {@code members} order), the row offsets of its samples in time order
     */
    private static long[][] sampledRows(LakeTable frames, List<String> members, double rateHz) {
        Map<String, Integer> memberIndex = new HashMap<>();
        for (int i = 0; i < members.size(); i++) {
            memberIndex.put(members.get(i), i);
        }
        // per member: frame_index -> {timestamp_ns, row offset}; a repeated frame_index keeps its last row
        List<TreeMap<Integer, long[]>> byFrame = new ArrayList<>(members.size());
        for (int i = 0; i < members.size(); i++) {
            byFrame.add(new TreeMap<>());
        }
        if (!members.isEmpty()) {
            long[] offset = {0};
            frames.scan(ScanRequest.builder().columns("episode_id", "frame_index", "timestamp_ns").build(), batch -> {
                VarCharVector id = (VarCharVector) batch.getVector("episode_id");
                IntVector idx = (IntVector) batch.getVector("frame_index");
                BigIntVector ts = (BigIntVector) batch.getVector("timestamp_ns");
                for (int i = 0; i < batch.getRowCount(); i++, offset[0]++) {
                    Integer m = memberIndex.get(new String(id.get(i), StandardCharsets.UTF_8));
                    if (m != null) {
                        byFrame.get(m).put(idx.get(i), new long[] {ts.get(i), offset[0]});
                    }
                }
            });
            if (offset[0] != frames.countRows()) {
                throw new io.flywheel.error.StorageUnavailableException("frames table " + frames.uri() + " at version " + frames.version() + ": scan gave "
                        + offset[0] + " rows, the table has " + frames.countRows());
            }
        }
        long[][] out = new long[members.size()][];
        for (int m = 0; m < members.size(); m++) {
            TreeMap<Integer, long[]> t = byFrame.get(m);
            long[] ts = new long[t.size()];
            long[] rows = new long[t.size()];
            int i = 0;
            for (long[] v : t.values()) {
                ts[i] = v[0];
                rows[i++] = v[1];
            }
            int[] pos = SampleClock.select(ts, rateHz);
            out[m] = new long[pos.length];
            for (int j = 0; j < pos.length; j++) {
                out[m][j] = rows[pos[j]];
            }
            byFrame.set(m, null);
        }
        return out;
    }

    /**
     * Copies the sampled frame rows, in episode then time order, into an Arrow IPC file: one
     * {@link LakeTable#take} by row offset per {@link #ROWS_PER_TAKE} samples, so the work grows
     * with the samples, not with samples times table size.
     */
    private static void stageSamples(LakeTable frames, long[][] rows, Schema schema, Path file, BufferAllocator alloc,
                                     long[] firstSample, long[] sampleCount, Progress progress) throws IOException {
        List<String> frameColumns = schema.getFields().subList(2, schema.getFields().size()).stream()
                .map(f -> f.getName()).toList();
        try (VectorSchemaRoot out = VectorSchemaRoot.create(schema, alloc);
                FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE);
                ArrowFileWriter writer = new ArrowFileWriter(out, null, ch)) {
            writer.start();
            out.allocateNew();
            long sample = 0;
            for (int m = 0; m < rows.length; m++) {
                firstSample[m] = sample;
                sampleCount[m] = rows[m].length;
                sample += rows[m].length;
            }
            long total = sample;
            // (episode index, offset) of every sample, in sample order, taken in chunks
            int[] outRows = {0};
            long[] next = {0};
            int m = 0;
            int j = 0;
            while (next[0] < total) {
                int n = (int) Math.min(ROWS_PER_TAKE, total - next[0]);
                long[] offsets = new long[n];
                int[] episode = new int[n];
                for (int i = 0; i < n; i++) {
                    while (j == rows[m].length) {
                        m++;
                        j = 0;
                    }
                    offsets[i] = rows[m][j++];
                    episode[i] = m;
                }
                int[] in = {0};
                frames.take(offsets, frameColumns, batch -> {
                    for (int r = 0; r < batch.getRowCount(); r++) {
                        int o = outRows[0]++;
                        ((BigIntVector) out.getVector("sample_index")).setSafe(o, next[0]++);
                        ((IntVector) out.getVector("episode_index")).setSafe(o, episode[in[0]++]);
                        for (String c : frameColumns) {
                            io.flywheel.lake.ArrowCopy.copy(batch.getVector(c), r, out.getVector(c), o);
                        }
                        if (outRows[0] == ROWS_PER_BATCH) {
                            out.setRowCount(outRows[0]);
                            write(writer);
                            out.allocateNew();
                            outRows[0] = 0;
                        }
                    }
                });
                if (in[0] != n) {
                    throw new io.flywheel.error.StorageUnavailableException("frames table " + frames.uri() + " at version " + frames.version() + ": take of "
                            + n + " sampled rows returned " + in[0]);
                }
                progress.update(episode[n - 1] + (j == rows[m].length ? 1 : 0), rows.length);
            }
            if (outRows[0] > 0 || total == 0) {
                out.setRowCount(outRows[0]);
                writer.writeBatch();
            }
            writer.end();
            progress.update(rows.length, rows.length);
        }
    }

    private static void write(ArrowFileWriter writer) {
        try {
            writer.writeBatch();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void episodeRows(VectorSchemaRoot root, List<String> members, Map<String, EpisodeInfo> all,
                                    Set<String> base, Map<String, List<MinedEpisode>> minedBy, long[] firstSample,
                                    long[] sampleCount) {
        ListVector mined = (ListVector) root.getVector("mined_by");
        StructVector item = (StructVector) mined.getDataVector();
        VarCharVector q = (VarCharVector) item.getChild("query_episode_id");
        Float8Vector d = (Float8Vector) item.getChild("distance");
        IntVector rank = (IntVector) item.getChild("rank");
        int child = 0;
        for (int i = 0; i < members.size(); i++) {
            EpisodeInfo e = all.get(members.get(i));
            ((IntVector) root.getVector("episode_index")).setSafe(i, i);
            str(root, "episode_id", i, e.episodeId());
            str(root, "robot_id", i, e.robotId());
            str(root, "task", i, e.task());
            str(root, "scene", i, e.scene());
            str(root, "object", i, e.object());
            str(root, "outcome", i, e.outcome());
            ((BitVector) root.getVector("in_base")).setSafe(i, base.contains(e.episodeId()) ? 1 : 0);
            mined.startNewValue(i);
            List<MinedEpisode> by = minedBy.getOrDefault(e.episodeId(), List.of());
            for (MinedEpisode m : by) {
                item.setIndexDefined(child);
                q.setSafe(child, m.queryEpisodeId().getBytes(StandardCharsets.UTF_8));
                d.setSafe(child, m.distance());
                rank.setSafe(child, m.rank());
                child++;
            }
            mined.endValue(i, by.size());
            ((BigIntVector) root.getVector("first_sample")).setSafe(i, firstSample[i]);
            ((BigIntVector) root.getVector("sample_count")).setSafe(i, sampleCount[i]);
        }
        root.setRowCount(members.size());
    }

    static void str(VectorSchemaRoot root, String col, int i, String v) {
        ((VarCharVector) root.getVector(col)).setSafe(i, v.getBytes(StandardCharsets.UTF_8));
    }

    static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
