package io.flywheel.curate.pool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.flywheel.error.NotFoundException;
import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.PcaWhitening;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.lake.IndexChoice;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.LocalFiles;
import io.flywheel.lake.ScalarIndex;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.TableSchemas;
import io.flywheel.lake.VectorHit;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.lake.VectorPool;
import io.flywheel.lake.VectorQuery;

/**
 * Failure-driven mining: for each query episode embedding, the k nearest episodes of the pool by
 * cosine distance, through a Lance vector index.
 *
 * <p>Where the vectors are stored, the lake's own column is searched: the model's {@code episodes.emb_<key>}
 * ({@link EpisodeVectors#read}) at the version the vectors were read, through its IVF-PQ index (which enrich builds
 * from {@link VectorIndexOptions#DEFAULT_FLAT_BELOW_ROWS} episode vectors and refreshes after appends) or flat below
 * that, with the lake's storage options (local or S3). Derived vectors (chosen cameras and phases, or whitened) are
 * written to a scratch pool ({@link VectorPool}: id, scalar columns for the prefilter, embedding as
 * fixed_size_list&lt;float32, D&gt;) in the run's scratch folder and indexed by {@link IndexChoice#choose}: a flat,
 * exact scan below {@link VectorIndexOptions#DEFAULT_FLAT_BELOW_ROWS} rows, else IVF-PQ (sqrt(n) partitions), with a
 * bitmap index on each prefilter column ({@link #POOL_SCALAR_INDEXES}). Either index is searched with nprobes and a
 * refine factor that re-ranks the candidates by exact distance; a prefilter that keeps fewer rows than the flat
 * threshold is searched exactly. The prefilter, applied before the search, keeps episodes whose
 * quality status is not {@code fail}, whose outcome is not a failure, that are not a near-duplicate of
 * another episode (the latest dedup), optionally of one robot or task; the queries themselves are
 * never results.
 *
 * <p>Episode vectors come from {@code episodes.embedding} (the master camera) or, with
 * {@link Options#cameras()}, from chosen cameras' frame embeddings ({@link EpisodeVectors#fromCameras}), with
 * {@link Options#phases()} from the frames of chosen manipulation phases only (e.g. approach, grasp, lift: the
 * moments where a grasp fails, not the carry and retreat every episode shares).
 * With {@link Options#whiten()}, pool vectors and queries are PCA-whitened ({@link PcaWhitening}, Jégou and
 * Chum, ECCV 2012) with a transform fitted on the pool after the prefilter, and the index searches the
 * whitened vectors: a camera such as the head camera sees mostly the scene, and whitening shrinks those
 * dominant directions so that rarer ones (the object) decide the neighbours. The settings go into the
 * result's lineage ({@code cameras}, {@code phases}, {@code whiten}, {@code whiten_epsilon}).
 *
 * <p>With {@link Options#joint()}, the queries are searched as one: the normalised mean of their (whitened)
 * vectors finds k &times; queries neighbours (the joint average query of Arandjelovi&#263; and Zisserman, "Multiple
 * queries for large scale specific object retrieval", BMVC 2012). Failures on one kind of object seen in different
 * scenes share the object and little else, so their mean keeps the object's directions and averages the scenes
 * out; k neighbours of each failure alone are mostly its own scene's episodes.
 */
public final class MiningJob {
    /**
     * The scalar indexes the pool table gets, one bitmap index per prefilter column (all low-cardinality
     * strings: quality status, failed, duplicate, robot id, task), so that the prefilter is answered from
     * the index rather than evaluated over every row on every query (BENCHMARKS.md, "Vector search").
     */
    public static final List<ScalarIndex> POOL_SCALAR_INDEXES = List.of(ScalarIndex.bitmap("quality_status"),
            ScalarIndex.bitmap("failed"), ScalarIndex.bitmap("duplicate"), ScalarIndex.bitmap("robot_id"),
            ScalarIndex.bitmap("task"));

    private MiningJob() {}

    /** A query: an episode of the lake, or an embedding from outside it (a new recording). */
    public record Query(String id, float[] vector, String source) {
        public Query {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(vector, "vector");
        }
    }

