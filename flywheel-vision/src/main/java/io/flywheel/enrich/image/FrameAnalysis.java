package io.flywheel.enrich.image;

import io.flywheel.enrich.RgbImage;

/**
 * What {@link FrameAnalyzer} computes for one camera image.
 *
 * @param width decoded width, pixels
 * @param height decoded height, pixels
 * @param sharpness variance of the Laplacian of the full-resolution grey image ({@link ImageMetrics#sharpness})
 * @param phash 64-bit pHash ({@link PerceptualHash})
 * @param thumbnail grey image reduced by area averaging so its longest side is {@link FrameAnalyzer.Options#thumbnailSide()}
 *     (for the static check against the previous frame)
 * @param hotJpeg the hot copy: JPEG at training resolution ({@link FrameAnalyzer.Options})
 * @param hotWidth hot copy width
 * @param hotHeight hot copy height
 * @param hotRgb the hot-copy-size image as RGB, for an embedder; null unless asked for
 */
public record FrameAnalysis(int width, int height, double sharpness, long phash, GreyImage thumbnail, byte[] hotJpeg,
                            int hotWidth, int hotHeight, RgbImage hotRgb) {}
