package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.AV_EF_EXPLODE;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_to_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_frame;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_packet;
import static org.bytedeco.ffmpeg.global.avformat.av_find_best_stream;
import static org.bytedeco.ffmpeg.global.avformat.av_read_frame;
import static org.bytedeco.ffmpeg.global.avformat.avformat_close_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_find_stream_info;
import static org.bytedeco.ffmpeg.global.avformat.avformat_open_input;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AVMEDIA_TYPE_VIDEO;
import static org.bytedeco.ffmpeg.global.avutil.AV_NOPTS_VALUE;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_unref;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Objects;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVInputFormat;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVFrame;

/**
 * Reads the video track of an MP4 file (ISO/IEC 14496-12 / 14496-14; also MOV and anything else
 * FFmpeg's demuxers open, e.g. the sidecar videos of a bag) frame by frame in presentation order,
 * each with its presentation time: {@code pts * time_base} of the track (composition time after
 * the edit list, as FFmpeg's mov demuxer applies it), in seconds and in int64 nanoseconds. This
 * is the same time PyAV and torchcodec report, so LeRobot timestamps can be checked against it.
 *
 * <p>Decodes H.264, H.265 and whatever else libavcodec has (MPEG-4 Part 2, VP9, AV1 through
 * libaom). Not thread-safe; close it (try-with-resources) to free the native state.
 */
public final class Mp4VideoReader implements AutoCloseable {
    private final Path file;
    private AVFormatContext fmt;
    private AVCodecContext ctx;
    private AVPacket pkt;
    private AVFrame frame;
    private final Ffmpeg.ToRgb toRgb = new Ffmpeg.ToRgb();
    private final ArrayDeque<VideoFrame> ready = new ArrayDeque<>();
    private final int streamIndex;
    private final int tbNum;
    private final int tbDen;
    private final String codecName;
    private final long frameCountHint;
    private final double frameRate;
    private long packets;
    private long lastPos = -1;
    private long frames;
    private boolean eof;
    private boolean closed;

    private Mp4VideoReader(Path file, DecoderOptions options) throws IOException {
        this.file = file;
        Ffmpeg.init();
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such video file");
        }
        boolean ok = false;
        try {
            fmt = new AVFormatContext(null);
            int r = avformat_open_input(fmt, "file:" + file.toAbsolutePath(), (AVInputFormat) null, (AVDictionary) null);
            if (r < 0) {
                fmt = null;
                throw new VideoFormatException(file + ": not a readable video container (expected MP4, ISO/IEC 14496-12): "
                        + Ffmpeg.error(r));
            }
            r = avformat_find_stream_info(fmt, (AVDictionary) null);
            if (r < 0) {
                throw new VideoFormatException(file + ": cannot read the stream info: " + Ffmpeg.error(r));
            }
            int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, (AVCodec) null, 0);
            if (si < 0) {
                throw new VideoFormatException(file + ": no video track among " + fmt.nb_streams() + " streams: "
                        + Ffmpeg.error(si));
            }
            streamIndex = si;
            AVStream st = fmt.streams(si);
            tbNum = st.time_base().num();
            tbDen = st.time_base().den();
            frameCountHint = st.nb_frames() > 0 ? st.nb_frames() : -1;
            frameRate = st.avg_frame_rate().den() > 0 ? (double) st.avg_frame_rate().num() / st.avg_frame_rate().den() : Double.NaN;
            AVCodec dec = avcodec_find_decoder(st.codecpar().codec_id());
            if (dec == null || dec.isNull()) {
                throw new VideoFormatException(file + ": video track " + si + " uses codec id " + st.codecpar().codec_id()
                        + ", which this FFmpeg build cannot decode");
            }
            codecName = dec.name().getString();
            ctx = avcodec_alloc_context3(dec);
            r = avcodec_parameters_to_context(ctx, st.codecpar());
            if (r < 0) {
                throw new VideoFormatException(file + ": bad codec parameters for track " + si + ": " + Ffmpeg.error(r));
            }
            ctx.pkt_timebase(st.time_base());
            ctx.thread_count(options.threads());
            if (options.strict()) {
                ctx.err_recognition(ctx.err_recognition() | AV_EF_EXPLODE);
            }
            r = avcodec_open2(ctx, dec, (AVDictionary) null);
            if (r < 0) {
                throw new VideoFormatException(file + ": cannot open the " + codecName + " decoder: " + Ffmpeg.error(r));
            }
            pkt = av_packet_alloc();
            frame = av_frame_alloc();
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    /**
     * @param file an MP4 (or MOV, MKV) file with a video track
     * @return an open reader, strict (see {@link DecoderOptions}); close it
     * @throws NoSuchFileException when the file does not exist
     * @throws VideoFormatException when it is no container FFmpeg reads, has no video track, or
     *     its codec cannot be decoded
     */
    public static Mp4VideoReader open(Path file) throws IOException {
        return open(file, DecoderOptions.defaults());
    }

