package io.flywheel.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Grouping;
import io.flywheel.curate.Groups;
import io.flywheel.curate.HammingSearch;
import io.flywheel.curate.NearPairs;
import io.flywheel.curate.Neighbour;
import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.curate.trainset.TrainsetTables;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.IndexChoice;
import io.flywheel.lake.ScalarIndex;
import io.flywheel.lake.TableRef;
import io.flywheel.lake.VectorHit;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.lake.VectorPool;
import io.flywheel.lake.VectorQuery;
import io.flywheel.testkit.SyntheticVectors;

/**
 * Curation speed, one JVM:
 *
 * <ul>
 *   <li>{@code vectors N DIM}: Lance IVF-PQ kNN (k = 10, cosine) on N synthetic clustered unit
 *       vectors (1,000 clusters, noise norm 1.0) plus 200 held-out queries from the same clusters:
 *       index build time (wall and process CPU), recall@10 against the exact result and queries/s
 *       (queries one after another) over a grid of nprobes x refine factor. Three exact peers:
 *       {@link ExactSearch#knn} (a Java dot-product loop over one float[] matrix, each query split
 *       over all cores; the ground truth and the speedup's denominator), {@link ExactSearch#knnAll}
 *       (all queries at once, queries split over the cores: throughput), and Lance's own flat scan
 *       of the same table before the index exists ({@code useIndex=false}, same Java path); then the
 *       prefiltered search without and with bitmap indexes on the filter columns, against the exact filtered
 *       brute force ({@link #prefiltered});
 *   <li>{@code phash N T}: all pHash pairs within T bits among N hashes with planted near copies,
 *       multi-index hashing ({@link HammingSearch#pairs}) against the all-pairs baseline, which is
 *       timed on the first rows only and extrapolated by comparison count; the sampled rows' pairs
 *       are checked equal; then {@link Grouping#phash} end to end;
 *   <li>{@code trainset EPISODES FRAMES}: {@link TrainsetBuilder#build} time on a generated lake,
 *       sample count checked against the count computed by hand (see {@link #trainset}).
 * </ul>
 *
 * Prints one JSON line per measurement. usage: CurateBench SCRATCH (vectors N DIM | phash N T |
 * trainset EPISODES FRAMES)...
 */
public final class CurateBench {
    private static final int QUERIES = 200;
    private static final int K = 10;

    private CurateBench() {}

    public static void main(String[] args) throws Exception {
        Path scratch = Path.of(args[0]);
        Files.createDirectories(scratch);
        for (int i = 1; i < args.length; i += 3) {
            int n = Integer.parseInt(args[i + 1]);
            int p = Integer.parseInt(args[i + 2]);
            switch (args[i]) {
                case "vectors" -> vectors(scratch, n, p);
                case "phash" -> phash(n, p);
                case "trainset" -> trainset(scratch, n, p);
                default -> throw new IllegalArgumentException("unknown mode " + args[i]
                        + ": expected vectors, phash or trainset");
            }
        }
    }

    /** The nprobes x refine factor grid measured at every size. */
    static final int[][] GRID = {{10, 10}, {20, 10}, {40, 10}, {80, 10}, {20, 20}, {40, 20}, {80, 20}, {160, 20}};
    /** Queries given to the Lance flat scan (it is slow; its rate is all we need from it). */
    private static final int FLAT_QUERIES = 20;

