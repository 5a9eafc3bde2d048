package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_JPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_MPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AV_LOG_FATAL;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_RGB24;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUV420P;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUVJ420P;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUVJ422P;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUVJ444P;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_get_buffer;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_make_writable;
import static org.bytedeco.ffmpeg.global.avutil.av_log_set_level;
import static org.bytedeco.ffmpeg.global.avutil.av_strerror;
import static org.bytedeco.ffmpeg.global.swscale.SWS_BILINEAR;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_DEFAULT;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_ITU709;
import static org.bytedeco.ffmpeg.global.swscale.sws_freeContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_getCachedContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_getCoefficients;
import static org.bytedeco.ffmpeg.global.swscale.sws_scale;
import static org.bytedeco.ffmpeg.global.swscale.sws_setColorspaceDetails;

import java.math.BigInteger;

import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.swscale.SwsContext;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

import io.flywheel.enrich.RgbImage;

/** FFmpeg plumbing shared by the decoders and encoders: error text, RGB conversion, time maths. */
final class Ffmpeg {
    /** AVERROR(EAGAIN) on Linux: the codec wants more input (or output drained first). */
    static final int AVERROR_EAGAIN = -11;
    /** AV_FRAME_FLAG_KEY (libavutil/frame.h). */
    static final int AV_FRAME_FLAG_KEY = 1 << 1;

    static {
        // Errors reach the caller as exceptions naming the position; keep FFmpeg's own stderr
        // chatter (concealment notes, "no frame!") out of the log.
        av_log_set_level(AV_LOG_FATAL);
    }

    private Ffmpeg() {}

    /** Makes sure the natives are loaded and the log level is set. */
    static void init() {
        // the static initialiser does the work
    }

    /** @return FFmpeg's text for an error code, with the code */
    static String error(int code) {
        byte[] buf = new byte[256];
        av_strerror(code, buf, buf.length);
        int n = 0;
        while (n < buf.length && buf[n] != 0) {
            n++;
        }
        return new String(buf, 0, n, java.nio.charset.StandardCharsets.UTF_8) + " (AVERROR " + code + ")";
    }

    /**
     * @return {@code ts * num / den} seconds in nanoseconds, rounded to nearest, exact for any
     *     int64 timestamp (no overflow)
     */
    static long toNanos(long ts, int num, int den) {
        BigInteger n = BigInteger.valueOf(ts).multiply(BigInteger.valueOf(num)).multiply(BigInteger.valueOf(1_000_000_000L));
        BigInteger d = BigInteger.valueOf(den);
        BigInteger[] qr = n.divideAndRemainder(d);
        BigInteger q = qr[0];
        if (qr[1].abs().shiftLeft(1).compareTo(d) >= 0) {
            q = q.add(BigInteger.valueOf(n.signum()));
        }
        return q.longValueExact();
    }

    /** Converts decoded frames of any YUV/RGB layout to {@link RgbImage}. Not thread-safe. */
    static final class ToRgb implements AutoCloseable {
        private SwsContext sws;
        private BytePointer rgb;
        private final PointerPointer<BytePointer> dstData = new PointerPointer<>(4);
        private final IntPointer dstStride = new IntPointer(4);
        private int w = -1;
        private int h = -1;
        private int srcFormat = -1;
        private int colorspace = -1;
        private boolean srcFullRange;

