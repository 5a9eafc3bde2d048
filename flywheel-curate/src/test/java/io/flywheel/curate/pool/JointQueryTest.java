package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Neighbour;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.lake.Lake;

/**
 * The joint query of {@link MiningJob} on generated episode vectors whose truth is known by construction: each
 * vector is a strong scene direction (one of 5 scenes), noise, and, for the rare hard-object episodes, a weaker
 * object direction shared across scenes. Five failures, all hard, one per scene, are the queries.
 */
class JointQueryTest {
    static final int DIM = 48;
    static final int POOL = 250;
    static final int SCENES = 5;

    @TempDir
    Path tmp;

    /** Pool episode i is hard when i % 25 == 0 (10 of 250, 2 per scene); scene i % 5. */
    static EpisodeVectors fleet() {
        Random rnd = new Random(11);
        float[][] scene = new float[SCENES][];
        for (int s = 0; s < SCENES; s++) {
            scene[s] = gaussian(rnd, 1.0);
        }
        float[] object = gaussian(rnd, 0.6);
        List<EpisodeInfo> infos = new ArrayList<>();
        List<float[]> vecs = new ArrayList<>();
        for (int i = 0; i < POOL + SCENES; i++) {
            boolean query = i >= POOL;
            int s = i % SCENES;
            boolean hard = query || i % 25 == 0;
            float[] x = gaussian(rnd, 0.45);
            for (int j = 0; j < DIM; j++) {
                x[j] += scene[s][j] + (hard ? object[j] : 0);
            }
            String id = String.format("ep%03d", i);
            infos.add(new EpisodeInfo(id, "robot", "pick", "scene" + s, hard ? "glass_cup" : "mug",
                    query ? "failure" : "success", "pass", id));
            vecs.add(ExactSearch.normalise(x));
        }
        return new EpisodeVectors(infos, vecs.toArray(new float[0][]), "test", "", 1);
    }

    @Test
    void jointQueryFindsTheSharedObjectWherePerQueryNeighboursStayInTheirScenes() {
        EpisodeVectors ev = fleet();
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            List<MiningJob.Query> queries = MiningJob.failures(ev);
            assertEquals(5, queries.size());
            MiningJob.Result each = MiningJob.run(lake, ev, queries, MiningJob.Options.k(4));
            MiningJob.Result joint = MiningJob.run(lake, ev, queries, MiningJob.Options.builder(4).joint(true).build());
            int hardEach = hard(ev, each.neighbours());
            int hardJoint = hard(ev, joint.neighbours());
            assertEquals(20, joint.neighbours().size());
            assertEquals(20, distinct(joint.neighbours()).size());
            // by construction: all 10 hard episodes are nearer the queries' mean than any other; k = 4 per query
            // finds the 2 hard ones of the query's own scene and 2 same-scene others
            assertEquals(10, hardJoint, "hard episodes among the joint query's 20 neighbours");
            assertTrue(hardEach < hardJoint, "per-query neighbours hold " + hardEach + " hard episodes");
            assertTrue(joint.lineage().get("query_mode").toString().startsWith("joint"));
            assertEquals("k neighbours per query", each.lineage().get("query_mode"));
        }
    }

    @Test
    void jointNeighboursAreTheExactNearestToTheMeanQueryEachUnderItsNearestQuery() {
        EpisodeVectors ev = fleet();
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            List<MiningJob.Query> queries = MiningJob.failures(ev);
            MiningJob.Result r = MiningJob.run(lake, ev, queries, MiningJob.Options.builder(3).joint(true).build());
            // the test's own mean of the 5 (unit) query vectors, normalised
            float[] mean = new float[DIM];
            for (MiningJob.Query q : queries) {
                for (int j = 0; j < DIM; j++) {
                    mean[j] += q.vector()[j] / queries.size();
                }
            }
            Set<Integer> queryRows = new HashSet<>();
            queries.forEach(q -> queryRows.add(ev.indexOf(q.id())));
            List<Neighbour> want = ExactSearch.of(ev.vectors()).knn(ExactSearch.normalise(mean), 15, row -> !queryRows.contains(row));
            Set<String> wantIds = new HashSet<>();
            want.forEach(n -> wantIds.add(ev.infos().get(n.row()).episodeId()));
            assertEquals(wantIds, distinct(r.neighbours()));
            // each under the query nearest to it, with that distance, ranked 1.. within the query
            String previousQuery = null;
            int expectedRank = 0;
            double previousDistance = -1;
            for (MinedEpisode m : r.neighbours()) {
                float[] v = ev.vectors()[ev.indexOf(m.episodeId())];
                double best = Double.POSITIVE_INFINITY;
                String bestQuery = null;
                for (MiningJob.Query q : queries) {
                    double d = ExactSearch.cosineDistance(q.vector(), v);
                    if (d < best) {
                        best = d;
                        bestQuery = q.id();
                    }
                }
                assertEquals(bestQuery, m.queryEpisodeId(), m.episodeId());
                assertEquals(best, m.distance(), 1e-5, m.episodeId());
                if (!m.queryEpisodeId().equals(previousQuery)) {
                    previousQuery = m.queryEpisodeId();
                    expectedRank = 0;
                    previousDistance = -1;
                }
                assertEquals(++expectedRank, m.rank());
                assertTrue(m.distance() >= previousDistance);
                previousDistance = m.distance();
            }
        }
    }

    @Test
    void queriesThatCancelOutAreRefused() {
        float[] a = {1, 0, 0};
        float[] b = {-1, 0, 0};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MiningJob.jointVector(
                List.of(new MiningJob.Query("a", a, "episode"), new MiningJob.Query("b", b, "episode"))));
        assertTrue(e.getMessage().contains("cancel out"), e.getMessage());
        float[] j = MiningJob.jointVector(List.of(new MiningJob.Query("a", new float[] {3, 0}, "episode"),
                new MiningJob.Query("b", new float[] {0, 0.5f}, "episode")));
        assertEquals(Math.sqrt(0.5), j[0], 1e-6); // each normalised first: (1, 0) and (0, 1)
        assertEquals(Math.sqrt(0.5), j[1], 1e-6);
    }

    private static int hard(EpisodeVectors ev, List<MinedEpisode> mined) {
        int n = 0;
        for (String id : distinct(mined)) {
            n += ev.infos().get(ev.indexOf(id)).object().equals("glass_cup") ? 1 : 0;
        }
        return n;
    }

    private static Set<String> distinct(List<MinedEpisode> mined) {
        Set<String> s = new HashSet<>();
        mined.forEach(m -> s.add(m.episodeId()));
        return s;
    }

    private static float[] gaussian(Random rnd, double norm) {
        float[] x = new float[DIM];
        double n = 0;
        for (int j = 0; j < DIM; j++) {
            x[j] = (float) rnd.nextGaussian();
            n += x[j] * x[j];
        }
        for (int j = 0; j < DIM; j++) {
            x[j] = (float) (x[j] / Math.sqrt(n) * norm);
        }
        return x;
    }
}
