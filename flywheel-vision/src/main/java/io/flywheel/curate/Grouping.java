package io.flywheel.curate;

import java.util.Arrays;

/**
 * Near-duplicate grouping with complete linkage, greedily in priority order: the highest-priority
 * item not yet in a group becomes a representative; its ungrouped neighbours within the threshold
 * are then considered nearest first (equal distances: higher priority first), and each joins the
 * group only if it is within the threshold of <em>every</em> member already in it. So every pair of
 * items in a group is within the threshold (the group's diameter is at most the threshold), whatever
 * the priority: groups never chain. Neither connected components (a-b and b-c pairs put a and c
 * together however far apart they are) nor leader clustering (every member within the threshold of
 * the representative, so two members up to twice the threshold apart) guarantee that. A neighbour
 * left out starts or joins a later group: it is kept unless it has a near duplicate of its own
 * among the items left. The representative is the group's highest-priority member.
 *
 * <p>Cost: O(pairs) after the neighbour search (each member's neighbours are counted once), plus
 * sorting each representative's neighbours. Pure Java with no storage types, so batch jobs can
 * reuse it.
 *
 * <p>Priority: {@code priority[i]}, higher first (for frames e.g. sharpness, for episodes e.g. a
 * quality score); ties, NaN and a null array go to the lowest item index.
 */
public final class Grouping {
    private Grouping() {}

    /**
     * Groups frames whose 64-bit pHashes are within Hamming distance {@code maxDistance} of the
     * other member of its group (complete linkage). Pairs are searched among distinct hash values by
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
        return completeLinkage(d.nodeOf, d.values.length, pairs, maxDistance, priority);
    }

    /**
     * As {@link #phash(long[], int, double[])}, with the pairs found elsewhere, e.g. bucket by bucket in many
     * partitions ({@link PhashBands}) and merged ({@link NearPairs#union}): the same complete linkage, so
     * the same groups when {@code valuePairs} holds every pair of distinct values within {@code maxDistance}.
     *
     * @param hashes pHash per frame
     * @param valuePairs pairs of nodes, node {@code v} being {@code distinctHashes(hashes)[v]}, with their
     *     distance in bits; pairs above {@code maxDistance} are ignored
     * @param maxDistance threshold in bits, 0..63
     * @param priority per frame, higher kept first; null for index order
     * @throws IllegalArgumentException on a bad threshold, a pair naming a node past the distinct values, a
     *     pair whose distance is not the Hamming distance of its two values, or a priority of another length
     */
    public static Groups phash(long[] hashes, NearPairs valuePairs, int maxDistance, double[] priority) {
        if (maxDistance < 0 || maxDistance > 63) {
            throw new IllegalArgumentException("Hamming threshold " + maxDistance + ": expected 0..63 bits");
        }
        DistinctHashes d = DistinctHashes.of(hashes);
        for (int p = 0; p < valuePairs.size(); p++) {
            int a = valuePairs.a(p);
            int b = valuePairs.b(p);
            if (b >= d.values.length) {
                throw new IllegalArgumentException("pair " + p + " names node " + b + ": " + d.values.length
                        + " distinct hash values");
            }
            int bits = Long.bitCount(d.values[a] ^ d.values[b]);
            if (valuePairs.distance(p) != bits) {
                throw new IllegalArgumentException("pair " + p + " (" + a + ", " + b + ") has distance "
                        + valuePairs.distance(p) + ": its hashes are " + bits + " bits apart");
            }
        }
        return completeLinkage(d.nodeOf, d.values.length, valuePairs, maxDistance, priority);
    }

    /**
     * The distinct pHash values of a pool, ascending (signed order): the nodes a distributed pair search
     * numbers its pairs by ({@link #phash(long[], NearPairs, int, double[])}).
     *
     * @return a new array
     */
    public static long[] distinctHashes(long[] hashes) {
        return DistinctHashes.of(hashes).values;
    }

