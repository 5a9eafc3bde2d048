package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The pair search spread over partitions (buckets of pHash bands), merged, then grouped on one machine, against
 * the one-machine grouping and against planted groups.
 */
class PhashBandsTest {

    /** Planted pool: cluster k's hashes, their priorities, and for each item the cluster it was made from. */
    record Pool(long[] hashes, double[] priority, int[] cluster, int clusters) {}

    /**
     * Clusters around random centres at least {@code 3t + 1} bits apart; every member is its centre with at most
     * {@code t / 2} bits flipped (some members repeated, as static frames are), so two members of one cluster
     * are within t bits and two of different clusters more than t apart: the groups are the clusters.
     */
    static Pool planted(int clusters, int t, Random r) {
        List<Long> centres = new ArrayList<>();
        while (centres.size() < clusters) {
            long c = r.nextLong();
            boolean far = true;
            for (long o : centres) {
                far &= Long.bitCount(c ^ o) >= 3 * t + 1;
            }
            if (far) {
                centres.add(c);
            }
        }
        List<Long> hashes = new ArrayList<>();
        List<Integer> cluster = new ArrayList<>();
        for (int k = 0; k < clusters; k++) {
            int members = 1 + r.nextInt(8);
            for (int q = 0; q < members; q++) {
                long h = centres.get(k);
                int flips = r.nextInt(t / 2 + 1);
                for (int f = 0; f < flips; f++) {
                    h ^= 1L << r.nextInt(64); // a bit flipped twice cancels: at most t/2 bits differ
                }
                int copies = r.nextInt(4) == 0 ? 3 : 1;
                for (int c = 0; c < copies; c++) {
                    hashes.add(h);
                    cluster.add(k);
                }
            }
        }
        // shuffled, so a cluster's items are not contiguous
        int n = hashes.size();
        int[] perm = GroupingTest.shuffled(n, r);
        long[] h = new long[n];
        int[] c = new int[n];
        double[] p = new double[n];
        for (int i = 0; i < n; i++) {
            h[i] = hashes.get(perm[i]);
            c[i] = cluster.get(perm[i]);
            p[i] = r.nextDouble();
        }
        return new Pool(h, p, c, clusters);
    }

