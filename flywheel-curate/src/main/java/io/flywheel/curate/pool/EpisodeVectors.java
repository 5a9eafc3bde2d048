package io.flywheel.curate.pool;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.flywheel.error.NotFoundException;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.ColumnView;
import io.flywheel.lake.EmbeddingModel;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.ImageEnrichment;

/**
 * The episode vectors of a lake that mining and dedup search: one L2-normalised float32[D] per
 * episode, all from one embedding model (the lake's default, {@link io.flywheel.lake.EmbeddingModels#resolve}: the
 * model registered last, unless one is named). Two constructions:
 * <ul>
 *   <li>{@link #read}: the model's episodes column {@code episodes.emb_<key>}, written by {@code flywheel enrich} (the
 *       L2-normalised mean of the master camera's keyframe embeddings); {@code cameras} is empty and {@code column}
 *       names the column, which mining then searches in the lake (with its index);</li>
 *   <li>{@link #fromCameras}: from chosen cameras' per-frame embeddings in the model's {@code frames.emb_<key>}:
 *       per episode, the L2-normalised mean over the chosen cameras of each camera's L2-normalised mean
 *       frame embedding, optionally over the frames of chosen manipulation phases only ({@code frames.phase},
 *       written by enrich). An episode lacking an embedding on any chosen camera (in those phases) gets no
 *       vector.</li>
 * </ul>
 *
 * @param infos the episodes with a vector, in the order of {@code vectors}
 * @param vectors float32[n][D], L2-normalised
 * @param model the embedding model id
 * @param sha256 the model file's SHA-256
 * @param episodesVersion the episodes table version read
 * @param cameras the camera topics the vectors were built from; empty for the model's episodes column
 * @param framesVersion the frames table version read, or -1 when the frames were not read
 * @param withoutVectors ids of the lake's episodes left out for want of embeddings (not enriched, or
 *     no embedding on one of the cameras, in the chosen phases)
 * @param phases the phases whose frames the camera vectors were built from ({@link #PHASES} names); empty: all
 *     frames
 * @param column the episodes column the vectors are, at {@code episodesVersion} ({@link #read}); null when they were
 *     derived (cameras, phases) or built in memory
 */
