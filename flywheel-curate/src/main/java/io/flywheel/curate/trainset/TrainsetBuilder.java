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
import io.flywheel.lake.LakeException;
import io.flywheel.lake.LakeTable;
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
 * <p>Commit (each step one atomic Lance commit): {@code trainset_samples} and
 * {@code trainset_episodes} are overwritten as new versions, then a row is appended to
 * {@code trainsets} (the commit point: a set is visible only once it is listed there), then both
 * versions are tagged with the set's tag so that any Lance reader opens them by tag. A process
 * killed before the {@code trainsets} row leaves untagged versions that no tag names; killed
 * after it, {@link Trainsets#open} re-creates missing tags. Older tags keep opening older sets.
 */
public final class TrainsetBuilder {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int EPISODES_PER_SCAN = 4;
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
     * @throws IllegalStateException when the tag exists (tags are immutable)
     * @throws IllegalArgumentException when a mined episode id is not in the lake
     * @throws LakeException when the lake cannot be read or written
     */
    public static Result build(Lake lake, TrainsetSpec spec, Path scratch, Progress progress) throws IOException {
        if (Trainsets.find(lake, spec.tag()).isPresent()) {
            throw new IllegalStateException("training set '" + spec.tag() + "' already exists in " + lake.location()
                    + "; choose a new tag (tags are immutable)");
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
                throw new IllegalArgumentException("mined episode '" + m.episodeId() + "' is not in " + lake.location());
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

        long framesVersion;
        Map<String, int[]> frameIndexes;
        Schema framesSchema;
        try (LakeTable frames = lake.table("frames")) {
            framesVersion = frames.version();
            framesSchema = frames.schema();
            frameIndexes = sampledFrames(frames, members, spec.sampleRateHz());
        }

        Files.createDirectories(scratch);
        Path staged = Files.createTempFile(scratch, "trainset-", ".arrow");
        long samplesVersion;
        long[] firstSample = new long[members.size()];
        long[] sampleCount = new long[members.size()];
        try (BufferAllocator alloc = lake.newAllocator("trainset")) {
            Schema samplesSchema = TrainsetTables.samples(framesSchema);
            stageSamples(lake, framesVersion, members, frameIndexes, samplesSchema, staged, alloc, firstSample,
                    sampleCount, progress);
            try (FileChannel ch = FileChannel.open(staged, StandardOpenOption.READ);
                    ArrowFileReader reader = new ArrowFileReader(ch, alloc)) {
                samplesVersion = lake.writeTable(TrainsetTables.SAMPLES, reader, true);
            }
        } finally {
            Files.deleteIfExists(staged);
        }
        long totalSamples = 0;
        for (long c : sampleCount) {
            totalSamples += c;
        }

        long trainsetEpisodesVersion;
        try (BufferAllocator alloc = lake.newAllocator("trainset");
                BatchSource rows = BatchSource.single(TrainsetTables.EPISODES_SCHEMA, alloc,
                        root -> episodeRows(root, members, all, baseSet, minedBy, firstSample, sampleCount))) {
            trainsetEpisodesVersion = lake.writeTable(TrainsetTables.EPISODES, rows, true);
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
        Map<String, Object> sources = new LinkedHashMap<>();
        sources.put("episodes", episodesVersion);
        sources.put("frames", framesVersion);
        io.flywheel.curate.pool.DedupTables.latestVersion(lake).ifPresent(v -> sources.put("episode_groups", v));
        lineage.put("source_versions", sources);
        long minedCount = minedBy.size();
        Trainset set = new Trainset(spec.tag(), System.currentTimeMillis() * 1_000_000L, samplesVersion,
                trainsetEpisodesVersion, members.size(), totalSamples, base.size(), minedCount, lineage);
        Trainsets.append(lake, set);
        Trainsets.ensureTags(lake, set);
        return new Result(set, pool.size(), outside);
    }

    static boolean inPool(EpisodeInfo e, boolean allowWarn) {
        boolean qc = "pass".equals(e.qualityStatus()) || (allowWarn && "warn".equals(e.qualityStatus()));
        return qc && !e.failed() && !e.duplicate();
    }

    /** @return per member episode, the frame_index values of its samples, increasing */
    private static Map<String, int[]> sampledFrames(LakeTable frames, List<String> members, double rateHz) {
        Map<String, TreeMap<Integer, Long>> times = new HashMap<>();
        if (!members.isEmpty()) {
            frames.scan(ScanRequest.builder().columns("episode_id", "frame_index", "timestamp_ns")
                    .filter(Sql.in("episode_id", members)).build(), batch -> {
                VarCharVector id = (VarCharVector) batch.getVector("episode_id");
                IntVector idx = (IntVector) batch.getVector("frame_index");
                BigIntVector ts = (BigIntVector) batch.getVector("timestamp_ns");
                for (int i = 0; i < batch.getRowCount(); i++) {
                    times.computeIfAbsent(new String(id.get(i), StandardCharsets.UTF_8), k -> new TreeMap<>())
                            .put(idx.get(i), ts.get(i));
                }
            });
        }
        Map<String, int[]> out = new HashMap<>();
        for (String m : members) {
            TreeMap<Integer, Long> t = times.getOrDefault(m, new TreeMap<>());
            int[] indexes = t.keySet().stream().mapToInt(Integer::intValue).toArray();
            long[] ts = t.values().stream().mapToLong(Long::longValue).toArray();
            int[] pos = SampleClock.select(ts, rateHz);
            int[] chosen = new int[pos.length];
            for (int i = 0; i < pos.length; i++) {
                chosen[i] = indexes[pos[i]];
            }
            out.put(m, chosen);
        }
        return out;
    }

    /** Copies the sampled frame rows, in episode then time order, into an Arrow IPC file. */
    private static void stageSamples(Lake lake, long framesVersion, List<String> members, Map<String, int[]> chosen,
                                     Schema schema, Path file, BufferAllocator alloc, long[] firstSample,
                                     long[] sampleCount, Progress progress) throws IOException {
        try (VectorSchemaRoot out = VectorSchemaRoot.create(schema, alloc);
                FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE);
                ArrowFileWriter writer = new ArrowFileWriter(out, null, ch);
                LakeTable frames = lake.table("frames", io.flywheel.lake.TableRef.version(framesVersion))) {
            writer.start();
            out.allocateNew();
            Map<String, Integer> memberIndex = new HashMap<>();
            for (int i = 0; i < members.size(); i++) {
                memberIndex.put(members.get(i), i);
            }
            int[] outRows = {0};
            long sample = 0;
            for (int from = 0; from < members.size(); from += EPISODES_PER_SCAN) {
                List<String> group = members.subList(from, Math.min(members.size(), from + EPISODES_PER_SCAN));
                Map<String, Map<Integer, Integer>> wanted = new HashMap<>();
                for (String g : group) {
                    Map<Integer, Integer> w = new HashMap<>();
                    int[] c = chosen.get(g);
                    for (int i = 0; i < c.length; i++) {
                        w.put(c[i], i);
                    }
                    wanted.put(g, w);
                }
                // stage this group's rows in memory, then emit them in (episode, time) order
                try (VectorSchemaRoot stage = VectorSchemaRoot.create(new Schema(schema.getFields().subList(2,
                        schema.getFields().size())), alloc)) {
                    stage.allocateNew();
                    Map<Long, Integer> stageRow = new TreeMap<>();
                    int[] n = {0};
                    int base = from;
                    frames.scan(ScanRequest.builder().filter(Sql.in("episode_id", group)).build(), batch -> {
                        VarCharVector id = (VarCharVector) batch.getVector("episode_id");
                        IntVector idx = (IntVector) batch.getVector("frame_index");
                        for (int i = 0; i < batch.getRowCount(); i++) {
                            String e = new String(id.get(i), StandardCharsets.UTF_8);
                            Integer pos = wanted.get(e).get(idx.get(i));
                            if (pos == null) {
                                continue;
                            }
                            for (FieldVector v : stage.getFieldVectors()) {
                                v.copyFromSafe(i, n[0], batch.getVector(v.getName()));
                            }
                            stageRow.put(((long) (memberIndex.get(e) - base) << 32) | pos, n[0]);
                            n[0]++;
                        }
                    });
                    stage.setRowCount(n[0]);
                    for (int g = 0; g < group.size(); g++) {
                        firstSample[from + g] = sample;
                        sampleCount[from + g] = chosen.get(group.get(g)).length;
                        sample += sampleCount[from + g];
                    }
                    long s = firstSample[from];
                    for (Map.Entry<Long, Integer> e : stageRow.entrySet()) {
                        int episodeIndex = base + (int) (e.getKey() >>> 32);
                        int r = outRows[0]++;
                        ((BigIntVector) out.getVector("sample_index")).setSafe(r, s++);
                        ((IntVector) out.getVector("episode_index")).setSafe(r, episodeIndex);
                        for (FieldVector v : stage.getFieldVectors()) {
                            out.getVector(v.getName()).copyFromSafe(e.getValue(), r, v);
                        }
                        if (outRows[0] == ROWS_PER_BATCH) {
                            out.setRowCount(outRows[0]);
                            writer.writeBatch();
                            out.allocateNew();
                            outRows[0] = 0;
                        }
                    }
                    if (s != sample) {
                        throw new LakeException("frames table at version " + framesVersion + " lost rows of episodes "
                                + group + " while the training set was built: expected " + (sample - firstSample[from])
                                + " samples, found " + stageRow.size());
                    }
                }
                progress.update(Math.min(members.size(), from + EPISODES_PER_SCAN), members.size());
            }
            if (outRows[0] > 0 || sample == 0) {
                out.setRowCount(outRows[0]);
                writer.writeBatch();
            }
            writer.end();
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
