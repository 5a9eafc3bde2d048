package io.flywheel.lake;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The rows an update names, by partition key (an episode id) and secondary key (a frame index, or -1 where the table
 * has none): per partition, one sorted array of {@code secondary << 32 | row} entries, so that a million rows cost a
 * million longs rather than a million boxed map entries, and a lookup is a binary search.
 */
final class RowKeys {
    private final Map<String, Group> groups = new HashMap<>();
    private String lastKey;
    private Group last;

    private static final class Group {
        long[] entries = new long[16];
        int size;
    }

    /** Adds row {@code row} (its index in the update, {@code >= 0}) under its two keys. */
    void add(String partition, int secondary, int row) {
        if (!partition.equals(lastKey)) { // an update's rows usually come partition by partition
            lastKey = partition;
            last = groups.computeIfAbsent(partition, k -> new Group());
        }
        Group g = last;
        if (g.size == g.entries.length) {
            g.entries = Arrays.copyOf(g.entries, g.size * 2);
        }
        g.entries[g.size++] = (long) secondary << 32 | row;
    }

    /**
     * Trims and sorts every partition's entries; call once, after the last {@link #add}.
     *
     * @return the index of a row whose two keys an earlier row has too, or -1 when every row is named once
     */
    int seal() {
        int twice = -1;
        for (Group g : groups.values()) {
            g.entries = Arrays.copyOf(g.entries, g.size);
            Arrays.sort(g.entries);
            for (int i = 1; i < g.size && twice < 0; i++) {
                if (g.entries[i] >>> 32 == g.entries[i - 1] >>> 32) {
                    twice = (int) g.entries[i];
                }
            }
        }
        return twice;
    }

    Set<String> partitions() {
        return groups.keySet();
    }

    /** @return the sealed entries of a partition, or null when no row names it */
    long[] group(String partition) {
        Group g = groups.get(partition);
        return g == null ? null : g.entries;
    }

    /** @return the row named by {@code secondary} in a sealed group, or -1 */
    static int find(long[] group, int secondary) {
        int i = Arrays.binarySearch(group, (long) secondary << 32);
        if (i < 0) {
            i = -i - 1;
        }
        return i < group.length && (int) (group[i] >> 32) == secondary ? (int) group[i] : -1;
    }
}
