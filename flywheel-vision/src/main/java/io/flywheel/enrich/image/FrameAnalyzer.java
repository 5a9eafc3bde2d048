package io.flywheel.enrich.image;

import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_COLOR;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_GRAYSCALE;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_COLOR_2;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_COLOR_4;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMREAD_REDUCED_COLOR_8;
import static org.bytedeco.opencv.global.opencv_imgcodecs.IMWRITE_JPEG_QUALITY;
import static org.bytedeco.opencv.global.opencv_imgcodecs.imencode;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_BGR2GRAY;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_BGR2RGB;
import static org.bytedeco.opencv.global.opencv_imgproc.COLOR_GRAY2RGB;
import static org.bytedeco.opencv.global.opencv_imgproc.INTER_AREA;
import static org.bytedeco.opencv.global.opencv_imgproc.cvtColor;
import static org.bytedeco.opencv.global.opencv_imgproc.resize;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.opencv.opencv_core.Mat;
import org.bytedeco.opencv.opencv_core.Size;

import io.flywheel.enrich.RgbImage;

/**
 * The per-image work of enrichment in one pass over native memory: decode, grey, sharpness, pHash, thumbnail and
 * the hot copy. For JPEG the grey image is libjpeg's decoded Y (BT.601 luma) plane ({@code IMREAD_GRAYSCALE},
 * as {@link ImageDecoder#decodeGrey} with reduction 1), so no colour conversion is paid for the metrics; other
 * formats use the luma of the decoded colour ({@code COLOR_BGR2GRAY}). Not thread-safe (it reuses native buffers): one analyzer per worker thread; close it.
 */
public final class FrameAnalyzer implements AutoCloseable {
    /**
     * Options.
     *
     * @param hotMaxSide longest side of the hot copy in pixels (default 320: the simulator's and many policies'
     *     training resolution); larger images are reduced by area averaging keeping the aspect ratio, smaller
     *     ones are kept at their size
     * @param hotQuality JPEG quality of the hot copy, 1..100 (default 90). A JPEG source that needs no reduction
     *     is stored byte for byte (no second generation loss)
     * @param thumbnailSide longest side of the thumbnail used for the static check (default 64)
     * @param keepRgb whether to return the hot-size RGB image (for an embedder)
     */
    public record Options(int hotMaxSide, int hotQuality, int thumbnailSide, boolean keepRgb) {
        public Options {
            if (hotMaxSide < 8 || hotQuality < 1 || hotQuality > 100 || thumbnailSide < 4) {
                throw new IllegalArgumentException("hot copy side must be >= 8, JPEG quality 1..100 and thumbnail side"
                        + " >= 4, got " + hotMaxSide + ", " + hotQuality + ", " + thumbnailSide);
            }
        }

        /** @return 320 px, quality 90, 64 px thumbnail, no RGB */
        public static Options defaults() {
            return new Options(320, 90, 64, false);
        }

        public Options withKeepRgb(boolean keep) {
            return new Options(hotMaxSide, hotQuality, thumbnailSide, keep);
        }

        public Options withHot(int maxSide, int quality) {
            return new Options(maxSide, quality, thumbnailSide, keepRgb);
        }
    }

    private final Options options;
    private final ImageDecoder decoder = new ImageDecoder();
    private final Mat grey = new Mat();
    private final Mat lap = new Mat();
    private final Mat mean = new Mat();
    private final Mat sd = new Mat();
    private final Mat small = new Mat();
    private final Mat thumb = new Mat();
    private final Mat hot = new Mat();
    private final Mat rgb = new Mat();
    private final BytePointer encoded = new BytePointer();
    private final IntPointer params;
    private final byte[] px32 = new byte[PerceptualHash.SIDE * PerceptualHash.SIDE];

    /**
     * @param options what to produce. Sets OpenCV's own thread count to 1 for the process
     *     ({@code cv::setNumThreads(1)}): enrich runs one analyzer per core, and OpenCV's inner threads would only
     *     compete with them.
     */
    public FrameAnalyzer(Options options) {
        org.bytedeco.opencv.global.opencv_core.setNumThreads(1);
        this.options = options;
        this.params = new IntPointer(IMWRITE_JPEG_QUALITY, options.hotQuality());
    }

    /** @return the options */
    public Options options() {
        return options;
    }

