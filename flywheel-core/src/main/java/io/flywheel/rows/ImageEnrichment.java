package io.flywheel.rows;

import java.util.Arrays;
import java.util.Objects;

/**
 * What enrich computed for one camera image of a frame (the enrichment fields of the {@code frames.images}
 * struct, see {@code io.flywheel.lake.TableSchemas}). Every field is nullable: an image that could not be decoded carries only
 * {@code decodeError}.
 *
 * @param sharpness variance of the Laplacian of the grey image, grey levels squared
 * @param blurry sharpness below the run's blur threshold
 * @param meanAbsDiff mean absolute grey difference to the previous frame of the same camera (64-px thumbnails),
 *     0..255; null for the first frame
 * @param isStatic meanAbsDiff below the run's static threshold
 * @param phash 64-bit DCT perceptual hash
 * @param hotJpeg JPEG at training resolution
 * @param embedding float32[D], L2-normalised; null when the frame was not embedded
 * @param decodeError why the image could not be read or decoded, else null
 */
public record ImageEnrichment(Double sharpness, Boolean blurry, Double meanAbsDiff, Boolean isStatic, Long phash,
                              byte[] hotJpeg, float[] embedding, String decodeError) {
    /** @return an entry for an image that could not be decoded */
    public static ImageEnrichment failed(String error) {
        return new ImageEnrichment(null, null, null, null, null, null, null, Objects.requireNonNull(error));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ImageEnrichment e && Objects.equals(sharpness, e.sharpness) && Objects.equals(blurry, e.blurry)
                && Objects.equals(meanAbsDiff, e.meanAbsDiff) && Objects.equals(isStatic, e.isStatic)
                && Objects.equals(phash, e.phash) && Arrays.equals(hotJpeg, e.hotJpeg)
                && Arrays.equals(embedding, e.embedding) && Objects.equals(decodeError, e.decodeError);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sharpness, blurry, meanAbsDiff, isStatic, phash, Arrays.hashCode(hotJpeg),
                Arrays.hashCode(embedding), decodeError);
    }

    @Override
    public String toString() {
        return "ImageEnrichment[sharpness=" + sharpness + " blurry=" + blurry + " mad=" + meanAbsDiff + " static="
                + isStatic + " phash=" + (phash == null ? null : Long.toHexString(phash)) + " hot="
                + (hotJpeg == null ? null : hotJpeg.length + " B") + " embedding="
                + (embedding == null ? null : "float[" + embedding.length + "]") + " error=" + decodeError + "]";
    }
}
