package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class GroupingTest {

    static float[] unit(double angle) {
        return new float[] {(float) Math.cos(angle), (float) Math.sin(angle)};
    }

    @Test
    void embeddingGroupsDoNotChain() {
        // a, b, c on the unit circle 0.3 rad apart: d(a,b) = d(b,c) = 1 - cos 0.3 = 0.0447, d(a,c) = 1 - cos 0.6 = 0.1747
        float[][] v = {unit(0), unit(0.3), unit(0.6)};
        Groups g = Grouping.embeddings(v, 0.1, null);
        assertEquals(g.groupOf(0), g.groupOf(1)); // a leads (index order) and takes b
        assertNotEquals(g.groupOf(0), g.groupOf(2)); // c is not pulled in through b
        assertEquals(2, g.groupCount());
        // with b first, b takes both a and c: each is within 0.1 of b
        Groups gb = Grouping.embeddings(v, 0.1, new double[] {0, 1, 0});
        assertEquals(1, gb.groupCount());
        assertEquals(1, gb.representative(0));
        assertEquals(1 - Math.cos(0.3), gb.distanceToRepresentative(2), 1e-5);
    }

    @Test
    void plantedEmbeddingClustersAreRecoveredExactly() {
        Random r = new Random(11);
        int clusters = 60;
        int per = 5;
        int dim = 32;
        float[][] v = new float[clusters * per][];
        int[] truth = new int[v.length];
        double[] priority = new double[v.length];
        int[] order = shuffled(v.length, r);
        for (int c = 0; c < clusters; c++) {
            float[] center = randomUnit(dim, r);
            for (int m = 0; m < per; m++) {
                float[] x = new float[dim];
                for (int d = 0; d < dim; d++) {
                    x[d] = center[d] + (float) (r.nextGaussian() * 0.02);
                }
                int item = order[c * per + m];
                v[item] = ExactSearch.normalise(x);
                truth[item] = c;
                priority[item] = r.nextDouble();
            }
        }
        // members are ~0.02*sqrt(2*32)... about 0.01 cosine distance from each other; random centers ~1 apart
        Groups g = Grouping.embeddings(v, 0.1, priority);
        assertEquals(clusters, g.groupCount());
        assertEquals(clusters, g.duplicateGroupCount());
        assertEquals(clusters * (per - 1), g.removedCount());
        for (int i = 0; i < v.length; i++) {
            for (int j = 0; j < v.length; j++) {
                assertEquals(truth[i] == truth[j], g.groupOf(i) == g.groupOf(j));
            }
        }
        for (int grp = 0; grp < g.groupCount(); grp++) {
            int rep = g.representative(grp);
            for (int m : g.members(grp)) {
                assertTrue(priority[m] <= priority[rep], "representative has the highest priority");
                assertTrue(ExactSearch.cosineDistance(v[m], v[rep]) <= 0.1);
            }
        }
    }

    @Test
    void phashChainIsSplitAndMembersStayWithinThreshold() {
        long a = 0L;
        long b = 0b111L; // 3 bits from a
        long c = 0b111111L; // 3 bits from b, 6 from a
        Groups g = Grouping.phash(new long[] {a, b, c}, 4, null);
        assertEquals(2, g.groupCount());
        assertEquals(g.groupOf(0), g.groupOf(1));
        assertNotEquals(g.groupOf(0), g.groupOf(2));
        assertEquals(3f, g.distanceToRepresentative(1));
    }

    @Test
    void plantedFrameGroupsAreRecoveredWithTheSharpestFrameKept() {
        Random r = new Random(5);
        int centers = 2000;
        long[] h = new long[centers * 4];
        int[] truth = new int[h.length];
        double[] sharpness = new double[h.length];
        int[] order = shuffled(h.length, r);
        for (int c = 0; c < centers; c++) {
            long base = r.nextLong();
            for (int m = 0; m < 4; m++) {
                int item = order[c * 4 + m];
                h[item] = m == 3 && c % 2 == 0 ? base : HammingSearchTest.flip(base, r.nextInt(3), r); // <= 2 bits off
                truth[item] = c;
                sharpness[item] = r.nextInt(100); // ties happen: lowest index wins
            }
        }
        Groups g = Grouping.phash(h, 4, sharpness);
        assertEquals(centers, g.groupCount());
        int[] repOfTruth = new int[centers];
        Arrays.fill(repOfTruth, -1);
        for (int i = 0; i < h.length; i++) {
            int c = truth[i];
            if (repOfTruth[c] < 0 || sharpness[i] > sharpness[repOfTruth[c]]) {
                repOfTruth[c] = i; // first (lowest index) of the sharpest
            }
        }
        for (int i = 0; i < h.length; i++) {
            assertEquals(repOfTruth[truth[i]], g.representative(g.groupOf(i)), "item " + i);
            assertTrue(Long.bitCount(h[i] ^ h[g.representative(g.groupOf(i))]) <= 4);
        }
    }

    @Test
    void staticFramesFormOneGroup() {
        long[] h = new long[3001];
        Arrays.fill(h, 0xCAFEL);
        h[1234] = 0xCAFFL; // one bit off
        Groups g = Grouping.phash(h, 2, null);
        assertEquals(1, g.groupCount());
        assertEquals(0, g.representative(0));
        assertEquals(1f, g.distanceToRepresentative(1234));
        assertEquals(3001, g.size(0));
    }

    @Test
    void sweepReportsCountsAndPairsJustInside() {
        Random r = new Random(9);
        int centers = 100;
        long[] h = new long[centers * 3];
        double[] priority = new double[h.length];
        for (int c = 0; c < centers; c++) {
            long base = r.nextLong();
            h[3 * c] = base;
            priority[3 * c] = 1;
            h[3 * c + 1] = base ^ 0b11L; // 2 bits
            h[3 * c + 2] = base ^ (0b11111L << 10); // 5 other bits: 7 from the 2-bit copy
        }
        List<DedupSweep.Step> steps = DedupSweep.phash(h, new int[] {5, 0, 2}, priority, 10);
        assertEquals(3, steps.size());
        DedupSweep.Step s0 = steps.get(0);
        assertEquals(0.0, s0.threshold());
        assertEquals(300, s0.groups());
        assertEquals(0, s0.duplicateGroups());
        assertEquals(0, s0.justInsideTotal());
        DedupSweep.Step s2 = steps.get(1);
        assertEquals(200, s2.groups());
        assertEquals(100, s2.removed());
        assertEquals(100, s2.justInsideTotal());
        assertEquals(10, s2.justInside().size());
        for (DedupSweep.MergedPair p : s2.justInside()) {
            assertEquals(2f, p.distance());
            assertEquals(p.representative() + 1, p.member());
        }
        DedupSweep.Step s5 = steps.get(2);
        assertEquals(100, s5.groups());
        assertEquals(100, s5.duplicateGroups());
        assertEquals(100, s5.justInsideTotal()); // only the 5-bit copies are new at t = 5
        assertEquals(5f, s5.justInside().get(0).distance());
        // embeddings: the same API over cosine distances
        float[][] v = {unit(0), unit(0.1), unit(1.0), unit(1.5)};
        List<DedupSweep.Step> e = DedupSweep.embeddings(v, new double[] {0.01, 0.2}, null, 5);
        assertEquals(3, e.get(0).groups()); // 0 and 0.1 rad: 1 - cos 0.1 = 0.005
        assertEquals(2, e.get(1).groups()); // 1.0 and 1.5 rad: 1 - cos 0.5 = 0.122
        assertEquals(new DedupSweep.MergedPair(2, 3, (float) (1 - Math.cos(0.5))).member(),
                e.get(1).justInside().get(0).member());
    }

    @Test
    void badInputIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Grouping.phash(new long[3], 2, new double[2]));
        assertThrows(IllegalArgumentException.class, () -> Grouping.embeddings(new float[][] {{1, 1}}, 0.1, null));
        assertThrows(IllegalArgumentException.class, () -> DedupSweep.phash(new long[3], new int[0], null, 1));
    }

    static float[] randomUnit(int dim, Random r) {
        float[] x = new float[dim];
        for (int d = 0; d < dim; d++) {
            x[d] = (float) r.nextGaussian();
        }
        return ExactSearch.normalise(x);
    }

    static int[] shuffled(int n, Random r) {
        int[] p = Grouping.identity(n);
        for (int k = n - 1; k > 0; k--) {
            int j = r.nextInt(k + 1);
            int t = p[k];
            p[k] = p[j];
            p[j] = t;
        }
        return p;
    }
}
