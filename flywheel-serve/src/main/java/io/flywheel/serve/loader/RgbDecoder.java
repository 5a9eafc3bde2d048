package io.flywheel.serve.loader;

import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC3;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_COLOR_RGB;
import static org.bytedeco.opencv.global.opencv_imgcodecs.imdecode;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.opencv.opencv_core.Mat;

import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.image.ImageDecodeException;
import io.flywheel.enrich.image.ImageDecoder;
import io.flywheel.enrich.image.ImageFormat;

/**
 * The loader's image decoder: JPEGs go straight to interleaved RGB in native code (OpenCV
 * {@code imdecode} with {@code IMREAD_COLOR_RGB}, libjpeg-turbo writing RGB rows) into a reused
 * native input buffer and a reused output {@link Mat}, then one bulk copy into the returned
 * array; no per-pixel Java loop and no grey image (the enrich {@link ImageDecoder#decode} makes
 * both). Other formats (PNG, raw arrays, compressedDepth) go through {@link ImageDecoder}, which
 * also words the error of a JPEG the fast path cannot decode.
 *
 * <p>Not thread-safe: one per loader worker thread; close it to free the native buffers.
 */
final class RgbDecoder implements AutoCloseable {
    private BytePointer input = new BytePointer(64 * 1024L);
    private final Mat out = new Mat();
    private ImageDecoder fallback;

    /**
     * @param data encoded image (or raw pixel array)
     * @param format the stored format name ({@code jpeg}, {@code png}, {@code rgb8}, ...)
     * @param width pixel columns of a raw array (0 for compressed)
     * @param height pixel rows of a raw array (0 for compressed)
     * @param where names the image in error messages
     * @return the image as 8-bit interleaved RGB
     * @throws ImageDecodeException when the bytes are not a valid image of that format
     */
    RgbImage decode(byte[] data, String format, int width, int height, String where) throws ImageDecodeException {
        ImageFormat f = ImageFormat.of(format, width, height, data);
        if (f.raw() || f.compressedDepth() || !f.encoding().equals("jpeg") || data.length < 3
                || (data[0] & 0xFF) != 0xFF || (data[1] & 0xFF) != 0xD8) {
            return slow(data, f, where);
        }
        if (input.capacity() < data.length) {
            input.close();
            input = new BytePointer(Math.max(data.length, input.capacity() * 2));
        }
        input.position(0).put(data, 0, data.length);
        try (Mat buf = new Mat(1, data.length, CV_8UC1, input)) {
            imdecode(buf, IMREAD_COLOR_RGB, out);
        } catch (RuntimeException e) {
            return slow(data, f, where); // words the error
        }
        if (out.empty() || out.type() != CV_8UC3 || !out.isContinuous()) {
            return slow(data, f, where);
        }
        int w = out.cols();
        int h = out.rows();
        byte[] px = new byte[w * h * 3];
        out.data().get(px);
        return new RgbImage(w, h, px);
    }

    private RgbImage slow(byte[] data, ImageFormat f, String where) throws ImageDecodeException {
        if (fallback == null) {
            fallback = new ImageDecoder();
        }
        return fallback.decode(data, f, where).rgb();
    }

    @Override
    public void close() {
        input.close();
        out.close();
        if (fallback != null) {
            fallback.close();
        }
    }
}
