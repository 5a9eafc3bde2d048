package io.flywheel.enrich.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.awt.image.Raster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.flywheel.testkit.SharedData;

/** Every supported encoding decodes to known pixel values; bad bytes say what was expected. */
class ImageDecoderTest {
    private static ImageDecoder dec;

    @BeforeAll
    static void open() {
        dec = new ImageDecoder();
    }

    @AfterAll
    static void close() {
        dec.close();
    }

    /** Pixel (x, y) of the 3 x 2 test image: distinct values per channel. */
    private static int[] colour(int x, int y) {
        return new int[] {10 + 40 * x + 100 * y, 200 - 30 * x - 50 * y, 7 * x + 3 * y};
    }

    /** A raw 3 x 2 array with {@code pad} spare bytes per row; {@code order} maps R,G,B(,A) to byte positions. */
    private static byte[] raw(int channels, int[] order, int pad) {
        int step = 3 * channels + pad;
        byte[] d = new byte[step * 2];
        for (int y = 0; y < 2; y++) {
            for (int x = 0; x < 3; x++) {
                int[] c = colour(x, y);
                for (int k = 0; k < channels; k++) {
                    int v = k < 3 ? c[order[k]] : 255;
                    d[y * step + x * channels + k] = (byte) v;
                }
            }
        }
        return d;
    }

    private static void assertColours(DecodedImage img) {
        assertEquals(3, img.width());
        assertEquals(2, img.height());
        assertNull(img.values());
        for (int y = 0; y < 2; y++) {
            for (int x = 0; x < 3; x++) {
                int[] c = colour(x, y);
                for (int k = 0; k < 3; k++) {
                    assertEquals(c[k], img.rgb().at(x, y, k), "pixel " + x + "," + y + " channel " + k);
                }
                double luma = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
                assertEquals(luma, img.grey().at(x, y), 0.51, "BT.601 luma at " + x + "," + y);
            }
        }
    }

    @Test
    void rgbBgrRgbaBgraDecodeToTheSamePixels() throws IOException {
        assertColours(dec.decode(raw(3, new int[] {0, 1, 2}, 0), ImageFormat.raw("rgb8", 3, 2), "rgb8"));
        assertColours(dec.decode(raw(3, new int[] {2, 1, 0}, 0), ImageFormat.raw("bgr8", 3, 2), "bgr8"));
        assertColours(dec.decode(raw(4, new int[] {0, 1, 2}, 0), ImageFormat.raw("rgba8", 3, 2), "rgba8"));
        assertColours(dec.decode(raw(4, new int[] {2, 1, 0}, 0), ImageFormat.raw("bgra8", 3, 2), "bgra8"));
        // padded rows (step 12 for 9 bytes of pixels)
        assertColours(dec.decode(raw(3, new int[] {0, 1, 2}, 3), ImageFormat.raw("RGB8", 3, 2), "rgb8 padded"));
    }

    @Test
    void mono8KeepsItsLevels() throws IOException {
        byte[] d = {0, 1, 2, (byte) 128, (byte) 254, (byte) 255};
        DecodedImage img = dec.decode(d, ImageFormat.raw("mono8", 3, 2), "mono8");
        assertArrayEquals(d, img.grey().pixels());
        assertEquals(254, img.rgb().at(1, 1, 0));
        assertEquals(254, img.rgb().at(1, 1, 2));
    }

