package io.flywheel.curate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Near-duplicate pHash pairs found bucket by bucket, for a search spread over many partitions (a Spark
 * job: one task per group of buckets), whose pairs then go to the one {@link Grouping} on one machine.
 *
 * <p>Banding (locality-sensitive hashing by exact band match): each 64-bit hash is cut into
 * {@code m = max(2, t + 1)} disjoint bit ranges (bands; widths {@code 64 / m}, the first {@code 64 % m} one bit
 * wider, low bits first). Two hashes within Hamming distance {@code t} differ in at most {@code t} bits, so
 * they are equal on at least one of the {@code t + 1} bands (pigeonhole): every pair within {@code t} shares
 * at least one bucket, a bucket being one band's value ({@link #bucket}). A pair is reported by one bucket
 * only, the first band on which the two hashes are equal ({@link #pairs(long, long[], int[])}), so the
 * pairs of all buckets together are every pair within {@code t}, each once, whatever the partitioning:
 * the same pairs as {@link HammingSearch#pairs(long[], int)}.
 *
 * <p>Nodes: as in {@link Grouping#phash(long[], int, double[])}, the items searched are the distinct hash
 * values, numbered by ascending signed value ({@link Grouping#distinctHashes}); identical hashes (static
 * frames) cost no pairs. The whole flow: distinct values and their node numbers; per value its {@link
 * #buckets}; per bucket, in any partition, {@link #pairs(long, long[], int[])}; the pairs of every partition
 * through {@link NearPairs#union}; then {@link Grouping#phash(long[], NearPairs, int, double[])} on the items.
 *
 * <p>Cost: a bucket of {@code k} values costs {@code k(k-1)/2} comparisons; with roughly uniform band values
 * a bucket holds about {@code n / 2^w} of the {@code n} values for band width {@code w = 64 / m}, so the
 * banding suits small thresholds (t = 6: 7 bands of 9-10 bits); a large threshold makes narrow bands and
 * large buckets. Immutable and thread-safe.
 */
public final class PhashBands {
    private final int maxDistance;
    private final int[] offset;
    private final long[] mask;

    private PhashBands(int maxDistance) {
        this.maxDistance = maxDistance;
        int m = Math.max(2, maxDistance + 1);
        offset = new int[m];
        mask = new long[m];
        for (int k = 0, off = 0; k < m; k++) {
            int width = 64 / m + (k < 64 % m ? 1 : 0);
            offset[k] = off;
            mask[k] = (1L << width) - 1;
            off += width;
        }
    }

    /**
     * The banding that finds every pair within {@code maxDistance} bits.
     *
     * @param maxDistance Hamming threshold t in bits, 0..63
     * @throws IllegalArgumentException when {@code maxDistance} is outside 0..63
     */
    public static PhashBands forThreshold(int maxDistance) {
        if (maxDistance < 0 || maxDistance > 63) {
            throw new IllegalArgumentException("Hamming threshold " + maxDistance + ": expected 0..63 bits");
        }
        return new PhashBands(maxDistance);
    }

    /** @return the threshold t in bits */
    public int maxDistance() {
        return maxDistance;
    }

    /** @return the number of bands m, {@code max(2, t + 1)}: the buckets each hash is in */
    public int bands() {
        return offset.length;
    }

    /**
     * The bucket of a hash in one band: {@code band << 32 | bandValue}, so buckets of different bands never
     * collide. Hashes in one bucket are equal on that band.
     *
     * @param band 0..bands()-1
     * @throws IllegalArgumentException on a band out of range
     */
    public long bucket(long hash, int band) {
        if (band < 0 || band >= offset.length) {
            throw new IllegalArgumentException("band " + band + ": expected 0.." + (offset.length - 1));
        }
        return ((long) band << 32) | ((hash >>> offset[band]) & mask[band]);
    }

    /** @return the {@link #bands()} buckets of a hash, band 0 first */
    public long[] buckets(long hash) {
        long[] out = new long[offset.length];
        for (int k = 0; k < out.length; k++) {
            out[k] = bucket(hash, k);
        }
        return out;
    }

    /** @return the band a bucket belongs to */
    public static int bandOf(long bucket) {
        return (int) (bucket >>> 32);
    }

    /**
     * The pairs one bucket reports: every two members within the threshold whose first equal band is this
     * bucket's band (pairs equal on an earlier band are reported by that band's bucket).
     *
     * @param bucket the bucket, from {@link #bucket}
     * @param values the members' hash values (distinct values, one per node)
     * @param nodes the members' node numbers (global, e.g. {@link Grouping#distinctHashes} positions), same length
     * @return pairs of node numbers ({@code a < b}) with their distance in bits
     * @throws IllegalArgumentException when the arrays differ in length, a value is not in the bucket, a node
     *     is negative or appears twice
     */
    public NearPairs pairs(long bucket, long[] values, int[] nodes) {
        if (values.length != nodes.length) {
            throw new IllegalArgumentException(values.length + " values for " + nodes.length + " nodes");
        }
        int band = bandOf(bucket);
        if (band < 0 || band >= offset.length) {
            throw new IllegalArgumentException("bucket " + Long.toHexString(bucket) + " names band " + band
                    + ": expected 0.." + (offset.length - 1));
        }
        for (int i = 0; i < values.length; i++) {
            if (bucket(values[i], band) != bucket) {
                throw new IllegalArgumentException("value " + Long.toHexString(values[i]) + " (node " + nodes[i]
                        + ") is not in bucket " + Long.toHexString(bucket));
            }
        }
        HammingSearch.PairBuffer found = new HammingSearch.PairBuffer();
        for (int i = 0; i < values.length; i++) {
            for (int j = i + 1; j < values.length; j++) {
                long x = values[i] ^ values[j];
                int bits = Long.bitCount(x);
                if (bits <= maxDistance && !equalOnEarlierBand(x, band)) {
                    found.add(Math.min(nodes[i], nodes[j]), Math.max(nodes[i], nodes[j]), bits);
                }
            }
        }
        int m = found.size;
        // sorts by (a, b); rejects a negative node or a node twice (a == b)
        return NearPairs.of(Arrays.copyOf(found.a, m), Arrays.copyOf(found.b, m), Arrays.copyOf(found.d, m));
    }

    /**
     * The whole banded search on one machine: every bucket of the distinct values, each bucket's pairs, their
     * union. Equals {@link HammingSearch#pairs(long[], int)} on {@code distinctValues}; for checking the
     * partitioned flow and for pools small enough for one machine.
     *
     * @param distinctValues distinct hash values, node {@code i} = {@code distinctValues[i]}
     * @return every node pair within the threshold, sorted, distance in bits
     * @throws IllegalArgumentException when a value appears twice
     */
    public NearPairs pairs(long[] distinctValues) {
        int n = distinctValues.length;
        long[] sorted = distinctValues.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < n; i++) {
            if (sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("value " + Long.toHexString(sorted[i]) + " appears twice");
            }
        }
        List<NearPairs> parts = new ArrayList<>();
        for (int k = 0; k < offset.length; k++) {
            long[] key = new long[n];
            for (int i = 0; i < n; i++) {
                key[i] = bucket(distinctValues[i], k);
            }
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (x, y) -> Long.compare(key[x], key[y]));
            for (int s = 0; s < n; ) {
                int e = s;
                while (e < n && key[order[e]] == key[order[s]]) {
                    e++;
                }
                if (e - s > 1) {
                    long[] values = new long[e - s];
                    int[] nodes = new int[e - s];
                    for (int q = s; q < e; q++) {
                        values[q - s] = distinctValues[order[q]];
                        nodes[q - s] = order[q];
                    }
                    parts.add(pairs(key[order[s]], values, nodes));
                }
                s = e;
            }
        }
        return NearPairs.union(parts);
    }

    /** @return whether the hashes with XOR {@code x} are equal on a band before {@code band} */
    private boolean equalOnEarlierBand(long x, int band) {
        for (int k = 0; k < band; k++) {
            if (((x >>> offset[k]) & mask[k]) == 0) {
                return true;
            }
        }
        return false;
    }
}
