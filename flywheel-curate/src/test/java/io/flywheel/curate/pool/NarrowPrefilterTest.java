package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Neighbour;
import io.flywheel.lake.VectorIndexOptions;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.lake.Lake;

/**
 * A pool large enough for an IVF-PQ index, mined with a prefilter that keeps one robot of 50 whose episodes lie far
 * from the query: the partitions nearest the query hold none of them, so an IVF search would miss them. The search is
 * exact below the flat threshold of passing rows, and returns what a brute force over that robot's episodes returns:
 * on a scratch pool (vectors given in memory), and on the lake's own episodes column with the IVF-PQ index enrich
 * builds.
 */
class NarrowPrefilterTest {
    static final int ROBOTS = 50;
    static final int DIM = 16;

    @Test
    void aNarrowRobotFilterIsSearchedExactly(@TempDir Path tmp) {
        int n = (int) VectorIndexOptions.DEFAULT_FLAT_BELOW_ROWS + 1_000;
        Random rnd = new Random(5);
        float[][] centre = new float[ROBOTS][];
        for (int r = 0; r < ROBOTS; r++) {
            centre[r] = ExactSearch.normalise(gaussian(rnd, 1));
        }
        List<EpisodeInfo> infos = new ArrayList<>();
        float[][] vecs = new float[n + 1][];
        for (int i = 0; i < n; i++) {
            int r = i % ROBOTS;
            float[] x = gaussian(rnd, 0.15f);
            for (int j = 0; j < DIM; j++) {
                x[j] += centre[r][j];
            }
            String id = "ep" + i;
            infos.add(new EpisodeInfo(id, "robot-" + r, "pick", "s", "o", "success", "pass", id));
            vecs[i] = ExactSearch.normalise(x);
        }
        // the query: a failure of robot 0, in robot 0's cluster
        infos.add(new EpisodeInfo("query", "robot-0", "pick", "s", "o", "failure", "pass", "query"));
        vecs[n] = vecs[0].clone();
        EpisodeVectors ev = new EpisodeVectors(infos, vecs, "test", "", 1);
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            MiningJob.Result r = MiningJob.run(lake, ev, MiningJob.failures(ev),
                    MiningJob.Options.builder(10).robot("robot-7").build());
            assertEquals("IVF_PQ", r.index().kind().name(), "a pool of " + n + " rows gets an IVF-PQ index");
            assertTrue(r.lineage().get("index").toString().startsWith("exact search over the " + (n / ROBOTS) + " rows"
                    + " passing the prefilter"), r.lineage().get("index").toString());
            List<Neighbour> want = ExactSearch.of(vecs).knn(vecs[n], 10,
                    row -> row < n && infos.get(row).robotId().equals("robot-7"));
            List<MinedEpisode> got = r.neighbours();
            assertEquals(10, got.size());
            for (int i = 0; i < 10; i++) {
                assertEquals(infos.get(want.get(i).row()).episodeId(), got.get(i).episodeId(), "rank " + (i + 1));
                assertEquals(want.get(i).distance(), got.get(i).distance(), 1e-4);
            }
        }
    }

    @Test
    void aNarrowRobotFilterOnTheLakesIndexedColumnIsSearchedExactly(@TempDir Path tmp) {
        int n = (int) VectorIndexOptions.DEFAULT_FLAT_BELOW_ROWS + 1_000;
        Random rnd = new Random(5);
        float[][] centre = new float[ROBOTS][];
        for (int r = 0; r < ROBOTS; r++) {
            centre[r] = ExactSearch.normalise(gaussian(rnd, 1));
        }
        float[][] vecs = new float[n + 1][];
        List<io.flywheel.rows.EpisodeRow> rows = new ArrayList<>();
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            io.flywheel.lake.EmbeddingModel m = lake.registerModel("test", DIM, "");
            for (int i = 0; i <= n; i++) {
                int r = i < n ? i % ROBOTS : 0;
                float[] x = gaussian(rnd, 0.15f);
                for (int j = 0; j < DIM; j++) {
                    x[j] += centre[r][j];
                }
                vecs[i] = i < n ? ExactSearch.normalise(x) : vecs[0].clone(); // the query: a failure of robot 0
                String id = i < n ? String.format("ep%06d", i) : "query";
                rows.add(new io.flywheel.rows.EpisodeRow(id, id, "robot-" + r, "pick", "s", "o",
                        i < n ? "success" : "failure", 0L, 0L, 0L, "/cam", 1L, "pass", List.of(), "{}", "{}")
                        .withEmbedding("test", vecs[i], 1L));
            }
            lake.begin("ingest").appendEpisodes(rows).commit();
            io.flywheel.lake.VectorIndexInfo idx = lake.refreshVectorIndex(m, VectorIndexOptions.builder().build())
                    .orElseThrow(() -> new AssertionError(n + " vectors: enrich's refresh builds the index"));
            assertEquals(n + 1, idx.rowsIndexed());
            EpisodeVectors ev = EpisodeVectors.read(lake);
            assertEquals("emb_test", ev.column());
            MiningJob.Result r = MiningJob.run(lake, ev, MiningJob.failures(ev),
                    MiningJob.Options.builder(10).robot("robot-7").build());
            assertEquals("IVF_PQ", r.index().kind().name(), r.index().reason());
            assertTrue(r.lineage().get("searched").toString().startsWith("episodes.emb_test (the lake's column"),
                    r.lineage().toString());
            assertTrue(r.lineage().get("index").toString().startsWith("exact search over the " + (n / ROBOTS) + " rows"
                    + " passing the prefilter"), r.lineage().get("index").toString());
            List<Neighbour> want = ExactSearch.of(vecs).knn(vecs[n], 10, row -> row < n && row % ROBOTS == 7);
            List<MinedEpisode> got = r.neighbours();
            assertEquals(10, got.size());
            for (int i = 0; i < 10; i++) {
                assertEquals(String.format("ep%06d", want.get(i).row()), got.get(i).episodeId(), "rank " + (i + 1));
                assertEquals(want.get(i).distance(), got.get(i).distance(), 1e-4);
            }
            // a wide filter goes through the index: the query's own robot, nearest its cluster
            MiningJob.Result wide = MiningJob.run(lake, ev, MiningJob.failures(ev), MiningJob.Options.k(10));
            assertTrue(wide.lineage().get("index").toString().startsWith("IVF_PQ (the lake's index emb_test_ivf_pq"),
                    wide.lineage().get("index").toString());
            List<Neighbour> near = ExactSearch.of(vecs).knn(vecs[n], 10, row -> row < n);
            long found = wide.neighbours().stream().filter(x -> near.stream()
                    .anyMatch(w -> String.format("ep%06d", w.row()).equals(x.episodeId()))).count();
            assertTrue(found >= 9, "recall@10 of the indexed search: " + found + "/10");
        }
    }

    private static float[] gaussian(Random rnd, float scale) {
        float[] x = new float[DIM];
        for (int j = 0; j < DIM; j++) {
            x[j] = (float) (rnd.nextGaussian() * scale);
        }
        return x;
    }
}
