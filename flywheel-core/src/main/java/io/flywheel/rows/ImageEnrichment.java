package io.flywheel.rows;

import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What enrich computed for one camera image of a frame: the enrichment fields of the {@code frames.images} struct and
 * the image's entry in each model's {@code frames.emb_<key>} column (see {@code io.flywheel.lake.TableSchemas}).
 * Every field is nullable: an image that could not be decoded carries only {@code decodeError}.
 *
 * @param sharpness variance of the Laplacian of the grey image, grey levels squared
 * @param blurry sharpness below the run's blur threshold
 * @param meanAbsDiff mean absolute grey difference to the previous frame of the same camera (64-px thumbnails),
 *     0..255; null for the first frame
 * @param isStatic meanAbsDiff below the run's static threshold
 * @param phash 64-bit DCT perceptual hash
 * @param hotJpeg JPEG at training resolution
 * @param embeddings per embedding model id, the image's embedding float32[D], L2-normalised; a model absent from the
 *     map did not embed the image (the frame was not selected by the stride, or the model has not run); never null
 *     (empty when none)
 * @param decodeError why the image could not be read or decoded, else null
 */
public record ImageEnrichment(Double sharpness, Boolean blurry, Double meanAbsDiff, Boolean isStatic, Long phash,
                              byte[] hotJpeg, Map<String, float[]> embeddings, String decodeError) {
    public ImageEnrichment {
        if (embeddings == null || embeddings.isEmpty()) {
            embeddings = Map.of();
        } else {
            TreeMap<String, float[]> m = new TreeMap<>();
            embeddings.forEach((k, v) -> m.put(Objects.requireNonNull(k, "model"), Objects.requireNonNull(v,
                    "embedding of " + k).clone()));
            embeddings = Collections.unmodifiableMap(m);
        }
    }

    /** @return an entry for an image that could not be decoded */
    public static ImageEnrichment failed(String error) {
        return new ImageEnrichment(null, null, null, null, null, null, null, Objects.requireNonNull(error));
    }

    /** @return the model's embedding of the image (a copy), or null when it has none */
    public float[] embedding(String model) {
        float[] v = embeddings.get(model);
        return v == null ? null : v.clone();
    }

    /**
     * @param model the embedding model id
     * @param vector float32[D], L2-normalised
     * @return this entry with the model's embedding set (other models' and the metrics kept)
     */
    public ImageEnrichment withEmbedding(String model, float[] vector) {
        Map<String, float[]> m = new TreeMap<>(embeddings);
        m.put(model, vector);
        return new ImageEnrichment(sharpness, blurry, meanAbsDiff, isStatic, phash, hotJpeg, m, decodeError);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ImageEnrichment e && Objects.equals(sharpness, e.sharpness) && Objects.equals(blurry, e.blurry)
                && Objects.equals(meanAbsDiff, e.meanAbsDiff) && Objects.equals(isStatic, e.isStatic)
                && Objects.equals(phash, e.phash) && Arrays.equals(hotJpeg, e.hotJpeg)
                && Objects.equals(decodeError, e.decodeError) && embeddings.keySet().equals(e.embeddings.keySet()))) {
            return false;
        }
        for (Map.Entry<String, float[]> x : embeddings.entrySet()) {
            if (!Arrays.equals(x.getValue(), e.embeddings.get(x.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = Objects.hash(sharpness, blurry, meanAbsDiff, isStatic, phash, Arrays.hashCode(hotJpeg), decodeError);
        for (Map.Entry<String, float[]> x : embeddings.entrySet()) {
            h = 31 * h + x.getKey().hashCode() * 17 + Arrays.hashCode(x.getValue());
        }
        return h;
    }

    @Override
    public String toString() {
        StringBuilder emb = new StringBuilder();
        embeddings.forEach((k, v) -> emb.append(emb.length() == 0 ? "" : ", ").append(k).append("=float[")
                .append(v.length).append(']'));
        return "ImageEnrichment[sharpness=" + sharpness + " blurry=" + blurry + " mad=" + meanAbsDiff + " static="
                + isStatic + " phash=" + (phash == null ? null : Long.toHexString(phash)) + " hot="
                + (hotJpeg == null ? null : hotJpeg.length + " B") + " embeddings={" + emb + "} error=" + decodeError
                + "]";
    }
}
