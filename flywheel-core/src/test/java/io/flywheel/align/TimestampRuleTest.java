package io.flywheel.align;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

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
        // the per-message rules of the stamps timeline (the default would follow log times: the last stamp goes back)
        ResolvedTimes r = TimestampRule.builder().timeline(StreamTimeline.STAMPS).build().resolve(hdr, log, null);
        assertEquals(StreamTimeline.STAMPS, r.timeline());
        assertArrayEquals(new long[] {T0 - MS, T0 + 10 * MS, T0 + 20 * MS, T0 + 30 * MS - 9_999 * MS}, r.timeNs());
        assertArrayEquals(new byte[] {ResolvedTimes.SOURCE_HEADER, ResolvedTimes.SOURCE_LOG, ResolvedTimes.SOURCE_LOG,
                ResolvedTimes.SOURCE_HEADER}, r.source());
        assertArrayEquals(new int[] {1}, r.zeroStampPositions());
        assertArrayEquals(new int[] {2}, r.stampOutOfWindow());
        // the last stamp is 9.999 s before its log time: inside the 10 s window, but a backward step
        assertArrayEquals(new int[] {3}, r.nonMonotonicPositions());
        assertFalse(r.clean());
        // message 3's sane stamp steps back from message 0's (1 and 2 have no sane stamp): a discontinuity
        assertEquals(List.of(new StampDiscontinuity(3, T0 + 30 * MS, T0 + 30 * MS - 9_999 * MS, T0 - MS,
                31 * MS - 9_999 * MS, 30 * MS)), r.discontinuities());
        assertEquals(-9_999 * MS + MS, r.discontinuities().get(0).jumpNs());
        ResolvedTimes auto = TimestampRule.defaults().resolve(hdr, log, null);
        assertEquals(StreamTimeline.LOG_TIME, auto.timeline());
        assertArrayEquals(log, auto.timeNs());
        assertEquals(0, auto.nonMonotonicPositions().length);
        assertEquals(1, auto.monotonicityViolations(), "the stamps still went back once");
        assertArrayEquals(new int[] {2}, auto.stampOutOfWindow(), "counted on either timeline");
    }

    @Test
    void stampsThatJumpBackFollowLogTimesAndAreReported() {
        // a 20 Hz camera: log times every 50 ms (3 ms after capture); at frame 40 its stamp clock restarts 2 s earlier
        int n = 80;
        long[] log = new long[n];
        long[] hdr = new long[n];
        for (int i = 0; i < n; i++) {
            log[i] = T0 + i * 50 * MS + 3 * MS;
            hdr[i] = T0 + i * 50 * MS - (i >= 40 ? 2 * S : 0);
        }
        ResolvedTimes r = TimestampRule.defaults().resolve(hdr, log, null);
        assertEquals(StreamTimeline.LOG_TIME, r.timeline());
        assertArrayEquals(log, r.timeNs(), "recorded order and log times");
        assertEquals(0, r.fromHeader());
        assertEquals(n, r.fromLog());
        assertEquals(0, r.nonMonotonicPositions().length);
        assertEquals(0, r.clockJumpPositions().length);
        assertEquals(50 * MS, r.medianPeriodNs());
        StampDiscontinuity d = r.discontinuities().get(0);
        assertEquals(1, r.discontinuities().size());
        assertEquals(40, d.position());
        assertEquals(T0 + 2003 * MS, d.logTimeNs());
        assertEquals(-1950 * MS, d.stampStepNs());
        assertEquals(50 * MS, d.logStepNs());
        assertEquals(-2 * S, d.jumpNs());
        assertEquals("backward", d.direction());
        assertFalse(r.clean());
        TopicStream s = r.toStream("/cam");
        assertEquals(0, s.backwardJumps().size(), "nothing to sort");
        assertEquals(40, s.payload(40));
        // forced onto the stamps: sorted by stamp, frame 40 (stamp T0) right after frame 0 (stamp T0), as before
        ResolvedTimes st = TimestampRule.defaults().resolve(hdr, log, null, true, StreamTimeline.STAMPS);
        assertEquals(StreamTimeline.STAMPS, st.timeline());
        assertArrayEquals(hdr, st.timeNs());
        assertArrayEquals(new int[] {40}, st.nonMonotonicPositions());
        assertEquals(1, st.monotonicityViolations());
        assertEquals(40, st.toStream("/cam").payload(1));
        assertEquals(r.discontinuities(), st.discontinuities(), "reported on either timeline");
        // forced onto log times with clean stamps; and stamps that leap 3 s ahead are a forward discontinuity
        long[] ahead = hdr.clone();
        for (int i = 0; i < n; i++) ahead[i] = T0 + i * 50 * MS + (i >= 60 ? 3 * S : 0);
        ResolvedTimes f = TimestampRule.defaults().resolve(ahead, log, null);
        assertEquals(StreamTimeline.STAMPS, f.timeline(), "stamps that only go forward keep the stamps timeline");
        assertEquals(List.of(new StampDiscontinuity(60, T0 + 3003 * MS, T0 + 6000 * MS, T0 + 2950 * MS, 3050 * MS,
                50 * MS)), f.discontinuities());
        assertEquals("forward", f.discontinuities().get(0).direction());
        ResolvedTimes forcedLog = TimestampRule.builder().timeline(StreamTimeline.LOG_TIME).build()
                .resolve(ahead, log, null);
        assertEquals(StreamTimeline.LOG_TIME, forcedLog.timeline());
        assertArrayEquals(log, forcedLog.timeNs());
        assertEquals(StreamTimeline.LOG_TIME, StreamTimeline.parse("log"));
        assertEquals(StreamTimeline.STAMPS, StreamTimeline.parse("Stamps"));
        assertThrows(IllegalArgumentException.class, () -> StreamTimeline.parse("sorted"));
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