    /**
     * Mining options; build with {@link #builder(int)} (or {@link #k(int)} for the defaults).
     *
     * @param k neighbours per query, &ge; 1
     * @param robot only episodes of this robot id, or null
     * @param task only episodes with this task text, or null
     * @param nprobes IVF partitions searched
     * @param refineFactor candidates re-ranked exactly, as a multiple of k
     * @param cameras camera topics the episode vectors are built from ({@link EpisodeVectors#fromCameras});
     *     empty: {@code episodes.embedding} (the master camera)
     * @param whiten whether to PCA-whiten the vectors ({@link PcaWhitening}, fitted on the pool after the
     *     prefilter) before the search; distances are then cosine distances in the whitened space
     * @param whitenEpsilon the whitening regulariser epsilon, &gt; 0 ({@link PcaWhitening#DEFAULT_EPSILON})
     * @param phases the phases ({@link EpisodeVectors#PHASES}) whose frames the camera vectors are built from; empty:
     *     every frame; needs {@code cameras} ({@code episodes.embedding} has no phases)
     * @param joint whether the queries are searched as one joint query (their normalised mean) for k &times; queries
     *     neighbours, each listed under the query it is nearest to; else k neighbours per query
     * @param model the embedding model whose vectors are mined, or null for the lake's default (the model registered
     *     last)
     */
    public record Options(int k, String robot, String task, int nprobes, int refineFactor, List<String> cameras,
                          boolean whiten, double whitenEpsilon, List<String> phases, boolean joint, String model) {
        public Options {
            if (k < 1) {
                throw new IllegalArgumentException("k must be >= 1, got " + k);
            }
            cameras = cameras.isEmpty() ? List.of() : EpisodeVectors.checkCameras(cameras);
            if (!(whitenEpsilon > 0) || Double.isInfinite(whitenEpsilon)) {
                throw new IllegalArgumentException("whitening epsilon must be a positive number, got " + whitenEpsilon);
            }
            phases = EpisodeVectors.checkPhases(phases);
            if (!phases.isEmpty() && cameras.isEmpty()) {
                throw new IllegalArgumentException("phases " + String.join(",", phases) + " need cameras: the vectors of"
                        + " chosen phases are built from frame embeddings of chosen cameras (episodes.embedding has no phases)");
            }
        }

        /** @return k neighbours, no robot or task restriction, nprobes 20, refine factor 10, master camera, no whitening */
        public static Options k(int k) {
            return builder(k).build();
        }

        /** @return a builder starting from {@link #k(int)} */
        public static Builder builder(int k) {
            return new Builder(k);
        }

        /** Builder of {@link Options}. */
        public static final class Builder {
            private final int k;
            private String robot;
            private String task;
            private int nprobes = 20;
            private int refineFactor = 10;
            private List<String> cameras = List.of();
            private boolean whiten;
            private double whitenEpsilon = PcaWhitening.DEFAULT_EPSILON;
            private List<String> phases = List.of();
            private boolean joint;
            private String model;

            private Builder(int k) {
                this.k = k;
            }

            /** @param robot only episodes of this robot id, or null */
            public Builder robot(String robot) {
                this.robot = robot;
                return this;
            }

            /** @param task only episodes with this task text, or null */
            public Builder task(String task) {
                this.task = task;
                return this;
            }

            /** @param nprobes IVF partitions searched */
            public Builder nprobes(int nprobes) {
                this.nprobes = nprobes;
                return this;
            }

            /** @param refineFactor candidates re-ranked exactly, as a multiple of k */
            public Builder refineFactor(int refineFactor) {
                this.refineFactor = refineFactor;
                return this;
            }

            /** @param cameras camera topics for the episode vectors; empty for {@code episodes.embedding} */
            public Builder cameras(List<String> cameras) {
                this.cameras = cameras;
                return this;
            }

            /** @param whiten whether to PCA-whiten pool and queries before the search */
            public Builder whiten(boolean whiten) {
                this.whiten = whiten;
                return this;
            }

            /** @param epsilon the whitening regulariser, &gt; 0 */
            public Builder whitenEpsilon(double epsilon) {
                this.whitenEpsilon = epsilon;
                return this;
            }

            /**
             * @param phases phase names ({@link EpisodeVectors#PHASES}) whose frames the camera vectors are built
             *     from; empty for every frame
             */
            public Builder phases(List<String> phases) {
                this.phases = phases;
                return this;
            }

            /**
             * @param joint whether to search the queries as one joint query (their normalised mean) for k &times;
             *     queries neighbours instead of k per query
             */
            public Builder joint(boolean joint) {
                this.joint = joint;
                return this;
            }

            /** @param model the embedding model id to mine with, or null for the lake's default */
            public Builder model(String model) {
                this.model = model;
                return this;
            }

            /**
             * @throws IllegalArgumentException when k &lt; 1, epsilon is not positive, a phase is unknown (naming the
             *     valid ones) or repeats, or phases are given without cameras
             */
            public Options build() {
                return new Options(k, robot, task, nprobes, refineFactor, cameras, whiten, whitenEpsilon, phases, joint,
                        model);
            }
        }
    }

