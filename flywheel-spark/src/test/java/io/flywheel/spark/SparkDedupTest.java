package io.flywheel.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Grouping;
import io.flywheel.curate.Groups;
import io.flywheel.curate.NearPairs;

/**
 * The Spark pair search of dedup on local[2] (one session for the class), on generated hashes and vectors whose near
 * pairs are known: every pair within the threshold, each once, with its exact distance; a chain A~B~C whose ends are
 * too far apart does not become one group.
 */
class SparkDedupTest {
    private static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("SparkDedupTest")
                .config("spark.ui.enabled", "false").getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.close();
        }
    }

    @Test
    void framePairsAreEveryPairWithinTheThresholdAndTheChainDoesNotMerge() throws IOException {
        Random rnd = new Random(7);
        TreeSet<Long> values = new TreeSet<>();
        long a = 0x0123_4567_89ab_cdefL;
        long b = a ^ 0b111L; // 3 bits from A
        long c = b ^ (0b111L << 3); // 3 bits from B, 6 from A
        values.addAll(List.of(a, b, c));
        for (int i = 0; i < 1500; i++) {
            long base = rnd.nextLong();
            values.add(base);
            if (i % 5 == 0) { // a perturbed copy: 1 to 6 bits flipped, so some within 4 bits and some not
                long copy = base;
                for (int k = 0, flips = 1 + rnd.nextInt(6); k < flips; k++) {
                    copy ^= 1L << rnd.nextInt(64);
                }
                values.add(copy);
            }
        }
        long[] v = values.stream().mapToLong(Long::longValue).toArray(); // ascending, distinct: node i is v[i]
        Path hashes = tmp.resolve("hashes.bin");
        try (DataOutputStream o = new DataOutputStream(Files.newOutputStream(hashes))) {
            for (long x : v) {
                o.writeLong(x);
            }
        }
        Path out = tmp.resolve("frame_pairs.bin");
        long n = SparkDedup.framePairs(spark, hashes, 4, 4, out);
        NearPairs got = read(out);
        // the truth by brute force: every pair within 4 bits
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < v.length; i++) {
            for (int j = i + 1; j < v.length; j++) {
                int d = Long.bitCount(v[i] ^ v[j]);
                if (d <= 4) {
                    expected.add(i + "-" + j + ":" + d);
                }
            }
        }
        assertTrue(expected.size() > 150, "perturbed copies within 4 bits: " + expected.size());
        assertEquals(expected.size(), n);
        assertEquals(expected, describe(got));

        int ia = Arrays.binarySearch(v, a);
        int ib = Arrays.binarySearch(v, b);
        int ic = Arrays.binarySearch(v, c);
        assertTrue(describe(got).contains(Math.min(ia, ib) + "-" + Math.max(ia, ib) + ":3"));
        assertTrue(describe(got).contains(Math.min(ib, ic) + "-" + Math.max(ib, ic) + ":3"));
        // the frames: A, B, C (B sharpest, then A) and the rest; A~B and B~C but A and C are 6 bits apart. B leads,
        // its neighbours A and C are 3 bits away each, A (higher priority) joins first, then C is not within 4 of A
        double[] priority = new double[v.length];
        priority[ib] = 10;
        priority[ia] = 5;
        Groups g = Grouping.phash(v, got, 4, priority);
        assertEquals(g.groupOf(ia), g.groupOf(ib), "A joins the group of B, its representative");
        assertTrue(g.groupOf(ic) != g.groupOf(ib), "C is 6 bits from A: a group of its own, not a chain");
        assertEquals(ib, g.representative(g.groupOf(ib)));
        assertEquals(Grouping.phash(v, 4, priority).groupCount(), g.groupCount(), "as the one-machine search");
    }

    @Test
    void episodePairsAcrossBlocksAreTheExactSearchsPairs() throws IOException {
        Random rnd = new Random(11);
        int dim = 16;
        List<float[]> vs = new ArrayList<>();
        for (int i = 0; i < 240; i++) {
            float[] x = new float[dim];
            for (int k = 0; k < dim; k++) {
                x[k] = (float) rnd.nextGaussian();
            }
            vs.add(ExactSearch.normalise(x));
            if (i % 4 == 0) { // a near copy: a small perturbation
                float[] y = x.clone();
                for (int k = 0; k < dim; k++) {
                    y[k] += (float) (0.05 * rnd.nextGaussian());
                }
                vs.add(ExactSearch.normalise(y));
            }
        }
        float[][] v = vs.toArray(new float[0][]);
        Path file = tmp.resolve("vectors.bin");
        try (DataOutputStream o = new DataOutputStream(Files.newOutputStream(file))) {
            for (float[] x : v) {
                for (float f : x) {
                    o.writeFloat(f);
                }
            }
        }
        Path out = tmp.resolve("episode_pairs.bin");
        double t = 0.005;
        // 300 rows in 4 partitions: blocks of 75 rows, so pairs within and across blocks
        long n = SparkDedup.episodePairs(spark, file, dim, v.length, t, 4, out);
        NearPairs got = read(out);
        NearPairs want = ExactSearch.of(v).pairsWithin(t);
        assertTrue(want.size() >= 40, "near copies within " + t + ": " + want.size());
        assertEquals(want.size(), n);
        assertEquals(describe(want), describe(got));
        float[] gd = new float[got.size()];
        float[] wd = new float[want.size()];
        for (int k = 0; k < gd.length; k++) {
            gd[k] = got.distance(k);
            wd[k] = want.distance(k);
        }
        assertArrayEquals(wd, gd, "the same float distances");
    }

    private static List<String> describe(NearPairs p) {
        List<String> s = new ArrayList<>();
        for (int k = 0; k < p.size(); k++) {
            s.add(p.a(k) + "-" + p.b(k) + ":" + Math.round(p.distance(k) * 1e6) / 1e6);
        }
        return s.stream().map(x -> x.replace(".0", "")).toList();
    }

    private static NearPairs read(Path file) throws IOException {
        int n = Math.toIntExact(Files.size(file) / 12);
        int[] a = new int[n];
        int[] b = new int[n];
        float[] d = new float[n];
        try (DataInputStream in = new DataInputStream(Files.newInputStream(file))) {
            for (int i = 0; i < n; i++) {
                a[i] = in.readInt();
                b[i] = in.readInt();
                d[i] = in.readFloat();
            }
        }
        return NearPairs.of(a, b, d);
    }
}
