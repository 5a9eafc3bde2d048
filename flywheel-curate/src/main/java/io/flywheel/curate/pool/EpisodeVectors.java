package io.flywheel.curate.pool;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

import io.flywheel.error.NotFoundException;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * The episode vectors of a lake that mining and dedup search: one L2-normalised float32[D] per
 * episode, all from one embedding model. Two constructions:
 * <ul>
 *   <li>{@link #read}: {@code episodes.embedding}, written by {@code flywheel enrich} (the
 *       L2-normalised mean of the master camera's keyframe embeddings); {@code cameras} is empty;</li>
 *   <li>{@link #fromCameras}: from chosen cameras' per-frame embeddings in {@code frames.images[].embedding}:
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
 * @param cameras the camera topics the vectors were built from; empty for {@code episodes.embedding}
 * @param framesVersion the frames table version read, or -1 when the frames were not read
 * @param withoutVectors ids of the lake's episodes left out for want of embeddings (not enriched, or
 *     no embedding on one of the cameras, in the chosen phases)
 * @param phases the phases whose frames the camera vectors were built from ({@link #PHASES} names); empty: all
 *     frames
 */
public record EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256,
                             long episodesVersion, List<String> cameras, long framesVersion,
                             List<String> withoutVectors, List<String> phases) {
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

    /** Vectors over all frames (no phase selection). */
    public EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256, long episodesVersion,
                          List<String> cameras, long framesVersion, List<String> withoutVectors) {
        this(infos, vectors, model, sha256, episodesVersion, cameras, framesVersion, withoutVectors, List.of());
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

    /** Vectors from {@code episodes.embedding}, with no record of the episodes left out. */
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

    /**
     * Reads every episode with an embedding.
     *
     * @throws IllegalArgumentException when no episode has an embedding (run enrich first), or the
     *     episodes were embedded by different models or with different dimensions
     */
    public static EpisodeVectors read(Lake lake) {
        try (LakeTable t = lake.table("episodes")) {
            if (t.schema().getFields().stream().noneMatch(f -> f.getName().equals("embedding"))) {
                throw new IllegalArgumentException("the lake at " + lake.location()
                        + " has no episode embeddings column; it predates enrichment");
            }
            Map<String, EpisodeInfo> all = Trainsets.episodeInfos(lake, t);
            List<EpisodeInfo> infos = new ArrayList<>();
            List<float[]> vecs = new ArrayList<>();
            String[] model = {null, null};
            t.scan(ScanRequest.builder().columns("episode_id", "embedding", "embedding_model", "embedding_sha256")
                    .filter("embedding IS NOT NULL").build(), b -> {
                VarCharVector id = (VarCharVector) b.getVector("episode_id");
                ListVector emb = (ListVector) b.getVector("embedding");
                Float4Vector f = (Float4Vector) emb.getDataVector();
                for (int r = 0; r < b.getRowCount(); r++) {
                    if (emb.isNull(r)) {
                        continue;
                    }
                    String ep = new String(id.get(r), StandardCharsets.UTF_8);
                    String m = DedupJob.text(b.getVector("embedding_model"), r);
                    if (model[0] == null) {
                        model[0] = m;
                        model[1] = DedupJob.text(b.getVector("embedding_sha256"), r);
                    } else if (!model[0].equals(m)) {
                        throw new IllegalArgumentException("episodes of " + lake.location() + " were embedded by two models ("
                                + model[0] + " and " + m + " on " + ep + "); re-run enrich with one model");
                    }
                    int from = emb.getElementStartIndex(r);
                    int to = emb.getElementEndIndex(r);
                    float[] v = new float[to - from];
                    for (int i = from; i < to; i++) {
                        v[i - from] = f.get(i);
                    }
                    if (!vecs.isEmpty() && v.length != vecs.get(0).length) {
                        throw new IllegalArgumentException("episode " + ep + " has an embedding of dimension " + v.length
                                + ", others have " + vecs.get(0).length);
                    }
                    infos.add(all.get(ep));
                    vecs.add(v);
                }
            });
            if (vecs.isEmpty()) {
                throw new IllegalArgumentException("no episode of " + lake.location()
                        + " has an embedding yet; run `flywheel enrich " + lake.location() + "` first");
            }
            Set<String> with = new java.util.HashSet<>();
            infos.forEach(e -> with.add(e.episodeId()));
            List<String> without = all.keySet().stream().filter(e -> !with.contains(e)).toList();
            return new EpisodeVectors(infos, vecs.toArray(new float[0][]), model[0], model[1], t.version(), List.of(), -1,
                    without);
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
                ListVector images = (ListVector) b.getVector("images");
                FieldVector topic = ((StructVector) images.getDataVector()).getChild("topic");
                for (int r = 0; r < b.getRowCount(); r++) {
                    for (int i = images.getElementStartIndex(r); i < images.getElementEndIndex(r); i++) {
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
     * @throws IllegalArgumentException when cameras is empty or repeats a topic ({@link #checkCameras}), no episode
     *     has embeddings on every chosen camera (run enrich first), the embeddings differ in dimension (naming the
     *     episode and topic), or the episodes were embedded by different models
     * @throws NotFoundException when a topic is not a camera of the lake (naming it and the lake's camera topics)
     */
    public static EpisodeVectors fromCameras(Lake lake, List<String> cameras) {
        return fromCameras(lake, cameras, List.of());
    }

    /**
     * As {@link #fromCameras(Lake, List)}, from the frames whose {@code phase} is one of {@code phases} only (frames
     * without a phase are left out then). The phase is checked here, not by a Lance scan filter: lance-core 7.0.0
     * aborts the process on some filtered scans of a list-of-struct column (lance issue 6580, a sliced list's
     * offsets in the late-materialisation take; {@code phase IN ('approach', 'grasp')} hit it on a simulated lake).
     *
     * @param cameras camera topics, at least one, no repeats
     * @param phases phase names ({@link #PHASES}), no repeats; empty: every frame
     * @return the vectors, with {@code cameras}, {@code phases} and {@code framesVersion} set
     * @throws IllegalArgumentException as {@link #fromCameras(Lake, List)} does, and when a phase is unknown (naming
     *     the valid ones) or repeats; "no episode has frame embeddings" names the phases too
     * @throws NotFoundException when a topic is not a camera of the lake
     */
    public static EpisodeVectors fromCameras(Lake lake, List<String> cameras, List<String> phases) {
        List<String> ph = checkPhases(phases);
        checkCameras(cameras);
        Set<String> known = cameraTopics(lake);
        for (String c : cameras) {
            if (!known.contains(c)) {
                throw new NotFoundException("unknown camera topic '" + c + "'; the cameras of " + lake.location()
                        + " are " + String.join(", ", known));
            }
        }
        Map<String, Integer> camIndex = new HashMap<>();
        for (int i = 0; i < cameras.size(); i++) {
            camIndex.put(cameras.get(i), i);
        }
        Map<String, EpisodeInfo> all;
        Map<String, String[]> models = new HashMap<>();
        long episodesVersion;
        try (LakeTable t = lake.table("episodes")) {
            episodesVersion = t.version();
            all = Trainsets.episodeInfos(lake, t);
            if (t.schema().getFields().stream().anyMatch(f -> f.getName().equals("embedding_model"))) {
                t.scan(ScanRequest.builder().columns("episode_id", "embedding_model", "embedding_sha256")
                        .filter("embedding_model IS NOT NULL").build(), b -> {
                    for (int r = 0; r < b.getRowCount(); r++) {
                        models.put(DedupJob.text(b.getVector("episode_id"), r), new String[] {
                            DedupJob.text(b.getVector("embedding_model"), r), DedupJob.text(b.getVector("embedding_sha256"), r)});
                    }
                });
            }
        }
        // per episode: sums[camera][D] and counts[camera]
        Map<String, double[][]> sums = new HashMap<>();
        Map<String, int[]> counts = new HashMap<>();
        int[] dim = {-1};
        long framesVersion;
        try (LakeTable t = lake.table("frames")) {
            framesVersion = t.version();
            Set<String> wanted = Set.copyOf(ph);
            ScanRequest.Builder scan = ScanRequest.builder().batchSize(FRAME_BATCH_ROWS)
                    .columns(ph.isEmpty() ? new String[] {"episode_id", "images"} : new String[] {"episode_id", "phase", "images"});
            t.scan(scan.build(), b -> {
                FieldVector phase = ph.isEmpty() ? null : (FieldVector) b.getVector("phase");
                ListVector images = (ListVector) b.getVector("images");
                StructVector s = (StructVector) images.getDataVector();
                FieldVector topic = s.getChild("topic");
                ListVector emb = (ListVector) s.getChild("embedding");
                if (emb == null) {
                    return;
                }
                Float4Vector f = (Float4Vector) emb.getDataVector();
                for (int r = 0; r < b.getRowCount(); r++) {
                    if (phase != null && (phase.isNull(r) || !wanted.contains(DedupJob.text(phase, r)))) {
                        continue;
                    }
                    String ep = null;
                    for (int i = images.getElementStartIndex(r); i < images.getElementEndIndex(r); i++) {
                        Integer c = camIndex.get(DedupJob.text(topic, i));
                        if (c == null || emb.isNull(i)) {
                            continue;
                        }
                        if (ep == null) {
                            ep = DedupJob.text(b.getVector("episode_id"), r);
                        }
                        int from = emb.getElementStartIndex(i);
                        int len = emb.getElementEndIndex(i) - from;
                        if (dim[0] < 0) {
                            dim[0] = len;
                        } else if (len != dim[0]) {
                            throw new IllegalArgumentException("episode " + ep + " has a " + cameras.get(c)
                                    + " frame embedding of dimension " + len + ", others have " + dim[0]);
                        }
                        double[] acc = sums.computeIfAbsent(ep, k -> new double[cameras.size()][len])[c];
                        for (int j = 0; j < len; j++) {
                            acc[j] += f.get(from + j);
                        }
                        counts.computeIfAbsent(ep, k -> new int[cameras.size()])[c]++;
                    }
                }
            });
        }
        List<EpisodeInfo> infos = new ArrayList<>();
        List<float[]> vecs = new ArrayList<>();
        List<String> without = new ArrayList<>();
        String[] model = null;
        String modelEpisode = null;
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
            String[] m = models.getOrDefault(ep, new String[] {"", ""});
            if (model == null) {
                model = m;
                modelEpisode = ep;
            } else if (!model[0].equals(m[0])) {
                throw new IllegalArgumentException("episodes of " + lake.location() + " were embedded by two models ("
                        + model[0] + " on " + modelEpisode + " and " + m[0] + " on " + ep + "); re-run enrich with one model");
            }
            infos.add(e.getValue());
            vecs.add(cameraMean(sums.get(ep), n));
        }
        if (vecs.isEmpty()) {
            throw new IllegalArgumentException("no episode of " + lake.location() + " has frame embeddings on every one of "
                    + cameras + (ph.isEmpty() ? "" : " in phases " + String.join(", ", ph) + " (frames.phase, written by"
                    + " enrich from the gripper value)") + "; run `flywheel enrich " + lake.location() + "` with a model first");
        }
        return new EpisodeVectors(infos, vecs.toArray(new float[0][]), model[0], model[1], episodesVersion, cameras,
                framesVersion, without, ph);
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
