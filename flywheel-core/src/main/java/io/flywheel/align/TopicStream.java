package io.flywheel.align;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The messages of one topic, ready for alignment: timestamps in non-decreasing order, a payload reference per message
 * and, optionally, a numeric vector per message for interpolation.
 *
 * <ul>
 *   <li>{@code timestampsNs}: int64 ns since the Unix epoch (or the recording's own clock), one per message, after the
 *       timestamp rule ({@link TimestampRule}) and <em>before</em> the clock offset (the offset lives in
 *       {@link StreamPolicy}). Non-decreasing; duplicates allowed.</li>
 *   <li>{@code payload}: an int per message that the caller uses to find the message in its own storage (row, record
 *       index...). Defaults to the message's position in the input.</li>
 *   <li>{@code values}: optional, flat {@code double[n * dim]}, message {@code i}'s vector at
 *       {@code [i*dim, (i+1)*dim)}. Only {@link AlignMethod#INTERPOLATE} reads it.</li>
 *   <li>{@code quaternionOffsets}: optional; each offset {@code o} names four components {@code o..o+3} of the
 *       vector holding a rotation quaternion as (x, y, z, w); those are interpolated by slerp, the rest linearly.</li>
 * </ul>
 *
 * <p>Unsorted input: {@link Builder#build()} rejects it with an {@link IllegalArgumentException} naming the stream
 * and the first position where a timestamp is smaller than its predecessor, unless {@link Builder#sortIfNeeded(boolean)}
 * is set; then messages are reordered by a stable index sort on the timestamp (equal timestamps keep their input
 * order), the payload and values move with them (payload defaults to the <em>input</em> position, so it still finds
 * the message), and every backward step of the input is reported by {@link #backwardJumpPositions()}.
 *
 * <p>Arrays are taken without copying when no sort is needed: the caller must not modify them afterwards.
 * Instances are immutable otherwise and safe to share between threads.
 */
public final class TopicStream {
    private final String name;
    private final long[] timestampsNs;
    private final int[] payload; // null: identity
    private final double[] values; // null: none
    private final int dim;
    private final int[] quaternionOffsets;
    private final List<ClockJump> backwardJumps; // input positions i where ts[i] < ts[i-1]

    private TopicStream(String name, long[] ts, int[] payload, double[] values, int dim, int[] quats, List<ClockJump> backwardJumps) {
        this.name = name;
        this.timestampsNs = ts;
        this.payload = payload;
        this.values = values;
        this.dim = dim;
        this.quaternionOffsets = quats;
        this.backwardJumps = backwardJumps;
    }

    /**
     * A stream of timestamps only (payload = position).
     *
     * @throws IllegalArgumentException when the timestamps are not non-decreasing (naming stream and position)
     */
    public static TopicStream of(String name, long[] timestampsNs) {
        return builder(name).timestamps(timestampsNs).build();
    }

    /** A builder for a stream named {@code name} (topic name or role; used in results and error messages). */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The stream's name (topic or role). */
    public String name() { return name; }

    /** Number of messages. */
    public int size() { return timestampsNs.length; }

    /** Timestamp of message {@code i} (ns, before the clock offset), sorted order. The array is shared, do not modify. */
    public long[] timestampsNs() { return timestampsNs; }

    /** Timestamp of message {@code i} in sorted order. */
    public long timestampNs(int i) { return timestampsNs[i]; }

    /** The caller's payload reference of message {@code i} (sorted order); {@code -1} for {@code i == -1}. */
    public int payload(int i) {
        if (i < 0) return -1;
        return payload == null ? i : payload[i];
    }

    /** Vector length per message, 0 when the stream carries no values. */
    public int dim() { return dim; }

    /** Flat values {@code double[size * dim]} in sorted order, or null. Shared, do not modify. */
    public double[] values() { return values; }

    /** Component offsets of (x, y, z, w) quaternion groups within the vector; empty when none. */
    public int[] quaternionOffsets() { return quaternionOffsets.clone(); }

    int[] quaternionOffsetsShared() { return quaternionOffsets; }

    /** Input positions {@code i} where {@code timestamp[i] < timestamp[i-1]} (non-empty only for a sorted input). */
    public int[] backwardJumpPositions() {
        int[] p = new int[backwardJumps.size()];
        for (int i = 0; i < p.length; i++) p[i] = backwardJumps.get(i).position();
        return p;
    }

    /** The backward steps of the input, as clock jumps (input positions and the two timestamps). */
    public List<ClockJump> backwardJumps() { return backwardJumps; }

    /**
     * Sorted positions {@code i} where the step {@code t[i] - t[i-1]} exceeds {@code thresholdNs}: forward clock jumps
     * (or gaps in the recording).
     */
    public int[] forwardJumpPositions(long thresholdNs) {
        int[] out = new int[8];
        int k = 0;
        long[] t = timestampsNs;
        for (int i = 1; i < t.length; i++) {
            if (t[i] - t[i - 1] > thresholdNs) {
                if (k == out.length) out = Arrays.copyOf(out, k * 2);
                out[k++] = i;
            }
        }
        return Arrays.copyOf(out, k);
    }

    @Override
    public String toString() {
        return "TopicStream[" + name + ", " + size() + " messages" + (dim > 0 ? ", dim " + dim : "") + "]";
    }

    /** Builder for {@link TopicStream}. */
    public static final class Builder {
        private final String name;
        private long[] ts;
        private int[] payload;
        private double[] values;
        private int dim;
        private int[] quats = new int[0];
        private boolean sort;

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** Timestamps in ns (required), one per message. */
        public Builder timestamps(long[] timestampsNs) { this.ts = timestampsNs; return this; }

        /** Payload reference per message (same length as the timestamps); default: input position. */
        public Builder payload(int[] payload) { this.payload = payload; return this; }

        /** Flat vectors {@code double[n * dim]} for interpolation. */
        public Builder values(double[] flatValues, int dim) { this.values = flatValues; this.dim = dim; return this; }

        /** Vectors given one array per message (each of the same length); copied into a flat array. */
        public Builder values(double[][] perMessage) {
            if (perMessage.length == 0) { this.values = new double[0]; this.dim = 0; return this; }
            int d = perMessage[0].length;
            double[] flat = new double[Math.multiplyExact(perMessage.length, d)];
            for (int i = 0; i < perMessage.length; i++) {
                if (perMessage[i].length != d) {
                    throw new IllegalArgumentException("stream '" + name + "': message " + i + " has a vector of length "
                            + perMessage[i].length + ", expected " + d);
                }
                System.arraycopy(perMessage[i], 0, flat, i * d, d);
            }
            this.values = flat;
            this.dim = d;
            return this;
        }

        /** Offsets of (x, y, z, w) quaternion groups within the vector, to be slerped. */
        public Builder quaternions(int... offsets) { this.quats = offsets.clone(); return this; }

        /** When true, unsorted input is sorted by a stable index sort instead of rejected. Default false. */
        public Builder sortIfNeeded(boolean sort) { this.sort = sort; return this; }

        /**
         * @throws IllegalArgumentException when timestamps are missing, lengths disagree, a quaternion group does not
         *                                  fit in the vector, or the input is unsorted and sorting was not asked for
         *                                  (the message names the stream and the position)
         */
        public TopicStream build() {
            if (ts == null) throw new IllegalArgumentException("stream '" + name + "': no timestamps given");
            int n = ts.length;
            if (payload != null && payload.length != n) {
                throw new IllegalArgumentException("stream '" + name + "': " + payload.length + " payload references for "
                        + n + " timestamps");
            }
            if (values != null) {
                if (dim <= 0) throw new IllegalArgumentException("stream '" + name + "': vector dimension must be > 0, got " + dim);
                if ((long) n * dim != values.length) {
                    throw new IllegalArgumentException("stream '" + name + "': " + values.length + " values for " + n
                            + " messages of dimension " + dim + " (expected " + ((long) n * dim) + ")");
                }
            } else {
                dim = 0;
            }
            for (int o : quats) {
                if (o < 0 || o + 4 > dim) {
                    throw new IllegalArgumentException("stream '" + name + "': quaternion group at offset " + o
                            + " does not fit in vectors of dimension " + dim);
                }
            }
            int back = 0;
            int first = -1;
            for (int i = 1; i < n; i++) {
                if (ts[i] < ts[i - 1]) {
                    if (first < 0) first = i;
                    back++;
                }
            }
            if (back == 0) {
                return new TopicStream(name, ts, payload, values, dim, quats, List.of());
            }
            if (!sort) {
                throw new IllegalArgumentException("stream '" + name + "': timestamps not sorted: message " + first
                        + " has " + ts[first] + " ns < " + ts[first - 1] + " ns of message " + (first - 1)
                        + " (" + back + " backward steps in total; sort the stream or set sortIfNeeded)");
            }
            List<ClockJump> jumps = new ArrayList<>(back);
            for (int i = 1; i < n; i++) {
                if (ts[i] < ts[i - 1]) jumps.add(new ClockJump(name, ClockJump.Kind.BACKWARD, i, ts[i - 1], ts[i]));
            }
            int[] order = stableOrder(ts);
            long[] st = new long[n];
            int[] sp = new int[n];
            for (int i = 0; i < n; i++) {
                st[i] = ts[order[i]];
                sp[i] = payload == null ? order[i] : payload[order[i]];
            }
            double[] sv = null;
            if (values != null) {
                sv = new double[values.length];
                for (int i = 0; i < n; i++) System.arraycopy(values, order[i] * dim, sv, i * dim, dim);
            }
            return new TopicStream(name, st, sp, sv, dim, quats, List.copyOf(jumps));
        }
    }

    /** Stable ascending order of {@code keys}: a bottom-up merge sort of indices (no boxing). */
    static int[] stableOrder(long[] keys) {
        int n = keys.length;
        int[] a = new int[n];
        int[] b = new int[n];
        for (int i = 0; i < n; i++) a[i] = i;
        for (int width = 1; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int i = lo, j = mid, k = lo;
                while (i < mid && j < hi) b[k++] = keys[a[j]] < keys[a[i]] ? a[j++] : a[i++];
                while (i < mid) b[k++] = a[i++];
                while (j < hi) b[k++] = a[j++];
            }
            int[] t = a; a = b; b = t;
            if (width > n / 2) break;
        }
        return a;
    }
}