    /**
     * @param queries the queries run
     * @param neighbours every query's neighbours, by query then rank; distances are cosine distances,
     *     in the whitened space when {@code whitening} is not null; with a joint query, the k &times; queries episodes
     *     nearest to the joint query, each under the query it is nearest to, ranked by the distance to that query
     * @param index the index the pool was searched with (the lake column's, or the scratch pool's)
     * @param poolSize episodes with a vector that are not queries (before the prefilter)
     * @param poolPassing pool episodes that pass the prefilter: the ones the search can return
     * @param lineage what produced it: queries, model, vectors (cameras, whitening), k, index, filter, source versions
     * @param episodesWithVectors episodes of the lake with a vector (queries included)
     * @param episodesWithoutVectors episodes of the lake left out for want of embeddings
     * @param whitening the transform the pool and queries went through, or null without whitening
     */
    public record Result(List<Query> queries, List<MinedEpisode> neighbours, IndexChoice index,
                         long poolSize, long poolPassing, Map<String, Object> lineage, int episodesWithVectors, int episodesWithoutVectors,
                         PcaWhitening whitening) {}

    /**
     * The episode vectors the options ask for.
     *
     * @return {@link EpisodeVectors#read} when {@code o.cameras()} is empty, else {@link EpisodeVectors#fromCameras}
     *     with {@code o.phases()}, of {@code o.model()}
     * @throws IllegalArgumentException as those do
     */
    public static EpisodeVectors vectors(Lake lake, Options o) {
        return o.cameras().isEmpty() ? EpisodeVectors.read(lake, o.model())
                : EpisodeVectors.fromCameras(lake, o.cameras(), o.phases(), o.model());
    }

    /**
     * @return queries for every episode of the lake whose effective outcome is a failure (with an embedding): the
     *     stream's label when the episode has one ({@code stream_outcome}), else the recording's
     */
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
     * @throws NotFoundException when the episode has no vector (no embedding, or none on a chosen camera) or does not
     *     exist
     */
    public static Query episode(EpisodeVectors ev, String episodeId) {
        int i = ev.indexOf(episodeId);
        if (i < 0) {
            throw new NotFoundException("episode '" + episodeId + "' has no " + (ev.cameras().isEmpty() ? "embedding"
                    : "frame embeddings on every one of " + ev.cameras()) + " in the lake (unknown id, or not enriched yet)");
        }
        return new Query(episodeId, ev.vectors()[i], "episode");
    }

