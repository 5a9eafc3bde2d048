package io.flywheel.enrich.image;

import static org.bytedeco.opencv.global.opencv_core.CV_16UC1;
import static org.bytedeco.opencv.global.opencv_core.CV_16UC3;
import static org.bytedeco.opencv.global.opencv_core.CV_16UC4;
import static org.bytedeco.opencv.global.opencv_core.CV_8U;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC3;
import static org.bytedeco.opencv.global.opencv_core.CV_8UC4;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_COLOR;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_GRAYSCALE;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_2;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_4;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_8;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_UNCHANGED;
import static org.bytedeco.opencv.global.opencv_imgcodecs.imdecode;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_BGR2GRAY;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_BGR2RGB;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_BGRA2BGR;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_GRAY2RGB;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_RGB2BGR;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_RGBA2BGR;
import static org.bytedeco.opencv.global.opencv_imgproc.INTER_AREA;
import static org.bytedeco.opencv.global.opencv_imgproc.cvtColor;
import static org.bytedeco.opencv.global.opencv_imgproc.resize;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.indexer.UShortIndexer;
import org.bytedeco.opencv.opencv_core.Mat;
import org.bytedeco.opencv.opencv_core.Size;

import io.flywheel.enrich.RgbImage;

/**
 * Decodes camera messages with OpenCV ({@code org.bytedeco:opencv}, which bundles libjpeg-turbo and libpng):
 * {@code sensor_msgs/CompressedImage} JPEG and PNG (8- and 16-bit, grey, colour, alpha; {@code compressedDepth}
 * PNGs), and raw {@code sensor_msgs/Image} arrays in the encodings of {@link ImageFormat#RAW_ENCODINGS}.
 *
 * <p>JavaCPP unpacks the natives on first use into {@code -Dorg.bytedeco.javacpp.cachedir} (the
 * {@code flywheel} launcher and the test runs set it). Not thread-safe: it reuses a native input buffer, so use
 * one decoder per thread, and close it.
 */
public final class ImageDecoder implements AutoCloseable {
    private BytePointer input = new BytePointer(64 * 1024L);

    /** A decoded image in native memory: {@code mat} is 8-bit BGR (CV_8UC3) or grey (CV_8UC1). */
    record Native(Mat mat, float[] values, boolean jpegSource) implements AutoCloseable {
        @Override
        public void close() {
            mat.close();
        }
    }

    /**
     * Decodes an image fully.
     *
     * @param data the message's data bytes (CompressedImage.data or Image.data)
     * @param format what they are
     * @param where names the image in error messages (raw file and locator, or a file name)
     * @return the image
     * @throws ImageDecodeException when the bytes are not a valid image of that format (wrong magic, truncated,
     *     corrupt, a raw array of the wrong length); the message says what was expected
     */
    public DecodedImage decode(byte[] data, ImageFormat format, String where) throws ImageDecodeException {
        try (Native n = decodeNative(data, format, where, false)) {
            Mat m = n.mat();
            int w = m.cols();
            int h = m.rows();
            byte[] grey = new byte[w * h];
            byte[] rgb = new byte[w * h * 3];
            try (Mat g = new Mat(); Mat c = new Mat()) {
                if (m.channels() == 3) {
                    cvtColor(m, g, COLOR_BGR2GRAY);
                    cvtColor(m, c, COLOR_BGR2RGB);
                    g.data().get(grey);
                    c.data().get(rgb);
                } else {
                    cvtColor(m, c, COLOR_GRAY2RGB);
                    m.data().get(grey);
                    c.data().get(rgb);
                }
            }
            return new DecodedImage(w, h, new RgbImage(w, h, rgb), new GreyImage(w, h, grey), n.values());
        }
    }

