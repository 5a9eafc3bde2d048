package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_H264;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_HEVC;
import static org.bytedeco.ffmpeg.global.avcodec.AV_EF_EXPLODE;
import static org.bytedeco.ffmpeg.global.avcodec.av_new_packet;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_flush_buffers;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_frame;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_packet;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AV_NOPTS_VALUE;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_unref;
import static org.bytedeco.ffmpeg.global.avutil.av_make_q;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;
import java.util.Objects;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVFrame;

/**
 * Decodes an H.264 or H.265 Annex B byte stream fed one access unit at a time, as carried by
 * foxglove.CompressedVideo messages: each {@code data} holds the NAL units of exactly one frame
 * in Annex B format (ITU-T H.264 Annex B / ITU-T H.265 Annex B, start code {@code 00 00 01}), and
 * keyframes carry their parameter sets (SPS/PPS, and VPS for H.265).
 *
 * <p>Each access unit is given with its time (the message's log time, int64 ns); the decoder
 * carries that time through picture reordering to the frame it produces, so a stream with B
 * frames still pairs every frame with its own message's time. Frames come out in presentation
 * order; without B frames (what Foxglove requires) {@link #decode} returns the frame of the
 * access unit it was given.
 *
 * <p>Access units before the first keyframe (a recording that starts mid-GOP) cannot be decoded:
 * they are skipped and counted in {@link #skippedBeforeKeyframe()}, not an error. Uses FFmpeg's
 * {@code h264} / {@code hevc} decoders (libavcodec, via org.bytedeco:ffmpeg). Not thread-safe;
 * close it to free the native decoder (try-with-resources).
 */
public final class AnnexBDecoder implements AutoCloseable {
    private final VideoCodec codec;
    private final String source;
    private AVCodecContext ctx;
    private AVPacket pkt;
    private AVFrame frame;
    private final Ffmpeg.ToRgb toRgb = new Ffmpeg.ToRgb();
    /**
     * Access unit index and keyframe flag by the time given with it, for units not yet output.
     * Frames leave the decoder in time order, so entries older than an output frame are dropped
     * (units the decoder discarded), which keeps this bounded.
     */
    private final TreeMap<Long, long[]> pending = new TreeMap<>();
    private long units;
    private long frames;
    private long skipped;
    private boolean seenKeyframe;
    private boolean closed;

    private AnnexBDecoder(VideoCodec codec, String source, DecoderOptions options) throws VideoFormatException {
        this.codec = codec;
        this.source = source;
        Ffmpeg.init();
        AVCodec dec = avcodec_find_decoder(codec == VideoCodec.H264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC);
        if (dec == null || dec.isNull()) {
            throw new VideoFormatException(source + ": this FFmpeg build has no " + codec.format() + " decoder");
        }
        ctx = avcodec_alloc_context3(dec);
        ctx.thread_count(options.threads());
        ctx.pkt_timebase(av_make_q(1, 1_000_000_000));
        if (options.strict()) {
            ctx.err_recognition(ctx.err_recognition() | AV_EF_EXPLODE);
        }
        int r = avcodec_open2(ctx, dec, (AVDictionary) null);
        if (r < 0) {
            close();
            throw new VideoFormatException(source + ": cannot open the " + codec.format() + " decoder: " + Ffmpeg.error(r));
        }
        pkt = av_packet_alloc();
        frame = av_frame_alloc();
    }

    /**
     * @param codec  H.264 or H.265
     * @param source what is decoded, for error messages, e.g. {@code "run.mcap topic /cam/video"}
     * @return an open decoder with {@link DecoderOptions#defaults()}; close it
     * @throws VideoFormatException when the FFmpeg build lacks the decoder
     */
    public static AnnexBDecoder open(VideoCodec codec, String source) throws VideoFormatException {
        return open(codec, source, DecoderOptions.defaults());
    }

    /**
     * @param codec   H.264 or H.265
     * @param source  what is decoded, for error messages
     * @param options strictness and threads
     * @return an open decoder; close it
     * @throws VideoFormatException when the FFmpeg build lacks the decoder
     */
    public static AnnexBDecoder open(VideoCodec codec, String source, DecoderOptions options) throws VideoFormatException {
        return new AnnexBDecoder(Objects.requireNonNull(codec, "codec"), Objects.requireNonNull(source, "source"),
                Objects.requireNonNull(options, "options"));
    }

    /** @return the codec this decoder was opened for */
    public VideoCodec codec() {
        return codec;
    }

