package io.flywheel.align;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AlignerTest {
    static final long MS = 1_000_000L;
    static final long T0 = 1_700_000_000_000_000_000L; // an epoch-scale start

    // ---- ground truth: 30 Hz camera (+12 ms clock offset, jitter) against 200 Hz joints ----

    @Test
    void unsyncedCameraAgainstJointsResidualsEqualTruth() {
        Random rnd = new Random(42);
        int nCam = 90; // 3 s
        long[] trueExposure = new long[nCam];
        long[] camStamp = new long[nCam];
        for (int k = 0; k < nCam; k++) {
            long jitter = rnd.nextInt(2_000_001) - 1_000_000; // +-1 ms
            trueExposure[k] = T0 + 100 * MS + Math.round(k * 1e9 / 30.0) + jitter;
            camStamp[k] = trueExposure[k] + 12 * MS; // the camera clock runs 12 ms ahead
        }
        int nJ = 3 * 200 + 100;
        long[] joints = new long[nJ];
        for (int j = 0; j < nJ; j++) joints[j] = T0 + j * 5 * MS;

        AlignOptions opts = AlignOptions.builder()
                .masterStream("cam")
                .policy("cam", StreamPolicy.builder().clockOffsetNs(12 * MS).build())
                .policy("joints", StreamPolicy.builder().method(AlignMethod.NEAREST).toleranceMs(2.5).build())
                .build();
        Alignment a = Aligner.align(List.of(TopicStream.of("cam", camStamp), TopicStream.of("joints", joints)), opts);
        assertArrayEquals(trueExposure, a.frameTimesNs(), "frame times are the corrected camera stamps");
        StreamAlignment js = a.stream("joints");
        for (int k = 0; k < nCam; k++) {
            long d = trueExposure[k] - T0;
            long expected = Math.floorDiv(d - 2_500_000 + 4_999_999, 5_000_000); // nearest, ties to the earlier
            assertEquals(expected, js.index()[k], "frame " + k);
            assertEquals(T0 + expected * 5 * MS - trueExposure[k], js.residualNs()[k], "frame " + k);
            assertTrue(Math.abs(js.residualNs()[k]) <= 2_500_000);
        }
        StreamAlignment cam = a.stream("cam");
        assertTrue(cam.isMaster());
        for (int k = 0; k < nCam; k++) {
            assertEquals(k, cam.index()[k]);
            assertEquals(0, cam.residualNs()[k]);
        }

        // Without the offset the observed residuals stay small (a few ms) while every pairing is ~12 ms wrong.
        Alignment naive = Aligner.align(List.of(TopicStream.of("cam", camStamp), TopicStream.of("joints", joints)),
                AlignOptions.builder().masterStream("cam")
                        .policy("joints", StreamPolicy.of(AlignMethod.NEAREST, 2_500_000)).build());
        StreamAlignment nj = naive.stream("joints");
        for (int k = 0; k < nCam; k++) {
            long observed = Math.abs(nj.residualNs()[k]);
            long trueError = Math.abs(joints[nj.index()[k]] - trueExposure[k]);
            assertTrue(observed <= 2_500_000, "observed " + observed);
            assertTrue(trueError >= 9_500_000 && trueError <= 14_500_000, "true error " + trueError);
        }
        ResidualStats st = nj.stats();
        assertEquals(nCam, st.matched());
        assertTrue(st.maxAbsNs() <= 2_500_000);
    }

    // ---- property tests against brute force ----

    /** Brute force as-of: the largest corrected time <= frame, the last such message among equal times. */
    static int bruteAsof(long[] t, long off, long ft) {
        int best = -1;
        for (int i = 0; i < t.length; i++) {
            if (t[i] - off <= ft && (best < 0 || t[i] >= t[best])) best = i;
        }
        return best;
    }

    /** Brute force nearest: min |dt|; tie -> the earlier side; among equal times: last at/before, first after. */
    static int bruteNearest(long[] t, long off, long ft) {
        int best = -1;
        for (int i = 0; i < t.length; i++) {
            if (best < 0 || better(t, off, ft, i, best)) best = i;
        }
        return best;
    }

    private static boolean better(long[] t, long off, long ft, int i, int b) {
        long di = Math.abs(t[i] - off - ft);
        long db = Math.abs(t[b] - off - ft);
        if (di != db) return di < db;
        boolean iBefore = t[i] - off <= ft;
        boolean bBefore = t[b] - off <= ft;
        if (iBefore != bBefore) return iBefore;
        return iBefore ? i > b : i < b;
    }

    static long[] randomSorted(Random r, int n, long span) {
        long[] t = new long[n];
        for (int i = 0; i < n; i++) t[i] = T0 + (long) (r.nextDouble() * span);
        if (n > 2 && r.nextBoolean()) t[n / 2] = t[n / 2 - 1]; // force duplicates sometimes
        Arrays.sort(t);
        return t;
    }

    @Test
    void asofNeverPairsALaterMessageAndEqualsBruteForce() {
        Random r = new Random(7);
        for (int trial = 0; trial < 400; trial++) {
            long[] frames = randomSorted(r, r.nextInt(60), 1_000 * MS);
            long[] msgs = randomSorted(r, r.nextInt(5) == 0 ? r.nextInt(2) : r.nextInt(300), 1_000 * MS);
            if (trial % 3 == 0 && msgs.length > 0) { // coarse times: many duplicates and exact hits
                for (int i = 0; i < msgs.length; i++) msgs[i] = T0 + (msgs[i] - T0) / (50 * MS) * 50 * MS;
                for (int i = 0; i < frames.length; i++) frames[i] = T0 + (frames[i] - T0) / (50 * MS) * 50 * MS;
            }
            long off = (r.nextInt(41) - 20) * MS;
            long tol = r.nextBoolean() ? Long.MAX_VALUE : r.nextInt(30) * MS;
            Alignment a = Aligner.align(List.of(TopicStream.of("s", msgs)), AlignOptions.builder()
                    .master(MasterClock.timestamps(frames))
                    .defaultPolicy(new StreamPolicy(AlignMethod.ASOF, tol, off, MissPolicy.FLAG)).build());
            StreamAlignment s = a.stream("s");
            for (int f = 0; f < frames.length; f++) {
                int b = bruteAsof(msgs, off, frames[f]);
                int expected = b >= 0 && frames[f] - (msgs[b] - off) <= tol ? b : -1;
                assertEquals(expected, s.index()[f], "trial " + trial + " frame " + f);
                if (expected >= 0) {
                    assertTrue(msgs[expected] - off <= frames[f], "a later message was paired");
                    assertTrue(s.residualNs()[f] <= 0);
                    assertEquals(msgs[expected] - off - frames[f], s.residualNs()[f]);
                    assertEquals(0, s.flags()[f]);
                } else {
                    assertEquals(StreamAlignment.NO_RESIDUAL, s.residualNs()[f]);
                    assertEquals(b < 0 ? StreamAlignment.FLAG_NO_MESSAGE : StreamAlignment.FLAG_BEYOND_TOLERANCE,
                            s.flags()[f]);
                }
            }
        }
    }

    @Test
    void nearestEqualsBruteForce() {
        Random r = new Random(11);
        for (int trial = 0; trial < 400; trial++) {
            long[] frames = randomSorted(r, r.nextInt(60), 1_000 * MS);
            long[] msgs = randomSorted(r, r.nextInt(5) == 0 ? r.nextInt(2) : r.nextInt(300), 1_000 * MS);
            if (trial % 2 == 0) { // 10 ms grid: exact ties between two neighbours are frequent
                for (int i = 0; i < msgs.length; i++) msgs[i] = T0 + (msgs[i] - T0) / (10 * MS) * 10 * MS;
                for (int i = 0; i < frames.length; i++) frames[i] = T0 + (frames[i] - T0) / (5 * MS) * 5 * MS;
            }
            long off = (r.nextInt(4) - 2) * 5 * MS;
            long tol = r.nextBoolean() ? Long.MAX_VALUE : r.nextInt(10) * MS;
            Alignment a = Aligner.align(List.of(TopicStream.of("s", msgs)), AlignOptions.builder()
                    .master(MasterClock.timestamps(frames))
                    .defaultPolicy(new StreamPolicy(AlignMethod.NEAREST, tol, off, MissPolicy.FLAG)).build());
            StreamAlignment s = a.stream("s");
            for (int f = 0; f < frames.length; f++) {
                int b = bruteNearest(msgs, off, frames[f]);
                int expected = b >= 0 && Math.abs(msgs[b] - off - frames[f]) <= tol ? b : -1;
                assertEquals(expected, s.index()[f], "trial " + trial + " frame " + f);
                if (expected >= 0) assertEquals(msgs[expected] - off - frames[f], s.residualNs()[f]);
            }
        }
    }

    @Test
    void nearestTieGoesToTheEarlierMessage() {
        long[] msgs = {T0, T0 + 10 * MS};
        Alignment a = Aligner.align(List.of(TopicStream.of("s", msgs)), AlignOptions.builder()
                .master(MasterClock.timestamps(new long[] {T0 + 5 * MS})).build());
        assertEquals(0, a.stream("s").index()[0]);
        assertEquals(-5 * MS, a.stream("s").residualNs()[0]);
    }

    // ---- interpolation ----

    @Test
    void interpolateOfALinearRampIsExact() {
        Random r = new Random(3);
        int n = 500;
        long[] t = new long[n];
        double[] v = new double[n * 2];
        long tt = T0;
        for (int i = 0; i < n; i++) {
            tt += 1 * MS + r.nextInt(4_000_000); // 1..5 ms steps
            t[i] = tt;
            double sec = (tt - T0) / 1e9;
            v[2 * i] = 3.0 + 2.0 * sec;
            v[2 * i + 1] = -1.0 - 0.5 * sec;
        }
        long[] frames = new long[200];
        for (int f = 0; f < frames.length; f++) frames[f] = t[0] + (long) ((t[n - 1] - t[0]) * (f / 199.0));
        frames[50] = t[123]; // an exact hit
        Arrays.sort(frames);
        Alignment a = Aligner.align(List.of(TopicStream.builder("ramp").timestamps(t).values(v, 2).build()),
                AlignOptions.builder().master(MasterClock.timestamps(frames))
                        .defaultPolicy(StreamPolicy.of(AlignMethod.INTERPOLATE, 10 * MS)).build());
        StreamAlignment s = a.stream("ramp");
        assertEquals(2, s.dim());
        for (int f = 0; f < frames.length; f++) {
            double sec = (frames[f] - T0) / 1e9;
            assertTrue(s.matched(f), "frame " + f);
            assertEquals(3.0 + 2.0 * sec, s.values()[2 * f], 1e-9, "frame " + f);
            assertEquals(-1.0 - 0.5 * sec, s.values()[2 * f + 1], 1e-9, "frame " + f);
            long lo = t[s.index()[f]];
            long hi = t[s.upperIndex()[f]];
            assertTrue(lo <= frames[f] && frames[f] <= hi);
        }
        int hit = Arrays.binarySearch(frames, t[123]);
        assertEquals(123, s.index()[hit]);
        assertEquals(123, s.upperIndex()[hit]);
        assertEquals(0.0, s.weight()[hit]);
        assertEquals(0, s.residualNs()[hit]);
    }

    @Test
    void interpolateWeightAndResidualByHand() {
        long[] t = {T0, T0 + 10 * MS};
        double[] v = {0.0, 10.0};
        Alignment a = Aligner.align(List.of(TopicStream.builder("s").timestamps(t).values(v, 1).build()),
                AlignOptions.builder().master(MasterClock.timestamps(new long[] {T0 + 3 * MS, T0 + 8 * MS}))
                        .defaultPolicy(StreamPolicy.of(AlignMethod.INTERPOLATE, 10 * MS)).build());
        StreamAlignment s = a.stream("s");
        assertEquals(0.3, s.weight()[0], 1e-12);
        assertEquals(3.0, s.values()[0], 1e-12);
        assertEquals(-3 * MS, s.residualNs()[0]); // nearer neighbour is the lower one, 3 ms earlier
        assertEquals(8.0, s.values()[1], 1e-12);
        assertEquals(2 * MS, s.residualNs()[1]); // nearer neighbour is the upper one, 2 ms later
    }

    @Test
    void slerpAboutZGivesTheRightAngleAndUnitNorm() {
        double half = Math.toRadians(90) / 2;
        long[] t = {T0, T0 + 100 * MS};
        // vector: (px, qx, qy, qz, qw): a position plus a quaternion at offset 1
        double[] v = {0, 0, 0, 0, 1, 10, 0, 0, Math.sin(half), Math.cos(half)};
        long[] frames = {T0 + 25 * MS, T0 + 50 * MS, T0 + 100 * MS};
        for (double sign : new double[] {1, -1}) { // -q is the same rotation: the shortest arc must be taken
            double[] vv = v.clone();
            for (int c = 6; c < 10; c++) vv[c] *= sign;
            Alignment a = Aligner.align(List.of(TopicStream.builder("pose").timestamps(t).values(vv, 5).quaternions(1).build()),
                    AlignOptions.builder().master(MasterClock.timestamps(frames))
                            .defaultPolicy(StreamPolicy.of(AlignMethod.INTERPOLATE, 200 * MS)).build());
            double[] out = a.stream("pose").values();
            double[] expectedDeg = {22.5, 45, 90};
            for (int f = 0; f < 3; f++) {
                double qx = out[5 * f + 1], qy = out[5 * f + 2], qz = out[5 * f + 3], qw = out[5 * f + 4];
                assertEquals(1.0, Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw), 1e-12);
                assertEquals(0.0, qx, 1e-12);
                assertEquals(0.0, qy, 1e-12);
                double angle = Math.toDegrees(2 * Math.atan2(Math.abs(qz), Math.abs(qw)));
                assertEquals(expectedDeg[f], angle, 1e-9, "frame " + f + " sign " + sign);
            }
            assertEquals(2.5, out[0], 1e-12); // the position is linear
            assertEquals(5.0, out[5], 1e-12);
        }
    }

    // ---- tolerance: drop or flag ----

    /** Joints at 100 Hz from 0 to 2 s with no messages in (990 ms, 1300 ms); a 10 Hz master from 0 to 2 s. */
    static List<TopicStream> gapped() {
        List<Long> ts = new ArrayList<>();
        for (long ms = 0; ms <= 2000; ms += 10) if (ms <= 990 || ms >= 1300) ts.add(T0 + ms * MS);
        return List.of(TopicStream.of("joints", ts.stream().mapToLong(Long::longValue).toArray()));
    }

    static long[] droppedMs(Alignment a) {
        List<Long> all = new ArrayList<>();
        for (long ms = 0; ms <= 2000; ms += 100) all.add(ms);
        for (long t : a.frameTimesNs()) all.remove(Long.valueOf((t - T0) / MS));
        return all.stream().mapToLong(Long::longValue).toArray();
    }

    @Test
    void framesDroppedByToleranceAreExactlyTheExpectedOnes() {
        MasterClock tenHz = MasterClock.fixedRate(10, T0, T0 + 2000 * MS);
        StreamPolicy.Builder p = StreamPolicy.builder().toleranceNs(10 * MS).onMiss(MissPolicy.DROP_FRAME);
        Alignment asof = Aligner.align(gapped(), AlignOptions.builder().master(tenHz)
                .policy("joints", p.method(AlignMethod.ASOF).build()).build());
        assertEquals(21, asof.masterFrames());
        assertArrayEquals(new long[] {1100, 1200}, droppedMs(asof)); // 1000 -> 990 is 10 ms old: kept
        assertEquals(2, asof.stream("joints").droppedFrames());
        assertEquals(2, asof.stream("joints").stats().droppedFrames());
        Alignment nearest = Aligner.align(gapped(), AlignOptions.builder().master(tenHz)
                .policy("joints", p.method(AlignMethod.NEAREST).build()).build());
        assertArrayEquals(new long[] {1100, 1200}, droppedMs(nearest));
        Alignment interp = Aligner.align(gapped(), AlignOptions.builder().master(tenHz)
                .policy("joints", p.method(AlignMethod.INTERPOLATE).build()).build());
        assertArrayEquals(new long[] {1000, 1100, 1200}, droppedMs(interp)); // 990..1300 is a 310 ms gap
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 18, 19, 20}, interp.masterFrame());
        for (int f = 0; f < interp.frames(); f++) assertTrue(interp.stream("joints").matched(f));

        // The same with FLAG keeps every frame and flags the three.
        Alignment flagged = Aligner.align(gapped(), AlignOptions.builder().master(tenHz)
                .policy("joints", StreamPolicy.of(AlignMethod.INTERPOLATE, 10 * MS)).build());
        assertEquals(21, flagged.frames());
        StreamAlignment s = flagged.stream("joints");
        for (int f = 0; f < 21; f++) {
            boolean miss = f >= 10 && f <= 12;
            assertEquals(miss ? StreamAlignment.FLAG_GAP : 0, s.flags()[f], "frame " + f);
            if (miss) {
                assertEquals(-1, s.index()[f]);
            } else { // an exact hit on the 100 Hz message at the frame time
                assertEquals(flagged.frameTimesNs()[f], gapped().get(0).timestampNs(s.index()[f]), "frame " + f);
            }
        }
        ResidualStats st = s.stats();
        assertEquals(21, st.frames());
        assertEquals(18, st.matched());
        assertEquals(3, st.flagged());
        assertEquals(0, st.maxAbsNs()); // every matched frame is an exact hit
    }

    @Test
    void fixedRate50HzFrom30HzVideoAnd1kHzJoints() {
        int nVid = 61; // 0 .. 2 s
        long[] vid = new long[nVid];
        for (int k = 0; k < nVid; k++) vid[k] = T0 + Math.round(k * 1e9 / 30);
        long[] joints = new long[2001];
        for (int j = 0; j < joints.length; j++) joints[j] = T0 + j * MS;
        Alignment a = Aligner.align(List.of(TopicStream.of("video", vid), TopicStream.of("joints", joints)),
                AlignOptions.builder().masterRate(50)
                        .policy("video", StreamPolicy.of(AlignMethod.ASOF, 40 * MS))
                        .policy("joints", StreamPolicy.of(AlignMethod.NEAREST, 1 * MS)).build());
        assertEquals(101, a.frames());
        assertNull(a.masterStream());
        for (int f = 0; f < 101; f++) {
            assertEquals(T0 + f * 20 * MS, a.frameTimesNs()[f]);
            assertEquals(20 * f, a.stream("joints").index()[f]);
            assertEquals(0, a.stream("joints").residualNs()[f]);
            // as-of video frame: floor(t * 30) with t = f / 50 s, i.e. floor(3f / 5)
            int k = (3 * f) / 5;
            assertEquals(k, a.stream("video").index()[f], "frame " + f);
            assertEquals(vid[k] - a.frameTimesNs()[f], a.stream("video").residualNs()[f]);
        }
        ResidualStats vs = a.stream("video").stats();
        assertEquals(101, vs.matched());
        assertEquals(Math.round(4e9 / 150), vs.maxAbsNs()); // 26.67 ms: 4/5 of a 30 Hz period behind
    }

    @Test
    void fixedRateTicksDoNotDrift() {
        long[] t = Aligner.fixedRateTicks(30, 0, 10_000 * MS);
        assertEquals(301, t.length);
        assertEquals(10_000 * MS, t[300]);
        assertEquals(33_333_333, t[1]);
        assertEquals(66_666_667, t[2]);
    }

    // ---- edge cases ----

    @Test
    void emptyAndSingleMessageStreams() {
        long[] frames = {T0, T0 + 10 * MS, T0 + 20 * MS};
        Alignment a = Aligner.align(List.of(TopicStream.of("empty", new long[0]), TopicStream.of("one", new long[] {T0 + 12 * MS})),
                AlignOptions.builder().master(MasterClock.timestamps(frames))
                        .defaultPolicy(StreamPolicy.of(AlignMethod.NEAREST, 5 * MS)).build());
        for (int f = 0; f < 3; f++) {
            assertEquals(-1, a.stream("empty").index()[f]);
            assertEquals(StreamAlignment.FLAG_NO_MESSAGE, a.stream("empty").flags()[f]);
        }
        assertArrayEquals(new int[] {-1, 0, -1}, a.stream("one").index());
        assertArrayEquals(new byte[] {StreamAlignment.FLAG_BEYOND_TOLERANCE, 0, StreamAlignment.FLAG_BEYOND_TOLERANCE},
                a.stream("one").flags());
        ResidualStats es = a.stream("empty").stats();
        assertEquals(0, es.matched());
        assertEquals(-1, es.p99AbsNs());
        // fixed rate over all-empty streams: no frames
        Alignment none = Aligner.align(List.of(TopicStream.of("empty", new long[0])), AlignOptions.builder().masterRate(50).build());
        assertEquals(0, none.frames());
        // master stream with one message
        Alignment single = Aligner.align(List.of(TopicStream.of("m", new long[] {T0})), AlignOptions.builder().masterStream("m").build());
        assertEquals(1, single.frames());
    }

    @Test
    void unsortedInputIsRejectedOrStablySorted() {
        long[] ts = {T0, T0 + 5, T0 + 3, T0 + 3, T0 + 9, T0 + 1};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TopicStream.of("/joints", ts));
        assertTrue(e.getMessage().contains("'/joints'") && e.getMessage().contains("message 2"), e.getMessage());
        assertTrue(e.getMessage().contains("2 backward steps"), e.getMessage());

        double[] v = {0, 1, 2, 3, 4, 5};
        TopicStream s = TopicStream.builder("/joints").timestamps(ts).values(v, 1).sortIfNeeded(true).build();
        assertArrayEquals(new long[] {T0, T0 + 1, T0 + 3, T0 + 3, T0 + 5, T0 + 9}, s.timestampsNs());
        // payload = input position; the two T0+3 keep their input order (2 then 3)
        int[] payload = new int[6];
        for (int i = 0; i < 6; i++) payload[i] = s.payload(i);
        assertArrayEquals(new int[] {0, 5, 2, 3, 1, 4}, payload);
        assertArrayEquals(new double[] {0, 5, 2, 3, 1, 4}, s.values());
        assertArrayEquals(new int[] {2, 5}, s.backwardJumpPositions());
        assertEquals(-2, s.backwardJumps().get(0).stepNs());
        // and the jumps surface in the alignment
        Alignment a = Aligner.align(List.of(s), AlignOptions.builder().masterStream("/joints").build());
        assertEquals(2, a.clockJumps().size());
        assertEquals(ClockJump.Kind.BACKWARD, a.clockJumps().get(0).kind());
    }

    @Test
    void stableOrderOnLargeInputWithDuplicates() {
        Random r = new Random(5);
        long[] keys = new long[10_001];
        for (int i = 0; i < keys.length; i++) keys[i] = r.nextInt(100);
        int[] o = TopicStream.stableOrder(keys);
        for (int i = 1; i < o.length; i++) {
            assertTrue(keys[o[i - 1]] < keys[o[i]] || (keys[o[i - 1]] == keys[o[i]] && o[i - 1] < o[i]), "at " + i);
        }
    }

    @Test
    void forwardClockJumpsAreReportedWithPositions() {
        long[] ts = {T0, T0 + 10 * MS, T0 + 20 * MS, T0 + 5_020 * MS, T0 + 5_030 * MS};
        Alignment a = Aligner.align(List.of(TopicStream.of("s", ts)), AlignOptions.builder().masterStream("s").build());
        assertEquals(1, a.clockJumps().size());
        ClockJump j = a.clockJumps().get(0);
        assertEquals(ClockJump.Kind.FORWARD, j.kind());
        assertEquals(3, j.position());
        assertEquals(5_000 * MS, j.stepNs());
    }

    @Test
    void duplicateTimestampsAsofTakesTheLastNearestToo() {
        long[] ts = {T0, T0 + 10 * MS, T0 + 10 * MS, T0 + 20 * MS};
        long[] frames = {T0 + 10 * MS, T0 + 12 * MS};
        for (AlignMethod m : new AlignMethod[] {AlignMethod.ASOF, AlignMethod.NEAREST}) {
            Alignment a = Aligner.align(List.of(TopicStream.of("s", ts)), AlignOptions.builder()
                    .master(MasterClock.timestamps(frames)).defaultPolicy(StreamPolicy.of(m, 5 * MS)).build());
            assertArrayEquals(new int[] {2, 2}, a.stream("s").index(), m.name());
        }
    }

    @Test
    void badOptionsAreRejectedWithClearMessages() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Aligner.align(
                List.of(TopicStream.of("a", new long[] {1})), AlignOptions.builder().masterStream("cam").build()));
        assertTrue(e.getMessage().contains("master stream 'cam'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Aligner.align(
                List.of(TopicStream.of("a", new long[] {1}), TopicStream.of("a", new long[] {2})),
                AlignOptions.builder().masterRate(10).build()));
        assertThrows(IllegalArgumentException.class, () -> StreamPolicy.of(AlignMethod.ASOF, -1));
        assertThrows(IllegalArgumentException.class, () -> MasterClock.fixedRate(0));
        assertThrows(IllegalArgumentException.class, () -> AlignOptions.builder().build());
        assertThrows(IllegalArgumentException.class, () -> MasterClock.timestamps(new long[] {2, 1}));
        assertThrows(IllegalArgumentException.class, () -> AlignMethod.parse("closest"));
        assertEquals(AlignMethod.ASOF, AlignMethod.parse("as-of"));
        IllegalArgumentException q = assertThrows(IllegalArgumentException.class,
                () -> TopicStream.builder("pose").timestamps(new long[] {1}).values(new double[] {1, 2, 3}, 3).quaternions(0).build());
        assertTrue(q.getMessage().contains("quaternion"), q.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> TopicStream.builder("pose").timestamps(new long[] {1, 2}).values(new double[] {1, 2, 3}, 2).build());
    }

    @Test
    void residualPercentilesByHand() {
        // master at 1..100 ms after T0 (one per ms), one message at T0: asof residual of frame k is -k ms
        long[] frames = new long[100];
        for (int k = 0; k < 100; k++) frames[k] = T0 + (k + 1) * MS;
        Alignment a = Aligner.align(List.of(TopicStream.of("s", new long[] {T0})), AlignOptions.builder()
                .master(MasterClock.timestamps(frames)).defaultPolicy(StreamPolicy.of(AlignMethod.ASOF, Long.MAX_VALUE)).build());
        ResidualStats st = a.stats().get(0);
        assertEquals(100, st.matched());
        assertEquals(50 * MS, st.p50AbsNs());
        assertEquals(90 * MS, st.p90AbsNs());
        assertEquals(99 * MS, st.p99AbsNs());
        assertEquals(100 * MS, st.maxAbsNs());
        assertEquals(50.5 * MS, st.meanAbsNs(), 1e-6);
    }
}