    /**
     * @param file    an MP4 (or MOV, MKV) file with a video track
     * @param options strictness and threads
     * @return an open reader; close it
     * @throws IOException as {@link #open(Path)}
     */
    public static Mp4VideoReader open(Path file, DecoderOptions options) throws IOException {
        return new Mp4VideoReader(Objects.requireNonNull(file, "file"), Objects.requireNonNull(options, "options"));
    }

    /** @return the decoder's name, e.g. {@code h264}, {@code hevc} */
    public String codecName() {
        return codecName;
    }

    /** @return frame width in pixels */
    public int width() {
        return ctx.width();
    }

    /** @return frame height in pixels */
    public int height() {
        return ctx.height();
    }

    /** @return the track's average frame rate in frames per second, NaN when unknown */
    public double frameRate() {
        return frameRate;
    }

    /** @return the sample count from the track header ({@code stsz}), -1 when unknown */
    public long frameCountHint() {
        return frameCountHint;
    }

    /** @return the track's time base as {num, den}: one pts tick is num/den seconds */
    public int[] timeBase() {
        return new int[] {tbNum, tbDen};
    }

    /**
     * @return the next frame in presentation order, or null after the last one
     * @throws VideoFormatException when the file is truncated or a sample is corrupt; the message
     *     names the file, the packet index and its byte offset
     * @throws IllegalStateException when the reader is closed
     */
    public VideoFrame next() throws IOException {
        if (closed) {
            throw new IllegalStateException(file + ": reader is closed");
        }
        while (ready.isEmpty()) {
            if (eof) {
                return null;
            }
            int r = av_read_frame(fmt, pkt);
            if (r == AVERROR_EOF) {
                eof = true;
                r = avcodec_send_packet(ctx, null);
                if (r < 0 && r != AVERROR_EOF) {
                    throw new VideoFormatException(file + " at end of file: the decoder failed to drain: " + Ffmpeg.error(r));
                }
                receive("at end of file after " + packets + " video packets");
                if (frameCountHint > 0 && packets < frameCountHint) {
                    throw new VideoFormatException(file + ": the file ends after video packet " + (packets - 1)
                            + (lastPos >= 0 ? " (at byte " + lastPos + ")" : "") + ", but the track's sample table lists "
                            + frameCountHint + " samples (ISO/IEC 14496-12 stsz); truncated?");
                }
                continue;
            }
            if (r < 0) {
                throw new VideoFormatException(file + ": cannot read the packet after video packet " + packets
                        + (lastPos >= 0 ? " (at byte " + lastPos + ")" : "") + "; truncated or corrupt: " + Ffmpeg.error(r));
            }
            try {
                if (pkt.stream_index() != streamIndex) {
                    continue;
                }
                long index = packets++;
                lastPos = pkt.pos();
                String where = "video packet " + index + (pkt.pos() >= 0 ? " at byte " + pkt.pos() : "") + " (pts "
                        + pkt.pts() + ")";
                r = avcodec_send_packet(ctx, pkt);
                if (r == Ffmpeg.AVERROR_EAGAIN) {
                    receive(where);
                    r = avcodec_send_packet(ctx, pkt);
                }
                if (r < 0) {
                    throw new VideoFormatException(file + " " + where + ": the " + codecName + " decoder rejected it ("
                            + pkt.size() + " bytes; truncated or corrupt?): " + Ffmpeg.error(r));
                }
                receive(where);
            } finally {
                av_packet_unref(pkt);
            }
        }
        return ready.poll();
    }

    private void receive(String where) throws VideoFormatException {
        while (true) {
            int r = avcodec_receive_frame(ctx, frame);
            if (r == Ffmpeg.AVERROR_EAGAIN || r == AVERROR_EOF) {
                return;
            }
            if (r < 0) {
                throw new VideoFormatException(file + " " + where + ": the " + codecName + " decoder failed: " + Ffmpeg.error(r));
            }
            try {
                long t = frame.best_effort_timestamp();
                if (t == AV_NOPTS_VALUE) {
                    t = frame.pts();
                }
                if (t == AV_NOPTS_VALUE) {
                    throw new VideoFormatException(file + " " + where + ": decoded frame " + frames + " has no presentation time");
                }
                boolean key = (frame.flags() & Ffmpeg.AV_FRAME_FLAG_KEY) != 0;
                ready.add(new VideoFrame(frames++, Ffmpeg.toNanos(t, tbNum, tbDen), (double) (t * tbNum) / tbDen, key,
                        toRgb.convert(frame)));
            } finally {
                av_frame_unref(frame);
            }
        }
    }

    /** Frees the demuxer and decoder; idempotent. */
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
        if (fmt != null) {
            avformat_close_input(fmt);
            fmt = null;
        }
        toRgb.close();
    }
}
