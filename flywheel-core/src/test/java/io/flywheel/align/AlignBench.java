package io.flywheel.align;

import java.util.List;
import java.util.Locale;

/**
 * Alignment speed: {@link Aligner} (one linear merge per stream) against a naive per-frame scan (for each frame, scan
 * every message of the stream for the best one), in the same run.
 *
 * <p>Workload: a 1 kHz joint stream (7-d vectors for interpolate) against a 30 Hz master camera with a +12 ms
 * clock offset. The fast path runs on {@code N} messages (default 10^7, ~2.8 h of recording); the naive scan is
 * O(frames x messages), so it runs on a small size (default 2*10^4 messages, 600 frames), and the fast path is timed
 * on that small size too for a like-for-like ratio. Prints one JSON line per measurement. Throughput = stream
 * messages aligned per second, one thread.
 *
 * <p>usage: {@code java -cp ... io.flywheel.align.AlignBench [N] [NAIVE_N]}; see {@code bench/align.sh}.
 */
public final class AlignBench {
    private AlignBench() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000_000;
        int naiveN = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        Workload big = Workload.of(n);
        Workload small = Workload.of(naiveN);
        for (AlignMethod m : AlignMethod.values()) {
            double fastBig = bestRate(big, m);
            double fastSmall = bestRate(small, m);
            double naive = naiveRate(small, m);
            System.out.println(String.format(Locale.ROOT,
                    "{\"method\":\"%s\",\"messages\":%d,\"frames\":%d,\"messages_per_s\":%.0f,"
                            + "\"small_messages\":%d,\"small_frames\":%d,\"small_messages_per_s\":%.0f,"
                            + "\"naive_messages_per_s\":%.0f,\"ratio_vs_naive_same_size\":%.1f}",
                    m.name().toLowerCase(Locale.ROOT), n, big.frames, fastBig, naiveN, small.frames, fastSmall, naive,
                    fastSmall / naive));
        }
    }

    static final class Workload {
        final TopicStream joints;
        final TopicStream cam;
        final long[] camTimes;
        final int frames;

        private Workload(TopicStream joints, TopicStream cam, long[] camTimes) {
            this.joints = joints;
            this.cam = cam;
            this.camTimes = camTimes;
            this.frames = camTimes.length;
        }

        static Workload of(int n) {
            long t0 = 1_700_000_000_000_000_000L;
            long[] t = new long[n];
            double[] v = new double[n * 7];
            java.util.Random r = new java.util.Random(1);
            for (int i = 0; i < n; i++) {
                t[i] = t0 + i * 1_000_000L + r.nextInt(200_000); // 1 kHz with 0.2 ms jitter
                for (int c = 0; c < 7; c++) v[i * 7 + c] = Math.sin(i * 1e-3 + c);
            }
            int nf = (int) ((long) n * 30 / 1000);
            long[] cam = new long[nf];
            for (int k = 0; k < nf; k++) cam[k] = t0 + 12_000_000L + Math.round(k * 1e9 / 30);
            return new Workload(TopicStream.builder("joints").timestamps(t).values(v, 7).build(),
                    TopicStream.of("cam", cam), cam);
        }
    }

    /** Messages/s of {@link Aligner#align} (best of several runs after warm-up). */
    static double bestRate(Workload w, AlignMethod m) {
        AlignOptions opts = AlignOptions.builder().masterStream("cam")
                .policy("cam", StreamPolicy.builder().clockOffsetNs(12_000_000L).build())
                .policy("joints", StreamPolicy.of(m, 5_000_000L)).build();
        List<TopicStream> streams = List.of(w.cam, w.joints);
        long best = Long.MAX_VALUE;
        long sink = 0;
        int runs = w.joints.size() >= 1_000_000 ? 8 : 200;
        for (int i = 0; i < runs; i++) {
            long s = System.nanoTime();
            Alignment a = Aligner.align(streams, opts);
            long e = System.nanoTime() - s;
            sink += a.stream("joints").index()[a.frames() / 2];
            if (i >= runs / 4) best = Math.min(best, e);
        }
        if (sink == 42) System.out.print("");
        return w.joints.size() / (best / 1e9);
    }

    /** Messages/s of the naive per-frame scan over all messages. */
    static double naiveRate(Workload w, AlignMethod m) {
        long best = Long.MAX_VALUE;
        long sink = 0;
        for (int i = 0; i < 5; i++) {
            long s = System.nanoTime();
            sink += naive(w.joints, w.camTimes, 12_000_000L, m, 5_000_000L);
            long e = System.nanoTime() - s;
            if (i >= 1) best = Math.min(best, e);
        }
        if (sink == 42) System.out.print("");
        return w.joints.size() / (best / 1e9);
    }

    /** For each frame, scan every message for the best one: the obvious implementation. */
    static long naive(TopicStream s, long[] camStamps, long camOffset, AlignMethod m, long tol) {
        long[] t = s.timestampsNs();
        double[] v = s.values();
        int dim = s.dim();
        double[] out = new double[dim];
        long sum = 0;
        for (long stamp : camStamps) {
            long ft = stamp - camOffset;
            int best = -1;
            long bestD = Long.MAX_VALUE;
            int lo = -1;
            int hi = -1;
            for (int i = 0; i < t.length; i++) {
                long d = t[i] - ft;
                switch (m) {
                    case ASOF:
                        if (d <= 0 && -d <= bestD) { bestD = -d; best = i; }
                        break;
                    case NEAREST:
                        if (Math.abs(d) < bestD || (Math.abs(d) == bestD && d <= 0)) { bestD = Math.abs(d); best = i; }
                        break;
                    default:
                        if (d <= 0 && (lo < 0 || t[i] >= t[lo])) lo = i;
                        if (d > 0 && (hi < 0 || t[i] < t[hi])) hi = i;
                }
            }
            if (m == AlignMethod.INTERPOLATE) {
                if (lo >= 0 && hi >= 0 && t[hi] - t[lo] <= tol) {
                    double w = (double) (ft - t[lo]) / (t[hi] - t[lo]);
                    for (int c = 0; c < dim; c++) out[c] = (1 - w) * v[lo * dim + c] + w * v[hi * dim + c];
                    sum += (long) (out[0] * 1000) + lo;
                }
            } else if (best >= 0 && bestD <= tol) {
                sum += best;
            }
        }
        return sum;
    }
}
