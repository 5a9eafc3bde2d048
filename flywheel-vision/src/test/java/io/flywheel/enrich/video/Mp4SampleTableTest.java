package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.RgbImage;
import io.flywheel.ingest.IngestException;
import io.flywheel.ingest.Mp4SampleTable;

/**
 * {@link Mp4SampleTable} (isoparser-backed) on an MP4 written by FFmpeg ({@link Mp4VideoWriter}): the table agrees
 * with FFmpeg's demuxer, and damaged files (truncated at many cuts, not an MP4, no video track, MPEG-4 Part 2 video,
 * fragmented, bytes of the moov box flipped) fail with an {@link IngestException} naming the file.
 */
class Mp4SampleTableTest {
    @TempDir
    static Path dir;
    private static Path good;
    private static byte[] bytes;

    @BeforeAll
    static void write() throws IOException {
        good = dir.resolve("good.mp4");
        try (Mp4VideoWriter w = Mp4VideoWriter.open(good, 64, 64,
                EncoderOptions.builder().fps(5).keyframeInterval(4).build())) {
            for (RgbImage img : Frames.bridgeEpisode(1)) {
                w.write(img);
            }
        }
        bytes = Files.readAllBytes(good);
    }

    /** @return byte offset of the first occurrence of the 4-character code {@code fourcc} at or after {@code from} */
    private static int find(byte[] b, String fourcc, int from) {
        byte[] t = fourcc.getBytes(StandardCharsets.ISO_8859_1);
        for (int i = from; i + 4 <= b.length; i++) {
            if (b[i] == t[0] && b[i + 1] == t[1] && b[i + 2] == t[2] && b[i + 3] == t[3]) return i;
        }
        throw new AssertionError("no '" + fourcc + "' in the file");
    }

    private static IngestException fails(Path p) {
        IngestException e = assertThrows(IngestException.class, () -> Mp4SampleTable.read(p));
        assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
        System.out.println("Mp4SampleTable: " + e.getMessage());
        return e;
    }

    @Test
    void tableAgreesWithFfmpegAndCoversTheMediaData() throws IOException {
        Mp4SampleTable t = Mp4SampleTable.read(good);
        assertEquals("h264", t.format());
        assertEquals(64, t.width());
        assertEquals(64, t.height());
        assertEquals(4, t.lengthSize());
        assertEquals(2, t.parameterSets().size(), "one SPS and one PPS");
        assertEquals(7, t.parameterSets().get(0)[0] & 0x1F, "SPS first");
        assertEquals(8, t.parameterSets().get(1)[0] & 0x1F, "then PPS");
        List<Mp4SampleTable.Sample> s = t.samples();
        assertEquals(10, s.size());
        try (Mp4VideoReader r = Mp4VideoReader.open(good)) {
            for (int i = 0; i < 10; i++) {
                VideoFrame f = r.next();
                assertEquals(i, s.get(i).index());
                assertEquals(i * 200_000_000L, s.get(i).presentationNs(), "sample " + i);
                assertEquals(f.timestampNs(), s.get(i).presentationNs(), "sample " + i);
                assertEquals(f.keyframe(), s.get(i).sync(), "sample " + i);
            }
        }
        assertTrue(s.get(0).sync() && s.get(4).sync() && s.get(8).sync() && !s.get(1).sync());
        // faststart, one chunk run: the samples tile the mdat payload exactly
        int mdat = find(bytes, "mdat", find(bytes, "moov", 0)) - 4;
        int mdatSize = ByteBuffer.wrap(bytes, mdat, 4).getInt();
        assertEquals(mdat + 8, s.get(0).offset());
        for (int i = 1; i < s.size(); i++) {
            assertEquals(s.get(i - 1).offset() + s.get(i - 1).size(), s.get(i).offset(), "sample " + i);
        }
        assertEquals(mdat + mdatSize, s.get(9).offset() + s.get(9).size());
        // a keyframe in Annex B: SPS, PPS, then the sample's own NAL units
        byte[] key = Arrays.copyOfRange(bytes, (int) s.get(0).offset(), (int) (s.get(0).offset() + s.get(0).size()));
        byte[] annexB = t.toAnnexB(key);
        byte[] sps = t.parameterSets().get(0);
        assertArrayEquals(new byte[] {0, 0, 0, 1}, Arrays.copyOf(annexB, 4));
        assertArrayEquals(sps, Arrays.copyOfRange(annexB, 4, 4 + sps.length));
        assertEquals(key.length + 8 + sps.length + t.parameterSets().get(1).length, annexB.length,
                "start codes replace the 4-byte lengths one for one; 2 parameter sets added");
        byte[] delta = Arrays.copyOfRange(bytes, (int) s.get(1).offset(), (int) (s.get(1).offset() + s.get(1).size()));
        assertEquals(delta.length, t.toAnnexB(delta).length, "no parameter sets in front of a non-keyframe");
    }

