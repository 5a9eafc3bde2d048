package io.flywheel.curate.pool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.flywheel.curate.KnnQuery;
import io.flywheel.curate.VectorIndexOptions;
import io.flywheel.curate.VectorSearch;
import io.flywheel.curate.VectorTable;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LocalFiles;

/**
 * Failure-driven mining: for each query episode embedding, the k nearest episodes of the pool by
 * cosine distance, through a Lance vector index over the pool.
 *
 * <p>The pool is written to the lake table {@code mining_pool} on every run (id, scalar columns
 * for the prefilter, embedding as FixedSizeList&lt;float32&gt;[D]) and indexed by
 * {@link VectorSearch#choose}: a flat, exact scan below {@link VectorIndexOptions#DEFAULT_FLAT_BELOW_ROWS}
 * rows, else IVF-PQ (sqrt(n) partitions) searched with nprobes and a refine factor that re-ranks
 * the candidates by exact distance. The prefilter, applied before the search, keeps episodes whose
 * quality status is not {@code fail}, whose outcome is not a failure, that are not a near-duplicate of
 * another episode (the latest dedup), optionally of one robot or task; the queries themselves are
 * never results.
 */
public final class MiningJob {
    private MiningJob() {}

    /** A query: an episode of the lake, or an embedding from outside it (a new recording). */
    public record Query(String id, float[] vector, String source) {
        public Query {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(vector, "vector");
        }
    }

    /**
     * @param k neighbours per query, &ge; 1
     * @param robot only episodes of this robot id, or null
     * @param task only episodes with this task text, or null
     * @param nprobes IVF partitions searched
     * @param refineFactor candidates re-ranked exactly, as a multiple of k
     */
    public record Options(int k, String robot, String task, int nprobes, int refineFactor) {
        public Options {
            if (k < 1) {
                throw new IllegalArgumentException("k must be >= 1, got " + k);
            }
        }

        /** @return k neighbours, no robot or task restriction, nprobes 20, refine factor 10 */
        public static Options k(int k) {
            return new Options(k, null, null, 20, 10);
        }
    }

    /**
     * @param queries the queries run
     * @param neighbours every query's neighbours, by query then rank
     * @param index the index the pool was searched with
     * @param poolSize episodes in the mining pool table (before the prefilter)
     * @param lineage what produced it: queries, model, k, index, filter, source versions
     */
    public record Result(List<Query> queries, List<MinedEpisode> neighbours, VectorSearch.IndexChoice index,
                         long poolSize, Map<String, Object> lineage) {}

    /** @return queries for every episode of the lake whose outcome is a failure (with an embedding) */
    public static List<Query> failures(EpisodeVectors ev) {
        List<Query> q = new ArrayList<>();
        for (int i = 0; i < ev.size(); i++) {
            if (ev.infos().get(i).failed()) {
                q.add(new Query(ev.infos().get(i).episodeId(), ev.vectors()[i], "outcome=failure"));
            }
        }
        return q;
    }

    /**
     * @return a query for an episode of the lake
     * @throws IllegalArgumentException when the episode has no embedding or does not exist
     */
    public static Query episode(EpisodeVectors ev, String episodeId) {
        int i = ev.indexOf(episodeId);
        if (i < 0) {
            throw new IllegalArgumentException("episode '" + episodeId + "' has no embedding in the lake (unknown id,"
                    + " or not enriched yet)");
        }
        return new Query(episodeId, ev.vectors()[i], "episode");
    }

