package io.flywheel.curate.pool;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.curate.Grouping;
import io.flywheel.curate.Groups;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.lake.BatchSource;
import io.flywheel.lake.CommitResult;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTransaction;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * Finds near-duplicate episodes (episode embeddings within a cosine distance of a representative)
 * and near-duplicate frames (master-camera pHash within a Hamming distance of a representative),
 * and writes the groups to {@link DedupTables}. Nothing is deleted: the groups only steer what
 * enters mining pools and training sets.
 *
 * <p>Representatives (see {@link Grouping}: greedy leader grouping, so a group never chains
 * unrelated items through intermediate neighbours): for episodes the highest of quality status
 * (pass over warn over fail), then success over other outcomes, then more frames, ties to the
 * lower episode id; for frames the sharpest.
 */
public final class DedupJob {
    private DedupJob() {}

    /**
     * @param episodeThreshold cosine distance, in [0, 2]: episodes within it of a representative are its duplicates
     * @param frameHamming bits, in [0, 63]: master-camera frames within it of a representative are its duplicates;
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
        EpisodeVectors ev = EpisodeVectors.read(lake);
        Groups eg = Grouping.embeddings(ev.vectors(), options.episodeThreshold(), episodePriority(ev.infos()));
        try (BufferAllocator alloc = lake.newAllocator("dedup")) {
            // both tables in one lake commit: a reader never sees new episode groups with old frame groups
            LakeTransaction tx = lake.begin("dedup");
            Long egVersion = writeEpisodes(lake, tx, alloc, ev, eg, options.episodeThreshold());
            int frames = 0;
            int frameGroups = 0;
            int framesRemoved = 0;
            Long fgVersion = 0L;
            if (options.frameHamming() >= 0) {
                MasterFrames mf = MasterFrames.read(lake);
                Groups fg = Grouping.phash(mf.phash(), options.frameHamming(), mf.sharpness());
                frames = mf.size();
                frameGroups = fg.groupCount();
                framesRemoved = fg.removedCount();
                fgVersion = writeFrames(lake, tx, alloc, mf, fg, options.frameHamming());
            }
            CommitResult c = tx.commit();
            long eVersion = egVersion != null ? egVersion : c.table(DedupTables.EPISODE_GROUPS).toVersion();
            long fVersion = fgVersion != null ? fgVersion : c.table(DedupTables.FRAME_GROUPS).toVersion();
            return new Result(ev.size(), eg.groupCount(), eg.removedCount(), frames, frameGroups, framesRemoved,
                    ev.model(), eVersion, fVersion);
        }
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
                    for (int i = 0; i < b.getRowCount(); i++) {
                        master.put(text(b.getVector("episode_id"), i), text(b.getVector("master_topic"), i));
                    }
                });
            }
            List<String> ep = new ArrayList<>();
            List<Integer> idx = new ArrayList<>();
            List<Long> hash = new ArrayList<>();
            List<Double> sharp = new ArrayList<>();
            try (LakeTable t = lake.table("frames")) {
                t.scan(ScanRequest.builder().columns("episode_id", "frame_index", "images").build(), b -> {
                    ListVector images = (ListVector) b.getVector("images");
                    StructVector s = (StructVector) images.getDataVector();
                    FieldVector topic = s.getChild("topic");
                    BigIntVector ph = (BigIntVector) s.getChild("phash");
                    Float8Vector sh = (Float8Vector) s.getChild("sharpness");
                    for (int r = 0; r < b.getRowCount(); r++) {
                        String e = text(b.getVector("episode_id"), r);
                        String m = master.getOrDefault(e, "");
                        int from = images.getElementStartIndex(r);
                        int to = images.getElementEndIndex(r);
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
                        idx.add(((IntVector) b.getVector("frame_index")).get(r));
                        hash.add(ph.get(pick));
                        sharp.add(sh == null || sh.isNull(pick) ? 0 : sh.get(pick));
                    }
                });
            }
            return new MasterFrames(ep.toArray(new String[0]), idx.stream().mapToInt(Integer::intValue).toArray(),
                    hash.stream().mapToLong(Long::longValue).toArray(), sharp.stream().mapToDouble(Double::doubleValue).toArray());
        }
    }

    /** @return the table's version when it holds these rows already, else null (the overwrite is in {@code tx}) */
    private static Long writeEpisodes(Lake lake, LakeTransaction tx, BufferAllocator alloc, EpisodeVectors ev,
            Groups g, double threshold) {
        java.util.Set<String> rows = new java.util.HashSet<>();
        for (int i = 0; i < ev.size(); i++) {
            rows.add(ev.infos().get(i).episodeId() + "\t" + ev.infos().get(g.representative(g.groupOf(i))).episodeId()
                    + "\t" + threshold + "\t" + ev.model());
        }
        Long same = unchanged(lake, DedupTables.EPISODE_GROUPS, rows,
                List.of("episode_id", "representative_id", "threshold", "embedding_model"));
        if (same != null) {
            return same;
        }
        return write(tx, alloc, DedupTables.EPISODE_GROUPS, DedupTables.EPISODE_SCHEMA, ev.size(), (root, from, to) -> {
            for (int i = from; i < to; i++) {
                int r = i - from;
                int rep = g.representative(g.groupOf(i));
                str(root, "episode_id", r, ev.infos().get(i).episodeId());
                str(root, "representative_id", r, ev.infos().get(rep).episodeId());
                ((Float8Vector) root.getVector("distance")).setSafe(r, g.distanceToRepresentative(i));
                ((IntVector) root.getVector("group_size")).setSafe(r, g.size(g.groupOf(i)));
                ((Float8Vector) root.getVector("threshold")).setSafe(r, threshold);
                str(root, "embedding_model", r, ev.model());
            }
        });
    }