        RgbImage convert(AVFrame f) {
            int fw = f.width();
            int fh = f.height();
            int fmt = f.format();
            boolean fullRange = f.color_range() == AVCOL_RANGE_JPEG || fmt == AV_PIX_FMT_YUVJ420P
                    || fmt == AV_PIX_FMT_YUVJ422P || fmt == AV_PIX_FMT_YUVJ444P;
            int cs = f.colorspace() == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_DEFAULT;
            if (sws == null || fw != w || fh != h || fmt != srcFormat || cs != colorspace || fullRange != srcFullRange) {
                // (Re)configure only when the input changes: setting the colour tables costs more than a conversion.
                sws = sws_getCachedContext(sws, fw, fh, fmt, fw, fh, AV_PIX_FMT_RGB24, SWS_BILINEAR, null, null,
                        (DoublePointer) null);
                if (sws == null || sws.isNull()) {
                    throw new IllegalStateException("swscale cannot convert pixel format " + fmt + " " + fw + "x" + fh
                            + " to RGB24");
                }
                sws_setColorspaceDetails(sws, sws_getCoefficients(cs), fullRange ? 1 : 0, sws_getCoefficients(SWS_CS_DEFAULT), 1,
                        0, 1 << 16, 1 << 16);
                srcFormat = fmt;
                colorspace = cs;
                srcFullRange = fullRange;
            }
            if (fw != w || fh != h) {
                if (rgb != null) {
                    rgb.close();
                }
                rgb = new BytePointer((long) fw * fh * 3 + 64);
                w = fw;
                h = fh;
            }
            dstData.put(0, rgb);
            dstStride.put(0, fw * 3);
            sws_scale(sws, f.data(), f.linesize(), 0, fh, dstData, dstStride);
            byte[] px = new byte[fw * fh * 3];
            rgb.position(0).get(px);
            return new RgbImage(fw, fh, px);
        }

        @Override
        public void close() {
            if (sws != null) {
                sws_freeContext(sws);
                sws = null;
            }
            if (rgb != null) {
                rgb.close();
                rgb = null;
            }
            dstData.close();
            dstStride.close();
        }
    }

    /**
     * Converts {@link RgbImage}s to YUV 4:2:0 frames (BT.601, limited range: what H.264 players
     * assume when the stream says nothing else). Not thread-safe.
     */
    static final class FromRgb implements AutoCloseable {
        private final int w;
        private final int h;
        private final SwsContext sws;
        private final BytePointer rgb;
        private final PointerPointer<BytePointer> srcData = new PointerPointer<>(4);
        private final IntPointer srcStride = new IntPointer(4);
        private AVFrame frame;

        FromRgb(int w, int h) {
            this.w = w;
            this.h = h;
            this.sws = sws_getCachedContext(null, w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P,
                    SWS_BILINEAR, null, null, (DoublePointer) null);
            if (sws == null || sws.isNull()) {
                throw new IllegalStateException("swscale cannot convert RGB24 " + w + "x" + h + " to yuv420p");
            }
            sws_setColorspaceDetails(sws, sws_getCoefficients(SWS_CS_DEFAULT), 1, sws_getCoefficients(SWS_CS_DEFAULT), 0,
                    0, 1 << 16, 1 << 16);
            this.rgb = new BytePointer((long) w * h * 3 + 64);
            this.frame = av_frame_alloc();
            frame.format(AV_PIX_FMT_YUV420P).width(w).height(h);
            frame.color_range(AVCOL_RANGE_MPEG);
            int r = av_frame_get_buffer(frame, 0);
            if (r < 0) {
                close();
                throw new IllegalStateException("cannot allocate a " + w + "x" + h + " yuv420p frame: " + error(r));
            }
        }

        /** @return the shared frame holding {@code img} in YUV 4:2:0; valid until the next call */
        AVFrame convert(RgbImage img, long pts) {
            if (img.width() != w || img.height() != h) {
                throw new IllegalArgumentException("frame is " + img.width() + "x" + img.height()
                        + " but the stream is " + w + "x" + h + ": every frame of a video must have the same size");
            }
            int r = av_frame_make_writable(frame);
            if (r < 0) {
                throw new IllegalStateException("cannot make the encoder frame writable: " + error(r));
            }
            rgb.position(0).put(img.pixels(), 0, img.pixels().length);
            srcData.put(0, rgb);
            srcStride.put(0, w * 3);
            sws_scale(sws, srcData, srcStride, 0, h, frame.data(), frame.linesize());
            frame.pts(pts);
            return frame;
        }

        @Override
        public void close() {
            if (frame != null) {
                av_frame_free(frame);
                frame = null;
            }
            sws_freeContext(sws);
            rgb.close();
            srcData.close();
            srcStride.close();
        }
    }
}
