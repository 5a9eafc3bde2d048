package io.flywheel.align;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TimestampRuleTest {
    static final long S = 1_000_000_000L;
    static final long MS = 1_000_000L;
    static final long T0 = 1_700_000_000L * S;

    @Test
    void saneHeaderStampsWinOverLogTime() {
        long[] log = {T0 + 10 * MS, T0 + 20 * MS, T0 + 30 * MS};
        long[] hdr = {T0 + 2 * MS, T0 + 12 * MS, T0 + 22 * MS}; // sensor latency 8 ms
        ResolvedTimes r = TimestampRule.defaults().resolve(hdr, log, null);
        assertArrayEquals(hdr, r.timeNs());
        assertEquals(3, r.fromHeader());
        assertTrue(r.clean());
        assertTrue(r.wallClock());
    }

    @Test
    void zeroAndOutOfWindowStampsFallBackToLogTime() {
        long[] log = {T0, T0 + 10 * MS, T0 + 20 * MS, T0 + 30 * MS};
        long[] hdr = {T0 - 1 * MS, 0, 5 * S /* sim time since boot */, T0 + 30 * MS - 9_999 * MS};
        ResolvedTimes r = TimestampRule.defaults().resolve(hdr, log, null);
        assertArrayEquals(new long[] {T0 - MS, T0 + 10 * MS, T0 + 20 * MS, T0 + 30 * MS - 9_999 * MS}, r.timeNs());
        assertArrayEquals(new byte[] {ResolvedTimes.SOURCE_HEADER, ResolvedTimes.SOURCE_LOG, ResolvedTimes.SOURCE_LOG,
                ResolvedTimes.SOURCE_HEADER}, r.source());
        assertArrayEquals(new int[] {1}, r.zeroStampPositions());
        assertArrayEquals(new int[] {2}, r.stampOutOfWindow());
        // the last stamp is 9.999 s before its log time: inside the 10 s window, but a backward step
        assertArrayEquals(new int[] {3}, r.nonMonotonicPositions());
        assertFalse(r.clean());
    }

    @Test
    void logTimeZeroOnAWallClockIsAbsent() {
        // labelbox-franka: a few messages have log_time 0 in an epoch-stamped recording
        long[] log = {T0, 0, T0 + 20 * MS, 0, T0 + 40 * MS};
        long[] hdr = {0, T0 + 10 * MS, 0, 0, 0};
        long[] pub = {T0, 0, T0 + 20 * MS, 0, T0 + 40 * MS};
        ResolvedTimes r = TimestampRule.defaults().resolve(hdr, log, pub);
        assertArrayEquals(new int[] {1, 3}, r.zeroLogTimePositions());
        assertEquals(ResolvedTimes.SOURCE_HEADER, r.source()[1]); // the stamp is used, no window check possible
        assertEquals(T0 + 10 * MS, r.timeNs()[1]);
        assertEquals(ResolvedTimes.SOURCE_NONE, r.source()[3]); // nothing usable: left out, never invented
        assertEquals(Long.MIN_VALUE, r.timeNs()[3]);
        assertArrayEquals(new int[] {3}, r.unresolvedPositions());
        assertArrayEquals(new int[] {0, 1, 2, 4}, r.usable());
        assertArrayEquals(new int[] {0, 2, 3, 4}, r.zeroStampPositions());
        assertEquals(0, r.nonMonotonicPositions().length);
        TopicStream s = r.toStream("/franka/joint_states");
        assertEquals(4, s.size());
        assertEquals(4, s.payload(3)); // payload = input position
        // publish time is the fallback when the header is absent and the log time is 0
        ResolvedTimes p = TimestampRule.defaults().resolve(null, new long[] {T0, 0}, new long[] {T0, T0 + 5 * MS});
        assertEquals(ResolvedTimes.SOURCE_PUBLISH, p.source()[1]);
        assertEquals(T0 + 5 * MS, p.timeNs()[1]);
    }

    @Test
    void logTimeZeroOnARelativeClockIsValid() {
        long[] log = {0, 10 * MS, 20 * MS};
        ResolvedTimes r = TimestampRule.defaults().resolve(null, log, null);
        assertFalse(r.wallClock());
        assertArrayEquals(log, r.timeNs());
        assertTrue(r.clean());
    }

    @Test
    void nonMonotonicAndJumpsReportedAndSortedIntoAStream() {
        long[] log = {T0, T0 + 10 * MS, T0 + 5 * MS, T0 + 15 * MS, T0 + 3 * S, T0 + 3 * S + 10 * MS};
        ResolvedTimes r = TimestampRule.defaults().resolve(null, log, null);
        assertArrayEquals(new int[] {2}, r.nonMonotonicPositions());
        assertArrayEquals(new int[] {4}, r.clockJumpPositions());
        assertEquals(10 * MS, r.medianPeriodNs()); // positive steps 10, 10, 2985, 10 ms
        TopicStream s = r.toStream("x");
        assertArrayEquals(new int[] {2}, s.backwardJumpPositions());
        assertEquals(2, s.payload(1)); // T0+5ms came from input position 2
        assertThrows(IllegalArgumentException.class, () -> TimestampRule.defaults().resolve(new long[1], new long[2], null));
        assertThrows(IllegalArgumentException.class, () -> TimestampRule.builder().windowNs(0).build());
        assertThrows(IllegalArgumentException.class, () -> TimestampRule.builder().clockJumpPeriods(-1).build());
    }

    @Test
    void forwardJumpThresholdIsTheLargerOfOneSecondAndTenPeriods() {
        // 0.2 Hz topic (5 s period) with one 60 s gap: 10 periods = 50 s > 1 s, so only the 60 s step is a jump
        long[] slow = {T0, T0 + 5 * S, T0 + 10 * S, T0 + 70 * S, T0 + 75 * S};
        ResolvedTimes r = TimestampRule.defaults().resolve(null, slow, null);
        assertEquals(5 * S, r.medianPeriodNs());
        assertArrayEquals(new int[] {3}, r.clockJumpPositions());
        // with the period factor off, every 5 s step passes the 1 s threshold
        ResolvedTimes fixed = TimestampRule.builder().clockJumpPeriods(0).build().resolve(null, slow, null);
        assertArrayEquals(new int[] {1, 2, 3, 4}, fixed.clockJumpPositions());
        // 1 kHz topic with a 200 ms dropout at position 3 and a 2 s gap at position 5: 10 periods = 10 ms < 1 s
        long[] fast = {T0, T0 + MS, T0 + 2 * MS, T0 + 202 * MS, T0 + 203 * MS, T0 + 2203 * MS, T0 + 2204 * MS};
        ResolvedTimes f = TimestampRule.defaults().resolve(null, fast, null);
        assertEquals(MS, f.medianPeriodNs());
        assertArrayEquals(new int[] {5}, f.clockJumpPositions());
    }

    @Test
    void theCallerDecidesTheClockOfAWholeRecording() {
        // a latched message at log time 0 alone in its stream: on its own it looks like a relative clock ...
        long[] latched = {0};
        assertTrue(TimestampRule.defaults().resolve(null, latched, null).clean());
        // ... but the recording's other streams are epoch-stamped, so 0 is absent there
        assertTrue(TimestampRule.defaults().isWallClock(T0));
        assertFalse(TimestampRule.defaults().isWallClock(3 * S));
        ResolvedTimes r = TimestampRule.defaults().resolve(null, latched, null, true);
        assertArrayEquals(new int[] {0}, r.zeroLogTimePositions());
        assertArrayEquals(new int[] {0}, r.unresolvedPositions());
        assertEquals(0, r.usable().length);
        assertEquals(0, r.medianPeriodNs());
        // a stream that starts with an absent time makes no step from it: no clock jump at position 1
        ResolvedTimes tf = TimestampRule.defaults().resolve(null, new long[] {0, T0, T0 + 500 * MS}, null, true);
        assertArrayEquals(new int[] {0}, tf.unresolvedPositions());
        assertEquals(0, tf.clockJumpPositions().length);
        assertEquals(0, tf.nonMonotonicPositions().length);
    }
}
