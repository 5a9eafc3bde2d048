package io.flywheel.curate;

import java.util.Arrays;

/**
 * Near-duplicate grouping by greedy leader clustering in priority order: the highest-priority
 * item not yet in a group becomes a representative, and every ungrouped item within the threshold
 * of it joins its group. Groups therefore never chain: each member is within the threshold of its
 * representative (two members may be up to twice the threshold apart), unlike connected
 * components, where a-b and b-c pairs put a and c together however far apart they are. The
 * representative is the group's highest-priority member.
 *
 * <p>Priority: {@code priority[i]}, higher first (for frames e.g. sharpness, for episodes e.g. a
 * quality score); ties, NaN and a null array go to the lowest item index.
 */
public final class Grouping {
    private Grouping() {}

    /**
     * Groups frames whose 64-bit pHashes are within Hamming distance {@code maxDistance} of the
     * group's representative. Pairs are searched among distinct hash values by
     * {@link HammingSearch} (multi-index hashing), so identical hashes (static frames) cost nothing
     * extra.
     *
     * @param hashes pHash per frame
     * @param maxDistance threshold in bits, 0..63
     * @param priority per frame, higher kept first; null for index order
     * @throws IllegalArgumentException on a bad threshold or a priority array of another length
     */
    public static Groups phash(long[] hashes, int maxDistance, double[] priority) {
        DistinctHashes d = DistinctHashes.of(hashes);
        NearPairs pairs = HammingSearch.pairs(d.values, maxDistance);
        return leader(d.nodeOf, d.values.length, pairs, maxDistance, priority);
    }

    /**
     * Groups episodes whose embeddings are within cosine distance {@code maxCosineDistance} of the
     * group's representative; exact all-pairs search ({@link ExactSearch#pairsWithin}), for pools
     * of up to some 10^5 episodes.
     *
     * @param unitVectors L2-normalised embeddings, all of one dimension
     * @param maxCosineDistance threshold on {@code 1 - cos}, 0..2
     * @param priority per episode, higher kept first; null for index order
     */
    public static Groups embeddings(float[][] unitVectors, double maxCosineDistance, double[] priority) {
        ExactSearch search = ExactSearch.of(unitVectors);
        NearPairs pairs = search.pairsWithin(maxCosineDistance);
        return leader(identity(unitVectors.length), unitVectors.length, pairs, maxCosineDistance, priority);
    }

