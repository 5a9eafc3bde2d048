package io.flywheel.curate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * All pairs of 64-bit perceptual hashes (pHash) within a Hamming distance, found without comparing
 * all pairs, by multi-index hashing: M. Norouzi, A. Punjani, D. J. Fleet, "Fast Search in Hamming
 * Space with Multi-Index Hashing", CVPR 2012.
 *
 * <p>Each hash is cut into {@code m} disjoint substrings (bit ranges). By the pigeonhole principle
 * (the paper's Proposition 1), two hashes within Hamming distance {@code t} agree to within
 * {@code floor(t / m)} bits on at least one substring. One table per substring maps each substring
 * value to the hashes holding it; a query probes, in every table, all values within
 * {@code floor(t / m)} bits of its own and checks the full distance of each candidate. A pair is
 * reported once: from its lower index, through the first substring on which it qualifies.
 *
 * <p>{@code m} is chosen by a cost model (table build {@code m * 2^w} plus, per query,
 * {@code m * probes(w, r) * (16 + n / 2^w)} for substring width {@code w} and radius {@code r},
 * assuming roughly uniform substring values), between 3 (widths of at most 22 bits) and 64.
 * Queries run in parallel on the common fork-join pool.
 *
 * <p>The number of pairs grows with the square of the size of a cluster of near-identical hashes
 * (static camera frames): for grouping, {@link Grouping#phash} searches distinct hash values only.
 */
public final class HammingSearch {
    /** Largest substring width: tables hold {@code 2^w + 1} ints. */
    static final int MAX_WIDTH = 22;
    private static final int BLOCK = 2048;

    private HammingSearch() {}

    /**
     * Every pair {@code i < j} with {@code bitCount(hashes[i] ^ hashes[j]) <= maxDistance}, by
     * multi-index hashing with a cost-chosen number of substrings.
     *
     * @param hashes 64-bit pHashes, one per item (index = item)
     * @param maxDistance Hamming threshold t in bits, 0..63
     * @return the pairs, sorted by (i, j), distance in bits
     * @throws IllegalArgumentException when {@code maxDistance} is outside 0..63
     */
    public static NearPairs pairs(long[] hashes, int maxDistance) {
        checkDistance(maxDistance);
        return pairs(hashes, maxDistance, chooseSubstrings(hashes.length, maxDistance));
    }

    /**
     * As {@link #pairs(long[], int)} with a given number of substrings {@code m}.
     *
     * @throws IllegalArgumentException when {@code m} is outside 3..64 or maxDistance outside 0..63
     */
    public static NearPairs pairs(long[] hashes, int maxDistance, int m) {
        checkDistance(maxDistance);
        if (m < 3 || m > 64) {
            throw new IllegalArgumentException("substrings m = " + m + ": expected 3..64 (widths of at most "
                    + MAX_WIDTH + " bits)");
        }
        int n = hashes.length;
        int r = maxDistance / m;
        int[] offset = new int[m];
        int[] width = new int[m];
        long[] mask = new long[m];
        for (int k = 0, off = 0; k < m; k++) {
            width[k] = 64 / m + (k < 64 % m ? 1 : 0);
            offset[k] = off;
            mask[k] = (1L << width[k]) - 1;
            off += width[k];
        }
        int[][] start = new int[m][];
        int[][] ids = new int[m][];
        long[][] sorted = new long[m][];
        int[][] flips = new int[m][];
        for (int k = 0; k < m; k++) {
            int size = 1 << width[k];
            int[] s = new int[size + 1];
            for (long h : hashes) {
                s[(int) ((h >>> offset[k]) & mask[k]) + 1]++;
            }
            for (int v = 0; v < size; v++) {
                s[v + 1] += s[v];
            }
            int[] fill = Arrays.copyOf(s, size);
            int[] id = new int[n];
            long[] hs = new long[n];
            for (int i = 0; i < n; i++) { // counting sort, stable: ids ascending inside a bucket
                int pos = fill[(int) ((hashes[i] >>> offset[k]) & mask[k])]++;
                id[pos] = i;
                hs[pos] = hashes[i];
            }
            start[k] = s;
            ids[k] = id;
            sorted[k] = hs;
            flips[k] = flipMasks(width[k], r);
        }
        int blocks = (n + BLOCK - 1) / BLOCK;
        PairBuffer[] out = new PairBuffer[blocks];
        IntStream.range(0, blocks).parallel().forEach(bi -> {
            PairBuffer buf = new PairBuffer();
            long[] row = new long[16];
            for (int i = bi * BLOCK, end = Math.min(n, i + BLOCK); i < end; i++) {
                long h = hashes[i];
                int found = 0;
                for (int k = 0; k < m; k++) {
                    int key = (int) ((h >>> offset[k]) & mask[k]);
                    int[] s = start[k];
                    int[] id = ids[k];
                    long[] hs = sorted[k];
                    for (int f : flips[k]) {
                        int p = key ^ f;
                        int lo = s[p];
                        int hi = s[p + 1];
                        if (lo == hi) {
                            continue;
                        }
                        lo = firstAbove(id, lo, hi, i);
                        for (int pos = lo; pos < hi; pos++) {
                            long x = h ^ hs[pos];
                            int d = Long.bitCount(x);
                            if (d > maxDistance || qualifiesEarlier(x, k, offset, mask, r)) {
                                continue;
                            }
                            if (found == row.length) {
                                row = Arrays.copyOf(row, found * 2);
                            }
                            row[found++] = ((long) id[pos] << 8) | d;
                        }
                    }
                }
                if (found > 0) {
                    Arrays.sort(row, 0, found);
                    for (int q = 0; q < found; q++) {
                        buf.add(i, (int) (row[q] >>> 8), (int) (row[q] & 0xff));
                    }
                }
            }
            out[bi] = buf;
        });
        return PairBuffer.concat(out);
    }

    /**
     * The all-pairs baseline: compares every pair {@code i < j} (in parallel on the common pool).
     * Same result as {@link #pairs(long[], int)}; {@code n(n-1)/2} comparisons.
     */
    public static NearPairs allPairs(long[] hashes, int maxDistance) {
        return allPairs(hashes, maxDistance, 0, hashes.length);
    }

    /**
     * The all-pairs baseline for the rows {@code i} in {@code [fromRow, toRow)} against every
     * {@code j > i}: for timing a sample of rows and extrapolating.
     *
     * @throws IllegalArgumentException on a bad row range or maxDistance outside 0..63
     */
    public static NearPairs allPairs(long[] hashes, int maxDistance, int fromRow, int toRow) {
        checkDistance(maxDistance);
        if (fromRow < 0 || toRow > hashes.length || fromRow > toRow) {
            throw new IllegalArgumentException("rows [" + fromRow + ", " + toRow + ") outside [0, " + hashes.length + ")");
        }
        int n = hashes.length;
        int blocks = (toRow - fromRow + 63) / 64;
        PairBuffer[] out = new PairBuffer[blocks];
        IntStream.range(0, blocks).parallel().forEach(bi -> {
            PairBuffer buf = new PairBuffer();
            for (int i = fromRow + bi * 64, end = Math.min(toRow, i + 64); i < end; i++) {
                long h = hashes[i];
                for (int j = i + 1; j < n; j++) {
                    int d = Long.bitCount(h ^ hashes[j]);
                    if (d <= maxDistance) {
                        buf.add(i, j, d);
                    }
                }
            }
            out[bi] = buf;
        });
        return PairBuffer.concat(out);
    }

    /**
     * The number of substrings {@code m} the cost model picks for {@code n} hashes and threshold t.
     */
    public static int chooseSubstrings(int n, int maxDistance) {
        checkDistance(maxDistance);
        int best = 3;
        double bestCost = Double.MAX_VALUE;
        for (int m = 3; m <= 64; m++) {
            int w = 64 / m; // the narrower width, the conservative one
            int r = maxDistance / m;
            double probes = 0;
            for (int q = 0; q <= Math.min(r, w); q++) {
                probes += binomial(w, q);
            }
            double cost = m * Math.pow(2, 64 / m + (64 % m == 0 ? 0 : 1))
                    + (double) n * m * probes * (16 + n / Math.pow(2, w));
            if (cost < bestCost) {
                bestCost = cost;
                best = m;
            }
        }
        return best;
    }

    private static void checkDistance(int t) {
        if (t < 0 || t > 63) {
            throw new IllegalArgumentException("Hamming threshold " + t + ": expected 0..63 bits");
        }
    }

    /** @return the first position in {@code [lo, hi)} whose id exceeds {@code i} (ids ascend there) */
    private static int firstAbove(int[] id, int lo, int hi, int i) {
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (id[mid] <= i) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** @return whether the pair with XOR {@code x} qualifies on a substring before {@code k} */
    private static boolean qualifiesEarlier(long x, int k, int[] offset, long[] mask, int r) {
        for (int q = 0; q < k; q++) {
            if (Long.bitCount((x >>> offset[q]) & mask[q]) <= r) {
                return true;
            }
        }
        return false;
    }

    /** @return every w-bit mask with at most r bits set, 0 first */
    static int[] flipMasks(int w, int r) {
        List<Integer> out = new ArrayList<>();
        out.add(0);
        for (int bits = 1; bits <= Math.min(r, w); bits++) {
            combos(w, bits, 0, 0, out);
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void combos(int w, int left, int from, int acc, List<Integer> out) {
        if (left == 0) {
            out.add(acc);
            return;
        }
        for (int b = from; b <= w - left; b++) {
            combos(w, left - 1, b + 1, acc | (1 << b), out);
        }
    }

    private static double binomial(int n, int k) {
        double c = 1;
        for (int i = 0; i < k; i++) {
            c = c * (n - i) / (i + 1);
        }
        return c;
    }

    /** Growable pair arrays, filled in (a, b) order by one thread. */
    static final class PairBuffer {
        int[] a = new int[16];
        int[] b = new int[16];
        float[] d = new float[16];
        int size;

        void add(int i, int j, float dist) {
            if (size == a.length) {
                a = Arrays.copyOf(a, size * 2);
                b = Arrays.copyOf(b, size * 2);
                d = Arrays.copyOf(d, size * 2);
            }
            a[size] = i;
            b[size] = j;
            d[size++] = dist;
        }

        /** Concatenates buffers whose contents are sorted and in ascending block order. */
        static NearPairs concat(PairBuffer[] parts) {
            int total = 0;
            for (PairBuffer p : parts) {
                total += p.size;
            }
            int[] a = new int[total];
            int[] b = new int[total];
            float[] d = new float[total];
            int at = 0;
            for (PairBuffer p : parts) {
                System.arraycopy(p.a, 0, a, at, p.size);
                System.arraycopy(p.b, 0, b, at, p.size);
                System.arraycopy(p.d, 0, d, at, p.size);
                at += p.size;
            }
            return NearPairs.ofSortedUnchecked(a, b, d);
        }
    }
}
