package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.IndexChoice;
import io.flywheel.lake.ScalarIndex;
import io.flywheel.lake.VectorHit;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.lake.VectorPool;
import io.flywheel.lake.VectorQuery;
import io.flywheel.testkit.SyntheticVectors;

/**
 * The lake's scratch vector pools ({@link VectorPool}, what mining searches for derived vectors) against brute force
 * ({@link ExactSearch}) on clustered unit vectors: flat search is exact, prefilters are applied before the search,
 * IVF-PQ reaches recall@10 &ge; 0.9, scalar indexes change no result.
 */
class VectorPoolTest {
    static final int N = 10_000;
    static final int DIM = 32;
    static float[] data;
    static String[] ids;
    static String[] quality;
    static String[] robot;
    static ExactSearch exact;
    static Path uri;

    @TempDir
    static Path dir;

    @BeforeAll
    static void writeTable() {
        data = SyntheticVectors.clustered(N, DIM, 100, 0.8, 42);
        exact = ExactSearch.ofRows(data, DIM);
        ids = new String[N];
        quality = new String[N];
        robot = new String[N];
        for (int i = 0; i < N; i++) {
            ids[i] = "ep-" + i;
            quality[i] = i % 3 == 0 ? "fail" : "pass";
            robot[i] = i % 2 == 0 ? "franka" : "ur5";
        }
        Map<String, String[]> scalars = new LinkedHashMap<>();
        scalars.put("quality_status", quality);
        scalars.put("robot_type", robot);
        uri = dir.resolve("pool.lance");
        try (VectorPool p = VectorPool.create(uri, ids, scalars, data, DIM)) {
            assertEquals(N, p.rows());
        }
    }

    static int row(String id) {
        return Integer.parseInt(id.substring(3));
    }

    static float[] query(int i) {
        // a perturbed copy of row i*97: near its cluster, not equal to any row
        float[] q = exact.row((i * 97) % N);
        for (int d = 0; d < DIM; d += 3) {
            q[d] += 0.05f * ((i + d) % 5 - 2);
        }
        return ExactSearch.normalise(q);
    }

    @Test
    void flatSearchEqualsExactSearch() {
        try (VectorPool s = VectorPool.open(uri)) {
            IndexChoice c = s.buildIndex(VectorIndexOptions.builder().build());
            assertEquals(IndexChoice.Kind.FLAT, c.kind()); // 10,000 < 50,000
            assertTrue(s.indexes().isEmpty());
            for (int i = 0; i < 5; i++) {
                float[] q = query(i);
                List<VectorHit> hits = s.nearest(VectorQuery.builder(q).k(10).build());
                List<Neighbour> truth = exact.knn(q, 10);
                assertEquals(10, hits.size());
                for (int h = 0; h < 10; h++) {
                    assertEquals(truth.get(h).distance(), hits.get(h).distance(), 1e-5, "query " + i + " hit " + h);
                    int r = row(hits.get(h).id());
                    assertEquals(ExactSearch.cosineDistance(q, exact.row(r)), hits.get(h).distance(), 1e-5);
                }
                // same rows (ties aside: distances are distinct floats here)
                assertEquals(truth.stream().map(Neighbour::row).toList(),
                        hits.stream().map(h -> row(h.id())).toList());
            }
        }
    }

    @Test
    void prefilterExcludesFilteredRowsAndMatchesFilteredExactSearch() {
        try (VectorPool s = VectorPool.open(uri)) {
            String filter = "quality_status != 'fail' AND robot_type = 'franka'";
            for (int i = 0; i < 5; i++) {
                float[] q = query(i);
                List<VectorHit> hits = s.nearest(VectorQuery.builder(q).k(10).filter(filter).exact(true).build());
                assertEquals(10, hits.size());
                for (VectorHit h : hits) {
                    int r = row(h.id());
                    assertTrue(r % 3 != 0 && r % 2 == 0, "row " + r + " passes the filter");
                }
                List<Neighbour> truth = exact.knn(q, 10, r -> r % 3 != 0 && r % 2 == 0);
                assertEquals(truth.stream().map(Neighbour::row).toList(),
                        hits.stream().map(h -> row(h.id())).toList());
            }
        }
    }

