package io.flywheel.curate;

import java.util.Arrays;

/**
 * Near-duplicate groups over items {@code 0..n-1} (frames or episodes), made by
 * {@link Grouping}. Every item is in exactly one group; a group has one representative (the item
 * kept), and every two members are within the threshold of each other (complete linkage: the
 * group's diameter is at most the threshold), not merely of the representative or of some other
 * member. Groups are numbered in the order their representatives were chosen, i.e. by
 * descending priority. Immutable.
 */
public final class Groups {
    private final int[] groupOf;
    private final int[] representative;
    private final float[] distance;
    private final int[] size;
    private final double threshold;

    Groups(int[] groupOf, int[] representative, float[] distance, double threshold) {
        this.groupOf = groupOf;
        this.representative = representative;
        this.distance = distance;
        this.threshold = threshold;
        this.size = new int[representative.length];
        for (int g : groupOf) {
            size[g]++;
        }
    }

    /** @return the threshold the groups were made with (bits for pHash, cosine distance for embeddings) */
    public double threshold() {
        return threshold;
    }

    /** @return number of items grouped */
    public int itemCount() {
        return groupOf.length;
    }

    /** @return number of groups, singletons included: the pool size left after keeping one per group */
    public int groupCount() {
        return representative.length;
    }

    /** @return number of groups with two or more members */
    public int duplicateGroupCount() {
        int c = 0;
        for (int s : size) {
            if (s > 1) {
                c++;
            }
        }
        return c;
    }

    /** @return items dropped by keeping one per group: {@code itemCount() - groupCount()} */
    public int removedCount() {
        return groupOf.length - representative.length;
    }

    /** @return the group of item {@code i} */
    public int groupOf(int item) {
        return groupOf[item];
    }

    /** @return the representative (kept item) of group {@code g} */
    public int representative(int group) {
        return representative[group];
    }

    /** @return the representatives of all groups, ascending item order: the deduplicated pool */
    public int[] representatives() {
        int[] r = representative.clone();
        Arrays.sort(r);
        return r;
    }

    /** @return whether item {@code i} is the representative of its group */
    public boolean isRepresentative(int item) {
        return representative[groupOf[item]] == item;
    }

    /** @return distance of item {@code i} to its representative (0 for a representative) */
    public float distanceToRepresentative(int item) {
        return distance[item];
    }

    /** @return number of members of group {@code g} */
    public int size(int group) {
        return size[group];
    }

    /** @return the members of group {@code g}, ascending (O(n)) */
    public int[] members(int group) {
        int[] m = new int[size[group]];
        int k = 0;
        for (int i = 0; i < groupOf.length && k < m.length; i++) {
            if (groupOf[i] == group) {
                m[k++] = i;
            }
        }
        return m;
    }

    @Override
    public String toString() {
        return "Groups[items=" + groupOf.length + ", groups=" + representative.length + ", duplicateGroups="
                + duplicateGroupCount() + ", threshold=" + threshold + "]";
    }
}
