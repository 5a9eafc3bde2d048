package io.flywheel.curate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * An immutable list of unordered item pairs {@code (a, b)}, {@code a < b}, with their distance,
 * sorted by {@code (a, b)}. Distances are Hamming distances (bits, 0..64) for pHash pairs, cosine
 * distances ({@code 1 - cos}, 0..2) for embedding pairs.
 */
public final class NearPairs {
    private final int[] a;
    private final int[] b;
    private final float[] distance;

    private NearPairs(int[] a, int[] b, float[] distance) {
        this.a = a;
        this.b = b;
        this.distance = distance;
    }

    /**
     * Builds a pair list from parallel arrays (copied, then sorted by {@code (a, b)}).
     *
     * @throws IllegalArgumentException when the arrays differ in length, a pair has {@code a >= b},
     *     an index is negative, or a pair appears twice
     */
    public static NearPairs of(int[] a, int[] b, float[] distance) {
        if (a.length != b.length || a.length != distance.length) {
            throw new IllegalArgumentException("pair arrays differ in length: " + a.length + ", " + b.length + ", "
                    + distance.length);
        }
        int n = a.length;
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            if (a[i] < 0 || a[i] >= b[i]) {
                throw new IllegalArgumentException("pair " + i + " is (" + a[i] + ", " + b[i] + "): expected 0 <= a < b");
            }
            keys[i] = ((long) a[i] << 32) | (b[i] & 0xffffffffL);
        }
        boolean sorted = true;
        for (int i = 1; i < n && sorted; i++) {
            sorted = keys[i - 1] < keys[i];
        }
        int[] sa = new int[n];
        int[] sb = new int[n];
        float[] sd = new float[n];
        if (sorted) {
            System.arraycopy(a, 0, sa, 0, n);
            System.arraycopy(b, 0, sb, 0, n);
            System.arraycopy(distance, 0, sd, 0, n);
        } else {
            Integer[] boxed = new Integer[n];
            for (int i = 0; i < n; i++) {
                boxed[i] = i;
            }
            Arrays.sort(boxed, (x, y) -> Long.compare(keys[x], keys[y]));
            for (int i = 0; i < n; i++) {
                int s = boxed[i];
                sa[i] = a[s];
                sb[i] = b[s];
                sd[i] = distance[s];
            }
        }
        for (int i = 1; i < n; i++) {
            if (sa[i] == sa[i - 1] && sb[i] == sb[i - 1]) {
                throw new IllegalArgumentException("pair (" + sa[i] + ", " + sb[i] + ") appears twice");
            }
        }
        return new NearPairs(sa, sb, sd);
    }

    /**
     * The pairs of many parts (partitions of a distributed search) as one list: concatenated, sorted by
     * {@code (a, b)}, a pair found by several parts kept once.
     *
     * @throws IllegalArgumentException when parts give one pair two different distances
     */
    public static NearPairs union(Collection<NearPairs> parts) {
        int total = 0;
        for (NearPairs p : parts) {
            total += p.size();
        }
        long[] keys = new long[total];
        int[] part = new int[total];
        int[] at = new int[total];
        List<NearPairs> list = new ArrayList<>(parts);
        for (int q = 0, k = 0; q < list.size(); q++) {
            NearPairs p = list.get(q);
            for (int i = 0; i < p.size(); i++, k++) {
                keys[k] = ((long) p.a[i] << 32) | (p.b[i] & 0xffffffffL);
                part[k] = q;
                at[k] = i;
            }
        }
        Integer[] order = new Integer[total];
        for (int i = 0; i < total; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Long.compare(keys[x], keys[y]));
        int[] na = new int[total];
        int[] nb = new int[total];
        float[] nd = new float[total];
        int m = 0;
        for (int r = 0; r < total; r++) {
            int k = order[r];
            float d = list.get(part[k]).distance[at[k]];
            if (m > 0 && keys[order[r - 1]] == keys[k]) {
                if (Float.compare(nd[m - 1], d) != 0) {
                    throw new IllegalArgumentException("pair (" + na[m - 1] + ", " + nb[m - 1] + ") has distances "
                            + nd[m - 1] + " and " + d);
                }
                continue;
            }
            na[m] = (int) (keys[k] >>> 32);
            nb[m] = (int) keys[k];
            nd[m++] = d;
        }
        return new NearPairs(Arrays.copyOf(na, m), Arrays.copyOf(nb, m), Arrays.copyOf(nd, m));
    }

    static NearPairs ofSortedUnchecked(int[] a, int[] b, float[] distance) {
        return new NearPairs(a, b, distance);
    }

    /** @return number of pairs */
    public int size() {
        return a.length;
    }

    /** @return the smaller item index of pair {@code i} */
    public int a(int i) {
        return a[i];
    }

    /** @return the larger item index of pair {@code i} */
    public int b(int i) {
        return b[i];
    }

    /** @return the distance of pair {@code i} */
    public float distance(int i) {
        return distance[i];
    }

    /** @return the pairs as {@code a << 32 | b} keys, sorted; for comparisons in tests and benches */
    public long[] keys() {
        long[] k = new long[a.length];
        for (int i = 0; i < k.length; i++) {
            k[i] = ((long) a[i] << 32) | (b[i] & 0xffffffffL);
        }
        return k;
    }

    /** @return the pairs with {@code distance <= threshold}, in the same order */
    public NearPairs within(double threshold) {
        int m = 0;
        for (float d : distance) {
            if (d <= threshold) {
                m++;
            }
        }
        int[] na = new int[m];
        int[] nb = new int[m];
        float[] nd = new float[m];
        int j = 0;
        for (int i = 0; i < a.length; i++) {
            if (distance[i] <= threshold) {
                na[j] = a[i];
                nb[j] = b[i];
                nd[j++] = distance[i];
            }
        }
        return new NearPairs(na, nb, nd);
    }

    @Override
    public String toString() {
        return "NearPairs[" + a.length + " pairs]";
    }
}
