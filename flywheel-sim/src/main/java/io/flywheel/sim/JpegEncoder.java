package io.flywheel.sim;

/**
 * Encodes packed BGR rasters (3 bytes per pixel, row-major) as baseline JPEG (ITU-T T.81).
 * Instances are not thread-safe: one per worker thread.
 */
public interface JpegEncoder extends AutoCloseable {

    /** Which encoder to use. */
    enum Kind {
        /** OpenCV (libjpeg-turbo) when its natives load, else ImageIO. */
        AUTO,
        /** org.bytedeco OpenCV {@code imencode}: libjpeg-turbo, ~2-3x ImageIO's speed. */
        OPENCV,
        /** javax.imageio: pure Java, always available. */
        IMAGEIO
    }

    /**
     * @param bgr {@code width*height*3} bytes, BGR order
     * @param width pixels
     * @param height pixels
     * @return the JPEG file bytes
     */
    byte[] encode(byte[] bgr, int width, int height);

    /** @return "opencv" or "imageio" */
    String name();

    @Override
    default void close() {}

    /**
     * @param kind requested encoder
     * @param quality JPEG quality 1..100
     * @return a new encoder; AUTO falls back to ImageIO when OpenCV's natives do not load
     * @throws IllegalStateException when OPENCV is requested and cannot load
     */
    static JpegEncoder create(Kind kind, int quality) {
        if (kind == Kind.IMAGEIO) {
            return new ImageIoJpegEncoder(quality);
        }
        if (kind == Kind.OPENCV) {
            return new OpenCvJpegEncoder(quality);
        }
        return OpenCvJpegEncoder.available() ? new OpenCvJpegEncoder(quality) : new ImageIoJpegEncoder(quality);
    }

    /** @return the kind AUTO resolves to on this machine */
    static Kind resolve(Kind kind) {
        if (kind != Kind.AUTO) {
            return kind;
        }
        return OpenCvJpegEncoder.available() ? Kind.OPENCV : Kind.IMAGEIO;
    }
}