    /**
     * @param data the message's image bytes
     * @param format their format
     * @param where the image, for error messages
     * @return the analysis
     * @throws ImageDecodeException when the bytes do not decode as {@code format}
     */
    public FrameAnalysis analyze(byte[] data, ImageFormat format, String where) throws ImageDecodeException {
        if (!format.raw() && format.encoding().equals("jpeg")) {
            return analyzeJpeg(data, format, where);
        }
        try (ImageDecoder.Native n = decoder.decodeNative(data, format, where, true)) {
            Mat m = n.mat();
            boolean colour = m.channels() == 3;
            Mat g = m;
            if (colour) {
                cvtColor(m, grey, COLOR_BGR2GRAY);
                g = grey;
            }
            int w = m.cols();
            int h = m.rows();
            double sharp = ImageMetrics.sharpness(g, lap, mean, sd);
            long phash = PerceptualHash.of(g, small, px32);
            double ts = (double) options.thumbnailSide() / Math.max(w, h);
            int tw = Math.max(1, (int) Math.round(w * Math.min(1, ts)));
            int th = Math.max(1, (int) Math.round(h * Math.min(1, ts)));
            try (Size s = new Size(tw, th)) {
                resize(g, thumb, s, 0, 0, INTER_AREA);
            }
            GreyImage thumbnail = ImageDecoder.toGrey(thumb);
            double hs = (double) options.hotMaxSide() / Math.max(w, h);
            Mat hotSrc = m;
            int hw = w;
            int hh = h;
            if (hs < 1) {
                hw = Math.max(1, (int) Math.round(w * hs));
                hh = Math.max(1, (int) Math.round(h * hs));
                try (Size s = new Size(hw, hh)) {
                    resize(m, hot, s, 0, 0, INTER_AREA);
                }
                hotSrc = hot;
            }
            byte[] jpeg;
            if (hs >= 1 && n.jpegSource() && colour) {
                jpeg = data;
            } else {
                if (!imencode(".jpg", hotSrc, encoded, params)) {
                    throw new ImageDecodeException(where, "OpenCV could not encode the " + hw + "x" + hh + " hot copy");
                }
                jpeg = new byte[(int) encoded.limit()];
                encoded.get(jpeg);
            }
            RgbImage out = null;
            if (options.keepRgb()) {
                cvtColor(hotSrc, rgb, colour ? COLOR_BGR2RGB : COLOR_GRAY2RGB);
                byte[] px = new byte[hw * hh * 3];
                rgb.data().get(px);
                out = new RgbImage(hw, hh, px);
            }
            return new FrameAnalysis(w, h, sharp, phash, thumbnail, jpeg, hw, hh, out);
        }
    }

    /**
     * The JPEG fast path: the metrics from libjpeg's grey (Y plane) decode, and a colour decode only when the hot
     * copy must be re-encoded, then at the largest DCT-domain reduction (1/2, 1/4, 1/8) that still leaves the
     * hot copy's size or more.
     */
    private FrameAnalysis analyzeJpeg(byte[] data, ImageFormat format, String where) throws ImageDecodeException {
        try (Mat g = decoder.compressed(data, format, where, IMREAD_GRAYSCALE)) {
            int w = g.cols();
            int h = g.rows();
            double sharp = ImageMetrics.sharpness(g, lap, mean, sd);
            long phash = PerceptualHash.of(g, small, px32);
            GreyImage thumbnail = thumbnail(g, w, h);
            int longest = Math.max(w, h);
            boolean keep = longest <= options.hotMaxSide();
            double hs = keep ? 1 : (double) options.hotMaxSide() / longest;
            int hw = keep ? w : Math.max(1, (int) Math.round(w * hs));
            int hh = keep ? h : Math.max(1, (int) Math.round(h * hs));
            byte[] jpeg = data;
            RgbImage out = null;
            if (!keep || options.keepRgb()) {
                int r = 1;
                while (r < 8 && (longest + 2 * r - 1) / (2 * r) >= options.hotMaxSide()) {
                    r *= 2;
                }
                int flags = switch (r) {
                    case 2 -> IMREAD_REDUCED_COLOR_2;
                    case 4 -> IMREAD_REDUCED_COLOR_4;
                    case 8 -> IMREAD_REDUCED_COLOR_8;
                    default -> IMREAD_COLOR;
                };
                try (Mat c = decoder.compressed(data, format, where, flags)) {
                    Mat src = c;
                    if (c.cols() != hw || c.rows() != hh) {
                        try (Size s = new Size(hw, hh)) {
                            resize(c, hot, s, 0, 0, INTER_AREA);
                        }
                        src = hot;
                    }
                    if (!keep) {
                        jpeg = encode(src, hw, hh, where);
                    }
                    if (options.keepRgb()) {
                        out = rgbOf(src, true, hw, hh);
                    }
                }
            }
            return new FrameAnalysis(w, h, sharp, phash, thumbnail, jpeg, hw, hh, out);
        }
    }

    private GreyImage thumbnail(Mat g, int w, int h) {
        double ts = (double) options.thumbnailSide() / Math.max(w, h);
        int tw = Math.max(1, (int) Math.round(w * Math.min(1, ts)));
        int th = Math.max(1, (int) Math.round(h * Math.min(1, ts)));
        try (Size s = new Size(tw, th)) {
            resize(g, thumb, s, 0, 0, INTER_AREA);
        }
        return ImageDecoder.toGrey(thumb);
    }

    private byte[] encode(Mat src, int hw, int hh, String where) throws ImageDecodeException {
        if (!imencode(".jpg", src, encoded, params)) {
            throw new ImageDecodeException(where, "OpenCV could not encode the " + hw + "x" + hh + " hot copy");
        }
        byte[] jpeg = new byte[(int) encoded.limit()];
        encoded.get(jpeg);
        return jpeg;
    }

    private RgbImage rgbOf(Mat src, boolean colour, int hw, int hh) {
        cvtColor(src, rgb, colour ? COLOR_BGR2RGB : COLOR_GRAY2RGB);
        byte[] px = new byte[hw * hh * 3];
        rgb.data().get(px);
        return new RgbImage(hw, hh, px);
    }

    /** Frees the native buffers. */
    @Override
    public void close() {
        decoder.close();
        for (Mat m : new Mat[] {grey, lap, mean, sd, small, thumb, hot, rgb}) {
            m.close();
        }
        encoded.close();
        params.close();
    }

}