    /**
     * The distributed flow on one JVM: distinct values numbered, every value sent to its buckets, the buckets
     * dealt to {@code partitions} partitions, each partition's pairs merged there, the partitions' pairs merged
     * in shuffled order.
     *
     * @return the merged pairs and (second) the sum of the buckets' pair counts
     */
    static Object[] bandByBand(long[] hashes, int t, int partitions, Random r) {
        PhashBands bands = PhashBands.forThreshold(t);
        long[] values = Grouping.distinctHashes(hashes);
        Map<Long, List<Integer>> buckets = new TreeMap<>();
        for (int v = 0; v < values.length; v++) {
            for (long b : bands.buckets(values[v])) {
                buckets.computeIfAbsent(b, x -> new ArrayList<>()).add(v);
            }
        }
        List<List<NearPairs>> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(new ArrayList<>());
        }
        long reported = 0;
        for (Map.Entry<Long, List<Integer>> e : buckets.entrySet()) {
            List<Integer> members = new ArrayList<>(e.getValue());
            Collections.shuffle(members, r);
            long[] vs = new long[members.size()];
            int[] nodes = new int[members.size()];
            for (int q = 0; q < vs.length; q++) {
                nodes[q] = members.get(q);
                vs[q] = values[nodes[q]];
            }
            NearPairs found = bands.pairs(e.getKey(), vs, nodes);
            reported += found.size();
            parts.get(Math.floorMod(Long.hashCode(e.getKey() * 0x9E3779B97F4A7C15L), partitions)).add(found);
        }
        List<NearPairs> perPartition = new ArrayList<>();
        for (List<NearPairs> p : parts) {
            perPartition.add(NearPairs.union(p));
        }
        Collections.shuffle(perPartition, r);
        return new Object[] {NearPairs.union(perPartition), reported};
    }

    static void assertSameGroups(Groups expected, Groups actual) {
        assertEquals(expected.groupCount(), actual.groupCount());
        for (int i = 0; i < expected.itemCount(); i++) {
            assertEquals(expected.groupOf(i), actual.groupOf(i), "group of item " + i);
            assertEquals(expected.distanceToRepresentative(i), actual.distanceToRepresentative(i), "item " + i);
        }
        for (int g = 0; g < expected.groupCount(); g++) {
            assertEquals(expected.representative(g), actual.representative(g), "representative of group " + g);
        }
    }

    @Test
    void plantedGroupsFoundBandByBandEqualTheOneMachineGrouping() {
        Random r = new Random(20261202);
        int t = 6;
        Pool pool = planted(150, t, r);
        int n = pool.hashes().length;
        Object[] found = bandByBand(pool.hashes(), t, 7, r);
        NearPairs pairs = (NearPairs) found[0];
        long[] values = Grouping.distinctHashes(pool.hashes());
        NearPairs direct = HammingSearch.pairs(values, t);
        assertTrue(direct.size() > 100, "pairs: " + direct.size());
        assertArrayEquals(direct.keys(), pairs.keys(), "same pairs as multi-index hashing");
        for (int p = 0; p < pairs.size(); p++) {
            assertEquals(direct.distance(p), pairs.distance(p));
        }
        assertEquals(pairs.size(), ((Long) found[1]).longValue(), "every pair reported by exactly one bucket");

        Groups distributed = Grouping.phash(pool.hashes(), pairs, t, pool.priority());
        Groups oneMachine = Grouping.phash(pool.hashes(), t, pool.priority());
        assertSameGroups(oneMachine, distributed);

        // and both are the planted clusters, each kept by its highest-priority frame
        assertEquals(pool.clusters(), distributed.groupCount());
        int[] clusterOfGroup = new int[distributed.groupCount()];
        Arrays.fill(clusterOfGroup, -1);
        double[] best = new double[pool.clusters()];
        Arrays.fill(best, -1);
        for (int i = 0; i < n; i++) {
            int g = distributed.groupOf(i);
            if (clusterOfGroup[g] < 0) {
                clusterOfGroup[g] = pool.cluster()[i];
            }
            assertEquals(clusterOfGroup[g], pool.cluster()[i], "item " + i + " grouped with another cluster");
            best[pool.cluster()[i]] = Math.max(best[pool.cluster()[i]], pool.priority()[i]);
        }
        for (int g = 0; g < distributed.groupCount(); g++) {
            assertEquals(best[clusterOfGroup[g]], pool.priority()[distributed.representative(g)]);
        }
    }

    /**
     * Overlapping clusters (members up to t bits from their centre, centres close): pairs chain across clusters
     * and the groups depend on priority and on complete linkage; band by band still gives the same groups.
     */
    @Test
    void chainingPoolsGroupTheSameBandByBand() {
        Random r = new Random(7);
        for (int t : new int[] {0, 3, 8}) {
            int n = 2000;
            long[] centres = new long[60];
            for (int k = 0; k < centres.length; k++) {
                centres[k] = k == 0 ? r.nextLong() : centres[r.nextInt(k)] ^ (1L << r.nextInt(64)) ^ (1L << r.nextInt(64));
            }
            long[] h = new long[n];
            double[] sharpness = new double[n];
            for (int i = 0; i < n; i++) {
                h[i] = centres[r.nextInt(centres.length)];
                for (int f = r.nextInt(t + 1); f > 0; f--) {
                    h[i] ^= 1L << r.nextInt(64);
                }
                sharpness[i] = r.nextInt(50); // ties broken by index
            }
            NearPairs pairs = (NearPairs) bandByBand(h, t, 5, r)[0];
            assertArrayEquals(HammingSearch.pairs(Grouping.distinctHashes(h), t).keys(), pairs.keys(), "t = " + t);
            Groups oneMachine = Grouping.phash(h, t, sharpness);
            assertTrue(oneMachine.removedCount() > 0, "t = " + t);
            assertSameGroups(oneMachine, Grouping.phash(h, pairs, t, sharpness));
            GroupingTest.assertDiameterWithin(oneMachine, (i, j) -> Long.bitCount(h[i] ^ h[j]), t);
        }
    }

    @Test
    void bandsAndBucketsAreAsDocumented() {
        PhashBands b = PhashBands.forThreshold(6);
        assertEquals(7, b.bands()); // widths 10, 9, 9, 9, 9, 9, 9
        long h = -1L;
        assertEquals(0x3ffL, b.bucket(h, 0));
        assertEquals((1L << 32) | 0x1ffL, b.bucket(h, 1));
        assertEquals(6, PhashBands.bandOf(b.bucket(h, 6)));
        assertEquals(2, PhashBands.forThreshold(0).bands());
        assertEquals(64, PhashBands.forThreshold(63).bands());
        assertArrayEquals(new long[] {0x3ffL, (1L << 32) | 0x1ffL, (2L << 32) | 0x1ffL, (3L << 32) | 0x1ffL,
            (4L << 32) | 0x1ffL, (5L << 32) | 0x1ffL, (6L << 32) | 0x1e0L}, b.buckets(0xf000_0000_0000_0000L | 0x3ff
                | (0x1ffL << 10) | (0x1ffL << 19) | (0x1ffL << 28) | (0x1ffL << 37) | (0x1ffL << 46)));
    }

    @Test
    void aPairIsReportedByItsFirstEqualBandOnly() {
        PhashBands b = PhashBands.forThreshold(6);
        long x = 0L;
        long y = 0x7L << 10; // 3 bits apart, all in band 1: equal on band 0 and bands 2..6
        assertEquals(1, b.pairs(b.bucket(x, 0), new long[] {x, y}, new int[] {9, 3}).size());
        NearPairs first = b.pairs(b.bucket(x, 0), new long[] {x, y}, new int[] {9, 3});
        assertEquals(3, first.a(0));
        assertEquals(9, first.b(0));
        assertEquals(3f, first.distance(0));
        for (int band = 2; band < 7; band++) {
            assertEquals(0, b.pairs(b.bucket(x, band), new long[] {x, y}, new int[] {9, 3}).size(), "band " + band);
        }
        long z = -1L; // 64 bits from x and 61 from y: shares no bucket with either
        NearPairs all = b.pairs(new long[] {x, y, z});
        assertArrayEquals(new long[] {1L}, all.keys(), "the one pair (0, 1)");
    }

    @Test
    void badInputIsRejected() {
        PhashBands b = PhashBands.forThreshold(4);
        assertThrows(IllegalArgumentException.class, () -> PhashBands.forThreshold(64));
        assertThrows(IllegalArgumentException.class, () -> PhashBands.forThreshold(-1));
        assertThrows(IllegalArgumentException.class, () -> b.bucket(0L, 5));
        assertThrows(IllegalArgumentException.class, () -> b.pairs(b.bucket(0L, 0), new long[] {0L, 1L}, new int[] {0, 1}),
                "1 differs from 0 on band 0: not in that bucket");
        assertThrows(IllegalArgumentException.class, () -> b.pairs(b.bucket(0L, 0), new long[] {0L}, new int[] {0, 1}));
        assertThrows(IllegalArgumentException.class, () -> b.pairs(new long[] {5L, 5L}));
        NearPairs one = NearPairs.of(new int[] {0}, new int[] {1}, new float[] {2});
        NearPairs other = NearPairs.of(new int[] {0}, new int[] {1}, new float[] {3});
        assertThrows(IllegalArgumentException.class, () -> NearPairs.union(List.of(one, other)));
        assertEquals(1, NearPairs.union(List.of(one, one)).size());
        long[] h = {0L, 0x3L, 0x3L, -1L};
        // values 0, 3, -1 sort as -1, 0, 3: nodes 1 and 2 are 2 bits apart
        assertEquals(0, Grouping.phash(h, NearPairs.of(new int[] {1}, new int[] {2}, new float[] {2}), 4, null).groupOf(1));
        assertThrows(IllegalArgumentException.class,
                () -> Grouping.phash(h, NearPairs.of(new int[] {1}, new int[] {2}, new float[] {1}), 4, null),
                "wrong distance");
        assertThrows(IllegalArgumentException.class,
                () -> Grouping.phash(h, NearPairs.of(new int[] {1}, new int[] {3}, new float[] {2}), 4, null),
                "node past the three distinct values");
    }
}
