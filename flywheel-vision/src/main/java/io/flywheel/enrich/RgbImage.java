package io.flywheel.enrich;

import java.util.Objects;

/**
 * A decoded colour image: 8-bit RGB, interleaved, row-major, no padding.
 *
 * <p>Shape: {@code pixels.length == width * height * 3}; pixel (x, y) channel c is at
 * {@code (y * width + x) * 3 + c} with c = 0 red, 1 green, 2 blue. The array is owned by the
 * record: callers must not modify it after construction.
 *
 * @param width  columns, &gt; 0
 * @param height rows, &gt; 0
 * @param pixels interleaved RGB bytes (unsigned)
 */
public record RgbImage(int width, int height, byte[] pixels) {
    /** @throws IllegalArgumentException when the size does not match the pixel count */
    public RgbImage {
        Objects.requireNonNull(pixels, "pixels");
        if (width <= 0 || height <= 0 || (long) width * height * 3 != pixels.length) {
            throw new IllegalArgumentException("RGB image " + width + "x" + height + " needs "
                    + ((long) Math.max(width, 0) * Math.max(height, 0) * 3) + " bytes, got " + pixels.length);
        }
    }

    /** @return the unsigned value of channel c (0 R, 1 G, 2 B) at (x, y), 0..255 */
    public int at(int x, int y, int c) {
        return pixels[(y * width + x) * 3 + c] & 0xFF;
    }
}
