/**
 * Image fingerprints without a native library: the 64-bit DCT perceptual hash ({@link io.flywheel.image.PerceptualHash})
 * and grey frames decoded by {@code javax.imageio} ({@link io.flywheel.image.GreyFrame}). Enrich hashes with it after
 * its OpenCV reduction; a robot's frame filter (flywheel-fleet-client) hashes with it alone.
 */
package io.flywheel.image;