    /**
     * Leader grouping over items that sit on nodes: items on one node are identical (distance 0),
     * {@code nodePairs} gives distances between nodes. For plain items, {@code nodeOfItem[i] = i}.
     *
     * @param nodeOfItem node of each item, in {@code [0, nodes)}
     * @param nodes number of nodes
     * @param nodePairs node pairs with distances; those above {@code threshold} are ignored
     * @param threshold largest distance of a member to its representative
     * @param priority per item, higher first; null for index order
     * @throws IllegalArgumentException on a node index out of range or a priority of wrong length
     */
    public static Groups leader(int[] nodeOfItem, int nodes, NearPairs nodePairs, double threshold, double[] priority) {
        int n = nodeOfItem.length;
        if (priority != null && priority.length != n) {
            throw new IllegalArgumentException("priority has " + priority.length + " values for " + n + " items");
        }
        int[] itemStart = new int[nodes + 1];
        for (int i = 0; i < n; i++) {
            int v = nodeOfItem[i];
            if (v < 0 || v >= nodes) {
                throw new IllegalArgumentException("item " + i + " is on node " + v + ": expected 0.." + (nodes - 1));
            }
            itemStart[v + 1]++;
        }
        for (int v = 0; v < nodes; v++) {
            itemStart[v + 1] += itemStart[v];
        }
        int[] items = new int[n];
        int[] fill = Arrays.copyOf(itemStart, nodes);
        for (int i = 0; i < n; i++) {
            items[fill[nodeOfItem[i]]++] = i;
        }
        // adjacency (both directions) of the pairs within the threshold
        int[] adjStart = new int[nodes + 1];
        for (int p = 0; p < nodePairs.size(); p++) {
            if (nodePairs.distance(p) <= threshold) {
                int a = nodePairs.a(p);
                int b = nodePairs.b(p);
                if (b >= nodes) {
                    throw new IllegalArgumentException("pair " + p + " names node " + b + ": expected 0.." + (nodes - 1));
                }
                adjStart[a + 1]++;
                adjStart[b + 1]++;
            }
        }
        for (int v = 0; v < nodes; v++) {
            adjStart[v + 1] += adjStart[v];
        }
        int[] adj = new int[adjStart[nodes]];
        float[] adjDist = new float[adj.length];
        int[] at = Arrays.copyOf(adjStart, nodes);
        for (int p = 0; p < nodePairs.size(); p++) {
            float d = nodePairs.distance(p);
            if (d <= threshold) {
                int a = nodePairs.a(p);
                int b = nodePairs.b(p);
                adj[at[a]] = b;
                adjDist[at[a]++] = d;
                adj[at[b]] = a;
                adjDist[at[b]++] = d;
            }
        }
        int[] order = priorityOrder(n, priority);
        int[] groupOf = new int[n];
        Arrays.fill(groupOf, -1);
        float[] dist = new float[n];
        boolean[] taken = new boolean[nodes];
        int[] reps = new int[16];
        int groups = 0;
        for (int rep : order) {
            if (groupOf[rep] >= 0) {
                continue;
            }
            int g = groups++;
            if (g == reps.length) {
                reps = Arrays.copyOf(reps, g * 2);
            }
            reps[g] = rep;
            int v = nodeOfItem[rep];
            take(v, g, 0f, itemStart, items, groupOf, dist, taken);
            for (int e = adjStart[v]; e < adjStart[v + 1]; e++) {
                take(adj[e], g, adjDist[e], itemStart, items, groupOf, dist, taken);
            }
        }
        return new Groups(groupOf, Arrays.copyOf(reps, groups), dist, threshold);
    }

    /** Puts every item of an untaken node into group g. */
    private static void take(int v, int g, float d, int[] itemStart, int[] items, int[] groupOf, float[] dist,
            boolean[] taken) {
        if (taken[v]) {
            return;
        }
        taken[v] = true;
        for (int q = itemStart[v]; q < itemStart[v + 1]; q++) {
            int item = items[q];
            groupOf[item] = g;
            dist[item] = d;
        }
    }

    /** @return item indices by descending priority, ties (and NaN, last) by ascending index */
    static int[] priorityOrder(int n, double[] priority) {
        if (priority == null) {
            return identity(n);
        }
        Integer[] boxed = new Integer[n];
        for (int i = 0; i < n; i++) {
            boxed[i] = i;
        }
        Arrays.sort(boxed, (x, y) -> {
            double px = Double.isNaN(priority[x]) ? Double.NEGATIVE_INFINITY : priority[x];
            double py = Double.isNaN(priority[y]) ? Double.NEGATIVE_INFINITY : priority[y];
            int c = Double.compare(py, px);
            return c != 0 ? c : Integer.compare(x, y);
        });
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = boxed[i];
        }
        return out;
    }

    static int[] identity(int n) {
        int[] id = new int[n];
        for (int i = 0; i < n; i++) {
            id[i] = i;
        }
        return id;
    }

    /** Distinct hash values (sorted) and the value index of each item. */
    static final class DistinctHashes {
        final long[] values;
        final int[] nodeOf;

        private DistinctHashes(long[] values, int[] nodeOf) {
            this.values = values;
            this.nodeOf = nodeOf;
        }

        static DistinctHashes of(long[] hashes) {
            long[] s = hashes.clone();
            Arrays.sort(s);
            int u = 0;
            for (int i = 0; i < s.length; i++) {
                if (i == 0 || s[i] != s[i - 1]) {
                    s[u++] = s[i];
                }
            }
            long[] values = Arrays.copyOf(s, u);
            int[] nodeOf = new int[hashes.length];
            for (int i = 0; i < hashes.length; i++) {
                nodeOf[i] = Arrays.binarySearch(values, hashes[i]);
            }
            return new DistinctHashes(values, nodeOf);
        }
    }
}
