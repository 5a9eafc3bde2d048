package io.flywheel.enrich.image;

import static org.bytedeco.opencv.global.opencv_core.CV_16S;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;
import static org.bytedeco.opencv.global.opencv_core.meanStdDev;
import static org.bytedeco.opencv.global.opencv_imgproc.Laplacian;

import org.bytedeco.javacpp.indexer.DoubleIndexer;
import org.bytedeco.opencv.opencv_core.Mat;

/**
 * Per-image quality numbers.
 *
 * <ul>
 *   <li>sharpness: variance of the Laplacian of the grey image (Pech-Pacheco et al., "Diatom autofocusing in
 *       brightfield microscopy: a comparative study", ICPR 2000): the 3 x 3 kernel {@code [0 1 0; 1 -4 1; 0 1 0]}
 *       (OpenCV {@code Laplacian} with aperture 1, borders reflected) over the full-resolution 8-bit grey image,
 *       then the population variance of the result, in grey levels squared. Blur removes high frequencies, so
 *       it lowers the value; it depends on resolution and content, so thresholds are per camera setup.</li>
 *   <li>mean absolute difference of two grey images of the same size: {@code sum |a - b| / (w h)}, in grey
 *       levels 0..255; the pipeline compares each frame's small thumbnail with the previous frame's of the same
 *       camera to flag static frames.</li>
 * </ul>
 */
public final class ImageMetrics {
    private ImageMetrics() {}

    /**
     * @param grey the grey image
     * @return variance of its Laplacian, grey levels squared, &ge; 0
     */
    public static double sharpness(GreyImage grey) {
        try (Mat m = new Mat(grey.height(), grey.width(), CV_8UC1); Mat lap = new Mat(); Mat mean = new Mat();
                Mat sd = new Mat()) {
            m.data().put(grey.pixels());
            return sharpness(m, lap, mean, sd);
        }
    }

    static double sharpness(Mat grey, Mat lap, Mat mean, Mat sd) {
        Laplacian(grey, lap, CV_16S);
        meanStdDev(lap, mean, sd);
        try (DoubleIndexer i = sd.createIndexer()) {
            double s = i.get(0);
            return s * s;
        }
    }

    /**
     * @return mean absolute difference in grey levels, 0..255
     * @throws IllegalArgumentException when the sizes differ
     */
    public static double meanAbsoluteDifference(GreyImage a, GreyImage b) {
        if (a.width() != b.width() || a.height() != b.height()) {
            throw new IllegalArgumentException("mean absolute difference needs equal sizes, got " + a.width() + "x"
                    + a.height() + " and " + b.width() + "x" + b.height());
        }
        byte[] p = a.pixels();
        byte[] q = b.pixels();
        long sum = 0;
        for (int i = 0; i < p.length; i++) {
            sum += Math.abs((p[i] & 0xFF) - (q[i] & 0xFF));
        }
        return (double) sum / p.length;
    }
}
