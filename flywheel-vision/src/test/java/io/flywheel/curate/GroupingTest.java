package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
        assertGroups(g, new int[][] {{0, 1}, {2}}); // a leads (index order) and takes b; c is not pulled in through b
        // with b first, a and c are each within 0.1 of b but 0.1747 apart: only one of them joins b (they are equally
        // near b); representative-based grouping would have put all three together
        Groups gb = Grouping.embeddings(v, 0.1, new double[] {0, 1, 0});
        assertEquals(2, gb.groupCount());
        assertEquals(1, gb.representative(0));
        assertEquals(2, gb.size(0));
        assertNotEquals(gb.groupOf(0), gb.groupOf(2));
        assertDiameterWithin(gb, (i, j) -> ExactSearch.cosineDistance(v[i], v[j]), 0.1);
        // with b first and c nearer to b (0.25 rad: 0.0311) than a (0.0447), c joins
        float[][] w = {unit(0), unit(0.3), unit(0.55)};
        assertGroups(Grouping.embeddings(w, 0.05, new double[] {0, 1, 0}), new int[][] {{1, 2}, {0}});
    }

    /**
     * A line of items 0.1 rad apart on the unit circle, threshold 1 - cos 0.25 = 0.0311: items within
     * two steps are neighbours (1 - cos 0.2 = 0.0199), three steps are not (1 - cos 0.3 = 0.0447).
     * Representative-based grouping chains: a representative in the middle takes two on each side, a
     * group four steps (0.0789, 2.5 x the threshold) wide. Complete linkage keeps each group within two steps.
     */
    @Test
    void embeddingLineGroupsHaveDiameterWithinThreshold() {
        int n = 12;
        float[][] v = new float[n][];
        for (int i = 0; i < n; i++) {
            v[i] = unit(0.1 * i);
        }
        double t = 1 - Math.cos(0.25);
        // priority: item 5 first (say the only QC pass), then item 9, then index order
        double[] priority = new double[n];
        priority[5] = 2;
        priority[9] = 1;
        Groups g = Grouping.embeddings(v, t, priority);
        // 5 takes 4 and 6 (one step each; 4 first, lower index), then 3 is three steps from 6 and 7 three from 4;
        // 9 takes 8 and 10 (7 is 3 steps from 10, 11 three from 8); then 0 takes 1, 2; 3 and 7 and 11 are alone
        assertGroups(g, new int[][] {{5, 4, 6}, {9, 8, 10}, {0, 1, 2}, {3}, {7}, {11}});
        assertDiameterWithin(g, (i, j) -> ExactSearch.cosineDistance(v[i], v[j]), t);
    }

    /**
     * pHashes on a path: item k has its k lowest bits set, so items i and j are |i - j| bits apart,
     * the same chain shape in Hamming space.
     */
    @Test
    void phashLineGroupsHaveDiameterWithinThreshold() {
        int n = 20;
        long[] h = new long[n];
        for (int k = 0; k < n; k++) {
            h[k] = k == 0 ? 0 : -1L >>> (64 - k);
        }
        double[] sharpness = new double[n];
        sharpness[10] = 3; // the sharpest frame in the middle
        sharpness[3] = 2;
        sharpness[16] = 1;
        Groups g = Grouping.phash(h, 3, sharpness);
        // 10 takes 9 and 11 (1 bit), then 8 (2 bits; before 12, lower index); 12 is 4 bits from 8, 7 from 11.
        // 3 takes 2, 4, then 1; 5 is 4 bits from 1, 0 from 4. 16 takes 15, 17, then 14; 18 is 4 from 14, 13 from 17.
        // Then index order: 0 is alone (1..3 are taken); 5 takes 6, 7; 12 takes 13; 18 takes 19.
        assertGroups(g, new int[][] {{10, 9, 11, 8}, {3, 2, 4, 1}, {16, 15, 17, 14}, {0}, {5, 6, 7}, {12, 13},
            {18, 19}});
        assertDiameterWithin(g, (i, j) -> Long.bitCount(h[i] ^ h[j]), 3);
        // representative-based grouping would have given 10 the members 7..13 (6 bits wide at threshold 3)
        assertEquals(4, g.size(g.groupOf(10)));
    }

    @Test
    void randomChainsNeverExceedTheThresholdWhateverThePriority() {
        Random r = new Random(23);
        for (int round = 0; round < 20; round++) {
            // dense clusters of near hashes: many chains of neighbours through intermediate items
            int n = 400;
            long[] h = new long[n];
            long base = r.nextLong();
            for (int i = 0; i < n; i++) {
                h[i] = HammingSearchTest.flip(base, r.nextInt(7), r);
                if (i % 40 == 0) {
                    base = r.nextLong();
                }
            }
            double[] priority = new double[n];
            for (int i = 0; i < n; i++) {
                priority[i] = r.nextInt(5); // many ties, as with QC statuses
            }
            int t = 1 + r.nextInt(6);
            Groups g = Grouping.phash(h, t, priority);
            assertDiameterWithin(g, (i, j) -> Long.bitCount(h[i] ^ h[j]), t);
            float[][] v = new float[n][];
            for (int i = 0; i < n; i++) {
                v[i] = unit(r.nextDouble() * 0.5); // all on one arc: chains everywhere
            }
            double ct = 0.001 + r.nextDouble() * 0.01;
            Groups ge = Grouping.embeddings(v, ct, priority);
            assertDiameterWithin(ge, (i, j) -> ExactSearch.cosineDistance(v[i], v[j]), ct);
            for (Groups x : List.of(g, ge)) {
                for (int grp = 0; grp < x.groupCount(); grp++) {
                    for (int m : x.members(grp)) {
                        assertTrue(priority[m] <= priority[x.representative(grp)], "representative has the highest priority");
                    }
                }
            }
        }
    }

    interface Distance {
        double between(int i, int j);
    }

    /** Asserts every two members of every group are within {@code t}. */
    static void assertDiameterWithin(Groups g, Distance d, double t) {
        for (int grp = 0; grp < g.groupCount(); grp++) {
            int[] m = g.members(grp);
            double diameter = 0;
            for (int x = 0; x < m.length; x++) {
                for (int y = x + 1; y < m.length; y++) {
                    diameter = Math.max(diameter, d.between(m[x], m[y]));
                }
            }
            assertTrue(diameter <= t, "group " + grp + " " + Arrays.toString(m) + " has diameter " + diameter
                    + " over the threshold " + t);
        }
    }

    /** Asserts the groups, each given as representative first, then its other members; in the order chosen. */
    static void assertGroups(Groups g, int[][] expected) {
        assertEquals(expected.length, g.groupCount(), "group count");
        for (int grp = 0; grp < expected.length; grp++) {
            assertEquals(expected[grp][0], g.representative(grp), "representative of group " + grp);
            int[] want = expected[grp].clone();
            Arrays.sort(want);
            assertArrayEquals(want, g.members(grp), "members of group " + grp);
        }
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
        long[] h = new long[centers * 4];
        double[] priority = new double[h.length];
        for (int c = 0; c < centers; c++) {
            long base = r.nextLong();
            h[4 * c] = base;
            priority[4 * c] = 1;
            h[4 * c + 1] = base ^ 0b11L; // 2 bits
            h[4 * c + 2] = base ^ 0b11111L; // 5 bits, 3 from the 2-bit copy
            h[4 * c + 3] = base ^ (0b11111L << 10); // 5 other bits: 7 from the 2-bit copy
        }
        List<DedupSweep.Step> steps = DedupSweep.phash(h, new int[] {5, 0, 2}, priority, 10);
        assertEquals(3, steps.size());
        DedupSweep.Step s0 = steps.get(0);
        assertEquals(0.0, s0.threshold());
        assertEquals(400, s0.groups());
        assertEquals(0, s0.duplicateGroups());
        assertEquals(0, s0.justInsideTotal());
        DedupSweep.Step s2 = steps.get(1);
        assertEquals(300, s2.groups());
        assertEquals(100, s2.removed());
        assertEquals(100, s2.justInsideTotal());
        assertEquals(10, s2.justInside().size());
        for (DedupSweep.MergedPair p : s2.justInside()) {
            assertEquals(2f, p.distance());
            assertEquals(p.representative() + 1, p.member());
        }
        DedupSweep.Step s5 = steps.get(2);
        // base takes the 2-bit and the first 5-bit copy; the other 5-bit copy is 7 bits from the 2-bit one and
        // stays out (complete linkage), where representative-based grouping would have taken it as well
        assertEquals(200, s5.groups());
        assertEquals(100, s5.duplicateGroups());
        assertEquals(200, s5.removed());
        assertEquals(100, s5.justInsideTotal()); // only the first 5-bit copies are new at t = 5
        for (DedupSweep.MergedPair p : s5.justInside()) {
            assertEquals(5f, p.distance());
            assertEquals(p.representative() + 2, p.member());
        }
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
