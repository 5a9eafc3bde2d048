package io.flywheel.curate.trainset;

import java.util.Arrays;

/**
 * Picks an episode's frames at the training frame rate.
 *
 * <p>Rule: ticks at {@code t_k = t_0 + k / rate} for k = 0, 1, ... while {@code t_k <= t_last},
 * where t_0 and t_last are the first and last frame times; each tick takes the frame nearest in
 * time (the earlier one on a tie); a frame is taken at most once. With 30 Hz frames and a 10 Hz
 * rate this is every third frame; across a gap in the recording, ticks without a frame within
 * half a tick period are skipped rather than filled with a far frame.
 */
public final class SampleClock {
    private SampleClock() {}

    /**
     * @param timestampsNs frame times in ns, non-decreasing
     * @param rateHz training rate in Hz; 0 or negative takes every frame
     * @return positions into {@code timestampsNs} of the chosen frames, increasing
     * @throws IllegalArgumentException when the times decrease
     */
    public static int[] select(long[] timestampsNs, double rateHz) {
        int n = timestampsNs.length;
        for (int i = 1; i < n; i++) {
            if (timestampsNs[i] < timestampsNs[i - 1]) {
                throw new IllegalArgumentException("frame times decrease at position " + i + ": "
                        + timestampsNs[i - 1] + " then " + timestampsNs[i] + " ns");
            }
        }
        if (n == 0 || rateHz <= 0) {
            int[] all = new int[n];
            Arrays.setAll(all, i -> i);
            return all;
        }
        double periodNs = 1e9 / rateHz;
        long t0 = timestampsNs[0];
        long last = timestampsNs[n - 1];
        int[] out = new int[n];
        int count = 0;
        int j = 0;
        for (long k = 0; ; k++) {
            double tick = t0 + k * periodNs;
            if (tick > last) {
                break;
            }
            while (j + 1 < n && timestampsNs[j + 1] <= tick) {
                j++;
            }
            int best = j;
            if (j + 1 < n && timestampsNs[j + 1] - tick < tick - timestampsNs[j]) {
                best = j + 1;
            }
            if (Math.abs(timestampsNs[best] - tick) > periodNs / 2) {
                continue;
            }
            if (count == 0 || out[count - 1] != best) {
                out[count++] = best;
            }
        }
        return Arrays.copyOf(out, count);
    }
}
