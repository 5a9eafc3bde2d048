package io.flywheel.curate.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Grouping;
import io.flywheel.curate.HammingSearch;
import io.flywheel.curate.NearPairs;
import io.flywheel.curate.Groups;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.CurationTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeGroupRow;
import io.flywheel.rows.FrameGroupRow;

/**
 * Finds near-duplicate episodes (episode embeddings within a cosine distance of each other) and
 * near-duplicate frames (master-camera pHash within a Hamming distance of each other): every two
 * members of a group are within the threshold (complete linkage, see {@link Grouping}),
 * and writes the groups to {@link DedupTables}. Nothing is deleted: the groups only steer what
 * enters mining pools and training sets.
 *
 * <p>Representatives (a group never chains unrelated items through intermediate neighbours,
 * whatever the priority): for episodes the highest of quality status
 * (pass over warn over fail), then success over other outcomes, then more frames, ties to the
 * lower episode id; for frames the sharpest.
 */
public final class DedupJob {
    private DedupJob() {}

    /**
     * @param episodeThreshold cosine distance, in [0, 2]: episodes all within it of each other form a group
     * @param frameHamming bits, in [0, 63]: master-camera frames all within it of each other form a group;
     *     -1 skips frames
     */
    public record Options(double episodeThreshold, int frameHamming) {
        public Options {
            if (!(episodeThreshold >= 0 && episodeThreshold <= 2)) {
                throw new IllegalArgumentException("episode threshold is a cosine distance in [0, 2], got " + episodeThreshold);
            }
            if (frameHamming < -1 || frameHamming > 63) {
                throw new IllegalArgumentException("frame threshold is a Hamming distance in [0, 63] bits, got " + frameHamming);
            }
        }
    }

    /**
     * @param episodes episodes with an embedding
     * @param episodeGroups groups (kept episodes)
     * @param episodesRemoved episodes that are a near-duplicate of another
     * @param frames master-camera frames with a pHash
     * @param frameGroups frame groups (kept frames)
     * @param framesRemoved near-duplicate frames
     * @param model embedding model of the episodes
     * @param episodeGroupsVersion version of episode_groups written
     * @param frameGroupsVersion version of frame_groups written (0 when frames were skipped)
     */
    public record Result(int episodes, int episodeGroups, int episodesRemoved, int frames, int frameGroups,
                         int framesRemoved, String model, long episodeGroupsVersion, long frameGroupsVersion) {}

    /**
     * @throws IllegalArgumentException when the lake has no embeddings (run enrich first)
     */
    public static Result run(Lake lake, Options options) {
        return run(lake, options, PairSearch.LOCAL);
    }

    /**
     * Where the near pairs are found: in this process ({@link #LOCAL}) or elsewhere (a Spark job), in one call for
     * both searches. The groups are then built here from the pairs by the same complete linkage, so a search that
     * returns every pair within the thresholds, with the same distances, gives the same groups.
     */
    public interface PairSearch {
        /**
         * @param unitVectors L2-normalised episode embeddings, one dimension
         * @param maxCosineDistance threshold on {@code 1 - cos}
         * @param distinctHashes distinct master-camera pHash values, ascending ({@link Grouping#distinctHashes}),
         *     node i being value i; null when frames are skipped
         * @param maxBits Hamming threshold in bits, 0..63 (-1 when frames are skipped)
         * @return every episode pair {@code i < j} within the threshold, distance as
         *     {@link ExactSearch#pairsWithin}, and every node pair within {@code maxBits} (null when skipped)
         */
        Pairs search(float[][] unitVectors, double maxCosineDistance, long[] distinctHashes, int maxBits);

        /** Exact all-pairs cosine search and multi-index Hamming search, in this process. */
        PairSearch LOCAL = (v, t, h, bits) -> new Pairs(ExactSearch.of(v).pairsWithin(t),
                h == null ? null : HammingSearch.pairs(h, bits));
    }

    /** @param episodes pairs of episode indexes @param frames pairs of distinct pHash nodes, null when skipped */
    public record Pairs(NearPairs episodes, NearPairs frames) {}

