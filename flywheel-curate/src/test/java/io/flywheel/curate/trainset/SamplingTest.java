package io.flywheel.curate.trainset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class SamplingTest {
    private static List<String> ids(int n) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add("ep-" + i);
        }
        return l;
    }

    @Test
    void uniformSampleHasTheRoundedSizeIsSeededAndStableWhenThePoolGrows() {
        List<String> pool = ids(539);
        List<String> a = UniformSample.select(pool, 0.3, 42);
        assertEquals(162, a.size()); // round(161.7)
        assertEquals(a, UniformSample.select(pool, 0.3, 42));
        assertNotEquals(a, UniformSample.select(pool, 0.3, 43));
        assertEquals(162, new HashSet<>(a).size());
        // growing the pool: an old member leaves only if a new id ranks ahead of it
        List<String> grown = ids(600);
        Set<String> b = new HashSet<>(UniformSample.select(grown, 162.0 / 600, 42));
        Set<String> newcomers = new HashSet<>(b);
        newcomers.removeAll(pool);
        int kept = (int) a.stream().filter(b::contains).count();
        assertEquals(162, kept + newcomers.size());
        assertTrue(kept >= 162 - newcomers.size());
    }

    @Test
    void everyEpisodeIsEquallyLikelyOverSeeds() {
        List<String> pool = ids(50);
        int[] hits = new int[50];
        int seeds = 2000;
        for (int s = 0; s < seeds; s++) {
            for (String id : UniformSample.select(pool, 0.2, s)) {
                hits[Integer.parseInt(id.substring(3))]++;
            }
        }
        // expected 400 per id; binomial sd = sqrt(2000 * 0.2 * 0.8) = 17.9; 5 sd bounds
        for (int h : hits) {
            assertTrue(Math.abs(h - 400) < 90, "hits " + h);
        }
    }

    @Test
    void sampleClockPicksTheNearestFrameToEachTickAndSkipsGaps() {
        long ms = 1_000_000L;
        long[] thirtyHz = new long[30];
        for (int i = 0; i < 30; i++) {
            thirtyHz[i] = 1_000 * ms + Math.round(i * 1000.0 / 30) * ms;
        }
        assertArrayEquals(new int[] {0, 3, 6, 9, 12, 15, 18, 21, 24, 27}, SampleClock.select(thirtyHz, 10));
        assertEquals(30, SampleClock.select(thirtyHz, 0).length);
        assertEquals(30, SampleClock.select(thirtyHz, 60).length);
        // frames at 0..400 ms and 1000..1400 ms (10 Hz) with a gap: 5 Hz ticks inside the gap find nothing
        long[] gap = {0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 1000 * ms, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms};
        assertArrayEquals(new int[] {0, 2, 4, 5, 7, 9}, SampleClock.select(gap, 5));
        assertThrows(IllegalArgumentException.class, () -> SampleClock.select(new long[] {5, 4}, 10));
        assertThrows(IllegalArgumentException.class, () -> UniformSample.select(List.of("a"), 1.5, 0));
    }
}
