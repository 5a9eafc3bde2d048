package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_from_context;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_rescale_ts;
import static org.bytedeco.ffmpeg.global.avformat.AVIO_FLAG_WRITE;
import static org.bytedeco.ffmpeg.global.avformat.av_interleaved_write_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_write_trailer;
import static org.bytedeco.ffmpeg.global.avformat.avformat_alloc_output_context2;
import static org.bytedeco.ffmpeg.global.avformat.avformat_free_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_new_stream;
import static org.bytedeco.ffmpeg.global.avformat.avformat_write_header;
import static org.bytedeco.ffmpeg.global.avformat.avio_closep;
import static org.bytedeco.ffmpeg.global.avformat.avio_open;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_free;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_set;
import static org.bytedeco.ffmpeg.global.avutil.av_make_q;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVIOContext;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVRational;

import io.flywheel.enrich.RgbImage;

/**
 * Writes {@link RgbImage}s as one H.264 video track in an MP4 file (ISO/IEC 14496-12 ISO base
 * media file format, ISO/IEC 14496-14 MP4, H.264 samples and {@code avcC} as ISO/IEC 14496-15),
 * yuv420p, constant frame rate, no B frames, {@code moov} box in front ("faststart").
 *
 * <p>Frame {@code i} (counting across everything written, so several episodes can be
 * concatenated into one file, as LeRobotDataset v3 does) gets the presentation time
 * {@code i * fpsDen / fpsNum} seconds, returned by {@link #write} as a {@link FrameTime}. The
 * track's time scale is a multiple of the frame rate, so the stored times are exact: decoding
 * the file with {@link Mp4VideoReader} (or PyAV / torchcodec, which compute pts &middot; time
 * base the same way) gives back the same seconds to the last bit.
 *
 * <p>The encoder is chosen by {@link EncoderOptions}: libx264 where the FFmpeg build has it;
 * the LGPL org.bytedeco:ffmpeg build used here has libopenh264 instead. Not thread-safe; close
 * it (try-with-resources) to flush the encoder, finish the file and free the native state.
 */
public final class Mp4VideoWriter implements AutoCloseable {
    private final Path file;
    private final EncoderOptions options;
    private Encoder enc;
    private AVFormatContext oc;
    private AVStream st;
    private AVRational encTb;
    private boolean closed;
    private long frames;

    private Mp4VideoWriter(Path file, int width, int height, EncoderOptions options) throws IOException {
        this.file = file;
        this.options = options;
        boolean ok = false;
        try {
            enc = new Encoder(width, height, options, true);
            encTb = av_make_q(options.fpsDen(), options.fpsNum());
            String url = "file:" + file.toAbsolutePath();
            oc = new AVFormatContext(null);
            int r = avformat_alloc_output_context2(oc, null, "mp4", url);
            if (r < 0 || oc.isNull()) {
                throw new IOException(file + ": cannot create an MP4 muxer: " + Ffmpeg.error(r));
            }
            st = avformat_new_stream(oc, null);
            if (st == null || st.isNull()) {
                throw new IOException(file + ": cannot add a video stream");
            }
            r = avcodec_parameters_from_context(st.codecpar(), enc.ctx);
            if (r < 0) {
                throw new IOException(file + ": cannot copy encoder parameters: " + Ffmpeg.error(r));
            }
            st.time_base(encTb);
            st.avg_frame_rate(av_make_q(options.fpsNum(), options.fpsDen()));
            AVIOContext pb = new AVIOContext(null);
            r = avio_open(pb, url, AVIO_FLAG_WRITE);
            if (r < 0) {
                throw new IOException(file + ": cannot open for writing: " + Ffmpeg.error(r));
            }
            oc.pb(pb);
            AVDictionary dict = new AVDictionary(null);
            av_dict_set(dict, "movflags", "+faststart", 0);
            r = avformat_write_header(oc, dict);
            av_dict_free(dict);
            if (r < 0) {
                throw new IOException(file + ": cannot write the MP4 header: " + Ffmpeg.error(r));
            }
            ok = true;
        } finally {
            if (!ok) {
                free();
            }
        }
    }

    /**
     * Creates (or replaces) an MP4 file.
     *
     * @param file    the target, e.g. {@code videos/observation.images.top/chunk-000/file-000.mp4}
     * @param width   frame width in pixels, even
     * @param height  frame height in pixels, even
     * @param options frame rate, keyframe interval, bit rate, encoder
     * @return an open writer; close it to finish the file
     * @throws IOException when the file cannot be created
     * @throws IllegalArgumentException for odd or non-positive sizes, or an unknown encoder
     */
    public static Mp4VideoWriter open(Path file, int width, int height, EncoderOptions options) throws IOException {
        return new Mp4VideoWriter(Objects.requireNonNull(file, "file"), width, height, Objects.requireNonNull(options, "options"));
    }

    /** @return the FFmpeg encoder in use, e.g. {@code libopenh264} or {@code libx264} */
    public String encoderName() {
        return enc.name;
    }

    /** @return frames written so far */
    public long frameCount() {
        return frames;
    }

    /** @return the time the next frame will get (the start time of an episode about to be written) */
    public FrameTime nextFrameTime() {
        return time(frames);
    }

    /**
     * Encodes and writes the next frame.
     *
     * @param image the frame, the size given at {@link #open}
     * @return its index and presentation time
     * @throws IOException when encoding or writing fails
     * @throws IllegalArgumentException when the image size differs
     * @throws IllegalStateException when the writer is closed
     */
    public FrameTime write(RgbImage image) throws IOException {
        if (closed) {
            throw new IllegalStateException(file + ": writer is closed");
        }
        enc.encode(image, this::mux);
        return time(frames++);
    }

    private FrameTime time(long i) {
        return new FrameTime(i, options.nanos(i), options.seconds(i));
    }

    private void mux(AVPacket p) throws IOException {
        p.duration(1);
        av_packet_rescale_ts(p, encTb, st.time_base());
        p.stream_index(st.index());
        int r = av_interleaved_write_frame(oc, p);
        if (r < 0) {
            throw new IOException(file + ": cannot write frame " + p.pts() + ": " + Ffmpeg.error(r));
        }
    }

    /**
     * Flushes the encoder, writes the MP4 index and closes the file; idempotent.
     *
     * @throws IOException when finishing the file fails, or when the encoder returned fewer
     *     packets than frames (it dropped frames, which would shift every later timestamp)
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            enc.finish(this::mux);
            if (enc.packetsReceived() != enc.framesSent()) {
                throw new IOException(file + ": encoder " + enc.name + " returned " + enc.packetsReceived() + " packets for "
                        + enc.framesSent() + " frames (dropped frames would shift the timestamps)");
            }
            int r = av_write_trailer(oc);
            if (r < 0) {
                throw new IOException(file + ": cannot write the MP4 index: " + Ffmpeg.error(r));
            }
        } finally {
            free();
        }
    }

    private void free() {
        if (oc != null && !oc.isNull()) {
            if (oc.pb() != null && !oc.pb().isNull()) {
                AVIOContext pb = oc.pb();
                avio_closep(pb);
                oc.pb(null);
            }
            avformat_free_context(oc);
        }
        oc = null;
        if (enc != null) {
            enc.close();
        }
    }
}
