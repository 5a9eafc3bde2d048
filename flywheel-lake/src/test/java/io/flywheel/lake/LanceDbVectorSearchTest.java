package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.testkit.Node;
import io.flywheel.testkit.SyntheticVectors;

/**
 * {@code @lancedb/lancedb} (npm) searches the lake's episode vectors ({@code open_table('episodes').search(vec)
 * .limit(5)}) and finds what Flywheel's exact search finds: on a table small enough to be searched flat, the same five
 * in the same order; with the IVF-PQ index that {@link Lake#refreshVectorIndex} builds (at a size where it is built),
 * recall@5 &ge; 0.9 against the exact search, the plan showing the index in use. Vectors: clustered unit vectors
 * ({@link SyntheticVectors}, the truth is a brute force over them).
 */
class LanceDbVectorSearchTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aFlatTableGivesTheSameFiveAsTheExactSearch() throws Exception {
        int n = 300;
        int dim = 16;
        float[] data = SyntheticVectors.clustered(n, dim, 12, 0.9, 3);
        Path lakeDir = dir.resolve("flat");
        List<float[]> queries = queries(data, n, dim, 10);
        List<List<String>> exact = new ArrayList<>();
        try (Lake lake = Lake.init(lakeDir)) {
            EmbeddingModel m = lake.registerModel("test-model", dim, "");
            write(lake, m, data, 0, n, dim);
            assertTrue(lake.refreshVectorIndex(m, VectorIndexOptions.builder().build()).isEmpty(),
                    n + " vectors < 50,000: no index");
            try (LakeTable t = lake.table("episodes")) {
                for (float[] q : queries) {
                    List<VectorHit> hits = t.nearest(VectorQuery.builder(q).column(m.column()).idColumn("episode_id").k(5)
                            .exact(true).build());
                    List<String> ids = hits.stream().map(VectorHit::id).toList();
                    assertEquals(bruteForce(data, n, dim, q, 5), ids, "Flywheel's exact search is a brute force");
                    exact.add(ids);
                }
            }
        }
        JsonNode r = search(lakeDir, queries, 5, "plain");
        assertTrue(r.get("indices").isEmpty());
        assertTrue(r.get("plan").asText().contains("KNNVectorDistance"), r.get("plan").asText());
        for (int i = 0; i < queries.size(); i++) {
            assertEquals(exact.get(i), ids(r.get("results").get(i)), "query " + i + ": LanceDB's five");
        }
    }

    @Test
    void theIndexedTableReachesRecallAt5OfAtLeast09() throws Exception {
        int n = 6_000;
        int dim = 32;
        int extra = 500;
        float[] data = SyntheticVectors.clustered(n + extra, dim, 60, 0.8, 11);
        Path lakeDir = dir.resolve("indexed");
        VectorIndexOptions options = VectorIndexOptions.builder().flatBelowRows(2_000).build();
        List<float[]> queries = queries(data, n + extra, dim, 40);
        EmbeddingModel m;
        try (Lake lake = Lake.init(lakeDir)) {
            m = lake.registerModel("test-model", dim, "");
            write(lake, m, data, 0, n, dim);
            VectorIndexInfo idx = lake.refreshVectorIndex(m, options).orElseThrow();
            assertEquals(m.indexName(), idx.name());
            assertEquals(n, idx.rowsIndexed());
            // appended episodes are not in the index until it is refreshed (searches scan them flat meanwhile)
            write(lake, m, data, n, n + extra, dim);
            try (LakeTable t = lake.table("episodes")) {
                assertEquals(extra, t.vectorIndex(m.column()).orElseThrow().rowsUnindexed());
            }
            long seq = lake.snapshot().seq();
            VectorIndexInfo refreshed = lake.refreshVectorIndex(m, options).orElseThrow();
            assertEquals(0, refreshed.rowsUnindexed());
            assertEquals(n + extra, refreshed.rowsIndexed());
            assertEquals("index", lake.snapshot().operation());
            assertEquals(seq + 1, lake.snapshot().seq(), "the refresh is one lake commit");
            lake.refreshVectorIndex(m, options);
            assertEquals(seq + 1, lake.snapshot().seq(), "a current index commits nothing");
        }
        int found = 0;
        int foundOurs = 0;
        List<Set<String>> truth = new ArrayList<>();
        try (Lake lake = Lake.open(lakeDir); LakeTable t = lake.table("episodes")) {
            for (float[] q : queries) {
                List<String> exact = t.nearest(VectorQuery.builder(q).column(m.column()).idColumn("episode_id").k(5)
                        .exact(true).build()).stream().map(VectorHit::id).toList();
                assertEquals(bruteForce(data, n + extra, dim, q, 5), exact);
                truth.add(new HashSet<>(exact));
                for (VectorHit h : t.nearest(VectorQuery.builder(q).column(m.column()).idColumn("episode_id").k(5)
                        .nprobes(20).refineFactor(10).build())) {
                    foundOurs += truth.get(truth.size() - 1).contains(h.id()) ? 1 : 0;
                }
            }
        }
        JsonNode r = search(lakeDir, queries, 5, "cosine:" + m.column() + ":20:10");
        assertEquals(m.indexName(), r.get("indices").get(0).get("name").asText());
        assertEquals("IvfPq", r.get("indices").get(0).get("type").asText());
        assertTrue(r.get("plan").asText().contains("ANNIvfPartition"), "LanceDB searches the index: "
                + r.get("plan").asText());
        for (int i = 0; i < queries.size(); i++) {
            List<String> got = ids(r.get("results").get(i));
            assertEquals(5, got.size());
            for (String id : got) {
                found += truth.get(i).contains(id) ? 1 : 0;
            }
        }
        double recall = found / (queries.size() * 5.0);
        double ours = foundOurs / (queries.size() * 5.0);
        System.out.println("LanceDB recall@5 through the lake's IVF-PQ index = " + recall + ", Flywheel's = " + ours
                + " (n=" + (n + extra) + ", D=" + dim + ", nprobes=20, refine=10)");
        assertTrue(recall >= 0.9, "LanceDB recall@5 " + recall);
        assertTrue(ours >= 0.9, "Flywheel's recall@5 " + ours);
    }

    /** Appends episodes from..to-1 with their vectors (rows from..to-1 of {@code data}) in one transaction. */
    private static void write(Lake lake, EmbeddingModel m, float[] data, int from, int to, int dim) {
        List<EpisodeRow> rows = new ArrayList<>();
        for (int i = from; i < to; i++) {
            float[] v = new float[dim];
            System.arraycopy(data, i * dim, v, 0, dim);
            rows.add(Fixtures.episode(i, 1).withEmbedding(m.id(), v, 1L));
        }
        lake.begin("ingest").appendEpisodes(rows).commit();
    }

    /** @return the ids of the k rows nearest q by cosine distance, in float64, nearest first */
    private static List<String> bruteForce(float[] data, int n, int dim, float[] q, int k) {
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            double dot = 0;
            double nq = 0;
            double nv = 0;
            for (int j = 0; j < dim; j++) {
                dot += (double) q[j] * data[i * dim + j];
                nq += (double) q[j] * q[j];
                nv += (double) data[i * dim + j] * data[i * dim + j];
            }
            d[i] = 1 - dot / Math.sqrt(nq * nv);
        }
        return IntStream.range(0, n).boxed().sorted(Comparator.comparingDouble(i -> d[i])).limit(k)
                .map(i -> Fixtures.episodeId(i)).toList();
    }

    /** Queries near rows of the data, not equal to any: row (7i + 3) perturbed, normalised. */
    private static List<float[]> queries(float[] data, int n, int dim, int count) {
        List<float[]> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int row = (7 * i + 3) % n;
            float[] q = new float[dim];
            double s = 0;
            for (int j = 0; j < dim; j++) {
                q[j] = data[row * dim + j] + 0.05f * ((i + j) % 5 - 2);
                s += q[j] * q[j];
            }
            for (int j = 0; j < dim; j++) {
                q[j] = (float) (q[j] / Math.sqrt(s));
            }
            out.add(q);
        }
        return out;
    }

    private JsonNode search(Path lakeDir, List<float[]> queries, int k, String mode) throws Exception {
        Path file = dir.resolve("queries-" + System.nanoTime() + ".json");
        Files.writeString(file, JSON.writeValueAsString(queries));
        Node.Result r = Node.run("lance-search.mjs", lakeDir.toString(), "episodes", file.toString(),
                Integer.toString(k), mode);
        assertEquals(0, r.exitCode(), r.stderr());
        return JSON.readTree(r.stdout());
    }

    private static List<String> ids(JsonNode hits) {
        List<String> out = new ArrayList<>();
        hits.forEach(h -> out.add(h.get("id").asText()));
        return out;
    }
}
