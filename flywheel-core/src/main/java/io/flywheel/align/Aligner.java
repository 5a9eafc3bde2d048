package io.flywheel.align;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Multi-rate alignment: attaches every stream to the ticks of a master clock with a per-stream policy
 * ({@link AlignMethod}), tolerance and clock offset ({@link StreamPolicy}).
 *
 * <p>Each stream is matched by one linear merge of two sorted sequences (frame times and corrected message times):
 * O(frames + messages), no search per frame, no boxing. The clock offset is applied by shifting the frame time
 * ({@code stamp - offset <= frame} is evaluated as {@code stamp <= frame + offset}), so stream arrays are never copied.
 *
 * <p>Thread safety: stateless; {@link #align} may be called concurrently.
 */
public final class Aligner {
    private Aligner() {
    }

    /**
     * Aligns {@code streams} to the master clock of {@code options}.
     *
     * @param streams the streams (unique names); when the master is {@link MasterClock#stream}, that stream must be
     *                among them and is matched to itself
     * @param options master clock and policies
     * @return frames and per-stream columns
     * @throws IllegalArgumentException when two streams share a name, the master stream is missing, or a fixed rate
     *                                  would produce more than {@code Integer.MAX_VALUE - 8} frames
     */
    public static Alignment align(List<TopicStream> streams, AlignOptions options) {
        Set<String> names = new HashSet<>();
        for (TopicStream s : streams) {
            if (!names.add(s.name())) throw new IllegalArgumentException("two streams are named '" + s.name() + "'");
        }
        String masterName = null;
        TopicStream masterStream = null;
        long[] frames;
        MasterClock mc = options.master();
        if (mc instanceof MasterClock.StreamClock sc) {
            masterName = sc.name();
            for (TopicStream s : streams) if (s.name().equals(masterName)) masterStream = s;
            if (masterStream == null) {
                throw new IllegalArgumentException("master stream '" + masterName + "' is not among the streams " + names);
            }
            long off = options.policyFor(masterName).clockOffsetNs();
            long[] t = masterStream.timestampsNs();
            frames = new long[t.length];
            for (int i = 0; i < t.length; i++) frames[i] = t[i] - off;
        } else if (mc instanceof MasterClock.FixedRate fr) {
            long start = Long.MAX_VALUE;
            long end = Long.MIN_VALUE;
            for (TopicStream s : streams) {
                if (s.size() == 0) continue;
                long off = options.policyFor(s.name()).clockOffsetNs();
                start = Math.min(start, s.timestampNs(0) - off);
                end = Math.max(end, s.timestampNs(s.size() - 1) - off);
            }
            if (fr.startNs() != null) start = fr.startNs();
            if (fr.endNs() != null) end = fr.endNs();
            frames = fixedRateTicks(fr.hz(), start, end);
        } else {
            frames = ((MasterClock.Explicit) mc).frameTimesNs();
        }

        int nf = frames.length;
        List<StreamAlignment> out = new ArrayList<>(streams.size());
        List<ClockJump> jumps = new ArrayList<>();
        boolean[] drop = null;
        int[] droppedBy = new int[streams.size()];
        int si = 0;
        for (TopicStream s : streams) {
            StreamPolicy p = options.policyFor(s.name());
            jumps.addAll(s.backwardJumps());
            long[] t = s.timestampsNs();
            for (int pos : s.forwardJumpPositions(options.clockJumpThresholdNs())) {
                jumps.add(new ClockJump(s.name(), ClockJump.Kind.FORWARD, pos, t[pos - 1], t[pos]));
            }
            StreamAlignment a = s == masterStream ? alignMaster(s, p, nf) : alignOne(s, p, frames);
            out.add(a);
            if (p.onMiss() == MissPolicy.DROP_FRAME) {
                byte[] fl = a.flags();
                for (int f = 0; f < nf; f++) {
                    if (fl[f] != 0) {
                        if (drop == null) drop = new boolean[nf];
                        drop[f] = true;
                        droppedBy[si]++;
                    }
                }
            }
            si++;
        }
        int[] masterFrame;
        if (drop == null) {
            masterFrame = new int[nf];
            for (int f = 0; f < nf; f++) masterFrame[f] = f;
        } else {
            int kept = 0;
            for (int f = 0; f < nf; f++) if (!drop[f]) kept++;
            masterFrame = new int[kept];
            long[] keptTimes = new long[kept];
            for (int f = 0, k = 0; f < nf; f++) {
                if (!drop[f]) {
                    masterFrame[k] = f;
                    keptTimes[k++] = frames[f];
                }
            }
            List<StreamAlignment> compacted = new ArrayList<>(out.size());
            for (int i = 0; i < out.size(); i++) compacted.add(compact(out.get(i), masterFrame, droppedBy[i]));
            out = compacted;
            frames = keptTimes;
        }
        return new Alignment(frames, masterFrame, nf, masterName, out, jumps);
    }

    /** Fixed-rate ticks {@code start + round(k * 1e9 / hz)} while {@code <= end}; empty when start > end. */
    static long[] fixedRateTicks(double hz, long start, long end) {
        if (start > end) return new long[0];
        double periodNs = 1e9 / hz;
        double approx = Math.floor((double) (end - start) / periodNs) + 2;
        if (approx > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("fixed master rate " + hz + " Hz over " + (end - start)
                    + " ns would give " + (long) approx + " frames");
        }
        long[] t = new long[(int) approx];
        int k = 0;
        while (k < t.length) {
            long tick = start + Math.round(k * periodNs);
            if (tick > end) break;
            t[k++] = tick;
        }
        return k == t.length ? t : java.util.Arrays.copyOf(t, k);
    }

    private static StreamAlignment alignMaster(TopicStream s, StreamPolicy p, int nf) {
        int[] idx = new int[nf];
        long[] res = new long[nf];
        for (int f = 0; f < nf; f++) idx[f] = f;
        byte[] flags = new byte[nf];
        int[] upper = null;
        double[] w = null;
        double[] vals = null;
        int dim = 0;
        if (p.method() == AlignMethod.INTERPOLATE) {
            upper = idx.clone();
            w = new double[nf];
            if (s.values() != null) {
                vals = s.values().clone();
                dim = s.dim();
            }
        }
        return new StreamAlignment(s.name(), p, true, idx, res, flags, upper, w, vals, dim, 0);
    }

    /** Aligns one stream to sorted {@code frames}. */
    static StreamAlignment alignOne(TopicStream s, StreamPolicy p, long[] frames) {
        int nf = frames.length;
        int[] idx = new int[nf];
        long[] res = new long[nf];
        byte[] flags = new byte[nf];
        long[] t = s.timestampsNs();
        long off = p.clockOffsetNs();
        long tol = p.toleranceNs();
        switch (p.method()) {
            case NEAREST:
                nearest(t, frames, off, tol, idx, res, flags);
                return new StreamAlignment(s.name(), p, false, idx, res, flags, null, null, null, 0, 0);
            case ASOF:
                asof(t, frames, off, tol, idx, res, flags);
                return new StreamAlignment(s.name(), p, false, idx, res, flags, null, null, null, 0, 0);
            default:
                int[] upper = new int[nf];
                double[] w = new double[nf];
                interpolate(t, frames, off, tol, idx, upper, w, res, flags);
                double[] vals = null;
                int dim = 0;
                if (s.values() != null) {
                    dim = s.dim();
                    vals = new double[Math.multiplyExact(nf, dim)];
                    Interpolation.fill(s.values(), dim, s.quaternionOffsetsShared(), idx, upper, w, vals);
                }
                return new StreamAlignment(s.name(), p, false, idx, res, flags, upper, w, vals, dim, 0);
        }
    }

    /** Latest message at or before each frame; one merge pass. */
    static void asof(long[] t, long[] frames, long off, long tol, int[] idx, long[] res, byte[] flags) {
        final int n = t.length;
        int j = 0; // number of messages with t <= frame + off
        for (int f = 0; f < frames.length; f++) {
            final long ft = frames[f] + off;
            while (j < n && t[j] <= ft) j++;
            if (j == 0) {
                idx[f] = -1;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_NO_MESSAGE;
                continue;
            }
            long age = ft - t[j - 1];
            if (age <= tol) {
                idx[f] = j - 1;
                res[f] = -age;
                flags[f] = 0;
            } else {
                idx[f] = -1;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_BEYOND_TOLERANCE;
            }
        }
    }

    /** Closest message to each frame, ties to the earlier; one merge pass. */
    static void nearest(long[] t, long[] frames, long off, long tol, int[] idx, long[] res, byte[] flags) {
        final int n = t.length;
        int j = 0;
        for (int f = 0; f < frames.length; f++) {
            final long ft = frames[f] + off;
            while (j < n && t[j] <= ft) j++;
            int m;
            long dt;
            if (j > 0 && (j == n || ft - t[j - 1] <= t[j] - ft)) {
                m = j - 1;
                dt = t[m] - ft;
            } else if (j < n) {
                m = j;
                dt = t[m] - ft;
            } else {
                idx[f] = -1;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_NO_MESSAGE;
                continue;
            }
            if (Math.abs(dt) <= tol) {
                idx[f] = m;
                res[f] = dt;
                flags[f] = 0;
            } else {
                idx[f] = -1;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_BEYOND_TOLERANCE;
            }
        }
    }

    /** Neighbours and weights for linear interpolation; one merge pass. */
    static void interpolate(long[] t, long[] frames, long off, long tol, int[] idx, int[] upper, double[] w,
                            long[] res, byte[] flags) {
        final int n = t.length;
        int j = 0;
        for (int f = 0; f < frames.length; f++) {
            final long ft = frames[f] + off;
            while (j < n && t[j] <= ft) j++;
            if (j > 0 && t[j - 1] == ft) { // exact hit: no interpolation
                idx[f] = j - 1;
                upper[f] = j - 1;
                w[f] = 0.0;
                res[f] = 0;
                flags[f] = 0;
                continue;
            }
            if (j == 0 || j == n) {
                idx[f] = -1;
                upper[f] = -1;
                w[f] = Double.NaN;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_NO_MESSAGE;
                continue;
            }
            long lo = t[j - 1];
            long hi = t[j];
            long gap = hi - lo;
            if (gap > tol) {
                idx[f] = -1;
                upper[f] = -1;
                w[f] = Double.NaN;
                res[f] = StreamAlignment.NO_RESIDUAL;
                flags[f] = StreamAlignment.FLAG_GAP;
                continue;
            }
            long dlo = ft - lo;
            long dhi = hi - ft;
            idx[f] = j - 1;
            upper[f] = j;
            w[f] = (double) dlo / (double) gap;
            res[f] = dlo <= dhi ? -dlo : dhi;
            flags[f] = 0;
        }
    }

    private static StreamAlignment compact(StreamAlignment a, int[] keep, int droppedBy) {
        int k = keep.length;
        int[] idx = new int[k];
        long[] res = new long[k];
        byte[] fl = new byte[k];
        int[] up = a.upperIndex() == null ? null : new int[k];
        double[] w = a.weight() == null ? null : new double[k];
        int dim = a.dim();
        double[] vals = a.values() == null ? null : new double[k * dim];
        for (int i = 0; i < k; i++) {
            int f = keep[i];
            idx[i] = a.index()[f];
            res[i] = a.residualNs()[f];
            fl[i] = a.flags()[f];
            if (up != null) up[i] = a.upperIndex()[f];
            if (w != null) w[i] = a.weight()[f];
            if (vals != null) System.arraycopy(a.values(), f * dim, vals, i * dim, dim);
        }
        return new StreamAlignment(a.stream(), a.policy(), a.isMaster(), idx, res, fl, up, w, vals, dim, droppedBy);
    }
}