    /**
     * Runs the queries: on the lake's column when {@code ev} was read from one ({@link EpisodeVectors#column()}) and
     * nothing is whitened, else on a scratch pool of the vectors. With {@code o.whiten()}, a {@link PcaWhitening} is
     * fitted on the pool vectors that pass the prefilter, and every pool vector and query goes through it before the
     * pool is written and searched.
     *
     * @param ev the episode vectors, built as {@code o} says ({@link #vectors})
     * @throws IllegalArgumentException when there are no queries, a query's dimension differs from the pool's,
     *     {@code ev} was built from other cameras or phases than {@code o.cameras()} and {@code o.phases()}, or
     *     whitening finds fewer than 2
     *     pool vectors after the prefilter
     */
    public static Result run(Lake lake, EpisodeVectors ev, List<Query> queries, Options o) {
        if (queries.isEmpty()) {
            throw new IllegalArgumentException("no queries: give failure episodes, episode ids or recordings to mine for");
        }
        if (!ev.cameras().equals(o.cameras())) {
            throw new IllegalArgumentException("the episode vectors were built from " + describe(ev.cameras())
                    + " but the mining options ask for " + describe(o.cameras()) + "; the two spaces cannot be mixed");
        }
        if (!ev.phases().equals(o.phases())) {
            throw new IllegalArgumentException("the episode vectors were built from " + describePhases(ev.phases())
                    + " but the mining options ask for " + describePhases(o.phases()) + "; the two spaces cannot be mixed");
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
        List<Integer> poolRows = new ArrayList<>();
        for (int i = 0; i < ev.size(); i++) {
            if (!queryIds.contains(ev.infos().get(i).episodeId())) {
                poolRows.add(i);
            }
        }
        StringBuilder filter = new StringBuilder("quality_status != 'fail' AND failed = 'false' AND duplicate = 'false'");
        if (o.robot() != null) {
            filter.append(" AND robot_id = ").append(io.flywheel.lake.Sql.quote(o.robot()));
        }
        if (o.task() != null) {
            filter.append(" AND task = ").append(io.flywheel.lake.Sql.quote(o.task()));
        }
        PcaWhitening whitening = null;
        float[][] poolVectors = new float[poolRows.size()][];
        List<float[]> passingVectors = new ArrayList<>(); // the rows the search can return
        for (int j = 0; j < poolVectors.length; j++) {
            poolVectors[j] = ev.vectors()[poolRows.get(j)];
            if (passesPrefilter(ev.infos().get(poolRows.get(j)), o)) {
                passingVectors.add(poolVectors[j]);
            }
        }
        long passing = passingVectors.size();
        List<Query> searched = queries;
        if (o.whiten()) {
            List<float[]> fit = passingVectors;
            if (fit.size() < 2) {
                throw new IllegalArgumentException("whitening needs at least 2 pool episodes with vectors after the"
                        + " prefilter (" + filter + "), got " + fit.size());
            }
            whitening = PcaWhitening.fit(fit.toArray(new float[0][]), o.whitenEpsilon());
            poolVectors = whitening.apply(poolVectors);
            List<Query> w = new ArrayList<>();
            for (Query q : queries) {
                w.add(new Query(q.id(), whitening.apply(q.vector()), q.source()));
            }
            searched = w;
        }
        Map<String, float[]> byId = new HashMap<>();
        for (int j = 0; j < poolRows.size(); j++) {
            byId.put(ev.infos().get(poolRows.get(j)).episodeId(), poolVectors[j]);
        }
        long rows = poolRows.size();
        boolean inLake = ev.column() != null && !o.whiten();
        List<MinedEpisode> out;
        IndexChoice choice;
        String searchNote;
        String searchedTable;
        String prefilter;
        List<String> scalarIndexes = List.of();
        if (inLake) {
            // the lake's own column and its index: the vectors are stored, nothing to write
            String sql = lakeFilter(ev, queries, o);
            prefilter = describeFilter(sql);
            try (LakeTable t = lake.table(TableSchemas.EPISODES, TableRef.version(ev.episodesVersion()))) {
                choice = lakeChoice(t, ev.column(), ev.vectors()[0].length);
                boolean exact = exact(choice, passing);
                searchNote = note(choice, exact, passing);
                searchedTable = "episodes." + ev.column() + " (the lake's column, version " + t.version() + ")";
                out = search(searched, byId, o, q -> t.nearest(q.column(ev.column()).idColumn("episode_id").filter(sql)
                        .exact(exact).build()));
            }
        } else {
            prefilter = filter.toString();
            Path dir = scratchFolder();
            try (VectorPool pool = writePool(dir.resolve("pool.lance"), ev, poolRows, poolVectors)) {
                VectorIndexOptions.Builder ib = VectorIndexOptions.builder().replace(true);
                if (rows > 0) { // an empty pool has nothing to index
                    POOL_SCALAR_INDEXES.forEach(ib::scalarIndex);
                    scalarIndexes = POOL_SCALAR_INDEXES.stream().map(ScalarIndex::indexName).toList();
                }
                choice = pool.buildIndex(ib.build());
                boolean exact = exact(choice, passing);
                searchNote = note(choice, exact, passing);
                searchedTable = "a scratch pool of " + rows + " vectors (" + (o.whiten() ? "PCA-whitened"
                        : !ev.cameras().isEmpty() ? "from cameras " + String.join(", ", ev.cameras())
                        : "not a column of the lake") + ")";
                String sql = filter.toString();
                out = search(searched, byId, o, q -> pool.nearest(q.filter(sql).exact(exact).build()));
            } finally {
                try {
                    LocalFiles.deleteTree(dir);
                } catch (IOException e) {
                    // the run's scratch folder is removed when the run ends
                }
            }
        }
        Map<String, Object> lineage = new LinkedHashMap<>();
        lineage.put("query_episode_ids", queries.stream().map(Query::id).toList());
        lineage.put("query_sources", queries.stream().map(Query::source).distinct().toList());
        lineage.put("embedding_model", ev.model());
        lineage.put("embedding_sha256", ev.sha256());
        String col = ev.column() != null ? ev.column() : lake.models().get(ev.model()).map(m -> m.column())
                .orElse("emb_?");
        lineage.put("episode_vectors", ev.cameras().isEmpty() ? "episodes." + col
                : "frames." + col + ": mean over cameras of per-camera mean"
                + (ev.phases().isEmpty() ? "" : " over the frames of phases " + String.join(", ", ev.phases())));
        lineage.put("cameras", ev.cameras());
        lineage.put("phases", ev.phases());
        lineage.put("whiten", o.whiten());
        if (o.whiten()) {
            lineage.put("whiten_epsilon", o.whitenEpsilon());
            lineage.put("whiten_fitted_on", whitening.fittedOn());
        }
        lineage.put("distance", o.whiten() ? "cosine distance in the PCA-whitened space" : "cosine distance");
        lineage.put("episodes_with_vectors", ev.size());
        lineage.put("episodes_without_vectors", ev.withoutVectors().size());
        lineage.put("k", o.k());
        lineage.put("query_mode", o.joint() ? "joint: one search with the normalised mean of the " + queries.size()
                + " query vectors for k x queries neighbours, each listed under its nearest query" : "k neighbours per query");
        lineage.put("prefilter", prefilter);
        lineage.put("searched", searchedTable);
        lineage.put("index", searchNote);
        lineage.put("scalar_indexes", scalarIndexes);
        lineage.put("nprobes", o.nprobes());
        lineage.put("refine_factor", o.refineFactor());
        Map<String, Object> sources = new LinkedHashMap<>();
        sources.put("episodes", ev.episodesVersion());
        if (ev.framesVersion() >= 0) {
            sources.put("frames", ev.framesVersion());
        }
        DedupTables.latestVersion(lake).ifPresent(v -> sources.put("episode_groups", v));
        if (lake.hasTable(io.flywheel.lake.StreamTables.LABEL_HISTORY)) {
            // the stream labels behind the failure queries' outcomes
            try (io.flywheel.lake.LakeTable h = lake.table(io.flywheel.lake.StreamTables.LABEL_HISTORY)) {
                sources.put(io.flywheel.lake.StreamTables.LABEL_HISTORY, h.version());
            }
        }
        lineage.put("mining_source_versions", sources);
        DedupTables.latestThreshold(lake).ifPresent(t -> lineage.put("dedup_episode_threshold", t));
        return new Result(List.copyOf(queries), List.copyOf(out), choice, rows, passing, lineage, ev.size(),
                ev.withoutVectors().size(), whitening);
    }

    /**
     * @return the normalised mean of the queries' vectors (each normalised first), float32[D]
     * @throws IllegalArgumentException when the mean is the zero vector (queries that cancel out)
     */
    static float[] jointVector(List<Query> queries) {
        float[] sum = new float[queries.get(0).vector().length];
        for (Query q : queries) {
            double squares = 0;
            for (float x : q.vector()) {
                squares += x * x;
            }
            if (squares == 0) {
                continue; // a zero vector (an exact match of the whitening mean) has no direction to add
            }
            float[] u = ExactSearch.normalise(q.vector());
            for (int j = 0; j < sum.length; j++) {
                sum[j] += u[j];
            }
        }
        try {
            return ExactSearch.normalise(sum);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the " + queries.size() + " query vectors cancel out: their mean is zero,"
                    + " a joint query has no direction; mine them one by one", e);
        }
    }

