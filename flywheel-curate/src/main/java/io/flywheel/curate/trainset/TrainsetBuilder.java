package io.flywheel.curate.trainset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.ColumnView;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.RowCopy;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.TrainsetEpisodeRow;

/**
 * Builds and commits a training set: a seeded uniform sample of ratio r of the pool, plus mined
 * neighbours, merged without repeats, each episode expanded to samples at the training frame rate.
 *
 * <p>The pool: episodes whose quality status is {@code pass} (or {@code warn} when allowed),
 * whose outcome is not a failure (failed demonstrations teach the failure), and that are not a
 * near-duplicate of another episode ({@code duplicate_of}, when a dedup ran). Mined neighbours
 * outside the pool are left out and counted.
 *
 * <p>Commit: one lake transaction overwrites {@code trainset_samples} and {@code trainset_episodes} as new versions,
 * appends the set's row to {@code trainsets} and creates the set's lake tag, which pins those two versions and the
 * versions of {@code episodes}, {@code frames} (and {@code episode_groups}) the set was built from (its lineage's
 * {@code source_versions}, which cleanup then keeps). The samples are the sampled frames rows, copied by the lake from
 * the frames version read ({@link RowCopy}: one Lance {@code take} by row offset per {@link RowCopy#ROWS_PER_TAKE}
 * samples, so the work grows with the samples, not with samples times table size; nothing is staged in a scratch
 * file). A process killed at any moment leaves the set committed whole or not at all. Older tags keep opening older
 * sets.
 */
public final class TrainsetBuilder {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Receives progress: episodes expanded so far out of all of the set's. */
    @FunctionalInterface
    public interface Progress {
        void update(long done, long total);

        Progress NONE = (d, t) -> {};
    }

    /** The result of a build. */
    /**
     * @param trainset the committed set
     * @param poolSize episodes in the pool
     * @param minedOutsidePool mined episodes left out because they are not in the pool
     * @param samplesWithAction samples whose frame holds a non-empty action vector; 0: the set has no action
     *     (a policy cannot be trained on it; typically a recording whose command topic was taken as state)
     * @param achievedRateHz the sample rate the set really has, in Hz: (samples - 1) / duration summed over its
     *     episodes with at least two samples; below the requested rate when the episodes' frames are sparser
     *     (a 1 Hz master sampled at 10 Hz gives 1 Hz); NaN when no episode has two samples
     */
    public record Result(Trainset trainset, int poolSize, int minedOutsidePool, long samplesWithAction,
                         double achievedRateHz) {}

    private TrainsetBuilder() {}

