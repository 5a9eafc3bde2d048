package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mp4parser.IsoFile;
import org.mp4parser.boxes.iso14496.part12.ChunkOffsetBox;
import org.mp4parser.boxes.iso14496.part12.CompositionTimeToSample;
import org.mp4parser.boxes.iso14496.part12.EditBox;
import org.mp4parser.boxes.iso14496.part12.EditListBox;
import org.mp4parser.boxes.iso14496.part12.MovieBox;
import org.mp4parser.boxes.iso14496.part12.SampleTableBox;
import org.mp4parser.boxes.iso14496.part12.TimeToSampleBox;
import org.mp4parser.boxes.iso14496.part12.TrackBox;
import org.mp4parser.tools.ByteBufferByteChannel;

import io.flywheel.enrich.RgbImage;
import io.flywheel.ingest.Episode;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.ingest.StreamData;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * A sidecar H.264 video with B-frames stores its samples in decode order, whose presentation times go back and forth;
 * ingest gives the camera's messages in presentation order, so the quality rule {@code non_monotonic_stamps} does not
 * fire, while a sidecar whose timestamps file truly goes backwards still fires it.
 *
 * <p>The B-frame table is crafted: the FFmpeg bundled here encodes H.264 only with libopenh264 (Constrained Baseline,
 * no B-frames; its B-frame-capable encoders are hardware ones: nvenc, qsv, vaapi). So 10 real H.264 frames at 10 fps
 * are written by {@link Mp4VideoWriter} and their sample table is given the composition offsets an encoder with two
 * B-frames writes ({@code ctts}, version 0, with an edit list that starts the presentation one frame into the media,
 * as FFmpeg's mov muxer does): in decode order the samples present frames 0, 3, 1, 2, 6, 4, 5, 9, 7, 8 (I P B B P B
 * B P B B). The pictures themselves are still I and P frames; ingest reads the table only, never the pictures.
 */
class BFrameSidecarTest {
    static final long T0 = 1_767_225_600_000_000_000L;
    static final long MS = 1_000_000L;
    /** Presentation position of each sample, in decode order. */
    static final int[] PRESENTS = {0, 3, 1, 2, 6, 4, 5, 9, 7, 8};

    @TempDir
    static Path dir;

