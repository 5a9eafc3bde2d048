package io.flywheel.enrich.image;

import java.util.Objects;

/**
 * An 8-bit single-channel image, row-major, no padding: pixel (x, y) is {@code pixels[y * width + x] & 0xFF}.
 * The array is owned by the record: callers must not modify it after construction.
 *
 * @param width columns, &gt; 0
 * @param height rows, &gt; 0
 * @param pixels {@code width * height} unsigned bytes
 */
public record GreyImage(int width, int height, byte[] pixels) {
    /** @throws IllegalArgumentException when the size does not match the pixel count */
    public GreyImage {
        Objects.requireNonNull(pixels, "pixels");
        if (width <= 0 || height <= 0 || (long) width * height != pixels.length) {
            throw new IllegalArgumentException("grey image " + width + "x" + height + " needs "
                    + ((long) Math.max(width, 0) * Math.max(height, 0)) + " bytes, got " + pixels.length);
        }
    }

    /** @return the grey level at (x, y), 0..255 */
    public int at(int x, int y) {
        return pixels[y * width + x] & 0xFF;
    }
}
