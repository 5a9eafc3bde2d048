package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link IngestJob#masterGaps}: dropped master frames, steps over 1.5 nominal periods, on times of known make. */
class MasterGapsTest {
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final long P30 = 33_333_333L; // 30 Hz

    /** 30 Hz frames 0..n-1 with the frames in {@code dropped} left out, each stamp offset by {@code jitterNs[i % 3]}. */
    private static long[] frames(int n, long[] jitterNs, int... dropped) {
        long[] t = new long[n - dropped.length];
        int k = 0;
        outer:
        for (int i = 0; i < n; i++) {
            for (int d : dropped) {
                if (d == i) {
                    continue outer;
                }
            }
            t[k++] = T0 + i * P30 + jitterNs[i % jitterNs.length];
        }
        return t;
    }

    @Test
    void aDroppedFrameAt30HzIsReportedWithItsPositionAndSize() {
        // frame 10 lost; frame 11 stamped 2.3 ms late: the step from frame 9 is 2 periods + 2.3 ms = 69.0 ms
        long[] jitter = {0, 0, 2_333_334L};
        long[] t = frames(60, jitter, 10);
        assertEquals("master gaps > 1.5 periods: 1 at [10 (+69.0 ms)]", IngestJob.masterGaps(t, P30));
        // without the drop, jitter of 2.3 ms (a step of 1.07 periods) is no gap
        assertEquals("", IngestJob.masterGaps(frames(60, jitter), P30));
    }

    @Test
    void theLimitIsOneAndAHalfPeriodsAndTheListIsCut() {
        // 1.5 periods of 33,333,333 ns = 49,999,999.5 ns: a step of 49,999,999 ns is none, one of 50,000,000 ns is one
        long[] t = {T0, T0 + 49_999_999L, T0 + 99_999_999L};
        assertEquals("master gaps > 1.5 periods: 1 at [2 (+50.0 ms)]", IngestJob.masterGaps(t, P30));
        long[] many = frames(100, new long[] {0}, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36);
        String s = IngestJob.masterGaps(many, P30);
        assertEquals(true, s.startsWith("master gaps > 1.5 periods: 12 at [3 (+66.7 ms), 5 (+66.7 ms), "), s);
        assertEquals(true, s.endsWith(", ...]"), s);
        assertEquals("", IngestJob.masterGaps(many, 0), "no nominal period: nothing to compare with");
    }
}