    static void vectors(Path scratch, int n, int dim) throws Exception {
        long t0 = System.nanoTime();
        String load0 = loadAverage();
        float[] all = SyntheticVectors.clustered(n + QUERIES, dim, 1000, 1.0, 7);
        float[] base = java.util.Arrays.copyOf(all, n * dim);
        float[][] queries = new float[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            queries[q] = java.util.Arrays.copyOfRange(all, (n + q) * dim, (n + q + 1) * dim);
        }
        all = null;
        ExactSearch exact = ExactSearch.ofRows(base, dim);
        // peer 1, latency mode: each query split over all cores (ExactSearch.knn), one after another; the ground truth
        for (int q = 0; q < 20; q++) {
            exact.knn(queries[q], K);
        }
        long e0 = System.nanoTime();
        long c0 = cpuNanos();
        List<Set<Integer>> truth = new ArrayList<>();
        for (float[] q : queries) {
            Set<Integer> s = new HashSet<>();
            for (Neighbour nb : exact.knn(q, K)) {
                s.add(nb.row());
            }
            truth.add(s);
        }
        double exactSeconds = (System.nanoTime() - e0) / 1e9;
        double exactCores = (cpuNanos() - c0) / 1e9 / exactSeconds;
        double exactQps = QUERIES / exactSeconds;
        // peer 2, throughput mode: all queries at once, split over the cores (ExactSearch.knnAll)
        exact.knnAll(java.util.Arrays.copyOf(queries, 20), K);
        long a0 = System.nanoTime();
        List<List<Neighbour>> batch = exact.knnAll(queries, K);
        double exactBatchQps = QUERIES / ((System.nanoTime() - a0) / 1e9);
        for (int q = 0; q < QUERIES; q++) {
            for (Neighbour nb : batch.get(q)) {
                if (!truth.get(q).contains(nb.row())) {
                    throw new IllegalStateException("knnAll and knn differ on query " + q);
                }
            }
        }
        String[] ids = new String[n];
        String[] quality = new String[n];
        String[] robot = new String[n];
        String[] group = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = Integer.toString(i);
            // row i is in cluster i % 1000 (SyntheticVectors): labels from j = i / 1000 are independent of the
            // cluster (every cluster has 10% fail, 5% of each robot); cluster_group = i % 20 selects whole clusters
            int j = i / 1000;
            quality[i] = j % 10 == 0 ? "fail" : j % 10 == 5 ? "warn" : "pass";
            robot[i] = "robot-" + (j % 20);
            group[i] = "g" + (i % 20);
        }
        Path uri = scratch.resolve("vectors-" + n + "-" + dim + "-" + System.nanoTime() + ".lance");
        long w0 = System.nanoTime();
        Map<String, String[]> scalars = new java.util.LinkedHashMap<>();
        scalars.put("quality_status", quality);
        scalars.put("robot_id", robot);
        scalars.put("cluster_group", group);
        double writeSeconds;
        try (VectorPool search = VectorPool.create(uri, ids, scalars, base, dim)) {
            writeSeconds = (System.nanoTime() - w0) / 1e9;
            // peer 3: Lance's own exact flat scan of the same table (no index yet), through the same Java path
            int flatFound = 0;
            search.nearest(VectorQuery.builder(queries[0]).k(K).exact(true).build());
            long f0 = System.nanoTime();
            for (int q = 0; q < FLAT_QUERIES; q++) {
                flatFound += found(search.nearest(VectorQuery.builder(queries[q]).k(K).exact(true).build()), truth.get(q));
            }
            double flatQps = FLAT_QUERIES / ((System.nanoTime() - f0) / 1e9);
            VectorIndexOptions options = VectorIndexOptions.builder().build();
            long b0 = System.nanoTime();
            long bc0 = cpuNanos();
            IndexChoice choice = search.buildIndex(options);
            double buildSeconds = (System.nanoTime() - b0) / 1e9;
            double buildCpu = (cpuNanos() - bc0) / 1e9;
            System.out.println(String.format(Locale.ROOT,
                    "{\"bench\":\"vector-index\",\"n\":%d,\"dim\":%d,\"index\":\"%s\",\"partitions\":%d,\"sub_vectors\":%d,"
                            + "\"ivf_max_iters\":%d,\"pq_max_iters\":%d,\"sample_rate\":%d,\"write_s\":%.2f,"
                            + "\"build_s\":%.2f,\"build_cpu_s\":%.2f,\"build_cores\":%.2f,"
                            + "\"exact_qps\":%.1f,\"exact_cores\":%.2f,\"exact_batch_qps\":%.1f,"
                            + "\"lance_flat_qps\":%.2f,\"lance_flat_recall_at_10\":%.4f,\"load_avg\":\"%s\"}",
                    n, dim, choice.kind(), choice.partitions(), choice.subVectors(), options.maxIterations(),
                    options.pqMaxIterations(), options.sampleRate(), writeSeconds, buildSeconds, buildCpu,
                    buildCpu / buildSeconds, exactQps, exactCores, exactBatchQps, flatQps,
                    flatFound / (double) (FLAT_QUERIES * K), load0));
            for (int[] c : GRID) {
                for (int q = 0; q < 20; q++) { // warm-up
                    search.nearest(VectorQuery.builder(queries[q]).k(K).nprobes(c[0]).refineFactor(c[1]).build());
                }
                long s0 = System.nanoTime();
                int found = 0;
                for (int q = 0; q < QUERIES; q++) {
                    found += found(search.nearest(VectorQuery.builder(queries[q]).k(K).nprobes(c[0]).refineFactor(c[1])
                            .build()), truth.get(q));
                }
                double seconds = (System.nanoTime() - s0) / 1e9;
                double qps = QUERIES / seconds;
                System.out.println(String.format(Locale.ROOT,
                        "{\"bench\":\"vector-search\",\"n\":%d,\"dim\":%d,\"nprobes\":%d,\"refine_factor\":%d,"
                                + "\"recall_at_10\":%.4f,\"qps\":%.1f,\"ms_per_query\":%.2f,\"exact_qps\":%.1f,"
                                + "\"speedup\":%.2f,\"speedup_vs_batch\":%.2f,\"speedup_vs_lance_flat\":%.1f,"
                                + "\"load_avg\":\"%s\"}",
                        n, dim, c[0], c[1], found / (double) (QUERIES * K), qps, 1000 / qps, exactQps, qps / exactQps,
                        qps / exactBatchQps, qps / flatQps, loadAverage()));
            }
            prefiltered(search, exact, queries, quality, robot, group, n, dim);
        }
        io.flywheel.lake.LocalFiles.deleteTree(uri);
        System.err.printf(Locale.ROOT, "vectors n=%d dim=%d done in %.1f s%n", n, dim, (System.nanoTime() - t0) / 1e9);
    }

    /**
     * The prefiltered search (nprobes 20, refine factor 10) on the indexed table, first without scalar indexes,
     * then with bitmap indexes on {@code quality_status}, {@code robot_id} and {@code cluster_group} (same JVM,
     * same table, same queries): queries/s and recall@10 against the exact filtered brute force
     * ({@link ExactSearch#knn} with a row predicate, also timed: the "exact_filtered_qps" peer). Filters:
     * {@code quality_status != 'fail'} and its equivalent {@code IN ('pass', 'warn')} (90% of rows pass: 10%
     * fail, 10% warn, 80% pass, in every cluster), a selective one, {@code robot_id = 'robot-3' AND
     * quality_status != 'fail'} (5%, in every cluster: robot-3 rows never fail), and one correlated with the
     * clusters, {@code cluster_group = 'g3'} (5%: the 50 whole clusters 3 mod 20, so 95% of the queries have
     * no passing row in their own cluster). The hits must pass the filter (checked).
     */
    static void prefiltered(VectorPool search, ExactSearch exact, float[][] queries, String[] quality, String[] robot,
            String[] group, int n, int dim) {
        java.util.function.IntPredicate notFail = r -> !quality[r].equals("fail");
        java.util.function.IntPredicate robot3 = r -> robot[r].equals("robot-3") && !quality[r].equals("fail");
        String[][] filters = {{"quality_status != 'fail'", "notFail"}, {"quality_status IN ('pass', 'warn')", "notFail"},
                {"robot_id = 'robot-3' AND quality_status != 'fail'", "robot3"}, {"cluster_group = 'g3'", "g3"}};
        Map<String, java.util.function.IntPredicate> predicates = Map.of("notFail", notFail, "robot3", robot3, "g3",
                r -> group[r].equals("g3"));
        Map<String, List<Set<Integer>>> truth = new java.util.HashMap<>();
        Map<String, Double> exactQps = new java.util.HashMap<>();
        for (Map.Entry<String, java.util.function.IntPredicate> p : predicates.entrySet()) {
            exact.knn(queries[0], K, p.getValue());
            long e0 = System.nanoTime();
            List<Set<Integer>> t = new ArrayList<>();
            for (float[] q : queries) {
                Set<Integer> s = new HashSet<>();
                exact.knn(q, K, p.getValue()).forEach(nb -> s.add(nb.row()));
                t.add(s);
            }
            exactQps.put(p.getKey(), QUERIES / ((System.nanoTime() - e0) / 1e9));
            truth.put(p.getKey(), t);
        }
        for (String indexes : new String[] {"none", "bitmap(quality_status, robot_id, cluster_group)"}) {
            double buildSeconds = 0;
            if (!indexes.equals("none")) {
                long b0 = System.nanoTime();
                search.buildScalarIndexes(List.of(ScalarIndex.bitmap("quality_status"), ScalarIndex.bitmap("robot_id"),
                        ScalarIndex.bitmap("cluster_group")), true);
                buildSeconds = (System.nanoTime() - b0) / 1e9;
            }
            for (String[] f : filters) {
                java.util.function.IntPredicate pass = predicates.get(f[1]);
                for (int q = 0; q < 10; q++) { // warm-up
                    search.nearest(VectorQuery.builder(queries[q]).k(K).nprobes(20).refineFactor(10).filter(f[0]).build());
                }
                long p0 = System.nanoTime();
                int found = 0;
                for (int q = 0; q < QUERIES; q++) {
                    List<VectorHit> hits = search.nearest(VectorQuery.builder(queries[q]).k(K).nprobes(20)
                            .refineFactor(10).filter(f[0]).build());
                    for (VectorHit h : hits) {
                        if (!pass.test(Integer.parseInt(h.id()))) {
                            throw new IllegalStateException("row " + h.id() + " does not pass " + f[0]);
                        }
                    }
                    found += found(hits, truth.get(f[1]).get(q));
                }
                double qps = QUERIES / ((System.nanoTime() - p0) / 1e9);
                System.out.println(String.format(Locale.ROOT,
                        "{\"bench\":\"vector-search-prefiltered\",\"n\":%d,\"dim\":%d,\"filter\":\"%s\","
                                + "\"scalar_indexes\":\"%s\",\"scalar_index_build_s\":%.2f,\"nprobes\":20,"
                                + "\"refine_factor\":10,\"recall_at_10\":%.4f,\"qps\":%.1f,\"ms_per_query\":%.2f,"
                                + "\"exact_filtered_qps\":%.1f,\"speedup_vs_exact_filtered\":%.2f,\"load_avg\":\"%s\"}",
                        n, dim, f[0], indexes, buildSeconds, found / (double) (QUERIES * K), qps, 1000 / qps,
                        exactQps.get(f[1]), qps / exactQps.get(f[1]), loadAverage()));
            }
        }
    }

    private static int found(List<VectorHit> hits, Set<Integer> truth) {
        int f = 0;
        for (VectorHit h : hits) {
            if (truth.contains(Integer.parseInt(h.id()))) {
                f++;
            }
        }
        return f;
    }

    /** @return CPU time of this process (all threads, including Lance's native ones), ns */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** @return the 1/5/15-minute load averages of the machine ({@code /proc/loadavg}), or "?" */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "?";
        }
    }

    /**
     * Training-set build time: a lake of {@code episodes} episodes of {@code frames} frames each at
     * 30 Hz (timestamps {@code t0 + j * 33,333,333 ns}; state/action float64[7]; no images), written
     * through the lake API, 50 episodes per commit; then {@link TrainsetBuilder#build} with ratio 0.3,
     * seed 1, 10 Hz. Expected by hand: every episode passes QC, succeeds and has no duplicate, so
     * the pool is all episodes and the base sample {@code round(0.3 * episodes)} of them; 10 Hz ticks
     * over 30 Hz frames take frames 0, 3, 6, ..., so each episode gives {@code ceil(frames / 3)}
     * samples. The build's count must equal the product (and the samples table's row count).
     */
    static void trainset(Path scratch, int episodes, int frames) throws Exception {
        Path lakeDir = scratch.resolve("trainset-lake-" + episodes + "x" + frames + "-" + System.nanoTime());
        String load0 = loadAverage();
        long w0 = System.nanoTime();
        try (Lake lake = Lake.init(lakeDir)) {
            List<FrameRow> rows = new ArrayList<>();
            List<EpisodeRow> eps = new ArrayList<>();
            for (int e = 0; e < episodes; e++) {
                String id = String.format(Locale.ROOT, "ep-%06d", e);
                long t0 = 1_700_000_000_000_000_000L + e * 60_000_000_000L;
                for (int j = 0; j < frames; j++) {
                    double[] state = new double[7];
                    double[] action = new double[7];
                    for (int d = 0; d < 7; d++) {
                        state[d] = Math.sin(j * 0.01 + d + e);
                        action[d] = Math.cos(j * 0.01 + d + e);
                    }
                    rows.add(new FrameRow(id, j, t0 + j * 33_333_333L, state, action, 0.5, List.of(), List.of(),
                            List.of()));
                }
                eps.add(new EpisodeRow(id, "rec-" + e, "robot-" + (e % 4), "pick", "scene-" + (e % 7), "op", "success",
                        t0, t0 + (frames - 1) * 33_333_333L, (frames - 1) * 33_333_333L, "/cam0", (long) frames, "pass",
                        List.of(), null, "{}"));
                if (eps.size() == 50 || e == episodes - 1) {
                    lake.begin("ingest").putFrames(rows).putEpisodes(eps).commit();
                    rows.clear();
                    eps.clear();
                }
            }
            double writeSeconds = (System.nanoTime() - w0) / 1e9;
            long b0 = System.nanoTime();
            long c0 = cpuNanos();
            TrainsetBuilder.Result r = TrainsetBuilder.build(lake, TrainsetSpec.builder("bench-v1").baseRatio(0.3).seed(1)
                    .sampleRateHz(10).build(), TrainsetBuilder.Progress.NONE);
            double buildSeconds = (System.nanoTime() - b0) / 1e9;
            double cpu = (cpuNanos() - c0) / 1e9;
            long expectedEpisodes = Math.round(0.3 * episodes);
            long expectedSamples = expectedEpisodes * ((frames + 2) / 3);
            long tableRows;
            try (LakeTable t = lake.table(TrainsetTables.SAMPLES, TableRef.version(r.trainset().samplesVersion()))) {
                tableRows = t.countRows();
            }
            System.out.println(String.format(Locale.ROOT,
                    "{\"bench\":\"trainset-build\",\"episodes\":%d,\"frames\":%d,\"frame_rows\":%d,\"ratio\":0.3,"
                            + "\"rate_hz\":10,\"lake_write_s\":%.1f,\"build_s\":%.1f,\"build_cpu_s\":%.1f,"
                            + "\"set_episodes\":%d,\"expected_episodes\":%d,\"samples\":%d,\"samples_table_rows\":%d,"
                            + "\"expected_samples\":%d,\"load_avg\":\"%s %s\"}",
                    episodes, frames, (long) episodes * frames, writeSeconds, buildSeconds, cpu,
                    r.trainset().episodeCount(), expectedEpisodes, r.trainset().sampleCount(), tableRows, expectedSamples,
                    load0, loadAverage()));
            if (r.trainset().sampleCount() != expectedSamples || tableRows != expectedSamples
                    || r.trainset().episodeCount() != expectedEpisodes) {
                throw new IllegalStateException("training set has " + r.trainset().episodeCount() + " episodes and "
                        + r.trainset().sampleCount() + " samples (" + tableRows + " rows), expected " + expectedEpisodes
                        + " and " + expectedSamples);
            }
        }
        io.flywheel.lake.LocalFiles.deleteTree(lakeDir);
    }

    static void phash(int n, int t) {
        Random r = new Random(1);
        long[] h = new long[n];
        int i = 0;
        while (i < n) { // a fresh hash, then for every 10th one 1-3 copies at 0..8 flipped bits
            long b = r.nextLong();
            h[i++] = b;
            if (i % 10 == 0) {
                for (int c = 1 + r.nextInt(3); c > 0 && i < n; c--) {
                    long mask = 0;
                    int bits = r.nextInt(9);
                    while (Long.bitCount(mask) < bits) {
                        mask |= 1L << r.nextInt(64);
                    }
                    h[i++] = b ^ mask;
                }
            }
        }
        for (int k = n - 1; k > 0; k--) {
            int j = r.nextInt(k + 1);
            long x = h[k];
            h[k] = h[j];
            h[j] = x;
        }
        HammingSearch.pairs(java.util.Arrays.copyOf(h, Math.min(n, 100_000)), t); // warm-up
        long m0 = System.nanoTime();
        NearPairs mih = HammingSearch.pairs(h, t);
        double mihSeconds = (System.nanoTime() - m0) / 1e9;
        int sample = (int) Math.min(n, Math.max(1000, 4e9 / n)); // ~4e9 comparisons
        HammingSearch.allPairs(h, t, 0, Math.min(sample, 200)); // warm-up
        long a0 = System.nanoTime();
        NearPairs base = HammingSearch.allPairs(h, t, 0, sample);
        double sampleSeconds = (System.nanoTime() - a0) / 1e9;
        double sampleComparisons = (double) sample * n - (double) sample * (sample + 1) / 2;
        double allComparisons = (double) n * (n - 1) / 2;
        double extrapolated = sampleSeconds * allComparisons / sampleComparisons;
        // the sampled rows' pairs must equal the multi-index result restricted to those rows
        int mihInSample = 0;
        while (mihInSample < mih.size() && mih.a(mihInSample) < sample) {
            mihInSample++;
        }
        boolean same = mihInSample == base.size();
        for (int p = 0; same && p < base.size(); p++) {
            same = mih.a(p) == base.a(p) && mih.b(p) == base.b(p);
        }
        long g0 = System.nanoTime();
        Groups g = Grouping.phash(h, t, null);
        double groupSeconds = (System.nanoTime() - g0) / 1e9;
        System.out.println(String.format(Locale.ROOT,
                "{\"bench\":\"phash-pairs\",\"n\":%d,\"t\":%d,\"substrings\":%d,\"pairs\":%d,\"mih_s\":%.3f,"
                        + "\"all_pairs_sample_rows\":%d,\"all_pairs_sample_s\":%.3f,\"all_pairs_extrapolated_s\":%.1f,"
                        + "\"speedup\":%.1f,\"sample_pairs_equal\":%b,\"group_s\":%.3f,\"groups\":%d,\"duplicate_groups\":%d}",
                n, t, HammingSearch.chooseSubstrings(n, t), mih.size(), mihSeconds, sample, sampleSeconds, extrapolated,
                extrapolated / mihSeconds, same, groupSeconds, g.groupCount(), g.duplicateGroupCount()));
        if (!same) {
            throw new IllegalStateException("multi-index pairs differ from the all-pairs baseline on the sampled rows");
        }
    }
}