    /**
     * Decodes the grey image only, optionally at reduced size: what a pHash or a motion check needs. JPEGs use
     * libjpeg's DCT-domain scaling ({@code IMREAD_REDUCED_GRAYSCALE_2/4/8}, size {@code ceil(w / r) x
     * ceil(h / r)}), several times faster than a full decode; other formats decode fully and are reduced by pixel
     * area averaging to the same size.
     *
     * @param reduction 1, 2, 4 or 8
     * @return the grey image
     * @throws ImageDecodeException as {@link #decode}
     * @throws IllegalArgumentException for another reduction
     */
    public GreyImage decodeGrey(byte[] data, ImageFormat format, int reduction, String where)
            throws ImageDecodeException {
        int flags = switch (reduction) {
            case 1 -> IMREAD_GRAYSCALE;
            case 2 -> IMREAD_REDUCED_GRAYSCALE_2;
            case 4 -> IMREAD_REDUCED_GRAYSCALE_4;
            case 8 -> IMREAD_REDUCED_GRAYSCALE_8;
            default -> throw new IllegalArgumentException("grey decode reduction must be 1, 2, 4 or 8, got " + reduction);
        };
        Mat g;
        if (!format.raw() && format.encoding().equals("jpeg")) {
            g = compressed(data, format, where, flags);
        } else {
            try (Native n = decodeNative(data, format, where, false)) {
                g = new Mat();
                if (n.mat().channels() == 3) {
                    cvtColor(n.mat(), g, COLOR_BGR2GRAY);
                } else {
                    n.mat().copyTo(g);
                }
            }
            if (reduction > 1) {
                int w = (g.cols() + reduction - 1) / reduction;
                int h = (g.rows() + reduction - 1) / reduction;
                Mat r = new Mat();
                try (Size s = new Size(w, h)) {
                    resize(g, r, s, 0, 0, INTER_AREA);
                }
                g.close();
                g = r;
            }
        }
        try (Mat m = g) {
            if (m.channels() != 1) {
                try (Mat t = new Mat()) {
                    cvtColor(m, t, COLOR_BGR2GRAY);
                    return toGrey(t);
                }
            }
            return toGrey(m);
        }
    }

    static GreyImage toGrey(Mat m) {
        byte[] px = new byte[m.cols() * m.rows()];
        if (m.isContinuous()) {
            m.data().get(px);
        } else {
            for (int y = 0; y < m.rows(); y++) {
                m.ptr(y).get(px, y * m.cols(), m.cols());
            }
        }
        return new GreyImage(m.cols(), m.rows(), px);
    }

    /**
     * Decodes to an 8-bit BGR or grey Mat (caller closes it).
     *
     * @param colourJpeg when true JPEGs decode straight to BGR (IMREAD_COLOR), the fast path of the pipeline
     */
    Native decodeNative(byte[] data, ImageFormat format, String where, boolean colourJpeg) throws ImageDecodeException {
        if (data == null || data.length == 0) {
            throw new ImageDecodeException(where, "expected " + describe(format) + " data, found 0 bytes");
        }
        if (format.raw()) {
            return raw(data, format, where);
        }
        boolean jpeg = format.encoding().equals("jpeg");
        Mat m = compressed(data, format, where, jpeg ? IMREAD_COLOR : IMREAD_UNCHANGED);
        try {
            return eightBit(m, where, jpeg);
        } catch (ImageDecodeException | RuntimeException e) {
            m.close();
            throw e;
        }
    }