public record EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256,
                             long episodesVersion, List<String> cameras, long framesVersion,
                             List<String> withoutVectors, List<String> phases, String column) {
    /** Frames read per batch by {@link #fromCameras}: the images column (hot JPEGs included) is streamed. */
    static final long FRAME_BATCH_ROWS = 256;

    /**
     * The values of {@code frames.phase}, in the order of a pick-and-place: the labels of
     * {@code io.flywheel.enrich.motion.Phase} (see {@code MotionLabeler} for how each is derived).
     */
    public static final List<String> PHASES = io.flywheel.lake.TableSchemas.PHASES;

    public EpisodeVectors {
        infos = List.copyOf(infos);
        cameras = List.copyOf(cameras);
        withoutVectors = List.copyOf(withoutVectors);
        phases = List.copyOf(phases);
    }

    /** Vectors over all frames (no phase selection), not a column of the lake. */
    public EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256, long episodesVersion,
                          List<String> cameras, long framesVersion, List<String> withoutVectors) {
        this(infos, vectors, model, sha256, episodesVersion, cameras, framesVersion, withoutVectors, List.of(), null);
    }

    /**
     * Checks a phase selection.
     *
     * @param phases phase names
     * @return the names as given, as an immutable list
     * @throws IllegalArgumentException when a name is not one of {@link #PHASES} (naming it and the valid ones) or a
     *     name repeats
     */
    public static List<String> checkPhases(List<String> phases) {
        for (String p : phases) {
            if (!PHASES.contains(p)) {
                throw new IllegalArgumentException("unknown phase '" + p + "'; the phases are " + String.join(", ", PHASES));
            }
        }
        if (new LinkedHashSet<>(phases).size() != phases.size()) {
            throw new IllegalArgumentException("phases repeat: " + phases);
        }
        return List.copyOf(phases);
    }

    /**
     * Checks a camera selection (before any lake is read).
     *
     * @param cameras camera topics
     * @return the topics as given, as an immutable list
     * @throws IllegalArgumentException when there is none, a topic is blank or a topic repeats
     */
    public static List<String> checkCameras(List<String> cameras) {
        if (cameras.isEmpty()) {
            throw new IllegalArgumentException("no cameras given: name at least one camera topic");
        }
        if (cameras.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("an empty camera topic in " + cameras);
        }
        if (new LinkedHashSet<>(cameras).size() != cameras.size()) {
            throw new IllegalArgumentException("camera topics repeat: " + cameras);
        }
        return List.copyOf(cameras);
    }

    /** Master-camera vectors built in memory (not a column of the lake), with no record of the episodes left out. */
    public EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256, long episodesVersion) {
        this(infos, vectors, model, sha256, episodesVersion, List.of(), -1, List.of());
    }

    /** @return number of episodes with an embedding */
    public int size() {
        return vectors.length;
    }

    /** @return the index of an episode id, or -1 */
    public int indexOf(String episodeId) {
        for (int i = 0; i < infos.size(); i++) {
            if (infos.get(i).episodeId().equals(episodeId)) {
                return i;
            }
        }
        return -1;
    }

    /** {@link #read(Lake, String)} of the lake's default model. */
    public static EpisodeVectors read(Lake lake) {
        return read(lake, null);
    }

    /**
     * Reads every episode with a vector of the model ({@code episodes.emb_<key>}, through the lake's typed vector
     * read).
     *
     * @param model a model id, or null for the lake's default (the model registered last)
     * @throws io.flywheel.error.NotFoundException when the lake has no such model (naming its models) or no model
     * @throws IllegalArgumentException when no episode has a vector of the model (run enrich first)
     */
    public static EpisodeVectors read(Lake lake, String model) {
        EmbeddingModel m = lake.models().resolve(model, lake.location());
        try (LakeTable t = lake.table("episodes")) {
            Map<String, EpisodeInfo> all = Trainsets.episodeInfos(lake, t);
            List<EpisodeInfo> infos = new ArrayList<>();
            List<float[]> vecs = new ArrayList<>();
            t.scanVectors(m.column(), "episode_id", null, (id, v) -> {
                infos.add(all.get(id));
                vecs.add(v);
            });
            if (vecs.isEmpty()) {
                throw new IllegalArgumentException("no episode of " + lake.location() + " has an embedding of model "
                        + m.id() + " yet; run `flywheel enrich " + lake.location() + "` first");
            }
            Set<String> with = new java.util.HashSet<>();
            infos.forEach(e -> with.add(e.episodeId()));
            List<String> without = all.keySet().stream().filter(e -> !with.contains(e)).toList();
            return new EpisodeVectors(infos, vecs.toArray(new float[0][]), m.id(), m.sha256(), t.version(), List.of(), -1,
                    without, List.of(), m.column());
        }
    }

    /**
     * The camera topics of a lake: the topics of the images of every episode's first frame
     * ({@code frames.images[].topic} where {@code frame_index = 0}).
     *
     * @return the topics, sorted
     */
    public static Set<String> cameraTopics(Lake lake) {
        Set<String> out = new TreeSet<>();
        try (LakeTable t = lake.table("frames")) {
            t.scan(ScanRequest.builder().columns("images").filter("frame_index = 0").batchSize(FRAME_BATCH_ROWS).build(), b -> {
                ColumnView images = b.column("images");
                ColumnView topic = images.items().field("topic");
                for (int r = 0; r < b.rowCount(); r++) {
                    for (int i = images.listStart(r); i < images.listEnd(r); i++) {
                        out.add(DedupJob.text(topic, i));
                    }
                }
            });
        }
        return out;
    }

    /**
     * Builds episode vectors from chosen cameras' frame embeddings: for each episode and camera c,
     * {@code m_c = normalise(mean of the frames' embeddings on c)}; the episode's vector is
     * {@code normalise(mean over the chosen cameras of m_c)}. The frames table is streamed in
     * batches of {@value #FRAME_BATCH_ROWS} rows, keeping only running sums per episode and camera
     * (Lance 7.0.0 cannot project struct fields inside the {@code images} list, so the column is
     * read whole, batch by batch). Episodes lacking an embedding on a chosen camera are left out and
     * listed in {@link #withoutVectors}.
     *
     * @param cameras camera topics, at least one, no repeats (e.g. the two wrist cameras)
     * @return the vectors, with {@code cameras} and {@code framesVersion} set
     * @throws IllegalArgumentException when cameras is empty or repeats a topic ({@link #checkCameras}), or no
     *     episode has embeddings on every chosen camera (run enrich first)
     * @throws NotFoundException when a topic is not a camera of the lake (naming it and the lake's camera topics), or
     *     the lake has no embedding model
     */
    public static EpisodeVectors fromCameras(Lake lake, List<String> cameras) {
        return fromCameras(lake, cameras, List.of(), null);
    }

    /** {@link #fromCameras(Lake, List, List, String)} of the lake's default model. */
    public static EpisodeVectors fromCameras(Lake lake, List<String> cameras, List<String> phases) {
        return fromCameras(lake, cameras, phases, null);
    }

    /**
     * As {@link #fromCameras(Lake, List)}, of one model, from the frames whose {@code phase} is one of {@code phases}
     * only (frames without a phase are left out then). The frames are read with the lake's typed reads, batch by batch,
     * and the phase is checked here, not by a Lance scan filter: lance-core 7.0.0 aborts the process on some filtered
     * scans of a list-of-struct column (lance issue 6580, a sliced list's offsets in the late-materialisation take;
     * {@code phase IN ('approach', 'grasp')} hit it on a simulated lake).
     *
     * @param cameras camera topics, at least one, no repeats
     * @param phases phase names ({@link #PHASES}), no repeats; empty: every frame
     * @param model a model id, or null for the lake's default (the model registered last)
     * @return the vectors, with {@code cameras}, {@code phases} and {@code framesVersion} set
     * @throws IllegalArgumentException as {@link #fromCameras(Lake, List)} does, and when a phase is unknown (naming
     *     the valid ones) or repeats; "no episode has frame embeddings" names the phases too
     * @throws NotFoundException when a topic is not a camera of the lake, or the lake has no such model (naming its
     *     models)
     */
    public static EpisodeVectors fromCameras(Lake lake, List<String> cameras, List<String> phases, String model) {
        List<String> ph = checkPhases(phases);
        checkCameras(cameras);
        Set<String> known = cameraTopics(lake);
        for (String c : cameras) {
            if (!known.contains(c)) {
                throw new NotFoundException("unknown camera topic '" + c + "'; the cameras of " + lake.location()
                        + " are " + String.join(", ", known));
            }
        }
        EmbeddingModel m = lake.models().resolve(model, lake.location());
        Map<String, Integer> camIndex = new HashMap<>();
        for (int i = 0; i < cameras.size(); i++) {
            camIndex.put(cameras.get(i), i);
        }
        Map<String, EpisodeInfo> all;
        long episodesVersion;
        try (LakeTable t = lake.table("episodes")) {
            episodesVersion = t.version();
            all = Trainsets.episodeInfos(lake, t);
        }
        // per episode: sums[camera][D] and counts[camera]
        Map<String, double[][]> sums = new HashMap<>();
        Map<String, int[]> counts = new HashMap<>();
        int dim = m.dimension();
        long framesVersion;
        try (LakeTable t = lake.table("frames")) {
            framesVersion = t.version();
            Set<String> wanted = Set.copyOf(ph);
            t.forEachFrame(ScanRequest.builder().batchSize(FRAME_BATCH_ROWS).build(), f -> {
                if (!ph.isEmpty() && (f.phase() == null || !wanted.contains(f.phase()))) {
                    return;
                }
                for (int k = 0; k < f.enrichment().size(); k++) {
                    Integer c = camIndex.get(f.images().get(k).topic());
                    ImageEnrichment e = f.enrichment().get(k);
                    float[] v = c == null || e == null ? null : e.embeddings().get(m.id());
                    if (v == null) {
                        continue;
                    }
                    double[] acc = sums.computeIfAbsent(f.episodeId(), x -> new double[cameras.size()][dim])[c];
                    for (int j = 0; j < dim; j++) {
                        acc[j] += v[j];
                    }
                    counts.computeIfAbsent(f.episodeId(), x -> new int[cameras.size()])[c]++;
                }
            });
        }
        List<EpisodeInfo> infos = new ArrayList<>();
        List<float[]> vecs = new ArrayList<>();
        List<String> without = new ArrayList<>();
        for (Map.Entry<String, EpisodeInfo> e : all.entrySet()) {
            String ep = e.getKey();
            int[] n = counts.get(ep);
            boolean complete = n != null;
            for (int c = 0; complete && c < n.length; c++) {
                complete = n[c] > 0;
            }
            if (!complete) {
                without.add(ep);
                continue;
            }
            infos.add(e.getValue());
            vecs.add(cameraMean(sums.get(ep), n));
        }
        if (vecs.isEmpty()) {
            throw new IllegalArgumentException("no episode of " + lake.location() + " has frame embeddings of model "
                    + m.id() + " on every one of " + cameras + (ph.isEmpty() ? "" : " in phases " + String.join(", ", ph)
                    + " (frames.phase, written by enrich from the gripper value)") + "; run `flywheel enrich "
                    + lake.location() + "` with a model first");
        }
        return new EpisodeVectors(infos, vecs.toArray(new float[0][]), m.id(), m.sha256(), episodesVersion, cameras,
                framesVersion, without, ph, null);
    }

    /** normalise(mean over cameras c of normalise(sums[c] / counts[c])); the division by counts cancels in normalise. */
    private static float[] cameraMean(double[][] sums, int[] counts) {
        int d = sums[0].length;
        double[] acc = new double[d];
        for (double[] s : sums) {
            double norm = 0;
            for (double v : s) {
                norm += v * v;
            }
            norm = Math.sqrt(norm);
            if (norm > 0) {
                for (int j = 0; j < d; j++) {
                    acc[j] += s[j] / norm;
                }
            }
        }
        double norm = 0;
        for (double v : acc) {
            norm += v * v;
        }
        norm = Math.sqrt(norm);
        float[] out = new float[d];
        for (int j = 0; j < d; j++) {
            out[j] = norm > 0 ? (float) (acc[j] / norm) : 0f;
        }
        return out;
    }
}
