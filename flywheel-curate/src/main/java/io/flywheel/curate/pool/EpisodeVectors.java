package io.flywheel.curate.pool;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;

import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;

/**
 * The episode embeddings of a lake (written by {@code flywheel enrich}): one L2-normalised
 * float32[D] per enriched episode, all from one model.
 *
 * @param infos the episodes, in the order of {@code vectors}
 * @param vectors float32[n][D], L2-normalised
 * @param model the embedding model id
 * @param sha256 the model file's SHA-256
 * @param episodesVersion the episodes table version read
 */
public record EpisodeVectors(List<EpisodeInfo> infos, float[][] vectors, String model, String sha256,
                             long episodesVersion) {
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
            return new EpisodeVectors(List.copyOf(infos), vecs.toArray(new float[0][]), model[0], model[1], t.version());
        }
    }
}