    @Test
    void everyTruncationIsAnError() throws IOException {
        int checked = 0;
        for (int len = 0; len < bytes.length; len += Math.max(1, bytes.length / 50)) {
            Path cut = dir.resolve("cut-" + len + ".mp4");
            Files.write(cut, Arrays.copyOf(bytes, len));
            IngestException e = fails(cut);
            assertTrue(e.getMessage().contains("truncated") || e.getMessage().contains("no 'moov' box"),
                    "cut at " + len + ": " + e.getMessage());
            checked++;
        }
        Path last = dir.resolve("cut-last.mp4");
        Files.write(last, Arrays.copyOf(bytes, bytes.length - 1));
        assertTrue(fails(last).getMessage().contains("truncated"));
        assertTrue(checked >= 50);
    }

    @Test
    void anOpenEndedMdatCutShortIsCaughtByTheSampleRanges() throws IOException {
        // mdat size 0 means "to the end of the file", so the box walk cannot tell the cut; the sample table can
        byte[] b = bytes.clone();
        int mdat = find(b, "mdat", find(b, "moov", 0)) - 4;
        ByteBuffer.wrap(b, mdat, 4).putInt(0);
        Path whole = dir.resolve("open-mdat.mp4");
        Files.write(whole, b);
        Mp4SampleTable t = Mp4SampleTable.read(whole);
        Mp4SampleTable.Sample s9 = t.samples().get(9);
        assertEquals(b.length, s9.offset() + s9.size(), "the open-ended file still reads whole");
        Path cut = dir.resolve("open-mdat-cut.mp4");
        Files.write(cut, Arrays.copyOf(b, b.length - 1));
        IngestException e = fails(cut);
        assertEquals(s9.offset(), e.offset());
        assertTrue(e.getMessage().contains("video sample 9 of 10") && e.getMessage().contains("truncated"),
                e.getMessage());
    }

    @Test
    void aTextFileIsNotAnMp4() throws IOException {
        Path txt = dir.resolve("notes.mp4");
        Files.write(txt, "this is not a video\n".repeat(50).getBytes(StandardCharsets.UTF_8));
        assertTrue(fails(txt).getMessage().contains("not an MP4 file"));
    }

    @Test
    void noVideoTrack() throws IOException {
        // the track's handler 'vide' becomes 'soun' (hdlr: header, version/flags, pre_defined, handler_type)
        byte[] b = bytes.clone();
        int hdlr = find(b, "hdlr", 0);
        assertEquals("vide", new String(b, hdlr + 12, 4, StandardCharsets.ISO_8859_1));
        System.arraycopy("soun".getBytes(StandardCharsets.ISO_8859_1), 0, b, hdlr + 12, 4);
        Path p = dir.resolve("audio-only.mp4");
        Files.write(p, b);
        assertTrue(fails(p).getMessage().contains("no video track"));
    }

    @Test
    void mpeg4Part2VideoIsNotSupported() throws IOException {
        Path p = dir.resolve("mpeg4.mp4");
        try (Mp4VideoWriter w = Mp4VideoWriter.open(p, 64, 64, EncoderOptions.builder().fps(5).encoder("mpeg4").build())) {
            for (RgbImage img : Frames.bridgeEpisode(1)) {
                w.write(img);
            }
        }
        IngestException e = fails(p);
        assertTrue(e.getMessage().contains("'mp4v'") && e.getMessage().contains("expected H.264"), e.getMessage());
    }

    @Test
    void fragmentedMp4IsNamed() throws IOException {
        // an empty 'moof' box after the media data: the file claims movie fragments
        byte[] b = Arrays.copyOf(bytes, bytes.length + 8);
        ByteBuffer.wrap(b, bytes.length, 8).putInt(8).put("moof".getBytes(StandardCharsets.ISO_8859_1));
        Path p = dir.resolve("fragmented.mp4");
        Files.write(p, b);
        IngestException e = fails(p);
        assertEquals(bytes.length, e.offset());
        assertTrue(e.getMessage().contains("fragmented MP4"), e.getMessage());
    }

    @Test
    void flippedMoovBytesGiveAnIngestExceptionOrAValidTable() throws IOException {
        int moov = find(bytes, "moov", 0) - 4;
        int moovSize = ByteBuffer.wrap(bytes, moov, 4).getInt();
        Random rnd = new Random(7);
        int failed = 0;
        for (int trial = 0; trial < 300; trial++) {
            byte[] b = bytes.clone();
            for (int k = 0; k < 3; k++) {
                b[moov + 8 + rnd.nextInt(moovSize - 8)] = (byte) rnd.nextInt(256);
            }
            Path p = dir.resolve("flip-" + trial + ".mp4");
            Files.write(p, b);
            try {
                Mp4SampleTable t = Mp4SampleTable.read(p);
                for (Mp4SampleTable.Sample s : t.samples()) {
                    assertTrue(s.offset() >= 0 && s.offset() + s.size() <= b.length, "trial " + trial);
                }
            } catch (IngestException e) {
                assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
                failed++;
            }
            Files.delete(p);
        }
        assertTrue(failed > 0, "some flips break the table");
    }
}
