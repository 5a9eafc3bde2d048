package io.flywheel.image;

import java.util.Arrays;

/**
 * The 64-bit DCT perceptual hash (pHash) and its Hamming distance, in pure Java: what enrich stores per frame
 * ({@code frames.phash}) and what a robot's frame filter compares, with no native library.
 *
 * <p>Method (the DCT hash of pHash.org, {@code ph_dct_imagehash}, as described and benchmarked by C. Zauner,
 * "Implementation and Benchmarking of Perceptual Image Hash Functions", Master's thesis, Upper Austria University
 * of Applied Sciences, Hagenberg, 2010; and the pHash.org library documentation, https://www.phash.org):
 * <ol>
 *   <li>the grey image (BT.601 luma) is reduced to 32 x 32 by pixel-area averaging ({@link #reduce32}, OpenCV's
 *       {@code INTER_AREA}, which also low-passes it; pHash.org uses a 7 x 7 mean filter and bicubic resize
 *       instead);</li>
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
 *
 * <p>flywheel-vision reduces with OpenCV (decoded by libjpeg-turbo) and hashes the block with {@link #ofGrey32}; this
 * class's {@link #reduce32} reproduces OpenCV's {@code INTER_AREA} arithmetic (float weights, round half to even; the
 * 2 x 2 case rounds half up, as OpenCV's SIMD path does), so a frame hashed here from the same grey pixels gets the
 * same hash. Decoded by {@code javax.imageio} ({@link GreyFrame#decode}) instead of libjpeg-turbo, a JPEG's grey
 * levels differ by at most one here and there; on the 771 real JPEGs of {@code shared/data/camera} the hashes were
 * equal, every one (flywheel-vision's {@code PortablePerceptualHashTest}, which allows 2 bits).
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
     * @param frame a grey frame of at least 32 x 32 pixels
     * @return its pHash (steps 1-5)
     * @throws IllegalArgumentException when the frame is smaller than 32 x 32
     */
    public static long of(GreyFrame frame) {
        return ofGrey32(reduce32(frame.pixels(), frame.width(), frame.height()));
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

    /**
     * Step 1: reduces a grey image to 32 x 32 by pixel-area averaging, as OpenCV's {@code resize(..., INTER_AREA)}
     * (imgproc {@code resize.cpp}): each output pixel is the mean of the source area it covers, pixels cut by the
     * area's border weighted by the part covered. Whole-number scales in both directions take OpenCV's fast path
     * (plain sum of the {@code sx x sy} block times {@code 1/area} in float, rounded half to even; {@code (sum + 2)
     * >> 2} for 2 x 2); other scales its weight tables (float weights per row and column).
     *
     * @param grey {@code width * height} grey levels, row-major
     * @param width columns, at least 32
     * @param height rows, at least 32
     * @return 1,024 grey levels, row-major
     * @throws IllegalArgumentException when the image is smaller than 32 x 32 or the array has another length
     */
    public static byte[] reduce32(byte[] grey, int width, int height) {
        if (width < SIDE || height < SIDE) {
            throw new IllegalArgumentException("pHash reduces images of at least 32x32 pixels, got " + width + "x"
                    + height);
        }
        if ((long) width * height != grey.length) {
            throw new IllegalArgumentException("grey image " + width + "x" + height + " needs " + (long) width * height
                    + " bytes, got " + grey.length);
        }
        double scaleX = (double) width / SIDE;
        double scaleY = (double) height / SIDE;
        int isx = (int) Math.round(scaleX);
        int isy = (int) Math.round(scaleY);
        byte[] out = new byte[SIDE * SIDE];
        if (Math.abs(scaleX - isx) < Math.ulp(1.0) && Math.abs(scaleY - isy) < Math.ulp(1.0)) {
            blocks(grey, width, isx, isy, out);
        } else {
            weighted(grey, width, width, height, scaleX, scaleY, out);
        }
        return out;
    }

    /** OpenCV's {@code resizeAreaFast}: whole-number scales. */
    private static void blocks(byte[] grey, int width, int sx, int sy, byte[] out) {
        int area = sx * sy;
        float scale = 1f / area;
        boolean twoByTwo = sx == 2 && sy == 2;
        for (int dy = 0; dy < SIDE; dy++) {
            for (int dx = 0; dx < SIDE; dx++) {
                int sum = 0;
                for (int y = dy * sy; y < (dy + 1) * sy; y++) {
                    int row = y * width;
                    for (int x = dx * sx; x < (dx + 1) * sx; x++) {
                        sum += grey[row + x] & 0xFF;
                    }
                }
                int v = twoByTwo ? (sum + 2) >> 2 : (int) Math.rint(sum * scale);
                out[dy * SIDE + dx] = (byte) Math.min(255, Math.max(0, v));
            }
        }
    }

    /** One entry of OpenCV's {@code computeResizeAreaTab}: output index, source index, weight. */
    private record Weight(int dst, int src, float alpha) {}

    /** OpenCV's {@code computeResizeAreaTab} for one axis of {@code ssize} source pixels onto 32. */
    private static Weight[] tab(int ssize, double scale) {
        java.util.List<Weight> tab = new java.util.ArrayList<>();
        for (int d = 0; d < SIDE; d++) {
            double f1 = d * scale;
            double f2 = f1 + scale;
            double cell = Math.min(scale, ssize - f1);
            int s2 = (int) Math.floor(f2);
            s2 = Math.min(s2, ssize - 1);
            int s1 = Math.min((int) Math.ceil(f1), s2);
            if (s1 - f1 > 1e-3) {
                tab.add(new Weight(d, s1 - 1, (float) ((s1 - f1) / cell)));
            }
            for (int s = s1; s < s2; s++) {
                tab.add(new Weight(d, s, (float) (1.0 / cell)));
            }
            if (f2 - s2 > 1e-3) {
                tab.add(new Weight(d, s2, (float) (Math.min(Math.min(f2 - s2, 1.0), cell) / cell)));
            }
        }
        return tab.toArray(Weight[]::new);
    }

    /** OpenCV's {@code resizeArea_}: weight tables, float sums, one source row at a time. */
    private static void weighted(byte[] grey, int stride, int width, int height, double scaleX, double scaleY,
            byte[] out) {
        Weight[] xt = tab(width, scaleX);
        Weight[] yt = tab(height, scaleY);
        float[] buf = new float[SIDE];
        float[] sum = new float[SIDE];
        int prev = yt[0].dst();
        for (Weight w : yt) {
            Arrays.fill(buf, 0f);
            int row = w.src() * stride;
            for (Weight x : xt) {
                buf[x.dst()] += (grey[row + x.src()] & 0xFF) * x.alpha();
            }
            if (w.dst() != prev) {
                store(sum, out, prev);
                for (int d = 0; d < SIDE; d++) {
                    sum[d] = w.alpha() * buf[d];
                }
                prev = w.dst();
            } else {
                for (int d = 0; d < SIDE; d++) {
                    sum[d] += w.alpha() * buf[d];
                }
            }
        }
        store(sum, out, prev);
    }

    private static void store(float[] sum, byte[] out, int dy) {
        for (int d = 0; d < SIDE; d++) {
            out[dy * SIDE + d] = (byte) Math.min(255, Math.max(0, (int) Math.rint(sum[d])));
        }
    }
}