    private Native eightBit(Mat m, String where, boolean jpeg) throws ImageDecodeException {
        int type = m.type();
        if (type == CV_8UC3 || type == CV_8UC1) {
            return new Native(m, null, jpeg);
        }
        if (type == CV_8UC4) {
            Mat c = new Mat();
            cvtColor(m, c, COLOR_BGRA2BGR);
            m.close();
            return new Native(c, null, jpeg);
        }
        if (type == CV_16UC1) {
            int w = m.cols();
            int h = m.rows();
            float[] v = new float[w * h];
            try (UShortIndexer ix = m.createIndexer()) {
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < w; x++) {
                        v[y * w + x] = ix.get(y, x);
                    }
                }
            }
            m.close();
            return visualise(v, w, h, jpeg);
        }
        if (type == CV_16UC3 || type == CV_16UC4) {
            Mat e = new Mat();
            m.convertTo(e, CV_8U, 1.0 / 257.0, 0);
            m.close();
            return eightBit(e, where, jpeg);
        }
        int t = type;
        m.close();
        throw new ImageDecodeException(where, "decoded to OpenCV type " + t + "; expected 8-bit grey/BGR/BGRA or"
                + " 16-bit grey/colour");
    }

    /** Decodes a compressed image with explicit imdecode flags (caller closes the Mat). */
    Mat compressed(byte[] data, ImageFormat format, String where, int flags) throws ImageDecodeException {
        int off = 0;
        boolean png = format.encoding().equals("png");
        if (format.compressedDepth() && !isPng(data, 0) && isPng(data, 12)) {
            off = 12; // compressed_depth_image_transport ConfigHeader: int32 format + float32[2] depthParam
        }
        if (png && !isPng(data, off)) {
            throw new ImageDecodeException(where, "expected a PNG image (signature 89 50 4E 47 0D 0A 1A 0A), found "
                    + hex(data, off) + " (" + data.length + " bytes)");
        }
        if (!png && !(data.length >= 3 && (data[0] & 0xFF) == 0xFF && (data[1] & 0xFF) == 0xD8)) {
            throw new ImageDecodeException(where, "expected a JPEG image (starting with marker FF D8), found "
                    + hex(data, 0) + " (" + data.length + " bytes)");
        }
        int n = data.length - off;
        if (input.capacity() < n) {
            input.close();
            input = new BytePointer(Math.max(n, input.capacity() * 2));
        }
        input.position(0).put(data, off, n);
        Mat decoded;
        try (Mat buf = new Mat(1, n, CV_8UC1, input)) {
            decoded = imdecode(buf, flags);
        } catch (RuntimeException e) {
            throw new ImageDecodeException(where, "expected a valid " + describe(format) + " of " + data.length
                    + " bytes; the decoder failed: " + e.getMessage());
        }
        if (decoded == null || decoded.empty()) {
            if (decoded != null) {
                decoded.close();
            }
            throw new ImageDecodeException(where, "expected a valid " + describe(format) + " of " + data.length
                    + " bytes; it is truncated or corrupt (the decoder returned no image)");
        }
        return decoded;
    }

    private static Native raw(byte[] data, ImageFormat f, String where) throws ImageDecodeException {
        int w = f.width();
        int h = f.height();
        int bpp = f.bytesPerPixel();
        long packed = (long) w * bpp;
        if (data.length % h != 0 || data.length / h < packed) {
            throw new ImageDecodeException(where, "expected a raw " + f.encoding() + " " + w + "x" + h + " array of "
                    + (packed * h) + " bytes (or " + h + " equal padded rows), found " + data.length + " bytes");
        }
        int step = data.length / h;
        switch (f.encoding()) {
            case "mono16", "16uc1", "32fc1" -> {
                ByteBuffer b = ByteBuffer.wrap(data).order(f.bigEndian() ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
                float[] v = new float[w * h];
                boolean f32 = f.encoding().equals("32fc1");
                for (int y = 0; y < h; y++) {
                    int row = y * step;
                    for (int x = 0; x < w; x++) {
                        v[y * w + x] = f32 ? b.getFloat(row + 4 * x) : b.getShort(row + 2 * x) & 0xFFFF;
                    }
                }
                return visualise(v, w, h, false);
            }
            default -> {
                int ch = bpp;
                Mat m = new Mat(h, w, ch == 1 ? CV_8UC1 : ch == 3 ? CV_8UC3 : CV_8UC4);
                BytePointer p = m.data();
                for (int y = 0; y < h; y++) {
                    p.position((long) y * w * ch).put(data, y * step, w * ch);
                }
                p.position(0);
                int code = switch (f.encoding()) {
                    case "rgb8" -> COLOR_RGB2BGR;
                    case "rgba8" -> COLOR_RGBA2BGR;
                    case "bgra8" -> COLOR_BGRA2BGR;
                    default -> -1;
                };
                if (code >= 0) {
                    Mat c = new Mat();
                    cvtColor(m, c, code);
                    m.close();
                    m = c;
                }
                return new Native(m, null, false);
            }
        }
    }

    /** The grey visualisation of single-channel samples described in {@link DecodedImage}. */
    private static Native visualise(float[] v, int w, int h, boolean jpeg) {
        float lo = Float.POSITIVE_INFINITY;
        float hi = Float.NEGATIVE_INFINITY;
        for (float s : v) {
            if (s > 0 && Float.isFinite(s)) {
                lo = Math.min(lo, s);
                hi = Math.max(hi, s);
            }
        }
        byte[] g = new byte[w * h];
        double scale = hi > lo ? 255.0 / (hi - lo) : 0;
        for (int i = 0; i < v.length; i++) {
            float s = v[i];
            if (s > 0 && Float.isFinite(s)) {
                g[i] = (byte) (hi > lo ? (int) Math.round((s - lo) * scale) : 255);
            }
        }
        Mat m = new Mat(h, w, CV_8UC1);
        m.data().put(g);
        return new Native(m, v, jpeg);
    }

    private static boolean isPng(byte[] d, int at) {
        return d.length >= at + 8 && (d[at] & 0xFF) == 0x89 && d[at + 1] == 'P' && d[at + 2] == 'N' && d[at + 3] == 'G'
                && d[at + 4] == 0x0D && d[at + 5] == 0x0A && d[at + 6] == 0x1A && d[at + 7] == 0x0A;
    }

    private static String hex(byte[] d, int at) {
        StringBuilder s = new StringBuilder();
        for (int i = at; i < Math.min(d.length, at + 8); i++) {
            s.append(String.format("%02X ", d[i] & 0xFF));
        }
        return s.length() == 0 ? "no bytes" : s.toString().trim();
    }

    private static String describe(ImageFormat f) {
        return f.raw() ? "raw " + f.encoding() + " " + f.width() + "x" + f.height() + " image"
                : f.encoding().equals("png") ? "PNG image" : "JPEG image";
    }

    /** Frees the native input buffer. */
    @Override
    public void close() {
        input.close();
    }
}
