package io.flywheel.enrich.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.enrich.RgbImage;

/**
 * Native state is freed: hundreds of open / decode / close cycles of every class leave the
 * process's resident memory where it was after warm-up. One leaked decoder context with its
 * frame pool costs well over 100 kB, so a leak per cycle would add tens of MB over the run.
 */
class NativeMemoryTest {
    @Test
    void repeatedOpenDecodeCloseDoesNotGrowResidentMemory(@TempDir Path tmp) throws Exception {
        List<RgbImage> src = Frames.bridgeEpisode(2);
        List<EncodedUnit> units = new ArrayList<>();
        try (AnnexBEncoder enc = AnnexBEncoder.open(64, 64, EncoderOptions.builder().fps(10).keyframeInterval(5).build())) {
            for (RgbImage img : src) {
                units.addAll(enc.encode(img));
            }
        }
        Path mp4 = tmp.resolve("a.mp4");
        long base = 0;
        int cycles = 200;
        int warmup = 50;
        for (int c = 0; c < cycles; c++) {
            if (c == warmup) {
                System.gc();
                base = Pointer.physicalBytes();
            }
            try (Mp4VideoWriter w = Mp4VideoWriter.open(mp4, 64, 64, EncoderOptions.builder().fps(10).build())) {
                for (RgbImage img : src) {
                    w.write(img);
                }
            }
            int n = 0;
            try (Mp4VideoReader r = Mp4VideoReader.open(mp4)) {
                while (r.next() != null) {
                    n++;
                }
            }
            assertEquals(10, n);
            try (AnnexBDecoder d = AnnexBDecoder.open(VideoCodec.H264, "leak-test")) {
                long t = 0;
                for (EncodedUnit u : units) {
                    n += d.decode(u.data(), t++).size();
                }
                n += d.flush().size();
            }
            assertEquals(20, n);
        }
        System.gc();
        long growth = Pointer.physicalBytes() - base;
        System.out.printf("native memory: RSS growth %.1f MB over %d cycles after warm-up%n", growth / 1e6, cycles - warmup);
        assertTrue(growth < 30_000_000L, "RSS grew " + growth + " bytes over " + (cycles - warmup) + " cycles");
    }
}
