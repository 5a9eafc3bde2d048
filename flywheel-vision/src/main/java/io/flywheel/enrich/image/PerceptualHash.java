package io.flywheel.enrich.image;

import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;
import static org.bytedeco.opencv.global.opencv_imgproc.INTER_AREA;
import static org.bytedeco.opencv.global.opencv_imgproc.resize;

import org.bytedeco.opencv.opencv_core.Mat;
import org.bytedeco.opencv.opencv_core.Size;

/**
 * The 64-bit DCT perceptual hash (pHash) of enrich's images: the grey image reduced to 32 x 32 by OpenCV's
 * {@code INTER_AREA} resize (native, on the pipeline's Mats), then hashed by the pure-Java
 * {@link io.flywheel.image.PerceptualHash#ofGrey32} of flywheel-core, which states the method and its sources. A robot's
 * frame filter hashes with flywheel-core alone (its pure-Java reduction gives the same block from the same pixels).
 */
public final class PerceptualHash {
    private PerceptualHash() {}

    /** Side of the reduced image the DCT runs on. */
    public static final int SIDE = io.flywheel.image.PerceptualHash.SIDE;

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

    /** {@link io.flywheel.image.PerceptualHash#ofGrey32}: steps 2-5 on an already reduced image. */
    public static long ofGrey32(byte[] grey32) {
        return io.flywheel.image.PerceptualHash.ofGrey32(grey32);
    }

    /** @return the number of bits in which the two hashes differ, 0..64 */
    public static int hammingDistance(long a, long b) {
        return io.flywheel.image.PerceptualHash.hammingDistance(a, b);
    }
}
