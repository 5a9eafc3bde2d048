package io.flywheel.curate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

class HammingSearchTest {

    /** Flips {@code bits} distinct random bits of {@code h}. */
    static long flip(long h, int bits, Random r) {
        long mask = 0;
        while (Long.bitCount(mask) < bits) {
            mask |= 1L << r.nextInt(64);
        }
        return h ^ mask;
    }

    /** Random hashes with planted near copies: every 10th item gets 1-3 copies at 0..8 flipped bits. */
    static long[] planted(int n, long seed) {
        Random r = new Random(seed);
        long[] h = new long[n];
        int i = 0;
        while (i < n) {
            long base = r.nextLong();
            h[i++] = base;
            if (i % 10 == 0) {
                for (int c = 1 + r.nextInt(3); c > 0 && i < n; c--) {
                    h[i++] = flip(base, r.nextInt(9), r);
                }
            }
        }
        // shuffle so copies are not adjacent
        for (int k = n - 1; k > 0; k--) {
            int j = r.nextInt(k + 1);
            long t = h[k];
            h[k] = h[j];
            h[j] = t;
        }
        return h;
    }

    @Test
    void smallCaseByHand() {
        long[] h = {0L, 1L, 3L, 0xFFL, -1L};
        NearPairs p = HammingSearch.pairs(h, 2);
        // 0^1 = 1 bit, 0^3 = 2 bits, 1^3 = 1 bit; 0xFF is 6..8 bits from those, -1 is 56..64 away
        assertEquals(3, p.size());
        assertEquals(0, p.a(0));
        assertEquals(1, p.b(0));
        assertEquals(1f, p.distance(0));
        assertEquals(0, p.a(1));
        assertEquals(2, p.b(1));
        assertEquals(2f, p.distance(1));
        assertEquals(1, p.a(2));
        assertEquals(2, p.b(2));
        assertEquals(1f, p.distance(2));
    }

    @Test
    void multiIndexFindsExactlyTheAllPairsResult() {
        long[] h = planted(8_000, 7);
        for (int t : new int[] {0, 3, 6, 10}) {
            NearPairs truth = HammingSearch.allPairs(h, t);
            NearPairs mih = HammingSearch.pairs(h, t);
            assertArrayEquals(truth.keys(), mih.keys(), "t=" + t);
            for (int i = 0; i < mih.size(); i++) {
                assertEquals(Long.bitCount(h[mih.a(i)] ^ h[mih.b(i)]), (int) mih.distance(i));
                assertTrue(mih.distance(i) <= t);
            }
            for (int m : new int[] {3, 5, 8, 11}) {
                assertArrayEquals(truth.keys(), HammingSearch.pairs(h, t, m).keys(), "t=" + t + " m=" + m);
            }
            if (t == 6) {
                // planted copies at <= 6 bits: at least the ~800 planted groups' worth of pairs, far more than chance gives
                assertTrue(truth.size() > 500, "pairs at t=6: " + truth.size());
            }
        }
    }

    @Test
    void plantedPairsAreFound() {
        Random r = new Random(3);
        long[] h = new long[1000];
        for (int i = 0; i < 500; i++) {
            h[2 * i] = r.nextLong();
            h[2 * i + 1] = flip(h[2 * i], i % 6, r); // copy at exactly i % 6 bits
        }
        NearPairs p = HammingSearch.pairs(h, 5);
        long found = 0;
        for (int i = 0; i < p.size(); i++) {
            if (p.b(i) == p.a(i) + 1 && p.a(i) % 2 == 0) {
                assertEquals((p.a(i) / 2) % 6, (int) p.distance(i));
                found++;
            }
        }
        assertEquals(500, found);
    }

    @Test
    void identicalHashesPairUp() {
        long[] h = new long[50];
        Arrays.fill(h, 0x1234_5678_9abc_def0L);
        assertEquals(50 * 49 / 2, HammingSearch.pairs(h, 0).size());
    }

    @Test
    void costModelPicksWiderSubstringsForMoreHashes() {
        assertTrue(HammingSearch.chooseSubstrings(1_000_000, 6) <= HammingSearch.chooseSubstrings(1_000, 6));
        assertEquals(HammingSearch.flipMasks(5, 2).length, 1 + 5 + 10);
    }

    @Test
    void badThresholdIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HammingSearch.pairs(new long[3], 64));
        assertTrue(e.getMessage().contains("0..63"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HammingSearch.pairs(new long[3], 2, 2));
        assertThrows(IllegalArgumentException.class, () -> HammingSearch.allPairs(new long[3], 2, 2, 5));
    }
}
