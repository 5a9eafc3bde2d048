package io.flywheel.serve.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.flywheel.enrich.RgbImage;

/** The frames and pixels LeRobot's compute_stats samples for image statistics, worked by hand. */
class FeatureStatsSamplingTest {
    private static int count(boolean[] b) {
        int n = 0;
        for (boolean x : b) {
            n += x ? 1 : 0;
        }
        return n;
    }

    @Test
    void sampleRowsAreNumpysRoundedLinspace() {
        assertEquals(10, count(FeatureStats.imageSampleRows(10))); // fewer than 100 frames: all
        assertEquals(100, count(FeatureStats.imageSampleRows(400))); // 400^0.75 = 89.4 < 100
        boolean[] k = FeatureStats.imageSampleRows(1000); // 1000^0.75 = 177.8 -> 177
        assertEquals(177, count(k));
        assertTrue(k[0] && k[999]);
        // linspace(0, 999, 177): step 999/176 = 5.676...; the second index rounds 5.676 to 6
        assertTrue(k[6] && !k[5] && !k[7]);
        // 3 of 5 frames would be linspace(0, 4, 3) = 0, 2, 4; here 5 < 100: all 5
        assertEquals(5, count(FeatureStats.imageSampleRows(5)));
    }

    @Test
    void largeFramesAreTakenEveryKthPixel() {
        int w = 640;
        int h = 480;
        byte[] px = new byte[w * h * 3];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                px[(y * w + x) * 3] = (byte) x;
                px[(y * w + x) * 3 + 1] = (byte) y;
            }
        }
        RgbImage small = FeatureStats.downsample(new RgbImage(w, h, px)); // k = 640 / 150 = 4
        assertEquals(160, small.width());
        assertEquals(120, small.height());
        assertEquals(4 * 3, small.pixels()[(1 * 160 + 3) * 3] & 0xFF); // x of source pixel (12, 4)
        assertEquals(4, small.pixels()[(1 * 160 + 3) * 3 + 1] & 0xFF); // its y
        RgbImage under = new RgbImage(299, 10, new byte[299 * 10 * 3]);
        assertSame(under, FeatureStats.downsample(under));
    }
}
