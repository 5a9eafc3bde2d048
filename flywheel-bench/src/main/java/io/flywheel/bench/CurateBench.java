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
import io.flywheel.curate.KnnQuery;
import io.flywheel.curate.NearPairs;
import io.flywheel.curate.Neighbour;
import io.flywheel.curate.SyntheticVectors;
import io.flywheel.curate.VectorIndexOptions;
import io.flywheel.curate.VectorSearch;
import io.flywheel.curate.VectorTable;

/**
 * Curation speed, one JVM:
 *
 * <ul>
 *   <li>{@code vectors N DIM}: Lance IVF-PQ kNN (k = 10, cosine) against exact brute force
 *       ({@link ExactSearch}, all cores) on N synthetic clustered unit vectors (1,000 clusters,
 *       noise norm 1.0) plus 200 held-out queries from the same clusters: index build time,
 *       recall@10 against the exact result, queries/s of each side (queries one after another);
 *   <li>{@code phash N T}: all pHash pairs within T bits among N hashes with planted near copies,
 *       multi-index hashing ({@link HammingSearch#pairs}) against the all-pairs baseline, which is
 *       timed on the first rows only and extrapolated by comparison count; the sampled rows' pairs
 *       are checked equal; then {@link Grouping#phash} end to end.
 * </ul>
 *
 * Prints one JSON line per measurement. usage: CurateBench SCRATCH (vectors N DIM | phash N T)...
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
                default -> throw new IllegalArgumentException("unknown mode " + args[i] + ": expected vectors or phash");
            }
        }
    }

    static void vectors(Path scratch, int n, int dim) throws Exception {
        long t0 = System.nanoTime();
        float[] all = SyntheticVectors.clustered(n + QUERIES, dim, 1000, 1.0, 7);
        float[] base = java.util.Arrays.copyOf(all, n * dim);
        float[][] queries = new float[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            queries[q] = java.util.Arrays.copyOfRange(all, (n + q) * dim, (n + q + 1) * dim);
        }
        all = null;
        ExactSearch exact = ExactSearch.ofRows(base, dim);
        // brute force: warm up, then time the queries one after another (each split over all cores)
        for (int q = 0; q < 20; q++) {
            exact.knn(queries[q], K);
        }
        long e0 = System.nanoTime();
        List<Set<Integer>> truth = new ArrayList<>();
        for (float[] q : queries) {
            Set<Integer> s = new HashSet<>();
            for (Neighbour nb : exact.knn(q, K)) {
                s.add(nb.row());
            }
            truth.add(s);
        }
        double exactSeconds = (System.nanoTime() - e0) / 1e9;
        double exactQps = QUERIES / exactSeconds;
        String[] ids = new String[n];
        String[] quality = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = Integer.toString(i);
            quality[i] = i % 10 == 0 ? "fail" : "pass";
        }
        String uri = scratch.resolve("vectors-" + n + "-" + dim + "-" + System.nanoTime() + ".lance").toString();
        long w0 = System.nanoTime();
        VectorTable.write(uri, ids, Map.of("quality_status", quality), base, dim);
        double writeSeconds = (System.nanoTime() - w0) / 1e9;
        try (VectorSearch search = VectorSearch.open(uri)) {
            long b0 = System.nanoTime();
            VectorSearch.IndexChoice choice = search.buildIndex(VectorIndexOptions.builder().build());
            double buildSeconds = (System.nanoTime() - b0) / 1e9;
            System.out.println(String.format(Locale.ROOT,
                    "{\"bench\":\"vector-index\",\"n\":%d,\"dim\":%d,\"index\":\"%s\",\"partitions\":%d,\"sub_vectors\":%d,"
                            + "\"write_s\":%.2f,\"build_s\":%.2f,\"exact_qps\":%.1f}",
                    n, dim, choice.kind(), choice.partitions(), choice.subVectors(), writeSeconds, buildSeconds, exactQps));
            int[][] configs = {{10, 10}, {20, 10}, {20, 20}, {40, 20}, {80, 40}};
            for (int[] c : configs) {
                for (int q = 0; q < 20; q++) { // warm-up
                    search.knn(KnnQuery.builder(queries[q]).k(K).nprobes(c[0]).refineFactor(c[1]).build());
                }
                long s0 = System.nanoTime();
                int found = 0;
                for (int q = 0; q < QUERIES; q++) {
                    for (VectorSearch.Hit h : search.knn(KnnQuery.builder(queries[q]).k(K).nprobes(c[0])
                            .refineFactor(c[1]).build())) {
                        if (truth.get(q).contains(Integer.parseInt(h.id()))) {
                            found++;
                        }
                    }
                }
                double seconds = (System.nanoTime() - s0) / 1e9;
                double qps = QUERIES / seconds;
                System.out.println(String.format(Locale.ROOT,
                        "{\"bench\":\"vector-search\",\"n\":%d,\"dim\":%d,\"nprobes\":%d,\"refine_factor\":%d,"
                                + "\"recall_at_10\":%.4f,\"qps\":%.1f,\"exact_qps\":%.1f,\"speedup\":%.2f}",
                        n, dim, c[0], c[1], found / (double) (QUERIES * K), qps, exactQps, qps / exactQps));
            }
            // prefiltered, for the record
            long f0 = System.nanoTime();
            for (int q = 0; q < QUERIES; q++) {
                search.knn(KnnQuery.builder(queries[q]).k(K).nprobes(20).refineFactor(10)
                        .filter("quality_status != 'fail'").build());
            }
            System.out.println(String.format(Locale.ROOT,
                    "{\"bench\":\"vector-search-prefiltered\",\"n\":%d,\"dim\":%d,\"filter\":\"quality_status != 'fail'\","
                            + "\"nprobes\":20,\"refine_factor\":10,\"qps\":%.1f}",
                    n, dim, QUERIES / ((System.nanoTime() - f0) / 1e9)));
        }
        io.flywheel.lake.LocalFiles.deleteTree(Path.of(uri));
        System.err.printf(Locale.ROOT, "vectors n=%d dim=%d done in %.1f s%n", n, dim, (System.nanoTime() - t0) / 1e9);
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
