package io.flywheel.enrich.video;

import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_FLAG_GLOBAL_HEADER;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_FLAG_QSCALE;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_ID_MPEG4;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_rescale_ts;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_encoder;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_from_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_to_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_frame;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_packet;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_frame;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_packet;
import static org.bytedeco.ffmpeg.global.avformat.AVIO_FLAG_WRITE;
import static org.bytedeco.ffmpeg.global.avformat.av_interleaved_write_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_read_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_write_trailer;
import static org.bytedeco.ffmpeg.global.avformat.avformat_alloc_output_context2;
import static org.bytedeco.ffmpeg.global.avformat.avformat_close_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_find_stream_info;
import static org.bytedeco.ffmpeg.global.avformat.avformat_free_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_new_stream;
import static org.bytedeco.ffmpeg.global.avformat.avformat_open_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_write_header;
import static org.bytedeco.ffmpeg.global.avformat.avio_closep;
import static org.bytedeco.ffmpeg.global.avformat.avio_open;
import static org.bytedeco.ffmpeg.global.avutil.AV_NOPTS_VALUE;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUV420P;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_get_buffer;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_make_writable;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_unref;
import static org.bytedeco.ffmpeg.global.avutil.av_make_q;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVIOContext;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.avutil.AVRational;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mp4parser.IsoFile;
import org.mp4parser.boxes.iso14496.part12.CompositionTimeToSample;
import org.mp4parser.boxes.iso14496.part12.EditListBox;
import org.mp4parser.boxes.iso14496.part12.SampleTableBox;
import org.mp4parser.boxes.iso14496.part12.TimeToSampleBox;
import org.mp4parser.boxes.iso14496.part12.TrackBox;

