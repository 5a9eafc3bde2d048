package io.flywheel.enrich.image;

import io.flywheel.enrich.RgbImage;

/**
 * One decoded camera image.
 *
 * <ul>
 *   <li>{@code rgb}: 8-bit RGB; for single-channel sources the grey (or depth visualisation) in all three
 *       channels</li>
 *   <li>{@code grey}: 8-bit grey, ITU-R BT.601 luma of the colour ({@code 0.299 R + 0.587 G + 0.114 B}, as
 *       OpenCV's {@code COLOR_BGR2GRAY}); for 16-bit and float sources a visualisation: valid samples (finite
 *       and &gt; 0; REP 118 marks missing depth with 0 or NaN) scaled linearly from their minimum (0) to their
 *       maximum (255), invalid ones 0</li>
 *   <li>{@code values}: for {@code mono16}, {@code 16UC1}, 16-bit PNG and {@code 32FC1}, the samples exactly as
 *       stored ({@code width * height}, row-major; 16UC1 depth is millimetres and 32FC1 metres by REP 118),
 *       else null</li>
 * </ul>
 *
 * @param width pixels per row
 * @param height rows
 * @param rgb colour view, never null
 * @param grey grey view, never null
 * @param values raw single-channel samples, or null for 8-bit sources
 */
public record DecodedImage(int width, int height, RgbImage rgb, GreyImage grey, float[] values) {
    /** @return the raw sample at (x, y) @throws IllegalStateException for an 8-bit source */
    public float value(int x, int y) {
        if (values == null) {
            throw new IllegalStateException("an 8-bit image has no raw sample values; read grey() or rgb()");
        }
        return values[y * width + x];
    }
}