    /**
     * Lists each hit of the joint query under the query it is nearest to (cosine distance, ties to the earlier query),
     * grouped by query in query order and ranked within each query by that distance.
     */
    static List<MinedEpisode> attribute(List<Query> queries, List<VectorHit> hits, Map<String, float[]> vectors) {
        List<List<MinedEpisode>> per = new ArrayList<>();
        queries.forEach(q -> per.add(new ArrayList<>()));
        for (VectorHit h : hits) {
            float[] v = vectors.get(h.id());
            int best = 0;
            double bestDistance = Double.POSITIVE_INFINITY;
            for (int i = 0; i < queries.size(); i++) {
                double d = ExactSearch.cosineDistance(queries.get(i).vector(), v);
                if (d < bestDistance) {
                    best = i;
                    bestDistance = d;
                }
            }
            per.get(best).add(new MinedEpisode(h.id(), queries.get(best).id(), bestDistance, 1));
        }
        List<MinedEpisode> out = new ArrayList<>();
        for (List<MinedEpisode> list : per) {
            list.sort(java.util.Comparator.comparingDouble(MinedEpisode::distance));
            for (int r = 0; r < list.size(); r++) {
                MinedEpisode m = list.get(r);
                out.add(new MinedEpisode(m.episodeId(), m.queryEpisodeId(), m.distance(), r + 1));
            }
        }
        return out;
    }

