package io.flywheel.sim;

import static org.bytedeco.opencv.global.opencv_core.CV_8UC3;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMWRITE_JPEG_QUALITY;
import static org.bytedeco.opencv.global.opencv_imgcodecs.imencode;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.opencv.opencv_core.Mat;

/**
 * JPEG through OpenCV's {@code imencode} (org.bytedeco presets, bundling libjpeg-turbo). The native
 * Mat and output buffer are reused between calls and freed by {@link #close()}.
 */
final class OpenCvJpegEncoder implements JpegEncoder {
    private static volatile Boolean available;
    private final IntPointer params;
    private final BytePointer out = new BytePointer();
    private Mat mat;
    private int w;
    private int h;

    OpenCvJpegEncoder(int quality) {
        if (!available()) {
            throw new IllegalStateException("OpenCV natives (org.bytedeco opencv/openblas linux-x86_64) did not load on this machine");
        }
        params = new IntPointer(IMWRITE_JPEG_QUALITY, quality);
    }

    /** @return whether OpenCV's natives load here (tried once) */
    static boolean available() {
        Boolean a = available;
        if (a == null) {
            synchronized (OpenCvJpegEncoder.class) {
                if (available == null) {
                    try {
                        Mat m = new Mat(8, 8, CV_8UC3);
                        BytePointer b = new BytePointer();
                        imencode(".jpg", m, b);
                        b.close();
                        m.close();
                        available = true;
                    } catch (Throwable t) {
                        available = false;
                    }
                }
                a = available;
            }
        }
        return a;
    }

    @Override
    public byte[] encode(byte[] bgr, int width, int height) {
        if (mat == null || w != width || h != height) {
            if (mat != null) {
                mat.close();
            }
            mat = new Mat(height, width, CV_8UC3);
            w = width;
            h = height;
        }
        mat.data().put(bgr, 0, width * height * 3);
        if (!imencode(".jpg", mat, out, params)) {
            throw new IllegalStateException("OpenCV imencode failed for a " + width + "x" + height + " frame");
        }
        byte[] jpeg = new byte[(int) out.limit()];
        out.get(jpeg);
        return jpeg;
    }

    @Override
    public String name() {
        return "opencv";
    }

    @Override
    public void close() {
        if (mat != null) {
            mat.close();
            mat = null;
        }
        out.close();
        params.close();
    }
}
