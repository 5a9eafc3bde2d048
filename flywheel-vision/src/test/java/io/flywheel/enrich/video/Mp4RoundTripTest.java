package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.RgbImage;

/**
 * Known truth: three real BridgeData episodes (10 frames each, 64x64 JPEG) written into one MP4
 * at 10 fps, episodes concatenated as LeRobotDataset v3 does, then decoded again. Frame i must
 * come back at exactly i/10 s, which is what the writer reported, and look like its source.
 */
class Mp4RoundTripTest {
    @Test
    void threeEpisodesConcatenatedDecodeToTheSameFramesAndTimes(@TempDir Path tmp) throws Exception {
        List<RgbImage> src = new ArrayList<>();
        List<Long> episodeStartIndex = new ArrayList<>();
        for (int ep = 0; ep < 3; ep++) {
            episodeStartIndex.add((long) src.size());
            src.addAll(Frames.bridgeEpisode(ep));
        }
        assertEquals(30, src.size());
        Path mp4 = tmp.resolve("file-000.mp4");
        EncoderOptions opts = EncoderOptions.builder().fps(10).keyframeInterval(5).build();
        List<FrameTime> written = new ArrayList<>();
        List<Double> episodeFrom = new ArrayList<>();
        String encoder;
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 64, 64, opts)) {
            encoder = w.encoderName();
            for (int i = 0; i < src.size(); i++) {
                if (episodeStartIndex.contains((long) i)) {
                    episodeFrom.add(w.nextFrameTime().seconds());
                }
                written.add(w.write(src.get(i)));
            }
            assertEquals(30, w.frameCount());
        }
        // The bytedeco LGPL build has no libx264; libopenh264 is the H.264 encoder it ships.
        assertEquals("libopenh264", encoder);
        assertEquals(List.of(0.0, 1.0, 2.0), episodeFrom, "episode from_timestamp = first frame index / fps");
        for (int i = 0; i < written.size(); i++) {
            assertEquals(i, written.get(i).index());
            assertEquals(i / 10.0, written.get(i).seconds(), 0.0);
            assertEquals(i * 100_000_000L, written.get(i).timestampNs());
        }

        List<VideoFrame> decoded = new ArrayList<>();
        try (Mp4VideoReader r = Mp4VideoReader.open(mp4)) {
            assertEquals("h264", r.codecName());
            assertEquals(64, r.width());
            assertEquals(64, r.height());
            assertEquals(10.0, r.frameRate(), 1e-9);
            assertEquals(30, r.frameCountHint());
            VideoFrame f;
            while ((f = r.next()) != null) {
                decoded.add(f);
            }
            assertNull(r.next(), "stays at the end");
        }
        assertEquals(30, decoded.size());
        double minPsnr = Double.POSITIVE_INFINITY;
        for (int i = 0; i < decoded.size(); i++) {
            VideoFrame f = decoded.get(i);
            assertEquals(i, f.index());
            assertEquals(written.get(i).seconds(), f.seconds(), 1e-4, "frame " + i);
            assertEquals(written.get(i).seconds(), f.seconds(), 0.0, "exact: time scale is a multiple of the fps");
            assertEquals(written.get(i).timestampNs(), f.timestampNs(), "frame " + i);
            assertEquals(i % 5 == 0, f.keyframe(), "keyframe interval 5, frame " + i);
            double p = Frames.psnr(src.get(i), f.image());
            minPsnr = Math.min(minPsnr, p);
            // Each decoded frame is closer to its own source than to the previous and next source frame.
            if (i > 0 && i + 1 < src.size()) {
                assertTrue(p > Frames.psnr(src.get(i - 1), f.image()) || p > Frames.psnr(src.get(i + 1), f.image()),
                        "frame " + i + " matches its own source");
            }
        }
        System.out.printf("mp4 round trip: %d frames, %d bytes, min PSNR %.2f dB (encoder %s)%n", decoded.size(),
                Files.size(mp4), minPsnr, encoder);
        assertTrue(minPsnr > 30.0, "min PSNR " + minPsnr + " dB");
    }

    @Test
    void ntscFrameRateTimesAreExactToo(@TempDir Path tmp) throws Exception {
        List<RgbImage> src = Frames.bridgeEpisode(3);
        Path mp4 = tmp.resolve("ntsc.mp4");
        EncoderOptions opts = EncoderOptions.builder().fps(30000, 1001).keyframeInterval(2).build();
        List<FrameTime> written = new ArrayList<>();
        try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 64, 64, opts)) {
            for (RgbImage img : src) {
                written.add(w.write(img));
            }
        }
        assertEquals(9 * 1001 / 30000.0, written.get(9).seconds(), 0.0);
        assertEquals(300_300_000L, written.get(9).timestampNs(), "9 * 1001 / 30000 s = 0.3003 s");
        try (Mp4VideoReader r = Mp4VideoReader.open(mp4)) {
            assertEquals(30000.0 / 1001, r.frameRate(), 1e-9);
            for (int i = 0; i < src.size(); i++) {
                VideoFrame f = r.next();
                assertEquals(written.get(i).seconds(), f.seconds(), 1e-4, "frame " + i);
                assertEquals(written.get(i).seconds(), f.seconds(), 0.0, "frame " + i);
                assertEquals(written.get(i).timestampNs(), f.timestampNs(), "frame " + i);
                assertEquals(i % 2 == 0, f.keyframe(), "frame " + i);
            }
            assertNull(r.next());
        }
    }
}