    private static Long writeFrames(Lake lake, LakeTransaction tx, BufferAllocator alloc, MasterFrames mf, Groups g,
            int threshold) {
        int[] members = java.util.stream.IntStream.range(0, mf.size()).filter(i -> !g.isRepresentative(i)).toArray();
        java.util.Set<String> rows = new java.util.HashSet<>();
        for (int i : members) {
            int rep = g.representative(g.groupOf(i));
            rows.add(mf.episode()[i] + "\t" + mf.frameIndex()[i] + "\t" + mf.episode()[rep] + "\t" + mf.frameIndex()[rep]
                    + "\t" + threshold);
        }
        Long same = unchanged(lake, DedupTables.FRAME_GROUPS, rows, List.of("episode_id", "frame_index",
                "representative_episode_id", "representative_frame_index", "threshold"));
        if (same != null) {
            return same;
        }
        return write(tx, alloc, DedupTables.FRAME_GROUPS, DedupTables.FRAME_SCHEMA, members.length, (root, from, to) -> {
            for (int k = from; k < to; k++) {
                int i = members[k];
                int r = k - from;
                int rep = g.representative(g.groupOf(i));
                str(root, "episode_id", r, mf.episode()[i]);
                ((IntVector) root.getVector("frame_index")).setSafe(r, mf.frameIndex()[i]);
                str(root, "representative_episode_id", r, mf.episode()[rep]);
                ((IntVector) root.getVector("representative_frame_index")).setSafe(r, mf.frameIndex()[rep]);
                ((IntVector) root.getVector("hamming")).setSafe(r, Math.round(g.distanceToRepresentative(i)));
                ((IntVector) root.getVector("threshold")).setSafe(r, threshold);
            }
        });
    }

    /**
     * @return the table's version when it already holds exactly these rows (a re-run with the same
     *     inputs and thresholds commits nothing), else null
     */
    private static Long unchanged(Lake lake, String table, java.util.Set<String> rows, List<String> cols) {
        if (!lake.hasTable(table)) {
            return null;
        }
        java.util.Set<String> stored = new java.util.HashSet<>();
        long[] count = {0};
        try (LakeTable t = lake.table(table)) {
            t.scan(ScanRequest.builder().columns(cols).build(), b -> {
                for (int r = 0; r < b.getRowCount(); r++) {
                    StringBuilder k = new StringBuilder();
                    for (int c = 0; c < cols.size(); c++) {
                        if (c > 0) {
                            k.append('\t');
                        }
                        FieldVector v = b.getVector(cols.get(c));
                        k.append(v instanceof VarCharVector ? text(v, r) : String.valueOf(v.getObject(r)));
                    }
                    stored.add(k.toString());
                    count[0]++;
                }
            });
            return count[0] == rows.size() && stored.equals(rows) ? t.version() : null;
        }
    }

    @FunctionalInterface
    private interface Filler {
        void fill(VectorSchemaRoot root, int from, int to);
    }

    /** Adds the overwrite of a table with n rows, 64k per batch (an empty table when n = 0), to {@code tx}. */
    private static Long write(LakeTransaction tx, BufferAllocator alloc, String table, Schema schema, int n,
            Filler filler) {
        int batch = 65_536;
        BatchSource rows = new BatchSource(schema, alloc) {
                    private int next;
                    private boolean emitted;

                    @Override
                    protected boolean fill(VectorSchemaRoot root) {
                        if (next >= n && emitted) {
                            return false;
                        }
                        int to = Math.min(n, next + batch);
                        filler.fill(root, next, to);
                        root.setRowCount(to - next);
                        next = to;
                        emitted = true;
                        return true;
                    }
                };
        tx.overwrite(table, rows);
        return null;
    }

    private static void str(VectorSchemaRoot root, String col, int i, String v) {
        ((VarCharVector) root.getVector(col)).setSafe(i, v.getBytes(StandardCharsets.UTF_8));
    }

    static String text(FieldVector v, int i) {
        return v.isNull(i) ? "" : new String(((VarCharVector) v).get(i), StandardCharsets.UTF_8);
    }
}
