package io.flywheel.serve.cache;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A half-open byte range {@code [start, end)} of a file, in bytes.
 *
 * @param start first byte, &ge; 0
 * @param end one past the last byte, &ge; start
 */
public record ByteRange(long start, long end) {
    public ByteRange {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("byte range [" + start + ", " + end + "): 0 <= start <= end expected");
        }
    }

    /** @return {@code end - start} */
    public long length() {
        return end - start;
    }

    /** @return whether {@code other} lies inside this range */
    public boolean contains(ByteRange other) {
        return other.start >= start && other.end <= end;
    }

    /**
     * Sorts and merges ranges that overlap, touch, or lie less than {@code gap} bytes apart.
     *
     * @param ranges any ranges (empty ones are dropped)
     * @param gap bytes between two ranges below which they are merged into one; 0 merges only
     *     overlapping or touching ranges
     * @return disjoint ranges in ascending order
     */
    public static List<ByteRange> merge(List<ByteRange> ranges, long gap) {
        List<ByteRange> sorted = new ArrayList<>(ranges.stream().filter(r -> r.length() > 0).toList());
        sorted.sort(Comparator.comparingLong(ByteRange::start));
        List<ByteRange> out = new ArrayList<>();
        for (ByteRange r : sorted) {
            if (!out.isEmpty() && r.start <= out.get(out.size() - 1).end + gap) {
                ByteRange last = out.remove(out.size() - 1);
                out.add(new ByteRange(last.start, Math.max(last.end, r.end)));
            } else {
                out.add(r);
            }
        }
        return out;
    }

    /** @return total bytes of disjoint ranges */
    public static long total(List<ByteRange> ranges) {
        return ranges.stream().mapToLong(ByteRange::length).sum();
    }

    /**
     * @param ranges disjoint ranges in ascending order (as {@link #merge} returns)
     * @param r a range
     * @return the bytes of {@code r} not inside any of {@code ranges}
     */
    public static long uncovered(List<ByteRange> ranges, ByteRange r) {
        long missing = r.length();
        for (ByteRange c : ranges) {
            long s = Math.max(c.start, r.start);
            long e = Math.min(c.end, r.end);
            if (e > s) {
                missing -= e - s;
            }
        }
        return missing;
    }

    @Override
    public String toString() {
        return start + "-" + end;
    }
}
