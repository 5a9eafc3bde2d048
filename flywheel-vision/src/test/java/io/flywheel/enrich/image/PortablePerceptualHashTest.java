package io.flywheel.enrich.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.bytedeco.opencv.global.opencv_core;
import org.bytedeco.opencv.global.opencv_imgproc;
import org.bytedeco.opencv.opencv_core.Mat;
import org.bytedeco.opencv.opencv_core.Size;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.flywheel.image.GreyFrame;
import io.flywheel.testkit.SharedData;

/**
 * The pure-Java pHash path a robot runs (flywheel-core {@link io.flywheel.image.PerceptualHash}: {@code javax.imageio}
 * decode, BT.601 luma, area reduction, DCT) against enrich's (OpenCV decode, {@code COLOR_BGR2GRAY}, {@code INTER_AREA},
 * the same DCT), on the real JPEGs of {@code shared/data/camera}: the 21 640x480 WidowX tic-tac-toe frames and the 750
 * 64x64 BridgeData frames. From the same grey pixels the two reductions give the same 32x32 block, at whole-number
 * (640x480: 20x15; 64x64: 2x2) and fractional scales (320x240, 160x120, 100x75). From the JPEG bytes, the decoders
 * differ by at most one grey level (libjpeg-turbo against the JDK's decoder) and the hashes are allowed 2 bits; measured
 * on JDK 17: 0 bits on every one of the 771 frames.
 */
class PortablePerceptualHashTest {
    private static ImageDecoder dec;

    @BeforeAll
    static void open() {
        dec = new ImageDecoder();
    }

    @AfterAll
    static void close() {
        dec.close();
    }

    static List<Path> widowx() throws IOException {
        List<Path> out = new ArrayList<>();
        for (String cam : new String[] {"over_shoulder_cam", "top_down_cam"}) {
            try (Stream<Path> s = Files.list(SharedData.data("camera/widowx-tictactoe/" + cam))) {
                s.filter(p -> p.toString().endsWith(".jpg")).sorted().forEach(out::add);
            }
        }
        return out;
    }

    static List<Path> bridge() throws IOException {
        try (Stream<Path> s = Files.walk(SharedData.data("camera/bridge-octo-rlds/frames_jpeg"))) {
            return s.filter(p -> p.toString().endsWith(".jpg")).sorted().toList();
        }
    }

    /** OpenCV's INTER_AREA reduction of a grey image to w x h. */
    static byte[] opencvArea(byte[] grey, int width, int height, int w, int h) {
        byte[] out = new byte[w * h];
        try (Mat m = new Mat(height, width, opencv_core.CV_8UC1); Mat r = new Mat(); Size s = new Size(w, h)) {
            m.data().put(grey);
            opencv_imgproc.resize(m, r, s, 0, 0, opencv_imgproc.INTER_AREA);
            r.data().get(out);
        }
        return out;
    }

    @Test
    void theJavaAreaReductionIsOpenCvsInterArea() throws IOException {
        List<Path> files = new ArrayList<>(widowx());
        files.addAll(bridge().subList(0, 60));
        int blocks = 0;
        for (Path f : files) {
            GreyImage g = dec.decode(Files.readAllBytes(f), ImageFormat.JPEG, f.toString()).grey();
            List<GreyImage> sizes = new ArrayList<>(List.of(g));
            if (g.width() == 640) { // the fractional scales, from the real frame reduced by OpenCV
                for (int[] wh : new int[][] {{320, 240}, {160, 120}, {100, 75}}) {
                    sizes.add(new GreyImage(wh[0], wh[1], opencvArea(g.pixels(), g.width(), g.height(), wh[0], wh[1])));
                }
            }
            for (GreyImage s : sizes) {
                byte[] want = opencvArea(s.pixels(), s.width(), s.height(), 32, 32);
                byte[] got = io.flywheel.image.PerceptualHash.reduce32(s.pixels(), s.width(), s.height());
                int worst = 0;
                for (int i = 0; i < want.length; i++) {
                    worst = Math.max(worst, Math.abs((want[i] & 0xFF) - (got[i] & 0xFF)));
                }
                assertEquals(0, worst, f + " at " + s.width() + "x" + s.height() + ": grey levels differ by " + worst);
                assertEquals(PerceptualHash.ofGrey32(want), io.flywheel.image.PerceptualHash.of(
                        new GreyFrame(s.width(), s.height(), s.pixels())));
                blocks++;
            }
        }
        assertEquals(21 * 4 + 60, blocks);
    }

    @Test
    void theRobotsJpegHashIsEnrichsWithinTwoBits() throws IOException {
        int[] worst = new int[2];
        int[] levels = new int[2];
        int[] exact = new int[2];
        int[] count = new int[2];
        List<List<Path>> sets = List.of(widowx(), bridge());
        for (int k = 0; k < 2; k++) {
            for (Path f : sets.get(k)) {
                byte[] jpeg = Files.readAllBytes(f);
                GreyImage cv = dec.decode(jpeg, ImageFormat.JPEG, f.toString()).grey();
                long enrich = PerceptualHash.of(cv);
                GreyFrame robot = GreyFrame.decode(jpeg);
                for (int i = 0; i < cv.pixels().length; i++) {
                    levels[k] = Math.max(levels[k], Math.abs((cv.pixels()[i] & 0xFF) - (robot.pixels()[i] & 0xFF)));
                }
                int d = PerceptualHash.hammingDistance(enrich, io.flywheel.image.PerceptualHash.of(robot));
                worst[k] = Math.max(worst[k], d);
                exact[k] += d == 0 ? 1 : 0;
                count[k]++;
            }
        }
        System.out.printf("pure-Java pHash vs enrich: WidowX 640x480 max %d bits (%d of %d equal; decoded grey levels"
                + " differ by up to %d), Bridge 64x64 max %d bits (%d of %d equal; up to %d levels)%n", worst[0],
                exact[0], count[0], levels[0], worst[1], exact[1], count[1], levels[1]);
        assertEquals(21, count[0]);
        assertEquals(750, count[1]);
        assertTrue(worst[0] <= 2 && worst[1] <= 2, "WidowX " + worst[0] + " bits, Bridge " + worst[1] + " bits");
    }
}
