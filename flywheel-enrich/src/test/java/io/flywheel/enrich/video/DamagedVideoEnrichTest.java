package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.image.PerceptualHash;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.LocatorReader;
import io.flywheel.ingest.MalformedDataException;
import io.flywheel.ingest.Mp4SampleTable;
import io.flywheel.ingest.RawLocator;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.ros.cdr.CdrWriter;

/**
 * Video whose sample index is intact but whose data is damaged: bytes that were read but are malformed are decode
 * errors of the images concerned, the decoder resumes at the next keyframe, and the rest of the lake is enriched.
 *
 * <p>Known truth: the 60 frames of {@link FastVideoCameraTest} (30 Hz, H.264, keyframes where the sync-sample table /
 * the encoder says), under a 10 Hz JPEG master camera, so master frame j holds video unit 3j. Recording A is
 * {@code a.mcap} with the sidecar {@code a.wrist.mp4} whose sample k (a P-frame that a frame row points at) has its
 * first NAL length prefix overwritten with 60109 (the sample is far shorter); recording B is an MCAP with the intact
 * CompressedVideo camera {@code /cam/video}. Expected: frame rows with {@code k <= 3j < next keyframe} carry a
 * decode error (row k's names the file, "sample k" and the bad length; the later ones name the damaged sample k),
 * every other row decodes with the pHash of its source window within {@link FastVideoCameraTest#MAX_BITS} bits,
 * both episodes are marked enriched, and {@code decodeErrors} is that count.
 */
class DamagedVideoEnrichTest {
    static final int BAD_LENGTH = 60109;

    @BeforeAll
    static void frames() throws Exception {
        FastVideoCameraTest.frames();
    }

