package io.flywheel.enrich.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.flywheel.testkit.SharedData;

/** pHash, sharpness and the static check on real camera images. */
class ImageMetricsTest {
    private static ImageDecoder dec;

    @BeforeAll
    static void open() {
        dec = new ImageDecoder();
    }

    @AfterAll
    static void close() {
        dec.close();
    }

    private static byte[] bytes(String rel) throws IOException {
        return Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/" + rel));
    }

    private static long phash(byte[] jpeg) throws IOException {
        return PerceptualHash.of(dec.decode(jpeg, ImageFormat.JPEG, "test").grey());
    }

    @Test
    void hammingDistanceCountsDifferingBits() {
        assertEquals(0, PerceptualHash.hammingDistance(0x5L, 0x5L));
        assertEquals(2, PerceptualHash.hammingDistance(0b1011L, 0b0001L));
        assertEquals(64, PerceptualHash.hammingDistance(0L, -1L));
    }

    /** The fast separable DCT equals the textbook 2-D DCT-II sum, and the hash splits at the median. */
    @Test
    void hashMatchesTheTextbookDefinition() throws IOException {
        GreyImage g = dec.decode(bytes("over_shoulder_cam/move3.jpg"), ImageFormat.JPEG, "move3").grey();
        GreyImage g32 = dec.decodeGrey(bytes("over_shoulder_cam/move3.jpg"), ImageFormat.JPEG, 8, "move3");
        // the 32x32 block, by OpenCV area resize of the full image (as PerceptualHash.of does)
        byte[] block = new byte[32 * 32];
        try (org.bytedeco.opencv.opencv_core.Mat m = new org.bytedeco.opencv.opencv_core.Mat(g.height(), g.width(),
                org.bytedeco.opencv.global.opencv_core.CV_8UC1);
                org.bytedeco.opencv.opencv_core.Mat r = new org.bytedeco.opencv.opencv_core.Mat();
                org.bytedeco.opencv.opencv_core.Size s = new org.bytedeco.opencv.opencv_core.Size(32, 32)) {
            m.data().put(g.pixels());
            org.bytedeco.opencv.global.opencv_imgproc.resize(m, r, s, 0, 0,
                    org.bytedeco.opencv.global.opencv_imgproc.INTER_AREA);
            r.data().get(block);
        }
        double[] c = new double[64];
        for (int v = 1; v <= 8; v++) {
            for (int u = 1; u <= 8; u++) {
                double acc = 0;
                for (int y = 0; y < 32; y++) {
                    for (int x = 0; x < 32; x++) {
                        acc += (block[y * 32 + x] & 0xFF) * Math.cos((2 * x + 1) * u * Math.PI / 64)
                                * Math.cos((2 * y + 1) * v * Math.PI / 64);
                    }
                }
                c[(v - 1) * 8 + (u - 1)] = acc;
            }
        }
        double[] s = c.clone();
        java.util.Arrays.sort(s);
        long expected = 0;
        for (int k = 0; k < 64; k++) {
            if (c[k] > (s[31] + s[32]) / 2) {
                expected |= 1L << k;
            }
        }
        long h = PerceptualHash.of(g);
        assertEquals(expected, h);
        assertEquals(expected, PerceptualHash.ofGrey32(block));
        assertEquals(32, Long.bitCount(h), "half the 64 coefficients lie above their median");
        // the 1/8 libjpeg decode (80x60) changes at most a couple of bits
        assertTrue(PerceptualHash.hammingDistance(h, PerceptualHash.of(g32)) <= 4,
                "reduced decode: " + PerceptualHash.hammingDistance(h, PerceptualHash.of(g32)));
    }

