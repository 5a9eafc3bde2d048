package io.flywheel.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;

/**
 * The pure-Java pHash on images whose 32x32 reduction can be worked out by hand (flywheel-vision's
 * PortablePerceptualHashTest compares it with OpenCV on real frames).
 */
class PerceptualHashTest {
    @Test
    void hammingDistanceCountsDifferingBits() {
        assertEquals(0, PerceptualHash.hammingDistance(0x5L, 0x5L));
        assertEquals(2, PerceptualHash.hammingDistance(0b1011L, 0b0001L));
        assertEquals(64, PerceptualHash.hammingDistance(0L, -1L));
    }

    /** 64x64 to 32x32 is OpenCV's 2x2 path: (a + b + c + d + 2) >> 2, so a block summing to 10 gives 3, not 2. */
    @Test
    void twoByTwoBlocksRoundHalfUp() {
        byte[] g = new byte[64 * 64];
        g[0] = 1;
        g[1] = 3;
        g[64] = 3;
        g[65] = 3; // block (0,0) sums to 10
        g[2] = 2;  // block (1,0) sums to 2: 0.5, up to 1
        byte[] r = PerceptualHash.reduce32(g, 64, 64);
        assertEquals(3, r[0]);
        assertEquals(1, r[1]);
        assertEquals(0, r[2]);
    }

    /**
     * 48x48 is a scale of 1.5: output column 0 covers source column 0 whole and a half of column 1 (weights 2/3, 1/3),
     * output column 1 the other half of column 1 and column 2 whole (1/3, 2/3). Source column 1 at 90, the rest 0:
     * output columns 0 and 1 are 30 in every row, the others 0.
     */
    @Test
    void fractionalScalesWeighTheCoveredShare() {
        byte[] g = new byte[48 * 48];
        for (int y = 0; y < 48; y++) {
            g[y * 48 + 1] = 90;
        }
        byte[] r = PerceptualHash.reduce32(g, 48, 48);
        for (int y = 0; y < 32; y++) {
            assertEquals(30, r[y * 32], "row " + y);
            assertEquals(30, r[y * 32 + 1], "row " + y);
            assertEquals(0, r[y * 32 + 2], "row " + y);
        }
    }

    @Test
    void wrongSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PerceptualHash.reduce32(new byte[31 * 40], 31, 40));
        assertThrows(IllegalArgumentException.class, () -> PerceptualHash.reduce32(new byte[10], 32, 32));
        assertThrows(IllegalArgumentException.class, () -> PerceptualHash.ofGrey32(new byte[1000]));
    }

    /** javax.imageio decodes, the BT.601 luma as OpenCV computes it, a hash like any other. */
    @Test
    void decodedFramesGetOpenCvsLuma() throws Exception {
        BufferedImage img = new BufferedImage(64, 48, BufferedImage.TYPE_3BYTE_BGR);
        for (int y = 0; y < 48; y++) {
            for (int x = 0; x < 64; x++) {
                img.setRGB(x, y, (x * 4) << 16 | (y * 5) << 8 | 40);
            }
        }
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        ImageIO.write(img, "png", png);
        GreyFrame g = GreyFrame.decode(png.toByteArray());
        assertEquals(64, g.width());
        assertEquals(48, g.height());
        // pixel (10, 20): R 40, G 100, B 40: (4899*40 + 9617*100 + 1868*40 + 8192) >> 14 = 75
        assertEquals(75, g.pixels()[20 * 64 + 10] & 0xFF);
        assertEquals(32, Long.bitCount(PerceptualHash.of(g)), "half the coefficients lie above their median");
    }
}