    /** The prefilter of {@link #run} in Java, for fitting the whitening on the rows the search will see. */
    static boolean passesPrefilter(EpisodeInfo e, Options o) {
        return !"fail".equals(e.qualityStatus()) && !e.failed() && !e.duplicate()
                && (o.robot() == null || o.robot().equals(e.robotId()))
                && (o.task() == null || o.task().equals(e.task()));
    }

    private static String describe(List<String> cameras) {
        return cameras.isEmpty() ? "episodes.embedding (the master camera)" : "cameras " + cameras;
    }

    private static String describePhases(List<String> phases) {
        return phases.isEmpty() ? "every frame" : "the frames of phases " + phases;
    }

    /** A search of one query (its builder carries vector, k, nprobes, refine factor); the caller adds the rest. */
    @FunctionalInterface
    private interface Searcher {
        List<VectorHit> nearest(VectorQuery.Builder query);
    }

    /** Runs the queries, jointly or one by one. */
    private static List<MinedEpisode> search(List<Query> searched, Map<String, float[]> byId, Options o, Searcher s) {
        List<MinedEpisode> out = new ArrayList<>();
        if (o.joint()) {
            List<VectorHit> hits = s.nearest(VectorQuery.builder(jointVector(searched)).k(o.k() * searched.size())
                    .nprobes(o.nprobes()).refineFactor(o.refineFactor()));
            out.addAll(attribute(searched, hits, byId));
        } else {
            for (Query q : searched) {
                List<VectorHit> hits = s.nearest(VectorQuery.builder(q.vector()).k(o.k()).nprobes(o.nprobes())
                        .refineFactor(o.refineFactor()));
                int rank = 1;
                for (VectorHit h : hits) {
                    out.add(new MinedEpisode(h.id(), q.id(), h.distance(), rank++));
                }
            }
        }
        return out;
    }