    /**
     * Decodes one access unit.
     *
     * @param accessUnit the NAL units of one frame in Annex B format (an empty array is skipped)
     * @param timeNs     the unit's time, int64 ns (a message's log time); each unit of a stream
     *                   needs a distinct time, since the time identifies the frame through
     *                   reordering
     * @return the frames that became ready, in presentation order (usually exactly one; none
     *     before the first keyframe or while the decoder fills its reorder buffer)
     * @throws VideoFormatException when the bytes are not Annex B or the decoder rejects them;
     *     the message names the source, the access unit's index (0-based, counting every call)
     *     and time; the decoder stays usable and recovers at the next keyframe
     * @throws IllegalStateException when the decoder is closed
     */
    public List<VideoFrame> decode(byte[] accessUnit, long timeNs) throws VideoFormatException {
        ensureOpen();
        long index = units++;
        if (accessUnit.length == 0) {
            return List.of();
        }
        if (AnnexB.firstNalOffset(accessUnit) < 0) {
            throw new VideoFormatException(where(index, timeNs) + ": expected an Annex B byte stream starting with the start code "
                    + "00 00 01 or 00 00 00 01 (ITU-T H.264 Annex B.2), found " + head(accessUnit)
                    + (looksLengthPrefixed(accessUnit) ? " (looks like length-prefixed AVCC/HVCC samples, as in MP4)" : ""));
        }
        boolean key = AnnexB.isKeyframe(codec, accessUnit);
        if (!seenKeyframe) {
            if (!key) {
                skipped++;
                return List.of();
            }
            seenKeyframe = true;
        }
        if (pending.put(timeNs, new long[] {index, key ? 1 : 0}) != null) {
            throw new VideoFormatException(where(index, timeNs) + ": another access unit of this stream has the same time "
                    + timeNs + " ns; times must be distinct");
        }
        int r = av_new_packet(pkt, accessUnit.length);
        if (r < 0) {
            throw new VideoFormatException(where(index, timeNs) + ": cannot allocate a packet of " + accessUnit.length
                    + " bytes: " + Ffmpeg.error(r));
        }
        List<VideoFrame> out = new ArrayList<>(1);
        try {
            pkt.data().position(0).put(accessUnit, 0, accessUnit.length);
            pkt.pts(timeNs);
            pkt.dts(AV_NOPTS_VALUE);
            r = avcodec_send_packet(ctx, pkt);
            if (r == Ffmpeg.AVERROR_EAGAIN) {
                // output must be taken first; then the same packet is accepted
                receive(out, index, timeNs);
                r = avcodec_send_packet(ctx, pkt);
            }
        } finally {
            av_packet_unref(pkt);
        }
        if (r < 0) {
            pending.remove(timeNs);
            drainQuietly(out);
            throw new VideoFormatException(where(index, timeNs) + ": the " + codec.format() + " decoder rejected the access unit ("
                    + accessUnit.length + " bytes, " + AnnexB.nalUnits(codec, accessUnit).size()
                    + " NAL units; truncated or corrupt?): " + Ffmpeg.error(r));
        }
        receive(out, index, timeNs);
        return out;
    }

    /**
     * Signals the end of the stream and returns the frames still held for reordering. After
     * this the decoder is reset and accepts a new stream (starting with a keyframe).
     *
     * @return the remaining frames in presentation order
     * @throws VideoFormatException when the decoder fails while draining
     */
    public List<VideoFrame> flush() throws VideoFormatException {
        ensureOpen();
        List<VideoFrame> out = new ArrayList<>();
        int r = avcodec_send_packet(ctx, null);
        if (r < 0 && r != AVERROR_EOF) {
            throw new VideoFormatException(source + " at end of stream: the decoder failed to drain: " + Ffmpeg.error(r));
        }
        receive(out, units, -1);
        avcodec_flush_buffers(ctx);
        pending.clear();
        seenKeyframe = false;
        return out;
    }

    /** @return access units passed to {@link #decode}, empty ones and skipped ones included */
    public long accessUnits() {
        return units;
    }

    /** @return frames returned so far */
    public long framesDecoded() {
        return frames;
    }

    /** @return access units skipped because no keyframe had been seen yet */
    public long skippedBeforeKeyframe() {
        return skipped;
    }

    private void receive(List<VideoFrame> out, long index, long timeNs) throws VideoFormatException {
        while (true) {
            int r = avcodec_receive_frame(ctx, frame);
            if (r == Ffmpeg.AVERROR_EAGAIN || r == AVERROR_EOF) {
                return;
            }
            if (r < 0) {
                throw new VideoFormatException((timeNs < 0 ? source + " at end of stream" : where(index, timeNs))
                        + ": the " + codec.format() + " decoder failed: " + Ffmpeg.error(r));
            }
            try {
                long t = frame.best_effort_timestamp();
                if (t == AV_NOPTS_VALUE) {
                    t = frame.pts();
                }
                long[] info = pending.remove(t);
                pending.headMap(t, false).clear();
                boolean key = (frame.flags() & Ffmpeg.AV_FRAME_FLAG_KEY) != 0 || info != null && info[1] == 1;
                out.add(new VideoFrame(frames++, t, t / 1e9, key, toRgb.convert(frame)));
            } finally {
                av_frame_unref(frame);
            }
        }
    }

    private void drainQuietly(List<VideoFrame> out) {
        try {
            receive(out, -1, -1);
        } catch (VideoFormatException ignored) {
            // the send error is the one reported
        }
    }

    private String where(long index, long timeNs) {
        return source + " message/access unit " + index + " (time " + timeNs + " ns)";
    }

    private static String head(byte[] b) {
        return HexFormat.ofDelimiter(" ").formatHex(b, 0, Math.min(b.length, 8)) + (b.length > 8 ? " ..." : "");
    }

    private static boolean looksLengthPrefixed(byte[] b) {
        if (b.length < 5) {
            return false;
        }
        long len = ((b[0] & 0xFFL) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
        return len > 0 && len <= b.length - 4;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(source + ": decoder is closed");
        }
    }

    /** Frees the native decoder; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (frame != null) {
            av_frame_free(frame);
            frame = null;
        }
        if (pkt != null) {
            av_packet_free(pkt);
            pkt = null;
        }
        if (ctx != null) {
            avcodec_free_context(ctx);
            ctx = null;
        }
        toRgb.close();
    }
}