    /**
     * Groups episodes whose embeddings are within cosine distance {@code maxCosineDistance} of every
     * other member of their group (complete linkage); exact all-pairs search ({@link ExactSearch#pairsWithin}), for pools
     * of up to some 10^5 episodes.
     *
     * @param unitVectors L2-normalised embeddings, all of one dimension
     * @param maxCosineDistance threshold on {@code 1 - cos}, 0..2
     * @param priority per episode, higher kept first; null for index order
     */
    public static Groups embeddings(float[][] unitVectors, double maxCosineDistance, double[] priority) {
        ExactSearch search = ExactSearch.of(unitVectors);
        NearPairs pairs = search.pairsWithin(maxCosineDistance);
        return completeLinkage(identity(unitVectors.length), unitVectors.length, pairs, maxCosineDistance, priority);
    }

    /**
     * Complete-linkage grouping over items that sit on nodes: items on one node are identical
     * (distance 0), {@code nodePairs} gives distances between nodes and must hold every node pair
     * within {@code threshold} (pairs above it are ignored). For plain items, {@code nodeOfItem[i] = i}.
     *
     * @param nodeOfItem node of each item, in {@code [0, nodes)}
     * @param nodes number of nodes
     * @param nodePairs node pairs with distances; those above {@code threshold} are ignored
     * @param threshold largest distance between any two members of a group
     * @param priority per item, higher first; null for index order
     * @return the groups; every two members of a group are within {@code threshold}
     * @throws IllegalArgumentException on a node index out of range or a priority of wrong length
     */
    public static Groups completeLinkage(int[] nodeOfItem, int nodes, NearPairs nodePairs, double threshold,
            double[] priority) {
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
        // a node's rank: the priority rank of its best item (orders equally near candidates)
        int[] nodeRank = new int[nodes];
        Arrays.fill(nodeRank, -1);
        int[] rankNode = new int[n];
        for (int r = 0; r < n; r++) {
            int v = nodeOfItem[order[r]];
            if (nodeRank[v] < 0) {
                nodeRank[v] = r;
            }
            rankNode[r] = v;
        }
        int[] groupOf = new int[n];
        Arrays.fill(groupOf, -1);
        float[] dist = new float[n];
        boolean[] taken = new boolean[nodes];
        // linked[u]: how many members of the group being built node u is within the threshold of
        int[] linked = new int[nodes];
        int[] touched = new int[Math.min(nodes, adj.length)];
        long[] candidates = new long[16];
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
            int degree = adjStart[v + 1] - adjStart[v];
            if (degree == 0) {
                continue;
            }
            if (candidates.length < degree) {
                candidates = new long[Math.max(degree, candidates.length * 2)];
            }
            int c = 0;
            for (int e = adjStart[v]; e < adjStart[v + 1]; e++) {
                int u = adj[e];
                if (!taken[u] && nodeRank[u] >= 0) {
                    // nearest first, then by priority rank: a non-negative float's bits order as the float
                    candidates[c++] = ((long) Float.floatToIntBits(adjDist[e]) << 32) | nodeRank[u];
                }
            }
            Arrays.sort(candidates, 0, c);
            int members = 1;
            int touchedCount = 0;
            for (int e = adjStart[v]; e < adjStart[v + 1]; e++) {
                if (linked[adj[e]]++ == 0) {
                    touched[touchedCount++] = adj[e];
                }
            }
            for (int k = 0; k < c; k++) {
                int u = rankNode[(int) candidates[k]];
                if (taken[u] || linked[u] != members) {
                    continue; // too far from a member that joined before it
                }
                take(u, g, Float.intBitsToFloat((int) (candidates[k] >>> 32)), itemStart, items, groupOf, dist, taken);
                members++;
                for (int e = adjStart[u]; e < adjStart[u + 1]; e++) {
                    int w = adj[e];
                    if (!taken[w] && linked[w]++ == 0) {
                        touched[touchedCount++] = w;
                    }
                }
            }
            for (int k = 0; k < touchedCount; k++) {
                linked[touched[k]] = 0;
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