    /**
     * Runs the queries.
     *
     * @throws IllegalArgumentException when there are no queries or a query's dimension differs from the pool's
     */
    public static Result run(Lake lake, EpisodeVectors ev, List<Query> queries, Options o) {
        if (queries.isEmpty()) {
            throw new IllegalArgumentException("no queries: give failure episodes, episode ids or recordings to mine for");
        }
        int dim = ev.vectors()[0].length;
        for (Query q : queries) {
            if (q.vector().length != dim) {
                throw new IllegalArgumentException("query " + q.id() + " has an embedding of dimension " + q.vector().length
                        + "; the lake's episodes have " + dim + " (model " + ev.model() + ")");
            }
        }
        Set<String> queryIds = new HashSet<>();
        queries.forEach(q -> queryIds.add(q.id()));
        String uri = poolUri(lake);
        long rows = writePool(uri, ev, queryIds);
        List<MinedEpisode> out = new ArrayList<>();
        StringBuilder filter = new StringBuilder("quality_status != 'fail' AND failed = 'false' AND duplicate = 'false'");
        if (o.robot() != null) {
            filter.append(" AND robot_id = ").append(io.flywheel.lake.Sql.quote(o.robot()));
        }
        if (o.task() != null) {
            filter.append(" AND task = ").append(io.flywheel.lake.Sql.quote(o.task()));
        }
        VectorSearch.IndexChoice choice;
        try (VectorSearch vs = VectorSearch.open(uri)) {
            choice = vs.buildIndex(VectorIndexOptions.builder().replace(true).build());
            for (Query q : queries) {
                List<VectorSearch.Hit> hits = vs.knn(KnnQuery.builder(q.vector()).k(o.k()).filter(filter.toString())
                        .nprobes(o.nprobes()).refineFactor(o.refineFactor()).exact(choice.kind() == VectorSearch.Kind.FLAT)
                        .build());
                int rank = 1;
                for (VectorSearch.Hit h : hits) {
                    out.add(new MinedEpisode(h.id(), q.id(), h.distance(), rank++));
                }
            }
        }
        Map<String, Object> lineage = new LinkedHashMap<>();
        lineage.put("query_episode_ids", queries.stream().map(Query::id).toList());
        lineage.put("query_sources", queries.stream().map(Query::source).distinct().toList());
        lineage.put("embedding_model", ev.model());
        lineage.put("embedding_sha256", ev.sha256());
        lineage.put("k", o.k());
        lineage.put("prefilter", filter.toString());
        lineage.put("index", choice.kind().name() + " (" + choice.reason() + ")");
        lineage.put("nprobes", o.nprobes());
        lineage.put("refine_factor", o.refineFactor());
        Map<String, Object> sources = new LinkedHashMap<>();
        sources.put("episodes", ev.episodesVersion());
        DedupTables.latestVersion(lake).ifPresent(v -> sources.put("episode_groups", v));
        lineage.put("mining_source_versions", sources);
        DedupTables.latestThreshold(lake).ifPresent(t -> lineage.put("dedup_episode_threshold", t));
        return new Result(List.copyOf(queries), List.copyOf(out), choice, rows, lineage);
    }

    private static String poolUri(Lake lake) {
        if (lake.location().matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            throw new IllegalArgumentException("mining needs a local lake for its pool table for now; " + lake.location()
                    + " is remote");
        }
        return Path.of(lake.location(), "mining_pool.lance").toString();
    }

    /** Rewrites the pool table: every episode with an embedding except the queries. */
    private static long writePool(String uri, EpisodeVectors ev, Set<String> exclude) {
        try {
            LocalFiles.deleteTree(Path.of(uri));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the old mining pool " + uri + ": " + e.getMessage(), e);
        }
        List<Integer> rows = new ArrayList<>();
        for (int i = 0; i < ev.size(); i++) {
            if (!exclude.contains(ev.infos().get(i).episodeId())) {
                rows.add(i);
            }
        }
        int n = rows.size();
        int dim = ev.vectors()[0].length;
        String[] ids = new String[n];
        String[] qc = new String[n];
        String[] failed = new String[n];
        String[] dup = new String[n];
        String[] robot = new String[n];
        String[] task = new String[n];
        float[] flat = new float[n * dim];
        for (int j = 0; j < n; j++) {
            EpisodeInfo e = ev.infos().get(rows.get(j));
            ids[j] = e.episodeId();
            qc[j] = e.qualityStatus();
            failed[j] = Boolean.toString(e.failed());
            dup[j] = Boolean.toString(e.duplicate());
            robot[j] = e.robotId();
            task[j] = e.task();
            System.arraycopy(ev.vectors()[rows.get(j)], 0, flat, j * dim, dim);
        }
        Map<String, String[]> scalars = new LinkedHashMap<>();
        scalars.put("quality_status", qc);
        scalars.put("failed", failed);
        scalars.put("duplicate", dup);
        scalars.put("robot_id", robot);
        scalars.put("task", task);
        return VectorTable.write(uri, ids, scalars, flat, dim);
    }
}