    /**
     * @param lake an open lake
     * @param spec the set to build
     * @param progress progress receiver
     * @return the committed set and pool statistics
     * @throws io.flywheel.error.ConflictException when the tag exists (tags are immutable; a
     *     {@link io.flywheel.lake.CommitConflictException} when a concurrent build committed the same tag first)
     * @throws io.flywheel.error.BadInputException when the set would hold no episode
     * @throws io.flywheel.error.NotFoundException when a mined episode id is not in the lake
     * @throws io.flywheel.error.StorageUnavailableException when the lake cannot be read or written
     */
    public static Result build(Lake lake, TrainsetSpec spec, Progress progress) {
        if (Trainsets.find(lake, spec.tag()).isPresent()) {
            throw new io.flywheel.error.ConflictException("training set '" + spec.tag() + "' already exists in "
                    + lake.location() + "; choose a new tag (tags are immutable)");
        }
        long episodesVersion;
        Map<String, EpisodeInfo> all;
        Map<String, Object> labelling;
        try (LakeTable t = lake.table("episodes")) {
            episodesVersion = t.version();
            all = Trainsets.episodeInfos(lake, t);
            labelling = Trainsets.labelling(lake, t);
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
        double[] stats = new double[3]; // samples with action, sum of (samples - 1), sum of durations in s
        long[] firstSample = new long[members.size()];
        long[] sampleCount = new long[members.size()];
        long[][] rows;
        try (LakeTable frames = lake.table("frames")) {
            framesVersion = frames.version();
            rows = sampledRows(frames, members, spec.sampleRateHz(), stats);
        }
        long totalSamples = 0;
        for (int m = 0; m < rows.length; m++) {
            firstSample[m] = totalSamples;
            sampleCount[m] = rows[m].length;
            totalSamples += rows[m].length;
        }
        Map<String, Object> lineage = new LinkedHashMap<>();
        List<String> queries = spec.mined().stream().map(MinedEpisode::queryEpisodeId).distinct().sorted().toList();
        lineage.put("query_episode_ids", queries);
        lineage.putAll(spec.lineage());
        lineage.put("seed", spec.seed());
        lineage.put("base_ratio", spec.baseRatio());
        lineage.put("sample_rate_hz", spec.sampleRateHz());
        double achieved = stats[2] > 0 ? stats[1] / stats[2] : Double.NaN;
        if (Double.isFinite(achieved)) {
            lineage.put("achieved_sample_rate_hz", achieved);
        }
        lineage.put("samples_with_action", (long) stats[0]);
        lineage.put("pool_rule", "quality_status in (" + (spec.allowWarn() ? "pass, warn" : "pass")
                + "), outcome not failure, not a near-duplicate of another episode");
        lineage.put("pool_size", pool.size());
        lineage.put("mined_requested", spec.mined().size());
        lineage.put("mined_outside_pool", outside);
        lineage.put(Trainsets.VALUE_NAMES, Trainsets.valueNamesLineage(Trainsets.valueNames(lake, members)));
        Map<String, Long> sources = new LinkedHashMap<>();
        sources.put("episodes", episodesVersion);
        sources.put("frames", framesVersion);
        io.flywheel.curate.pool.DedupTables.latestVersion(lake).ifPresent(v -> sources.put("episode_groups", v));
        if (labelling != null) {
            lineage.put("labelling", labelling);
            sources.put(io.flywheel.lake.StreamTables.LABEL_HISTORY, (Long) labelling.get("label_history_version"));
        }
        lineage.put("source_versions", sources);
        long minedCount = minedBy.size();
        long createdAt = System.currentTimeMillis() * 1_000_000L;
        Trainset row = new Trainset(spec.tag(), createdAt, -1, -1, members.size(), totalSamples, base.size(),
                minedCount, lineage);
        // one lake commit: the samples (copied from the frames version read), the episodes, the registry row and the
        // tag, which pins the set's tables and the source versions its lineage names (so that cleanup keeps them)
        LakeTransaction tx = lake.begin("trainset").summary("tag", spec.tag());
        tx.overwrite(TrainsetTables.SAMPLES, RowCopy.from("frames", framesVersion).groups(rows)
                .positionColumn(CurationTables.SAMPLE_INDEX).groupColumn(CurationTables.EPISODE_INDEX)
                .progress(progress::update).build());
        tx.overwrite(CurationTables.TRAINSET_EPISODES,
                episodeRows(members, all, baseSet, minedBy, firstSample, sampleCount));
        tx.append(CurationTables.TRAINSETS, List.of(Trainsets.registryRow(row)), Set.of(spec.tag()));
        tx.tag(spec.tag(), List.of(TrainsetTables.SAMPLES, TrainsetTables.EPISODES), sources);
        CommitResult c = tx.commit();
        Trainset set = new Trainset(spec.tag(), createdAt, c.table(TrainsetTables.SAMPLES).toVersion(),
                c.table(TrainsetTables.EPISODES).toVersion(), members.size(), totalSamples, base.size(),
                minedCount, lineage);
        return new Result(set, pool.size(), outside, (long) stats[0], achieved);
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
    private static long[][] sampledRows(LakeTable frames, List<String> members, double rateHz, double[] stats) {
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
            frames.scan(ScanRequest.builder().columns("episode_id", "frame_index", "timestamp_ns", "action").build(),
                    batch -> {
                ColumnView id = batch.column("episode_id");
                ColumnView idx = batch.column("frame_index");
                ColumnView ts = batch.column("timestamp_ns");
                ColumnView action = batch.column("action");
                for (int i = 0; i < batch.rowCount(); i++, offset[0]++) {
                    Integer m = memberIndex.get(id.getString(i));
                    if (m != null) {
                        boolean has = !action.isNull(i) && action.listEnd(i) > action.listStart(i);
                        byFrame.get(m).put(idx.getInt(i), new long[] {ts.getLong(i), offset[0], has ? 1 : 0});
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
            boolean[] hasAction = new boolean[t.size()];
            int i = 0;
            for (long[] v : t.values()) {
                ts[i] = v[0];
                hasAction[i] = v[2] != 0;
                rows[i++] = v[1];
            }
            int[] pos = SampleClock.select(ts, rateHz);
            out[m] = new long[pos.length];
            for (int j = 0; j < pos.length; j++) {
                out[m][j] = rows[pos[j]];
                if (hasAction[pos[j]]) stats[0]++;
            }
            if (pos.length >= 2) {
                long span = ts[pos[pos.length - 1]] - ts[pos[0]];
                if (span > 0) {
                    stats[1] += pos.length - 1;
                    stats[2] += span / 1e9;
                }
            }
            byFrame.set(m, null);
        }
        return out;
    }

    /** @return the set's episodes rows, in set order */
    private static List<TrainsetEpisodeRow> episodeRows(List<String> members, Map<String, EpisodeInfo> all,
            Set<String> base, Map<String, List<MinedEpisode>> minedBy, long[] firstSample, long[] sampleCount) {
        List<TrainsetEpisodeRow> out = new ArrayList<>(members.size());
        for (int i = 0; i < members.size(); i++) {
            EpisodeInfo e = all.get(members.get(i));
            List<TrainsetEpisodeRow.MinedBy> by = new ArrayList<>();
            for (MinedEpisode m : minedBy.getOrDefault(e.episodeId(), List.of())) {
                by.add(new TrainsetEpisodeRow.MinedBy(m.queryEpisodeId(), m.distance(), m.rank()));
            }
            out.add(new TrainsetEpisodeRow(i, e.episodeId(), e.robotId(), e.task(), e.scene(), e.object(),
                    e.outcome(), base.contains(e.episodeId()), by, firstSample[i], sampleCount[i]));
        }
        return out;
    }

    static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