import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.IngestException;
import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.mcap.McapWriter;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * A real B-frame video, encoded here by the bundled FFmpeg: its H.264 encoders give no B-frames (libopenh264 is
 * Constrained Baseline; the B-frame-capable ones are hardware encoders), so FFmpeg's MPEG-4 Part 2 encoder
 * ({@code mpeg4}, two B-frames between references) writes 12 frames at 10 fps into an MP4 whose sample entry is
 * {@code mp4v}. Frame {@code i} is one flat grey of luma {@code 16 + 16 i}, so every decoded picture names its own
 * presentation index.
 *
 * <ul>
 *   <li>The sample table: samples are in decode order and their composition offsets ({@code ctts}) put them back in
 *       presentation order, which differs.</li>
 *   <li>Sidecar ingest reads H.264 and H.265 sample entries only: an {@code mp4v} sidecar is refused with an error
 *       naming the file and the sample entry, not ingested with wrong frames.</li>
 *   <li>The codec-independent part of how enrich decodes a sidecar camera: units are fed in decode order, each with
 *       its decode index as packet time and no decode time ({@link AnnexBDecoder}'s packet settings), and every
 *       picture that comes out carries the index of the unit it was coded in, so each unit's picture is the one its
 *       presentation position names, B-frames included.</li>
 * </ul>
 */
class RealBFrameSidecarTest {
    static final long T0 = 1_767_225_600_000_000_000L;
    static final long MS = 1_000_000L;
    static final int FRAMES = 12;
    static final int W = 64;
    static final int H = 48;

    @TempDir
    static Path dir;
    static Path video;

    static int luma(int frame) {
        return 16 + 16 * frame;
    }

    @BeforeAll
    static void write() throws IOException {
        Ffmpeg.init();
        video = dir.resolve("rec.front.mp4");
        encode(video);
        Path mcap = dir.resolve("rec.mcap");
        try (McapWriter w = McapWriter.builder().profile("ros2").build(mcap)) {
            int js = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                    Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8));
            int j = w.registerChannel("/joint_states", "cdr", js, Map.of());
            CdrWriter cdr = new CdrWriter(256);
            for (int k = 0; k <= 120; k++) { // 100 Hz over the video's 1.2 s
                long t = T0 + k * 10 * MS;
                w.writeMessage(j, k, t, t, cdr.reset().header(t, "base").stringSequence(List.of("j0"))
                        .float64Sequence(new double[] {k * 0.01}).float64Sequence(new double[0])
                        .float64Sequence(new double[0]).toByteArray());
            }
        }
    }

    /** Encodes the 12 grey frames with FFmpeg's mpeg4 encoder, two B-frames, fixed quantiser, into an MP4. */
    static void encode(Path file) throws IOException {
        AVCodec codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
        assertNotNull(codec, "this FFmpeg build has an mpeg4 encoder");
        assertTrue(!codec.isNull(), "this FFmpeg build has an mpeg4 encoder");
        AVCodecContext c = avcodec_alloc_context3(codec);
        AVFormatContext oc = new AVFormatContext(null);
        AVFrame f = av_frame_alloc();
        AVPacket p = av_packet_alloc();
        String url = "file:" + file.toAbsolutePath();
        try {
            AVRational tb = av_make_q(1, 10);
            c.width(W).height(H).pix_fmt(AV_PIX_FMT_YUV420P).time_base(tb).framerate(av_make_q(10, 1));
            c.gop_size(FRAMES).max_b_frames(2);
            c.flags(c.flags() | AV_CODEC_FLAG_QSCALE | AV_CODEC_FLAG_GLOBAL_HEADER);
            c.global_quality(2 * 118); // FF_QP2LAMBDA * qscale 2
            check(avcodec_open2(c, codec, (AVDictionary) null), "open the mpeg4 encoder");
            check(avformat_alloc_output_context2(oc, null, "mp4", url), "create an MP4 muxer");
            AVStream st = avformat_new_stream(oc, null);
            check(avcodec_parameters_from_context(st.codecpar(), c), "copy the encoder parameters");
            st.time_base(tb);
            AVIOContext pb = new AVIOContext(null);
            check(avio_open(pb, url, AVIO_FLAG_WRITE), "open " + file);
            oc.pb(pb);
            check(avformat_write_header(oc, (AVDictionary) null), "write the MP4 header");
            f.format(AV_PIX_FMT_YUV420P).width(W).height(H);
            check(av_frame_get_buffer(f, 0), "allocate a frame");
            for (int i = 0; i <= FRAMES; i++) {
                if (i < FRAMES) {
                    check(av_frame_make_writable(f), "make the frame writable");
                    for (int plane = 0; plane < 3; plane++) {
                        int rows = plane == 0 ? H : H / 2;
                        int cols = plane == 0 ? W : W / 2;
                        byte v = (byte) (plane == 0 ? luma(i) : 128);
                        byte[] row = new byte[cols];
                        Arrays.fill(row, v);
                        for (int y = 0; y < rows; y++) {
                            f.data(plane).position((long) y * f.linesize(plane)).put(row);
                        }
                        f.data(plane).position(0);
                    }
                    f.pts(i);
                    check(avcodec_send_frame(c, f), "encode frame " + i);
                } else {
                    check(avcodec_send_frame(c, null), "drain the encoder");
                }
                while (avcodec_receive_packet(c, p) >= 0) {
                    p.duration(1);
                    av_packet_rescale_ts(p, tb, st.time_base());
                    p.stream_index(st.index());
                    check(av_interleaved_write_frame(oc, p), "write a packet");
                }
            }
            check(av_write_trailer(oc), "write the MP4 index");
        } finally {
            av_packet_free(p);
            av_frame_free(f);
            avcodec_free_context(c);
            if (!oc.isNull()) {
                if (oc.pb() != null && !oc.pb().isNull()) {
                    avio_closep(oc.pb());
                }
                avformat_free_context(oc);
            }
        }
    }

    static void check(int r, String what) throws IOException {
        if (r < 0) {
            throw new IOException("cannot " + what + ": " + Ffmpeg.error(r));
        }
    }

    /** @return per sample in decode order, the frame it presents, from stts, ctts and the edit list */
    static int[] presentedBySample() throws IOException {
        try (IsoFile iso = new IsoFile(video.toFile())) {
            TrackBox trak = iso.getMovieBox().getBoxes(TrackBox.class).get(0);
            SampleTableBox stbl = trak.getSampleTableBox();
            assertEquals("mp4v", stbl.getSampleDescriptionBox().getBoxes().get(0).getType());
            List<TimeToSampleBox.Entry> stts = stbl.getTimeToSampleBox().getEntries();
            assertEquals(1, stts.size(), "constant frame duration");
            assertEquals(FRAMES, stts.get(0).getCount());
            long d = stts.get(0).getDelta();
            CompositionTimeToSample ctts = stbl.getCompositionTimeToSample();
            assertNotNull(ctts, "B-frames need composition offsets (ctts)");
            int[] offsets = CompositionTimeToSample.blowupCompositionTimes(ctts.getEntries());
            assertEquals(FRAMES, offsets.length);
            EditListBox elst = org.mp4parser.tools.Path.getPath(trak, "edts/elst");
            // as the crafted table of BFrameSidecarTest assumes: offsets >= 0 (ctts version 0) and an edit list
            // that starts the presentation one frame into the media
            assertTrue(Arrays.stream(offsets).allMatch(o -> o >= 0), Arrays.toString(offsets));
            assertNotNull(elst, "an edit list");
            long mediaStart = elst.getEntries().get(0).getMediaTime();
            assertEquals(d, mediaStart, "the presentation starts one frame into the media");
            int[] presents = new int[FRAMES];
            for (int i = 0; i < FRAMES; i++) {
                long ct = i * d + offsets[i] - mediaStart;
                assertEquals(0, ct % d, "sample " + i + " presents on the frame grid");
                presents[i] = (int) (ct / d);
            }
            return presents;
        }
    }

    @Test
    void theSamplesAreInDecodeOrderAndTheCompositionOffsetsReorderThem() throws IOException {
        int[] presents = presentedBySample();
        int[] sorted = presents.clone();
        Arrays.sort(sorted);
        int[] identity = new int[FRAMES];
        Arrays.setAll(identity, i -> i);
        assertEquals(Arrays.toString(identity), Arrays.toString(sorted), "each frame presented once");
        assertNotEquals(Arrays.toString(identity), Arrays.toString(presents), "decode order is not presentation order");
        int back = 0;
        for (int i = 1; i < FRAMES; i++) {
            if (presents[i] < presents[i - 1]) back++;
        }
        assertTrue(back >= 2, "presentation steps back after references: " + Arrays.toString(presents));
        assertEquals(0, presents[0], "the stream starts with its I-frame");
    }

    @Test
    void sidecarIngestRefusesMpeg4Part2NamingTheFileAndTheSampleEntry() {
        IngestException e = assertThrows(IngestException.class, () -> Mp4SampleTable.read(video));
        assertTrue(e.getMessage().contains(video.getFileName().toString()), e.getMessage());
        assertTrue(e.getMessage().contains("'mp4v'") && e.getMessage().contains("H.264"), e.getMessage());
        IngestException viaRecording = assertThrows(IngestException.class,
                () -> Ingest.read(dir.resolve("rec.mcap")).episodes());
        assertTrue(viaRecording.getMessage().contains("'mp4v'"), viaRecording.getMessage());
    }

    @Test
    void decodingInDecodeOrderGivesEachUnitItsOwnPicture() throws IOException {
        int[] presents = presentedBySample();
        AVFormatContext ic = new AVFormatContext(null);
        check(avformat_open_input(ic, video.toAbsolutePath().toString(), null, null), "open " + video);
        AVCodecContext c = null;
        AVPacket p = av_packet_alloc();
        AVFrame f = av_frame_alloc();
        int[] lumaByUnit = new int[FRAMES];
        Arrays.fill(lumaByUnit, -1);
        List<Long> outTimes = new ArrayList<>();
        try {
            check(avformat_find_stream_info(ic, (AVDictionary) null), "read the stream info");
            AVCodec dec = avcodec_find_decoder(AV_CODEC_ID_MPEG4);
            c = avcodec_alloc_context3(dec);
            check(avcodec_parameters_to_context(c, ic.streams(0).codecpar()), "copy the stream parameters");
            c.pkt_timebase(av_make_q(1, 1_000_000_000));
            check(avcodec_open2(c, dec, (AVDictionary) null), "open the mpeg4 decoder");
            int unit = 0;
            long pts0 = 0;
            boolean eof = false;
            while (!eof) {
                if (av_read_frame(ic, p) < 0) {
                    eof = true;
                    check(avcodec_send_packet(c, null), "drain the decoder");
                } else {
                    // the demuxer's own times agree with the table read above
                    if (unit == 0) pts0 = p.pts();
                    assertTrue(p.duration() > 0, "unit " + unit + " has a duration");
                    assertEquals(presents[unit] * p.duration(), p.pts() - pts0, "unit " + unit + " presentation time");
                    p.pts(unit); // as enrich does: the unit's index in the stream is its time, no decode time
                    p.dts(AV_NOPTS_VALUE);
                    check(avcodec_send_packet(c, p), "decode unit " + unit);
                    av_packet_unref(p);
                    unit++;
                }
                while (avcodec_receive_frame(c, f) >= 0) {
                    long t = f.best_effort_timestamp();
                    if (t == AV_NOPTS_VALUE) t = f.pts();
                    outTimes.add(t);
                    long sum = 0;
                    ByteBuffer y = f.data(0).capacity((long) f.linesize(0) * H).asByteBuffer();
                    for (int r = 0; r < H; r++) {
                        for (int x = 0; x < W; x++) sum += y.get(r * f.linesize(0) + x) & 0xFF;
                    }
                    assertTrue(t >= 0 && t < FRAMES, "picture time " + t + " is a unit index");
                    assertEquals(-1, lumaByUnit[(int) t], "unit " + t + " gives one picture");
                    lumaByUnit[(int) t] = (int) Math.round(sum / (double) (W * H));
                    av_frame_unref(f);
                }
            }
            assertEquals(FRAMES, unit);
        } finally {
            av_frame_free(f);
            av_packet_free(p);
            if (c != null) avcodec_free_context(c);
            avformat_close_input(ic);
        }
        assertEquals(FRAMES, outTimes.size(), "one picture per unit: " + outTimes);
        // pictures leave in presentation order, so their unit indices are the decode order reordered
        for (int k = 0; k < FRAMES; k++) {
            assertEquals(k, presents[(int) (long) outTimes.get(k)], "picture " + k + " out: " + outTimes);
        }
        for (int u = 0; u < FRAMES; u++) {
            int frame = presents[u];
            assertTrue(Math.abs(lumaByUnit[u] - luma(frame)) <= 3, "unit " + u + " presents frame " + frame
                    + " (luma " + luma(frame) + "), its picture has luma " + lumaByUnit[u]);
        }
    }
}