    @Test
    void ivfPqRecallAt10AgainstExactSearch() {
        try (VectorPool s = VectorPool.create(dir.resolve("indexed.lance"), ids, Map.of("quality_status", quality), data,
                DIM)) {
            IndexChoice c = s.buildIndex(VectorIndexOptions.builder().flatBelowRows(5_000).build());
            assertEquals(IndexChoice.Kind.IVF_PQ, c.kind());
            assertEquals(100, c.partitions()); // round(sqrt(10,000))
            assertEquals(8, c.subVectors()); // 32 / 4
            assertEquals(1, s.indexes().size());
            int queries = 50;
            int found = 0;
            int filteredOk = 0;
            for (int i = 0; i < queries; i++) {
                float[] q = query(i);
                Set<Integer> truth = new HashSet<>();
                exact.knn(q, 10).forEach(n -> truth.add(n.row()));
                List<VectorHit> hits = s.nearest(VectorQuery.builder(q).k(10).nprobes(20).refineFactor(10).build());
                assertEquals(10, hits.size());
                for (VectorHit h : hits) {
                    if (truth.contains(row(h.id()))) {
                        found++;
                    }
                    // refined distances are exact
                    assertEquals(ExactSearch.cosineDistance(q, exact.row(row(h.id()))), h.distance(), 1e-4);
                }
                for (VectorHit h : s.nearest(VectorQuery.builder(q).k(10).filter("quality_status = 'pass'").build())) {
                    assertTrue(row(h.id()) % 3 != 0);
                    filteredOk++;
                }
            }
            double recall = found / (queries * 10.0);
            System.out.println("IVF-PQ recall@10 = " + recall + " (n=" + N + ", D=" + DIM + ", nprobes=20, refine=10)");
            assertTrue(recall >= 0.9, "recall@10 " + recall);
            assertEquals(queries * 10, filteredOk);
        }
    }

    /**
     * Scalar indexes do not change results: on a table whose quality_status holds pass / warn / fail
     * and nulls (SQL: a null is neither {@code != 'fail'} nor {@code IN (...)}), the exact filtered
     * search with bitmap + btree indexes returns exactly the rows of a filtered brute force, and the
     * IVF-PQ filtered search returns the same hits as before the indexes existed.
     */
    @Test
    void scalarIndexesKeepFilteredResultsExactAndAreListed() {
        String[] status = new String[N];
        for (int i = 0; i < N; i++) {
            status[i] = i % 7 == 0 ? null : i % 3 == 0 ? "fail" : i % 5 == 0 ? "warn" : "pass";
        }
        java.util.function.IntPredicate notFail = r -> status[r] != null && !status[r].equals("fail");
        java.util.function.IntPredicate notFailFranka = r -> notFail.test(r) && robot[r].equals("franka");
        java.util.function.IntPredicate isNull = r -> status[r] == null;
        Map<String, java.util.function.IntPredicate> filters = new LinkedHashMap<>();
        filters.put("quality_status != 'fail'", notFail);
        filters.put("quality_status IN ('pass', 'warn')", notFail);
        filters.put("quality_status != 'fail' AND robot_type = 'franka'", notFailFranka);
        filters.put("quality_status IS NULL", isNull);
        filters.put("robot_type = 'ur5' OR quality_status = 'warn'", r -> robot[r].equals("ur5")
                || "warn".equals(status[r]));
        Map<String, String[]> scalars = new LinkedHashMap<>();
        scalars.put("quality_status", status);
        scalars.put("robot_type", robot);
        int queries = 8;
        try (VectorPool s = VectorPool.create(dir.resolve("scalar-indexed.lance"), ids, scalars, data, DIM)) {
            s.buildIndex(VectorIndexOptions.builder().flatBelowRows(5_000).build());
            assertEquals(Map.of("embedding_ivf_pq", "VECTOR"), s.indexTypes());
            Map<String, List<VectorHit>> before = new LinkedHashMap<>();
            for (String f : filters.keySet()) {
                for (int i = 0; i < queries; i++) {
                    before.put(f + "#" + i, s.nearest(VectorQuery.builder(query(i)).k(10).filter(f).build()));
                }
            }
            s.buildScalarIndexes(List.of(ScalarIndex.bitmap("quality_status"), ScalarIndex.btree("robot_type")), true);
            Map<String, String> types = s.indexTypes();
            assertEquals(3, types.size(), types.toString());
            assertEquals("BITMAP", types.get("quality_status_bitmap"), types.toString());
            assertEquals("BTREE", types.get("robot_type_btree"), types.toString());
            for (Map.Entry<String, java.util.function.IntPredicate> f : filters.entrySet()) {
                for (int i = 0; i < queries; i++) {
                    float[] q = query(i);
                    List<Integer> truth = exact.knn(q, 10, f.getValue()).stream().map(Neighbour::row).toList();
                    List<VectorHit> flat = s.nearest(VectorQuery.builder(q).k(10).filter(f.getKey()).exact(true).build());
                    assertEquals(truth, flat.stream().map(h -> row(h.id())).toList(), f.getKey() + " query " + i);
                    List<VectorHit> ivf = s.nearest(VectorQuery.builder(q).k(10).filter(f.getKey()).build());
                    assertEquals(before.get(f.getKey() + "#" + i), ivf, f.getKey() + " query " + i + " (IVF-PQ)");
                    for (VectorHit h : ivf) {
                        assertTrue(f.getValue().test(row(h.id())), f.getKey() + ": row " + h.id());
                    }
                }
            }
        }
        // built by buildIndex with the options, on a flat pool too
        try (VectorPool s = VectorPool.create(dir.resolve("scalar-flat.lance"), ids, scalars, data, DIM)) {
            IndexChoice c = s.buildIndex(VectorIndexOptions.builder().bitmap("quality_status", "robot_type")
                    .build());
            assertEquals(IndexChoice.Kind.FLAT, c.kind());
            assertEquals(Map.of("quality_status_bitmap", "BITMAP", "robot_type_bitmap", "BITMAP"), s.indexTypes());
            float[] q = query(3);
            assertEquals(exact.knn(q, 10, notFailFranka).stream().map(Neighbour::row).toList(),
                    s.nearest(VectorQuery.builder(q).k(10).filter("quality_status != 'fail' AND robot_type = 'franka'")
                            .exact(true).build()).stream().map(h -> row(h.id())).toList());
            BadInputException missing = assertThrows(BadInputException.class,
                    () -> s.buildScalarIndexes(List.of(ScalarIndex.bitmap("no_such_column")), true));
            assertTrue(missing.getMessage().contains("no_such_column"), missing.getMessage());
            BadInputException emb = assertThrows(BadInputException.class,
                    () -> s.buildScalarIndexes(List.of(ScalarIndex.btree("embedding")), true));
            assertTrue(emb.getMessage().contains("scalar column"), emb.getMessage());
        }
        assertThrows(IllegalArgumentException.class,
                () -> VectorIndexOptions.builder().bitmap("quality_status").btree("quality_status").build());
        assertThrows(IllegalArgumentException.class, () -> VectorIndexOptions.builder().bitmap("embedding").build());
    }

