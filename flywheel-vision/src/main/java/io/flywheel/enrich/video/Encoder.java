package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_FLAG_GLOBAL_HEADER;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_encoder_by_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_packet;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_frame;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_PRI_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_MPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_TRC_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUV420P;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_free;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_set;
import static org.bytedeco.ffmpeg.global.avutil.av_make_q;

import java.io.IOException;
import java.util.Map;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avutil.AVDictionary;

import io.flywheel.enrich.RgbImage;

/**
 * One FFmpeg video encoder at yuv420p with a time base of one frame: packet pts = frame index.
 * No B frames, so packets come in presentation order. Not thread-safe.
 */
final class Encoder implements AutoCloseable {
    /** Receives each encoded packet; the packet is unreferenced after the call returns. */
    interface Sink {
        void packet(AVPacket p) throws IOException;
    }

    final String name;
    final int width;
    final int height;
    AVCodecContext ctx;
    private final Ffmpeg.FromRgb fromRgb;
    private AVPacket pkt;
    private long sent;
    private long received;

    Encoder(int width, int height, EncoderOptions o, boolean globalHeader) {
        if (width <= 0 || height <= 0 || width % 2 != 0 || height % 2 != 0) {
            throw new IllegalArgumentException("video size " + width + "x" + height
                    + ": yuv420p needs a positive, even width and height (crop or pad the images)");
        }
        Ffmpeg.init();
        this.width = width;
        this.height = height;
        AVCodec codec = null;
        if (o.encoder() != null) {
            codec = avcodec_find_encoder_by_name(o.encoder());
            if (codec == null || codec.isNull()) {
                throw new IllegalArgumentException("this FFmpeg build has no encoder named '" + o.encoder() + "'; available of the "
                        + "preferred ones: " + available());
            }
        } else {
            for (String n : EncoderOptions.PREFERRED_ENCODERS) {
                codec = avcodec_find_encoder_by_name(n);
                if (codec != null && !codec.isNull()) {
                    break;
                }
            }
            if (codec == null || codec.isNull()) {
                throw new IllegalStateException("this FFmpeg build has none of the encoders " + EncoderOptions.PREFERRED_ENCODERS);
            }
        }
        this.name = codec.name().getString();
        ctx = avcodec_alloc_context3(codec);
        ctx.width(width).height(height).pix_fmt(AV_PIX_FMT_YUV420P);
        ctx.time_base(av_make_q(o.fpsDen(), o.fpsNum()));
        ctx.framerate(av_make_q(o.fpsNum(), o.fpsDen()));
        ctx.gop_size(o.keyframeInterval());
        ctx.keyint_min(Math.min(o.keyframeInterval(), 25));
        ctx.max_b_frames(0);
        ctx.thread_count(o.threads());
        long bitRate = o.bitRate() > 0 ? o.bitRate()
                : Math.max(64_000L, Math.round(EncoderOptions.DEFAULT_BITS_PER_PIXEL * width * height * o.fps()));
        ctx.bit_rate(bitRate);
        ctx.color_range(AVCOL_RANGE_MPEG).colorspace(AVCOL_SPC_SMPTE170M).color_primaries(AVCOL_PRI_SMPTE170M)
                .color_trc(AVCOL_TRC_SMPTE170M);
        if (globalHeader) {
            ctx.flags(ctx.flags() | AV_CODEC_FLAG_GLOBAL_HEADER);
        }
        AVDictionary dict = new AVDictionary(null);
        for (Map.Entry<String, String> e : o.codecOptions().entrySet()) {
            av_dict_set(dict, e.getKey(), e.getValue(), 0);
        }
        int r = avcodec_open2(ctx, codec, dict);
        av_dict_free(dict);
        if (r < 0) {
            avcodec_free_context(ctx);
            ctx = null;
            throw new IllegalArgumentException("cannot open encoder " + name + " for " + width + "x" + height + " at "
                    + o.fpsNum() + "/" + o.fpsDen() + " fps: " + Ffmpeg.error(r));
        }
        Ffmpeg.FromRgb conv;
        try {
            conv = new Ffmpeg.FromRgb(width, height);
        } catch (RuntimeException e) {
            avcodec_free_context(ctx);
            ctx = null;
            throw e;
        }
        fromRgb = conv;
        pkt = av_packet_alloc();
    }

    /** @return frames given to {@link #encode} */
    long framesSent() {
        return sent;
    }

    /** @return packets handed to sinks */
    long packetsReceived() {
        return received;
    }

    void encode(RgbImage img, Sink sink) throws IOException {
        int r = avcodec_send_frame(ctx, fromRgb.convert(img, sent));
        if (r < 0) {
            throw new IOException("encoder " + name + " rejected frame " + sent + ": " + Ffmpeg.error(r));
        }
        sent++;
        drain(sink);
    }

    void finish(Sink sink) throws IOException {
        int r = avcodec_send_frame(ctx, null);
        if (r < 0 && r != AVERROR_EOF) {
            throw new IOException("encoder " + name + " failed to flush: " + Ffmpeg.error(r));
        }
        drain(sink);
    }

    private void drain(Sink sink) throws IOException {
        while (true) {
            int r = avcodec_receive_packet(ctx, pkt);
            if (r == Ffmpeg.AVERROR_EAGAIN || r == AVERROR_EOF) {
                return;
            }
            if (r < 0) {
                throw new IOException("encoder " + name + " failed after frame " + sent + ": " + Ffmpeg.error(r));
            }
            try {
                received++;
                sink.packet(pkt);
            } finally {
                av_packet_unref(pkt);
            }
        }
    }

    static String available() {
        StringBuilder sb = new StringBuilder();
        for (String n : EncoderOptions.PREFERRED_ENCODERS) {
            AVCodec c = avcodec_find_encoder_by_name(n);
            if (c != null && !c.isNull()) {
                sb.append(sb.length() == 0 ? "" : ", ").append(n);
            }
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }

    @Override
    public void close() {
        if (pkt != null) {
            av_packet_free(pkt);
            pkt = null;
        }
        if (fromRgb != null) {
            fromRgb.close();
        }
        if (ctx != null) {
            avcodec_free_context(ctx);
            ctx = null;
        }
    }
}
