package io.flywheel.enrich.image;

import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;
import static org.bytedeco.opencv.global.opencv_imgproc.INTER_AREA;
import static org.bytedeco.opencv.global.opencv_imgproc.resize;

import java.util.Arrays;

import org.bytedeco.opencv.opencv_core.Mat;
import org.bytedeco.opencv.opencv_core.Size;

/**
 * The 64-bit DCT perceptual hash (pHash) and its Hamming distance.
 *
 * <p>Method (the DCT hash of pHash.org, {@code ph_dct_imagehash}, as described and benchmarked by C. Zauner,
 * "Implementation and Benchmarking of Perceptual Image Hash Functions", Master's thesis, Upper Austria University
 * of Applied Sciences, Hagenberg, 2010; and the pHash.org library documentation, https://www.phash.org):
 * <ol>
 *   <li>the grey image (BT.601 luma) is reduced to 32 x 32 by pixel-area averaging (OpenCV {@code INTER_AREA},
 *       which also low-passes it; pHash.org uses a 7 x 7 mean filter and bicubic resize instead);</li>
 *   <li>the 2-D DCT-II of the 32 x 32 block, {@code C(u,v) = sum_x sum_y p(x,y) cos((2x+1) u pi / 64)
 *       cos((2y+1) v pi / 64)} (scale factors omitted: they do not change the comparison below);</li>
 *   <li>the 8 x 8 lowest frequencies without the DC row and column, {@code u, v = 1..8} (64 coefficients,
 *       as pHash.org takes them);</li>
 *   <li>the median {@code m} of those 64 (mean of the 32nd and 33rd smallest);</li>
 *   <li>bit {@code k = (v - 1) * 8 + (u - 1)} (v the vertical frequency) of the int64 is 1 when
 *       {@code C(u,v) > m}. So about half the bits are set.</li>
 * </ol>
 * Two images are near duplicates when the Hamming distance of their hashes (number of differing bits, 0..64) is
 * small; re-encoding a JPEG changes a few bits, a different scene about 32.
 */
public final class PerceptualHash {
    private PerceptualHash() {}

    /** Side of the reduced image the DCT runs on. */
    public static final int SIDE = 32;

    /** COS[u][x] = cos((2x+1) u pi / 64) for u = 0..8. */
    private static final double[][] COS = new double[9][SIDE];

    static {
        for (int u = 0; u <= 8; u++) {
            for (int x = 0; x < SIDE; x++) {
                COS[u][x] = Math.cos((2 * x + 1) * u * Math.PI / (2.0 * SIDE));
            }
        }
    }

    /**
     * @param grey any size
     * @return the pHash of the image
     */
    public static long of(GreyImage grey) {
        try (Mat m = new Mat(grey.height(), grey.width(), CV_8UC1); Mat r = new Mat(); Size s = new Size(SIDE, SIDE)) {
            m.data().put(grey.pixels());
            resize(m, r, s, 0, 0, INTER_AREA);
            byte[] px = new byte[SIDE * SIDE];
            r.data().get(px);
            return ofGrey32(px);
        }
    }

    /** pHash of a grey Mat (any size), for the pipeline's native path. */
    static long of(Mat grey, Mat scratch, byte[] px) {
        try (Size s = new Size(SIDE, SIDE)) {
            resize(grey, scratch, s, 0, 0, INTER_AREA);
        }
        scratch.data().get(px);
        return ofGrey32(px);
    }

    /**
     * Steps 2-5 on an already reduced image.
     *
     * @param grey32 32 x 32 grey levels, row-major (1,024 unsigned bytes)
     * @return the hash
     * @throws IllegalArgumentException for another length
     */
    public static long ofGrey32(byte[] grey32) {
        if (grey32.length != SIDE * SIDE) {
            throw new IllegalArgumentException("pHash needs a 32x32 grey block (1024 bytes), got " + grey32.length);
        }
        // rows first: R[y][u] = sum_x p(x,y) COS[u][x], u = 1..8
        double[][] rows = new double[SIDE][9];
        for (int y = 0; y < SIDE; y++) {
            int base = y * SIDE;
            double[] out = rows[y];
            for (int u = 1; u <= 8; u++) {
                double[] c = COS[u];
                double acc = 0;
                for (int x = 0; x < SIDE; x++) {
                    acc += (grey32[base + x] & 0xFF) * c[x];
                }
                out[u] = acc;
            }
        }
        double[] coef = new double[64];
        for (int v = 1; v <= 8; v++) {
            double[] c = COS[v];
            for (int u = 1; u <= 8; u++) {
                double acc = 0;
                for (int y = 0; y < SIDE; y++) {
                    acc += rows[y][u] * c[y];
                }
                coef[(v - 1) * 8 + (u - 1)] = acc;
            }
        }
        double[] sorted = coef.clone();
        Arrays.sort(sorted);
        double median = (sorted[31] + sorted[32]) / 2;
        long hash = 0;
        for (int k = 0; k < 64; k++) {
            if (coef[k] > median) {
                hash |= 1L << k;
            }
        }
        return hash;
    }

    /**
     * @return the number of bits in which the two hashes differ, 0..64
     */
    public static int hammingDistance(long a, long b) {
        return Long.bitCount(a ^ b);
    }
}