    @Test
    void sixteenBitAndFloatDepthKeepTheirValuesAndGetAGreyView() throws IOException {
        int[] mm = {0, 1000, 1500, 2000, 3000, 65535};
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            ByteBuffer b = ByteBuffer.allocate(12).order(order);
            for (int v : mm) {
                b.putShort((short) v);
            }
            ImageFormat f = new ImageFormat("16UC1", 3, 2, order == ByteOrder.BIG_ENDIAN, false);
            DecodedImage img = dec.decode(b.array(), f, "16UC1");
            for (int i = 0; i < 6; i++) {
                assertEquals(mm[i], img.value(i % 3, i / 3), 0f);
            }
            // 0 is "no depth" (REP 118): grey 0; 1000 .. 65535 maps to 0 .. 255
            assertEquals(0, img.grey().at(0, 0));
            assertEquals(0, img.grey().at(1, 0));
            assertEquals(Math.round(500 * 255.0 / 64535), img.grey().at(2, 0));
            assertEquals(255, img.grey().at(2, 1));
        }
        DecodedImage mono16 = dec.decode(new byte[] {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
                ImageFormat.raw("mono16", 3, 2), "mono16");
        assertEquals(1f, mono16.value(0, 0), 0f);
        assertEquals(256f, mono16.value(1, 0), 0f);

        float[] metres = {0.5f, 1.25f, Float.NaN, 0f, 2.0f, 1.0f};
        ByteBuffer b = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : metres) {
            b.putFloat(v);
        }
        DecodedImage f = dec.decode(b.array(), ImageFormat.raw("32FC1", 3, 2), "32FC1");
        assertArrayEquals(metres, f.values(), 0f);
        assertEquals(0, f.grey().at(0, 0), "0.5 m is the nearest valid sample");
        assertEquals(0, f.grey().at(2, 0), "NaN is invalid");
        assertEquals(255, f.grey().at(1, 1), "2.0 m is the farthest");
        assertEquals(Math.round(0.75 / 1.5 * 255), f.grey().at(1, 0));
    }

    @Test
    void arc2017DepthPngKeepsEverySixteenBitValue() throws IOException {
        Path p = SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.depth.png");
        byte[] bytes = Files.readAllBytes(p);
        DecodedImage img = dec.decode(bytes, ImageFormat.compressed("16UC1; png", bytes), p.toString());
        Raster ref = ImageIO.read(p.toFile()).getRaster(); // Java's own PNG reader, 16-bit grey
        assertEquals(ref.getWidth(), img.width());
        assertEquals(ref.getHeight(), img.height());
        int nonZero = 0;
        for (int y = 0; y < ref.getHeight(); y++) {
            for (int x = 0; x < ref.getWidth(); x++) {
                int v = ref.getSample(x, y, 0);
                assertEquals(v, img.value(x, y), 0f, "depth at " + x + "," + y);
                nonZero += v > 0 ? 1 : 0;
            }
        }
        assertTrue(nonZero > ref.getWidth() * ref.getHeight() / 2, "a real depth image: " + nonZero + " valid samples");
        float max = 0;
        for (float v : img.values()) {
            max = Math.max(max, v);
        }
        assertTrue(max > 255, "more than 8 bits of depth: max " + max);
    }

    @Test
    void compressedDepthHeaderIsSkipped() throws IOException {
        byte[] png = Files.readAllBytes(SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.depth.png"));
        byte[] withHeader = new byte[png.length + 12];
        System.arraycopy(png, 0, withHeader, 12, png.length);
        ImageFormat f = ImageFormat.compressed("16UC1; compressedDepth png", withHeader);
        assertTrue(f.compressedDepth());
        DecodedImage a = dec.decode(withHeader, f, "compressedDepth");
        DecodedImage b = dec.decode(png, ImageFormat.PNG, "png");
        assertArrayEquals(b.values(), a.values(), 0f);
    }

    @Test
    void jpegAndColourPngMatchJavasOwnDecoders() throws IOException {
        Path jpg = SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg");
        byte[] bytes = Files.readAllBytes(jpg);
        assertEquals(ImageFormat.JPEG, ImageFormat.compressed("rgb8; jpeg compressed bgr8", bytes));
        DecodedImage img = dec.decode(bytes, ImageFormat.JPEG, jpg.toString());
        BufferedImage ref = ImageIO.read(new ByteArrayInputStream(bytes));
        assertEquals(640, img.width());
        assertEquals(480, img.height());
        // libjpeg-turbo and Java's decoder use different IDCTs and upsampling: a level or two apart, on average < 1
        assertTrue(meanAbsDiff(img, ref) < 1.5, "mean |OpenCV - ImageIO| = " + meanAbsDiff(img, ref));

        Path png = SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png");
        byte[] pb = Files.readAllBytes(png);
        DecodedImage pi = dec.decode(pb, ImageFormat.compressed("png", pb), png.toString());
        assertEquals(0.0, meanAbsDiff(pi, ImageIO.read(png.toFile())), 0.0, "PNG is lossless: identical pixels");
    }

    private static double meanAbsDiff(DecodedImage img, BufferedImage ref) {
        long sum = 0;
        for (int y = 0; y < img.height(); y++) {
            for (int x = 0; x < img.width(); x++) {
                int rgb = ref.getRGB(x, y);
                sum += Math.abs(img.rgb().at(x, y, 0) - (rgb >> 16 & 0xFF)) + Math.abs(img.rgb().at(x, y, 1) - (rgb >> 8 & 0xFF))
                        + Math.abs(img.rgb().at(x, y, 2) - (rgb & 0xFF));
            }
        }
        return sum / (3.0 * img.width() * img.height());
    }

    @Test
    void reducedGreyDecodeHasTheReducedSize() throws IOException {
        byte[] bytes = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg"));
        for (int r : new int[] {1, 2, 4, 8}) {
            GreyImage g = dec.decodeGrey(bytes, ImageFormat.JPEG, r, "move0");
            assertEquals(640 / r, g.width());
            assertEquals(480 / r, g.height());
        }
        byte[] png = Files.readAllBytes(SharedData.data("camera/arc2017-rgbd/parallel-jaw-grasping/input-0.color.png"));
        GreyImage g = dec.decodeGrey(png, ImageFormat.PNG, 4, "png");
        assertEquals(160, g.width());
        assertEquals(120, g.height());
        assertThrows(IllegalArgumentException.class, () -> dec.decodeGrey(bytes, ImageFormat.JPEG, 3, "x"));
    }

    @Test
    void badBytesNameWhatWasExpected() throws IOException {
        ImageDecodeException e = assertThrows(ImageDecodeException.class,
                () -> dec.decode(new byte[] {1, 2, 3, 4}, ImageFormat.JPEG, "cam.mcap chunk 10 offset 20"));
        assertTrue(e.getMessage().startsWith("cam.mcap chunk 10 offset 20: expected a JPEG image (starting with marker FF D8),"
                + " found 01 02 03 04"), e.getMessage());
        e = assertThrows(ImageDecodeException.class, () -> dec.decode(new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) 0xFF, 0,
            0, 0}, ImageFormat.JPEG, "f"));
        assertTrue(e.getMessage().contains("expected a valid JPEG image of 6 bytes; it is truncated or corrupt"), e.getMessage());
        e = assertThrows(ImageDecodeException.class, () -> dec.decode(new byte[] {(byte) 0xFF, (byte) 0xD8}, ImageFormat.PNG, "f"));
        assertTrue(e.getMessage().contains("expected a PNG image (signature 89 50 4E 47 0D 0A 1A 0A), found FF D8"), e.getMessage());
        e = assertThrows(ImageDecodeException.class, () -> dec.decode(new byte[17], ImageFormat.raw("rgb8", 3, 2), "f"));
        assertEquals("f: expected a raw rgb8 3x2 array of 18 bytes (or 2 equal padded rows), found 17 bytes", e.getMessage());
        e = assertThrows(ImageDecodeException.class, () -> dec.decode(new byte[0], ImageFormat.PNG, "f"));
        assertEquals("f: expected PNG image data, found 0 bytes", e.getMessage());
        IllegalArgumentException u = assertThrows(IllegalArgumentException.class, () -> ImageFormat.raw("yuv422", 2, 2));
        assertTrue(u.getMessage().contains("'yuv422' is not supported"), u.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ImageFormat.compressed("", new byte[] {1, 2}));
        byte[] real = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg"));
        e = assertThrows(ImageDecodeException.class, () -> dec.decode(Arrays.copyOf(real, 300), ImageFormat.JPEG, "cut"));
        assertTrue(e.getMessage().startsWith("cut: expected a valid JPEG image of 300 bytes"), e.getMessage());
    }
}