    /**
     * As {@link #run(Lake, Options)}, the pairs found by {@code search}.
     *
     * @throws IllegalArgumentException when the lake has no embeddings (run enrich first)
     */
    public static Result run(Lake lake, Options options, PairSearch search) {
        EpisodeVectors ev = EpisodeVectors.read(lake);
        MasterFrames mf = options.frameHamming() >= 0 ? MasterFrames.read(lake) : null;
        long[] distinct = mf == null ? null : Grouping.distinctHashes(mf.phash());
        Pairs pairs = search.search(ev.vectors(), options.episodeThreshold(), distinct, options.frameHamming());
        Groups eg = Grouping.completeLinkage(IntStream.range(0, ev.size()).toArray(), ev.size(), pairs.episodes(),
                options.episodeThreshold(), episodePriority(ev.infos()));
        // both tables in one lake commit: a reader never sees new episode groups with old frame groups
        LakeTransaction tx = lake.begin("dedup");
        Long egVersion = writeEpisodes(lake, tx, ev, eg, options.episodeThreshold());
        int frames = 0;
        int frameGroups = 0;
        int framesRemoved = 0;
        Long fgVersion = 0L;
        if (mf != null) {
            Groups fg = Grouping.phash(mf.phash(), pairs.frames(), options.frameHamming(), mf.sharpness());
            frames = mf.size();
            frameGroups = fg.groupCount();
            framesRemoved = fg.removedCount();
            fgVersion = writeFrames(lake, tx, mf, fg, options.frameHamming());
        }
        CommitResult c = tx.commit();
        long eVersion = egVersion != null ? egVersion : c.table(DedupTables.EPISODE_GROUPS).toVersion();
        long fVersion = fgVersion != null ? fgVersion : c.table(DedupTables.FRAME_GROUPS).toVersion();
        return new Result(ev.size(), eg.groupCount(), eg.removedCount(), frames, frameGroups, framesRemoved,
                ev.model(), eVersion, fVersion);
    }

    /** @return the representative priority of each episode (higher is kept) */
    static double[] episodePriority(List<EpisodeInfo> infos) {
        double[] p = new double[infos.size()];
        for (int i = 0; i < p.length; i++) {
            EpisodeInfo e = infos.get(i);
            int qc = switch (e.qualityStatus()) {
                case "pass" -> 2;
                case "warn" -> 1;
                default -> 0;
            };
            p[i] = qc * 2 + (e.outcome().startsWith("success") ? 1 : 0);
        }
        return p;
    }

    /** The master camera's pHash and sharpness of every enriched frame. */
    record MasterFrames(String[] episode, int[] frameIndex, long[] phash, double[] sharpness) {
        int size() {
            return phash.length;
        }

        static MasterFrames read(Lake lake) {
            java.util.Map<String, String> master = new java.util.HashMap<>();
            try (LakeTable t = lake.table("episodes")) {
                t.scan(ScanRequest.builder().columns("episode_id", "master_topic").build(), b -> {
                    ColumnView id = b.column("episode_id");
                    ColumnView topic = b.column("master_topic");
                    for (int i = 0; i < b.rowCount(); i++) {
                        master.put(text(id, i), text(topic, i));
                    }
                });
            }
            List<String> ep = new ArrayList<>();
            List<Integer> idx = new ArrayList<>();
            List<Long> hash = new ArrayList<>();
            List<Double> sharp = new ArrayList<>();
            try (LakeTable t = lake.table("frames")) {
                t.scan(ScanRequest.builder().columns("episode_id", "frame_index", "images").build(), b -> {
                    ColumnView images = b.column("images");
                    ColumnView s = images.items();
                    ColumnView topic = s.field("topic");
                    ColumnView ph = s.hasField("phash") ? s.field("phash") : null;
                    ColumnView sh = s.hasField("sharpness") ? s.field("sharpness") : null;
                    ColumnView episodeId = b.column("episode_id");
                    ColumnView frameIndex = b.column("frame_index");
                    for (int r = 0; r < b.rowCount(); r++) {
                        String e = text(episodeId, r);
                        String m = master.getOrDefault(e, "");
                        int from = images.listStart(r);
                        int to = images.listEnd(r);
                        int pick = -1;
                        for (int i = from; i < to; i++) {
                            if (text(topic, i).equals(m)) {
                                pick = i;
                            }
                        }
                        if (pick < 0 && to > from) {
                            pick = from; // fixed-rate master clock: the first camera
                        }
                        if (pick < 0 || ph == null || ph.isNull(pick)) {
                            continue;
                        }
                        ep.add(e);
                        idx.add(frameIndex.getInt(r));
                        hash.add(ph.getLong(pick));
                        sharp.add(sh == null || sh.isNull(pick) ? 0 : sh.getDouble(pick));
                    }
                });
            }
            return new MasterFrames(ep.toArray(new String[0]), idx.stream().mapToInt(Integer::intValue).toArray(),
                    hash.stream().mapToLong(Long::longValue).toArray(), sharp.stream().mapToDouble(Double::doubleValue).toArray());
        }
    }