    @BeforeAll
    static void write() throws IOException {
        Path plain = dir.resolve("plain.mp4");
        List<RgbImage> images = Frames.bridgeEpisode(1);
        assertEquals(PRESENTS.length, images.size());
        try (Mp4VideoWriter w = Mp4VideoWriter.open(plain, 64, 64,
                EncoderOptions.builder().fps(10).keyframeInterval(10).build())) {
            for (RgbImage img : images) {
                w.write(img);
            }
        }
        // rec: the B-frame sidecar; back: the plain video with a timestamps file that swaps frames 4 and 5
        for (String name : List.of("rec", "back")) {
            Path mcap = dir.resolve(name + ".mcap");
            try (McapWriter w = McapWriter.builder().profile("ros2").build(mcap)) {
                int js = w.registerSchema(Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                        Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8));
                int j = w.registerChannel("/joint_states", "cdr", js, Map.of());
                CdrWriter cdr = new CdrWriter(256);
                for (int k = 0; k <= 100; k++) { // 100 Hz over the video's 1 s
                    long t = T0 + k * 10 * MS;
                    w.writeMessage(j, k, t, t, cdr.reset().header(t, "base").stringSequence(List.of("j0"))
                            .float64Sequence(new double[] {k * 0.01}).float64Sequence(new double[0])
                            .float64Sequence(new double[0]).toByteArray());
                }
            }
        }
        Files.write(dir.resolve("rec.front.mp4"), withBFrameTable(Files.readAllBytes(plain)));
        Files.copy(plain, dir.resolve("back.front.mp4"));
        StringBuilder ts = new StringBuilder();
        for (int i = 0; i < PRESENTS.length; i++) {
            int f = i == 4 ? 5 : i == 5 ? 4 : i;
            ts.append(T0 + f * 100 * MS).append('\n');
        }
        Files.writeString(dir.resolve("back.front.timestamps"), ts);
    }

    /**
     * @param mp4 a faststart MP4 (moov before mdat) with one video track of constant frame duration and no ctts
     * @return the same file with the composition offsets of {@link #PRESENTS}, an edit list starting one frame in,
     *     and the chunk offsets moved by the moov box's growth
     */
    static byte[] withBFrameTable(byte[] mp4) throws IOException {
        int at = 0;
        int moovAt = -1;
        int moovLen = 0;
        while (at < mp4.length) {
            int len = ByteBuffer.wrap(mp4, at, 4).getInt();
            String type = new String(mp4, at + 4, 4, StandardCharsets.ISO_8859_1);
            if (type.equals("moov")) {
                moovAt = at;
                moovLen = len;
            }
            at += len;
        }
        assertTrue(moovAt > 0, "a moov box after ftyp");
        try (IsoFile iso = new IsoFile(new ByteBufferByteChannel(ByteBuffer.wrap(mp4, moovAt, moovLen).slice()))) {
            MovieBox moov = iso.getMovieBox();
            TrackBox trak = moov.getBoxes(TrackBox.class).get(0);
            SampleTableBox stbl = trak.getSampleTableBox();
            List<TimeToSampleBox.Entry> stts = stbl.getTimeToSampleBox().getEntries();
            assertEquals(1, stts.size(), "constant frame duration");
            assertEquals(PRESENTS.length, stts.get(0).getCount());
            assertTrue(stbl.getCompositionTimeToSample() == null, "no composition offsets yet");
            int d = (int) stts.get(0).getDelta();
            CompositionTimeToSample ctts = new CompositionTimeToSample();
            List<CompositionTimeToSample.Entry> entries = new ArrayList<>();
            for (int i = 0; i < PRESENTS.length; i++) {
                entries.add(new CompositionTimeToSample.Entry(1, (PRESENTS[i] - i + 1) * d)); // >= 0: version 0
            }
            ctts.setEntries(entries);
            stbl.addBox(ctts);
            EditListBox elst = org.mp4parser.tools.Path.getPath(trak, "edts/elst");
            if (elst == null) {
                EditBox edts = new EditBox();
                elst = new EditListBox();
                edts.addBox(elst);
                List<org.mp4parser.Box> boxes = new ArrayList<>(trak.getBoxes());
                boxes.add(1, edts); // after tkhd
                trak.setBoxes(boxes);
            }
            long movieDuration = moov.getMovieHeaderBox().getDuration();
            elst.setEntries(List.of(new EditListBox.Entry(elst, movieDuration, d, 1.0)));
            long grow = moov.getSize() - moovLen;
            ChunkOffsetBox stco = stbl.getChunkOffsetBox();
            long[] off = stco.getChunkOffsets().clone();
            for (int i = 0; i < off.length; i++) off[i] += grow;
            stco.setChunkOffsets(off);
            ByteArrayOutputStream out = new ByteArrayOutputStream(mp4.length + 256);
            out.write(mp4, 0, moovAt);
            moov.getBox(Channels.newChannel(out));
            out.write(mp4, moovAt + moovLen, mp4.length - moovAt - moovLen);
            assertEquals(mp4.length + grow, out.size());
            return out.toByteArray();
        }
    }

    static EpisodeRow ingest(String name) throws IOException {
        List<RecordingRows> committed = new ArrayList<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                committed.add(rows);
                return OptionalLong.of(committed.size());
            }
        };
        IngestJob.Result r = IngestJob.run(sink, List.of(dir.resolve(name + ".mcap")), IngestOptions.defaults(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(List.of(), r.failed());
        return committed.get(0).episodes().get(0);
    }

    @Test
    void theCraftedTableHasBFramesInDecodeOrder() throws IOException {
        Mp4SampleTable t = Mp4SampleTable.read(dir.resolve("rec.front.mp4"));
        assertEquals("h264", t.format());
        int back = 0;
        for (int i = 0; i < PRESENTS.length; i++) {
            assertEquals(PRESENTS[i] * 100 * MS, t.samples().get(i).presentationNs(), "sample " + i);
            if (i > 0 && t.samples().get(i).presentationNs() < t.samples().get(i - 1).presentationNs()) back++;
        }
        assertEquals(3, back, "presentation times step back after each P frame's two B frames");
        // the samples' bytes are where the table says: the same bytes as in the uncrafted video
        Mp4SampleTable plain = Mp4SampleTable.read(dir.resolve("back.front.mp4"));
        byte[] a = Files.readAllBytes(dir.resolve("rec.front.mp4"));
        byte[] b = Files.readAllBytes(dir.resolve("back.front.mp4"));
        for (int i = 0; i < PRESENTS.length; i++) {
            Mp4SampleTable.Sample s = t.samples().get(i);
            Mp4SampleTable.Sample p = plain.samples().get(i);
            assertEquals(p.size(), s.size());
            assertEquals(ByteBuffer.wrap(b, (int) p.offset(), p.size()), ByteBuffer.wrap(a, (int) s.offset(), s.size()),
                    "sample " + i);
        }
    }

    @Test
    void bFramesAreNoBackwardStampsButABackwardTimestampsFileIs() throws IOException {
        Episode ep = Ingest.read(dir.resolve("rec.mcap")).episodes().get(0);
        StreamData cam = ep.stream("/front/video").orElseThrow();
        Mp4SampleTable t = Mp4SampleTable.read(dir.resolve("rec.front.mp4"));
        assertEquals(PRESENTS.length, cam.size());
        for (int m = 0; m < cam.size(); m++) {
            assertEquals(T0 + m * 100 * MS, cam.timeNs()[m], "message " + m + " is presented m frames in");
            int sample = 0;
            while (PRESENTS[sample] != m) sample++;
            assertEquals(t.samples().get(sample).offset(), cam.locators()[m].offset(), "message " + m);
        }
        assertEquals(List.of(), cam.timestamps().nonMonotonicStamps());
        EpisodeRow rec = ingest("rec");
        assertFalse(rec.qualityFlags().contains("non_monotonic_stamps"), rec.qualityFlags().toString());
        assertEquals((long) PRESENTS.length, rec.frameCount());

        EpisodeRow back = ingest("back");
        assertTrue(back.qualityFlags().contains("non_monotonic_stamps"), back.qualityFlags().toString());
        StreamData b = Ingest.read(dir.resolve("back.mcap")).episodes().get(0).stream("/front/video").orElseThrow();
        assertEquals(List.of(5), b.timestamps().nonMonotonicStamps());
    }
}