    @Test
    void choiceFollowsPoolSize() {
        VectorIndexOptions o = VectorIndexOptions.builder().build();
        assertEquals(IndexChoice.Kind.FLAT, IndexChoice.choose(49_999, 96, o).kind());
        IndexChoice big = IndexChoice.choose(1_000_000, 96, o);
        assertEquals(IndexChoice.Kind.IVF_PQ, big.kind());
        assertEquals(1000, big.partitions());
        assertEquals(24, big.subVectors()); // 96 / 4
        assertEquals(192, IndexChoice.choose(100_000, 768, o).subVectors());
        assertEquals(9, IndexChoice.choose(100_000, 45, o).subVectors()); // largest divisor of 45 <= 11
        assertEquals(12, IndexChoice.choose(100_000, 96, VectorIndexOptions.builder().subVectors(12).build())
                .subVectors());
        assertThrows(IllegalArgumentException.class,
                () -> IndexChoice.choose(100_000, 96, VectorIndexOptions.builder().subVectors(7).build()));
        assertThrows(IllegalArgumentException.class, () -> VectorIndexOptions.builder().sampleRate(0).build());
        assertThrows(IllegalArgumentException.class, () -> VectorIndexOptions.builder().pqMaxIterations(0).build());
    }

    @Test
    void badInputIsRejected() {
        try (VectorPool s = VectorPool.open(uri)) {
            BadInputException dim = assertThrows(BadInputException.class,
                    () -> s.nearest(VectorQuery.builder(new float[8]).build()));
            assertTrue(dim.getMessage().contains("dimension 8"), dim.getMessage());
            BadInputException sql = assertThrows(BadInputException.class,
                    () -> s.nearest(VectorQuery.builder(query(0)).filter("no_such_column = 1").build()));
            assertTrue(sql.getMessage().contains(uri.toString()), sql.getMessage());
            BadInputException col = assertThrows(BadInputException.class,
                    () -> s.nearest(VectorQuery.builder(query(0)).column("quality_status").build()));
            assertTrue(col.getMessage().contains("quality_status"), col.getMessage());
        }
        NotFoundException open = assertThrows(NotFoundException.class,
                () -> VectorPool.open(dir.resolve("missing.lance")));
        assertTrue(open.getMessage().contains("missing.lance"));
        assertThrows(IllegalArgumentException.class,
                () -> VectorPool.create(dir.resolve("x.lance"), new String[2], Map.of(), new float[3], 2));
        assertThrows(IllegalArgumentException.class, () -> ExactSearch.ofRows(new float[] {1, 1}, 2));
    }
}
