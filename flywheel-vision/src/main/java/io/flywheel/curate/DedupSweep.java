package io.flywheel.curate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Threshold calibration for near-duplicate grouping ({@code flywheel dedup sweep}): for each
 * threshold, the {@link Grouping} complete-linkage groups (every two members within the threshold),
 * their count, the pool size left, and the member-representative pairs merged "just inside" it, i.e. with a distance above the previous
 * (smaller) threshold of the sweep: the pairs a person looks at to judge whether the threshold
 * merges different scenes. The neighbour search runs once, at the largest threshold.
 */
public final class DedupSweep {
    private DedupSweep() {}

    /**
     * One threshold of a sweep.
     *
     * @param threshold the threshold (bits for pHash, cosine distance for embeddings)
     * @param items items grouped
     * @param groups groups, singletons included = pool size left after keeping one per group
     * @param duplicateGroups groups with two or more members
     * @param removed items dropped ({@code items - groups})
     * @param justInside up to {@code samples} merged pairs with previous threshold &lt; distance &lt;=
     *     threshold (all merged pairs for the first threshold), largest distance first
     * @param justInsideTotal how many such pairs there are in all
     */
    public record Step(double threshold, int items, int groups, int duplicateGroups, int removed,
            List<MergedPair> justInside, int justInsideTotal) {
        public Step {
            justInside = List.copyOf(justInside);
        }
    }

    /**
     * A member merged into a representative's group.
     *
     * @param representative the kept item
     * @param member the dropped item
     * @param distance their distance (bits or cosine distance)
     */
    public record MergedPair(int representative, int member, float distance) {}

    /**
     * Sweeps pHash thresholds over frames.
     *
     * @param hashes 64-bit pHash per frame
     * @param thresholds Hamming thresholds in bits, each 0..63 (sorted here)
     * @param priority per frame, higher kept first; null for index order
     * @param samples at most this many just-inside pairs per step
     * @throws IllegalArgumentException on an empty or bad threshold list
     */
    public static List<Step> phash(long[] hashes, int[] thresholds, double[] priority, int samples) {
        if (thresholds.length == 0) {
            throw new IllegalArgumentException("no thresholds to sweep");
        }
        int[] t = thresholds.clone();
        Arrays.sort(t);
        Grouping.DistinctHashes d = Grouping.DistinctHashes.of(hashes);
        NearPairs pairs = HammingSearch.pairs(d.values, t[t.length - 1]);
        return run(d.nodeOf, d.values.length, pairs, Arrays.stream(t).asDoubleStream().toArray(), priority, samples);
    }

    /**
     * Sweeps cosine-distance thresholds over episode embeddings (exact all-pairs search).
     *
     * @param unitVectors L2-normalised embeddings
     * @param thresholds cosine distances, each 0..2 (sorted here)
     * @param priority per episode, higher kept first; null for index order
     * @param samples at most this many just-inside pairs per step
     */
    public static List<Step> embeddings(float[][] unitVectors, double[] thresholds, double[] priority, int samples) {
        if (thresholds.length == 0) {
            throw new IllegalArgumentException("no thresholds to sweep");
        }
        double[] t = thresholds.clone();
        Arrays.sort(t);
        if (t[0] < 0 || t[t.length - 1] > 2) {
            throw new IllegalArgumentException("cosine-distance thresholds " + Arrays.toString(t) + ": expected 0..2");
        }
        NearPairs pairs = ExactSearch.of(unitVectors).pairsWithin(t[t.length - 1]);
        return run(Grouping.identity(unitVectors.length), unitVectors.length, pairs, t, priority, samples);
    }

    /**
     * The sweep over precomputed node pairs (see {@link Grouping#completeLinkage}); {@code pairs} must hold
     * every pair within the largest threshold.
     *
     * @param thresholds ascending
     */
    public static List<Step> run(int[] nodeOfItem, int nodes, NearPairs pairs, double[] thresholds, double[] priority,
            int samples) {
        if (samples < 0) {
            throw new IllegalArgumentException("samples " + samples + ": expected >= 0");
        }
        List<Step> steps = new ArrayList<>();
        double previous = Double.NEGATIVE_INFINITY;
        for (double thr : thresholds) {
            if (thr < previous) {
                throw new IllegalArgumentException("thresholds must ascend: " + Arrays.toString(thresholds));
            }
            Groups g = Grouping.completeLinkage(nodeOfItem, nodes, pairs, thr, priority);
            List<MergedPair> inside = new ArrayList<>();
            for (int i = 0; i < g.itemCount(); i++) {
                float d = g.distanceToRepresentative(i);
                if (!g.isRepresentative(i) && d > previous) {
                    inside.add(new MergedPair(g.representative(g.groupOf(i)), i, d));
                }
            }
            inside.sort(Comparator.comparingDouble((MergedPair p) -> -p.distance()).thenComparingInt(MergedPair::member));
            steps.add(new Step(thr, g.itemCount(), g.groupCount(), g.duplicateGroupCount(), g.removedCount(),
                    inside.subList(0, Math.min(samples, inside.size())), inside.size()));
            previous = thr;
        }
        return steps;
    }
}