    /**
     * Successive board states of the tic-tac-toe game differ by one piece: near. Different cameras and
     * different scenes: far. Measured: successive over-the-shoulder moves 0-4 bits apart (0 0 0 2 0 2 2 4 0);
     * top-down, where the board fills the picture and one piece is a larger part of it, 4-12 (moves 3..9:
     * 4 4 12 4 8 4; 0 to 3, three moves apart, 6); every over-the-shoulder view against every top-down view
     * and against an RGB-D bin scene at least 24.
     */
    @Test
    void successiveBoardStatesAreNearAndOtherScenesFar() throws IOException {
        List<Long> over = new ArrayList<>();
        for (int i = 0; i <= 9; i++) {
            over.add(phash(bytes("over_shoulder_cam/move" + i + ".jpg")));
        }
        List<Long> top = new ArrayList<>();
        for (int i : new int[] {0, 3, 4, 5, 6, 7, 8, 9}) {
            top.add(phash(bytes("top_down_cam/td_move" + i + ".jpg")));
        }
        StringBuilder report = new StringBuilder();
        int maxNear = 0;
        for (List<Long> seq : List.of(over, top)) {
            for (int i = seq == top ? 2 : 1; i < seq.size(); i++) { // top: td_move0 -> td_move3 is not one move
                int d = PerceptualHash.hammingDistance(seq.get(i - 1), seq.get(i));
                report.append(d).append(' ');
                maxNear = Math.max(maxNear, d);
            }
            report.append("| ");
        }
        byte[] arc = Files.readAllBytes(SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png"));
        long arcHash = PerceptualHash.of(dec.decode(arc, ImageFormat.PNG, "arc").grey());
        int minFar = 64;
        for (long o : over) {
            for (long t : top) {
                minFar = Math.min(minFar, PerceptualHash.hammingDistance(o, t));
            }
            minFar = Math.min(minFar, PerceptualHash.hammingDistance(o, arcHash));
        }
        report.append("far min ").append(minFar);
        System.out.println("pHash distances, successive: " + report);
        assertTrue(maxNear <= 12, "successive board states are near: " + report);
        assertTrue(minFar >= 20, "different scenes are far: " + report);
    }

    @Test
    void jpegReEncodeStaysWithinFourBits() throws IOException {
        for (String f : new String[] {"over_shoulder_cam/move0.jpg", "over_shoulder_cam/move7.jpg",
            "top_down_cam/td_move5.jpg", "top_down_cam/top_down_1.jpg"}) {
            byte[] orig = bytes(f);
            BufferedImage img = ImageIO.read(new ByteArrayInputStream(orig));
            for (float q : new float[] {0.9f, 0.75f, 0.5f}) {
                byte[] again = jpeg(img, q);
                int d = PerceptualHash.hammingDistance(phash(orig), phash(again));
                assertTrue(d <= 4, f + " re-encoded at quality " + q + ": " + d + " bits");
            }
        }
    }

    private static byte[] jpeg(BufferedImage img, float quality) throws IOException {
        ImageIO.setUseCache(false);
        ImageWriter w = ImageIO.getImageWritersByFormatName("jpeg").next();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (var ios = ImageIO.createImageOutputStream(out)) {
            w.setOutput(ios);
            ImageWriteParam p = w.getDefaultWriteParam();
            p.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
            p.setCompressionQuality(quality);
            w.write(null, new IIOImage(img, null, null), p);
        } finally {
            w.dispose();
        }
        return out.toByteArray();
    }

    @Test
    void sharpnessOfAOnePixelCheckerboardIsByHand() {
        // every pixel's four neighbours have the other level: Laplacian = +-4 * 255 = +-1020 everywhere
        // (reflected borders keep that), mean 0, variance 1020^2
        byte[] px = new byte[8 * 6];
        for (int y = 0; y < 6; y++) {
            for (int x = 0; x < 8; x++) {
                px[y * 8 + x] = (byte) ((x + y) % 2 == 0 ? 255 : 0);
            }
        }
        assertEquals(1020.0 * 1020.0, ImageMetrics.sharpness(new GreyImage(8, 6, px)), 1e-6);
        assertEquals(0.0, ImageMetrics.sharpness(new GreyImage(8, 6, new byte[48])), 0.0, "flat image");
    }

    @Test
    void sharpnessOrdersGaussianBlurredCopiesOfARealImage() throws IOException {
        GreyImage g = dec.decode(bytes("over_shoulder_cam/move2.jpg"), ImageFormat.JPEG, "move2").grey();
        double prev = Double.POSITIVE_INFINITY;
        StringBuilder values = new StringBuilder();
        for (double sigma : new double[] {0, 0.8, 1.5, 3, 6}) {
            double s = ImageMetrics.sharpness(sigma == 0 ? g : blur(g, sigma));
            values.append(String.format("sigma %.1f: %.1f; ", sigma, s));
            assertTrue(s < prev, "more blur, less sharp: " + values);
            prev = s;
        }
        System.out.println("sharpness " + values);
    }

    /** Separable Gaussian blur in plain Java (kernel radius 3 sigma, borders clamped), independent of OpenCV. */
    static GreyImage blur(GreyImage g, double sigma) {
        int r = (int) Math.ceil(3 * sigma);
        double[] k = new double[2 * r + 1];
        double sum = 0;
        for (int i = -r; i <= r; i++) {
            k[i + r] = Math.exp(-i * i / (2 * sigma * sigma));
            sum += k[i + r];
        }
        int w = g.width();
        int h = g.height();
        double[] tmp = new double[w * h];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                double a = 0;
                for (int i = -r; i <= r; i++) {
                    a += k[i + r] * g.at(Math.min(w - 1, Math.max(0, x + i)), y);
                }
                tmp[y * w + x] = a / sum;
            }
        }
        byte[] out = new byte[w * h];
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                double a = 0;
                for (int i = -r; i <= r; i++) {
                    a += k[i + r] * tmp[Math.min(h - 1, Math.max(0, y + i)) * w + x];
                }
                out[y * w + x] = (byte) Math.round(a / sum);
            }
        }
        return new GreyImage(w, h, out);
    }

    @Test
    void aRepeatedFrameIsStaticAndTheNextMoveIsNot() throws IOException {
        try (FrameAnalyzer a = new FrameAnalyzer(FrameAnalyzer.Options.defaults())) {
            FrameAnalysis m3 = a.analyze(bytes("over_shoulder_cam/move3.jpg"), ImageFormat.JPEG, "move3");
            FrameAnalysis again = a.analyze(bytes("over_shoulder_cam/move3.jpg"), ImageFormat.JPEG, "move3 again");
            FrameAnalysis m4 = a.analyze(bytes("over_shoulder_cam/move4.jpg"), ImageFormat.JPEG, "move4");
            assertEquals(64, m3.thumbnail().width());
            assertEquals(48, m3.thumbnail().height());
            assertEquals(0.0, ImageMetrics.meanAbsoluteDifference(m3.thumbnail(), again.thumbnail()), 0.0);
            double moved = ImageMetrics.meanAbsoluteDifference(m3.thumbnail(), m4.thumbnail());
            System.out.println("thumbnail MAD move3 -> move4: " + moved);
            assertTrue(moved > 1.0, "a new piece and the arm moved: " + moved);
            assertEquals(m3.phash(), again.phash());
            assertEquals(320, m3.hotWidth());
            assertEquals(240, m3.hotHeight());
            assertEquals(640, m3.width());
            // the hot copy is a real JPEG at 320x240 whose pHash is near the original's
            GreyImage hot = dec.decode(m3.hotJpeg(), ImageFormat.JPEG, "hot").grey();
            assertEquals(320, hot.width());
            assertTrue(PerceptualHash.hammingDistance(m3.phash(), PerceptualHash.of(hot)) <= 4);
            // analyzer numbers equal the public one-step functions on the decoded grey (Y) image
            GreyImage g = dec.decodeGrey(bytes("over_shoulder_cam/move3.jpg"), ImageFormat.JPEG, 1, "move3");
            assertEquals(ImageMetrics.sharpness(g), m3.sharpness(), 1e-9);
            assertEquals(PerceptualHash.of(g), m3.phash());
        }
    }

    @Test
    void smallJpegsAreKeptByteForByteAsTheHotCopy() throws IOException {
        Path p = SharedData.data("camera/bridge-octo-rlds/frames_jpeg/ep00/image_0");
        Path first;
        try (var s = Files.list(p)) {
            first = s.sorted().findFirst().orElseThrow();
        }
        byte[] b = Files.readAllBytes(first);
        try (FrameAnalyzer a = new FrameAnalyzer(FrameAnalyzer.Options.defaults().withKeepRgb(true))) {
            FrameAnalysis r = a.analyze(b, ImageFormat.JPEG, first.toString());
            assertEquals(64, r.width());
            assertTrue(java.util.Arrays.equals(b, r.hotJpeg()));
            assertEquals(64, r.hotRgb().width());
        }
    }
}