    /**
     * IVF probes the partitions nearest the query; a prefilter that leaves few rows (one robot of a large fleet) may
     * leave none there, and recall collapses (BENCHMARKS.md, prefiltered search). An exact search over that few rows is
     * cheap, so it is used below the flat threshold.
     */
    private static boolean exact(IndexChoice choice, long passing) {
        return choice.kind() == IndexChoice.Kind.FLAT || passing < VectorIndexOptions.DEFAULT_FLAT_BELOW_ROWS;
    }

    private static String note(IndexChoice choice, boolean exact, long passing) {
        return exact && choice.kind() != IndexChoice.Kind.FLAT ? "exact search over the " + passing
                + " rows passing the prefilter (fewer than " + VectorIndexOptions.DEFAULT_FLAT_BELOW_ROWS + "; the "
                + choice.kind() + " index is kept for wider filters)" : choice.kind() + " (" + choice.reason() + ")";
    }

    /** @return how the lake's column is searched: through its IVF-PQ index when it has one, else flat */
    private static IndexChoice lakeChoice(LakeTable t, String column, int dim) {
        long vectors = t.countRows(column + " IS NOT NULL");
        return t.vectorIndex(column).map(i -> new IndexChoice(IndexChoice.Kind.IVF_PQ, column, vectors, dim, 0, 0,
                "the lake's index " + i.name() + " on episodes." + column + ", " + i.rowsIndexed() + " rows indexed"
                        + (i.rowsUnindexed() > 0 ? ", " + i.rowsUnindexed() + " newer rows scanned flat" : "")))
                .orElse(new IndexChoice(IndexChoice.Kind.FLAT, column, vectors, dim, 0, 0, vectors
                        + " episode vectors and no index on episodes." + column + " (enrich builds one from "
                        + VectorIndexOptions.DEFAULT_FLAT_BELOW_ROWS + "): a flat exact scan"));
    }

    /**
     * The prefilter of {@link #run} on the lake's episodes table, the same rows as {@link #passesPrefilter}: quality
     * status not {@code fail} (null passes), outcome not a failure, not a near-duplicate of another episode, not a
     * query, optionally of one robot or task.
     */
    static String lakeFilter(EpisodeVectors ev, List<Query> queries, Options o) {
        StringBuilder f = new StringBuilder("(quality_status IS NULL OR quality_status <> 'fail')"
                + " AND (outcome IS NULL OR outcome NOT LIKE 'failure%')");
        java.util.TreeSet<String> excluded = new java.util.TreeSet<>();
        queries.forEach(q -> excluded.add(q.id()));
        for (EpisodeInfo e : ev.infos()) {
            if (e.duplicate()) {
                excluded.add(e.episodeId());
            }
        }
        if (!excluded.isEmpty()) {
            f.append(" AND NOT (").append(io.flywheel.lake.Sql.in("episode_id", new ArrayList<>(excluded))).append(")");
        }
        if (o.robot() != null) {
            f.append(" AND robot_id = ").append(io.flywheel.lake.Sql.quote(o.robot()));
        }
        if (o.task() != null) {
            f.append(" AND task = ").append(io.flywheel.lake.Sql.quote(o.task()));
        }
        return f.toString();
    }

    /** @return the filter with a long id list shortened to its count, for the lineage */
    private static String describeFilter(String sql) {
        return sql.replaceAll("episode_id IN \\(('[^']*(''[^']*)*'(, )?){6,}\\)", "episode_id IN (<ids: near-duplicates"
                + " and queries>)");
    }

    private static Path scratchFolder() {
        try {
            return Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "mining-pool");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a scratch folder for the mining pool in "
                    + System.getProperty("java.io.tmpdir") + ": " + e.getMessage(), e);
        }
    }

    /** Writes the pool: the given rows of {@code ev} (every episode with a vector except the queries). */
    private static VectorPool writePool(Path dir, EpisodeVectors ev, List<Integer> rows, float[][] vectors) {
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
            System.arraycopy(vectors[j], 0, flat, j * dim, dim);
        }
        Map<String, String[]> scalars = new LinkedHashMap<>();
        scalars.put("quality_status", qc);
        scalars.put("failed", failed);
        scalars.put("duplicate", dup);
        scalars.put("robot_id", robot);
        scalars.put("task", task);
        return VectorPool.create(dir, ids, scalars, flat, dim);
    }
}