    static Path writeMp4(Path mp4) throws IOException {
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 320, 240, EncoderOptions.builder().fps(30)
                .keyframeInterval(FastVideoCameraTest.GOP).build())) {
            for (RgbImage f : FastVideoCameraTest.source) {
                w.write(f);
            }
        }
        return mp4;
    }

    /** Overwrites the first 4 bytes of the sample (its first NAL unit's length prefix) with {@code len}. */
    static void patchLength(Path mp4, Mp4SampleTable.Sample s, int len) throws IOException {
        try (FileChannel fc = FileChannel.open(mp4, StandardOpenOption.WRITE)) {
            fc.write(ByteBuffer.allocate(4).putInt(0, len), s.offset());
        }
    }

    /** @return the first sample k = 3j (a frame row's unit), not a sync sample, with a frame row between it and the next sync sample */
    static int damagedSample(Mp4SampleTable t) {
        List<Mp4SampleTable.Sample> s = t.samples();
        for (int k = 3; k + 3 < s.size(); k += 3) {
            int next = nextSync(t, k);
            if (!s.get(k).sync() && next < s.size() && k + 3 < next) {
                return k;
            }
        }
        throw new AssertionError("no P-frame sample with a later keyframe; sync samples: "
                + s.stream().filter(Mp4SampleTable.Sample::sync).map(Mp4SampleTable.Sample::index).toList());
    }

    static int nextSync(Mp4SampleTable t, int k) {
        int n = k + 1;
        while (n < t.samples().size() && !t.samples().get(n).sync()) n++;
        return n;
    }

    @Test
    void locatorReaderNamesTheDamagedSampleAndKeepsReadingTheOthers(@TempDir Path tmp) throws IOException {
        Path mp4 = writeMp4(tmp.resolve("ep.wrist.mp4"));
        Mp4SampleTable t = Mp4SampleTable.read(mp4);
        Mp4SampleTable.Sample s = t.samples().get(7);
        patchLength(mp4, s, BAD_LENGTH);
        String uri = mp4.toUri().toString();
        try (LocatorReader r = new LocatorReader()) {
            MalformedDataException e = assertThrows(MalformedDataException.class,
                    () -> r.read(new RawLocator(uri, -1, s.offset(), s.size(), "", "h264", 0, 0)));
            assertEquals(s.offset(), e.offset());
            assertEquals(mp4.toString(), e.file());
            assertTrue(e.getMessage().startsWith(mp4 + " at byte " + s.offset() + ": video sample 7 of 60 ("
                    + s.size() + " bytes, h264): NAL unit at sample byte 0 declares " + BAD_LENGTH + " bytes, "
                    + (s.size() - 4) + " remain; expected 4-byte"), e.getMessage());
            Mp4SampleTable.Sample next = t.samples().get(8);
            byte[] annexB = r.read(new RawLocator(uri, -1, next.offset(), next.size(), "", "h264", 0, 0));
            assertTrue(annexB.length >= next.size(), "sample 8 still reads");
            assertEquals(4, io.flywheel.enrich.video.AnnexB.firstNalOffset(annexB), "sample 8 in Annex B form");
        }
    }

    @Test
    void damagedSidecarSampleIsADecodeErrorUpToTheNextKeyframe(@TempDir Path tmp) throws IOException {
        Path a = Files.createDirectories(tmp.resolve("a"));
        Path b = Files.createDirectories(tmp.resolve("b"));
        Path mcapA = FastVideoCameraTest.writeMcap(a.resolve("a.mcap"), false);
        Path mp4 = writeMp4(a.resolve("a.wrist.mp4"));
        Path mcapB = FastVideoCameraTest.writeMcap(b.resolve("b.mcap"), true);
        Mp4SampleTable table = Mp4SampleTable.read(mp4);
        int k = damagedSample(table);
        int next = nextSync(table, k);
        patchLength(mp4, table.samples().get(k), BAD_LENGTH);
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            IngestJob.Result ingest = IngestJob.run(lake, List.of(mcapA, mcapB), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            assertEquals(2L * FastVideoCameraTest.MASTER, ingest.frames(), "the damaged sample's index is intact");
            EnrichJob.Result r = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            assertEquals(2, r.episodesEnriched());
            List<FrameRow> rows = FastVideoCameraTest.frames(lake);
            List<FrameRow> rowsA = new ArrayList<>();
            List<FrameRow> rowsB = new ArrayList<>();
            for (FrameRow f : rows) {
                (f.images().stream().anyMatch(x -> x.topic().equals("/wrist/video")) ? rowsA : rowsB).add(f);
            }
            assertEquals(FastVideoCameraTest.MASTER, rowsA.size());
            assertEquals(FastVideoCameraTest.MASTER, rowsB.size());
            long expectedErrors = 0;
            String name = mp4.toAbsolutePath().normalize().toUri().toString();
            for (int j = 0; j < FastVideoCameraTest.MASTER; j++) {
                FrameRow f = rowsA.get(j);
                ImageEnrichment e = f.enrichment().get(FastVideoCameraTest.index(f, "/wrist/video"));
                assertNull(f.enrichment().get(FastVideoCameraTest.index(f, "/master/image/compressed")).decodeError());
                int unit = 3 * j;
                if (unit == k) {
                    expectedErrors++;
                    assertNotNull(e.decodeError(), "the damaged sample " + k);
                    assertTrue(e.decodeError().startsWith(name + " bytes " + table.samples().get(k).offset()), e.decodeError());
                    assertTrue(e.decodeError().contains(", sample " + k + ": video sample " + k + " of 60"), e.decodeError());
                    assertTrue(e.decodeError().contains("declares " + BAD_LENGTH + " bytes"), e.decodeError());
                    assertTrue(e.decodeError().contains("expected 4-byte big-endian NAL unit lengths"), e.decodeError());
                } else if (unit > k && unit < next) {
                    expectedErrors++;
                    assertNotNull(e.decodeError(), "sample " + unit + " references the damaged sample " + k);
                    assertTrue(e.decodeError().startsWith(name + " bytes " + table.samples().get(unit).offset()),
                            e.decodeError());
                    assertTrue(e.decodeError().contains(", sample " + unit + ": h264 access unit after the damaged sample "
                            + k + " of " + name), e.decodeError());
                    assertTrue(e.decodeError().contains("before the next keyframe"), e.decodeError());
                } else {
                    assertNull(e.decodeError(), "sample " + unit + " (damaged " + k + ", next keyframe " + next + ")");
                    int bits = PerceptualHash.hammingDistance(e.phash(), FastVideoCameraTest.sourceHash[unit]);
                    assertTrue(bits <= FastVideoCameraTest.MAX_BITS, "sample " + unit + ": pHash " + bits + " bits");
                }
            }
            assertTrue(expectedErrors >= 2, "the damaged sample and at least one frame row after it");
            for (FrameRow f : rowsB) {
                for (ImageEnrichment e : f.enrichment()) {
                    assertNull(e.decodeError(), "recording B frame " + f.frameIndex());
                }
                ImageEnrichment v = f.enrichment().get(FastVideoCameraTest.index(f, "/cam/video"));
                int bits = PerceptualHash.hammingDistance(v.phash(), FastVideoCameraTest.sourceHash[3 * f.frameIndex()]);
                assertTrue(bits <= FastVideoCameraTest.MAX_BITS, "B frame " + f.frameIndex() + ": pHash " + bits);
            }
            assertEquals(expectedErrors, r.decodeErrors());
            assertEquals(4L * FastVideoCameraTest.MASTER - expectedErrors, r.images());
            try (LakeTable t = lake.table("episodes")) {
                for (EpisodeRow ep : t.episodes(ScanRequest.all())) {
                    assertNotNull(ep.enrichedAtNs(), ep.episodeId() + " is marked enriched");
                }
            }
            System.out.printf("damaged sidecar sample %d (next keyframe %d): %d decode errors, the other recording"
                    + " fully enriched%n", k, next, expectedErrors);
            // a rerun has nothing left to do and does not fail
            EnrichJob.Result again = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            assertEquals(0, again.episodesPending());
        }
    }

    /** A CompressedVideo MCAP whose unit {@code bad} holds {@code garbage} instead of its access unit. */
    static Path writeMcapWithGarbage(Path file, int bad, byte[] garbage) throws IOException {
        try (McapWriter w = McapWriter.builder().profile("ros2").build(file)) {
            int master = w.registerChannel("/master/image/compressed", "cdr", w.registerSchema(
                    "sensor_msgs/msg/CompressedImage", "ros2msg",
                    FastVideoCameraTest.IMAGE_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            int video = w.registerChannel("/cam/video", "cdr", w.registerSchema("foxglove_msgs/msg/CompressedVideo",
                    "ros2msg", FastVideoCameraTest.VIDEO_SCHEMA.getBytes(StandardCharsets.UTF_8)), Map.of());
            int seq = 0;
            for (int i = 0; i < FastVideoCameraTest.VIDEO; i++) {
                long t = FastVideoCameraTest.videoTime(i);
                if (i % 3 == 0) {
                    long mt = FastVideoCameraTest.masterTime(i / 3);
                    byte[] jpeg = FastVideoCameraTest.jpegs[(i / 3) % FastVideoCameraTest.jpegs.length];
                    w.writeMessage(master, seq++, mt, mt, new CdrWriter(jpeg.length + 64).header(mt, "top_down")
                            .string("jpeg").byteSequence(jpeg, 0, jpeg.length).toByteArray());
                }
                byte[] d = i == bad ? garbage : FastVideoCameraTest.units.get(i).data();
                w.writeMessage(video, seq++, t, t, new CdrWriter(d.length + 64).time(t).string("cam")
                        .byteSequence(d, 0, d.length).string("h264").toByteArray());
            }
        }
        return file;
    }

    @Test
    void garbageCompressedVideoUnitIsADecodeErrorUpToTheNextKeyframe(@TempDir Path tmp) throws IOException {
        int k = -1;
        int next = -1;
        List<EncodedUnit> u = FastVideoCameraTest.units;
        for (int c = 3; c + 3 < u.size() && k < 0; c += 3) {
            int n = c + 1;
            while (n < u.size() && !u.get(n).keyframe()) n++;
            if (!u.get(c).keyframe() && n < u.size() && c + 3 < n) {
                k = c;
                next = n;
            }
        }
        assertTrue(k > 0, "a P-frame with a frame row after it before the next keyframe");
        byte[] garbage = new byte[u.get(k).data().length];
        new java.util.Random(7).nextBytes(garbage);
        garbage[0] = (byte) 0xA5; // no Annex B start code
        Path mcap = writeMcapWithGarbage(tmp.resolve("garbage.mcap"), k, garbage);
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            IngestJob.run(lake, List.of(mcap), IngestOptions.defaults(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            EnrichJob.Result r = EnrichJob.run(lake, null, EnrichOptions.builder().threads(2).build(), p -> { });
            assertEquals(1, r.episodesEnriched());
            long errors = 0;
            for (FrameRow f : FastVideoCameraTest.frames(lake)) {
                ImageEnrichment e = f.enrichment().get(FastVideoCameraTest.index(f, "/cam/video"));
                int unit = 3 * f.frameIndex();
                if (unit == k) {
                    errors++;
                    assertNotNull(e.decodeError());
                    assertTrue(e.decodeError().contains("garbage.mcap"), e.decodeError());
                    assertTrue(e.decodeError().contains("message " + k + " of /cam/video"), e.decodeError());
                    assertTrue(e.decodeError().contains("expected an Annex B byte stream"), e.decodeError());
                } else if (unit > k && unit < next) {
                    errors++;
                    assertNotNull(e.decodeError(), "unit " + unit);
                    assertTrue(e.decodeError().contains("after the damaged message " + k + " of /cam/video"),
                            e.decodeError());
                } else {
                    assertNull(e.decodeError(), "unit " + unit + " (garbage " + k + ", next keyframe " + next + ")");
                    int bits = PerceptualHash.hammingDistance(e.phash(), FastVideoCameraTest.sourceHash[unit]);
                    assertTrue(bits <= FastVideoCameraTest.MAX_BITS, "unit " + unit + ": pHash " + bits);
                }
            }
            assertTrue(errors >= 2);
            assertEquals(errors, r.decodeErrors());
            assertFalse(r.stoppedEarly());
        }
    }
}
