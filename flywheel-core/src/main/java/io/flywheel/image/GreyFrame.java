package io.flywheel.image;

import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Iterator;
import java.util.Objects;

import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;

/**
 * An 8-bit grey frame, row-major, no padding: pixel (x, y) is {@code pixels[y * width + x] & 0xFF}. The array is
 * owned by the record: callers must not modify it after construction.
 *
 * @param width columns, &gt; 0
 * @param height rows, &gt; 0
 * @param pixels {@code width * height} unsigned bytes
 */
public record GreyFrame(int width, int height, byte[] pixels) {
    static {
        ImageIO.setUseCache(false); // the default writes a temporary file per image read from a stream
    }

    /** @throws IllegalArgumentException when the size does not match the pixel count */
    public GreyFrame {
        Objects.requireNonNull(pixels, "pixels");
        if (width <= 0 || height <= 0 || (long) width * height != pixels.length) {
            throw new IllegalArgumentException("grey frame " + width + "x" + height + " needs "
                    + ((long) Math.max(width, 0) * Math.max(height, 0)) + " bytes, got " + pixels.length);
        }
    }

    /**
     * Decodes an encoded image (JPEG, PNG, BMP, GIF: what {@code javax.imageio} reads) to its grey levels: grey
     * images as they are, colour ones by the BT.601 luma in OpenCV's fixed point ({@code COLOR_BGR2GRAY}: {@code
     * (4899 R + 9617 G + 1868 B + 8192) >> 14}), so that the frame matches what enrich hashes up to the decoder's
     * own rounding.
     *
     * @param encoded the file's bytes
     * @return the grey frame
     * @throws IOException when no reader knows the format or the data is damaged
     */
    public static GreyFrame decode(byte[] encoded) throws IOException {
        BufferedImage img;
        try (ImageInputStream in = ImageIO.createImageInputStream(new ByteArrayInputStream(encoded))) {
            Iterator<ImageReader> readers = ImageIO.getImageReaders(in);
            if (!readers.hasNext()) {
                throw new IOException("not an image javax.imageio can read (" + encoded.length + " bytes)");
            }
            ImageReader r = readers.next();
            try {
                r.setInput(in, true, true);
                img = r.read(0);
            } finally {
                r.dispose();
            }
        }
        return of(img);
    }

    /** @return the grey levels of a decoded image (see {@link #decode}) */
    public static GreyFrame of(BufferedImage img) {
        int w = img.getWidth();
        int h = img.getHeight();
        byte[] px = new byte[w * h];
        int type = img.getType();
        if ((type == BufferedImage.TYPE_BYTE_GRAY || type == BufferedImage.TYPE_3BYTE_BGR)
                && img.getRaster().getDataBuffer() instanceof DataBufferByte db
                && db.getNumBanks() == 1 && img.getRaster().getParent() == null) {
            byte[] d = db.getData();
            if (type == BufferedImage.TYPE_BYTE_GRAY) {
                System.arraycopy(d, 0, px, 0, px.length);
            } else {
                for (int i = 0, j = 0; i < px.length; i++, j += 3) {
                    px[i] = (byte) luma(d[j + 2] & 0xFF, d[j + 1] & 0xFF, d[j] & 0xFF);
                }
            }
        } else {
            int[] row = new int[w];
            for (int y = 0; y < h; y++) {
                img.getRGB(0, y, w, 1, row, 0, w);
                for (int x = 0; x < w; x++) {
                    int c = row[x];
                    px[y * w + x] = (byte) luma((c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF);
                }
            }
        }
        return new GreyFrame(w, h, px);
    }

    /** @return BT.601 luma of one pixel, 0..255, in OpenCV's 14-bit fixed point */
    static int luma(int r, int g, int b) {
        return (4899 * r + 9617 * g + 1868 * b + 8192) >> 14;
    }
}