    /** @return the table's version when it holds these rows already, else null (the overwrite is in {@code tx}) */
    private static Long writeEpisodes(Lake lake, LakeTransaction tx, EpisodeVectors ev, Groups g, double threshold) {
        IntFunction<EpisodeGroupRow> row = i -> new EpisodeGroupRow(ev.infos().get(i).episodeId(),
                ev.infos().get(g.representative(g.groupOf(i))).episodeId(), g.distanceToRepresentative(i),
                g.size(g.groupOf(i)), threshold, ev.model());
        java.util.Set<String> rows = new java.util.HashSet<>();
        for (int i = 0; i < ev.size(); i++) {
            rows.add(key(row.apply(i)));
        }
        if (lake.hasTable(DedupTables.EPISODE_GROUPS)) {
            java.util.Set<String> stored = new java.util.HashSet<>();
            long[] count = {0};
            try (LakeTable t = lake.table(DedupTables.EPISODE_GROUPS)) {
                t.forEachRow(CurationTables.EPISODE_GROUPS, ScanRequest.all(), r -> {
                    stored.add(key(r));
                    count[0]++;
                });
                if (count[0] == rows.size() && stored.equals(rows)) {
                    return t.version(); // a re-run with the same inputs and thresholds commits nothing
                }
            }
        }
        tx.overwrite(CurationTables.EPISODE_GROUPS, rows(ev.size(), row));
        return null;
    }

    private static Long writeFrames(Lake lake, LakeTransaction tx, MasterFrames mf, Groups g, int threshold) {
        int[] members = IntStream.range(0, mf.size()).filter(i -> !g.isRepresentative(i)).toArray();
        IntFunction<FrameGroupRow> row = k -> {
            int i = members[k];
            int rep = g.representative(g.groupOf(i));
            return new FrameGroupRow(mf.episode()[i], mf.frameIndex()[i], mf.episode()[rep], mf.frameIndex()[rep],
                    Math.round(g.distanceToRepresentative(i)), threshold);
        };
        java.util.Set<String> rows = new java.util.HashSet<>();
        for (int k = 0; k < members.length; k++) {
            rows.add(key(row.apply(k)));
        }
        if (lake.hasTable(DedupTables.FRAME_GROUPS)) {
            java.util.Set<String> stored = new java.util.HashSet<>();
            long[] count = {0};
            try (LakeTable t = lake.table(DedupTables.FRAME_GROUPS)) {
                t.forEachRow(CurationTables.FRAME_GROUPS, ScanRequest.all(), r -> {
                    stored.add(key(r));
                    count[0]++;
                });
                if (count[0] == rows.size() && stored.equals(rows)) {
                    return t.version();
                }
            }
        }
        tx.overwrite(CurationTables.FRAME_GROUPS, rows(members.length, row));
        return null;
    }

    /** @return what makes two episode group rows the same result: episode, representative, threshold, model */
    private static String key(EpisodeGroupRow r) {
        return r.episodeId() + "\t" + r.representativeId() + "\t" + r.threshold() + "\t" + r.embeddingModel();
    }

    /** @return what makes two frame group rows the same result: frame, representative frame, threshold */
    private static String key(FrameGroupRow r) {
        return r.episodeId() + "\t" + r.frameIndex() + "\t" + r.representativeEpisodeId() + "\t"
                + r.representativeFrameIndex() + "\t" + r.threshold();
    }

    /** @return rows 0..n-1, each made when the commit reads it (memory: one written batch) */
    private static <R> Iterable<R> rows(int n, IntFunction<R> row) {
        return () -> IntStream.range(0, n).mapToObj(row).iterator();
    }

    static String text(ColumnView v, int i) {
        return v.isNull(i) ? "" : v.getString(i);
    }
}
