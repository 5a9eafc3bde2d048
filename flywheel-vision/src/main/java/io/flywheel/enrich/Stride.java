package io.flywheel.enrich;

import java.util.Locale;

/**
 * Which frames get an image embedding (CPU embedding is the expensive step of enrich).
 *
 * <ul>
 *   <li>{@code every(k)}: frames with {@code frame_index % k == 0}, plus every frame where the phase changes;
 *       {@code every(1)} embeds every frame;</li>
 *   <li>{@code keyframes()}: only keyframes: the first frame, frames where the phase changes, and frames whose
 *       master-camera pHash is more than {@link #KEYFRAME_PHASH_BITS} bits from the last keyframe's (the view
 *       changed).</li>
 * </ul>
 * The embedded master-camera frames are the episode's keyframes: the episode embedding is their normalised mean.
 *
 * @param every k &ge; 1, or 0 for keyframes only
 */
public record Stride(int every) {
    /** pHash Hamming distance from the last keyframe beyond which a frame is a keyframe. */
    public static final int KEYFRAME_PHASH_BITS = 12;

    public Stride {
        if (every < 0) {
            throw new IllegalArgumentException("stride must be >= 1 (or keyframes), got " + every);
        }
    }

    /** @return every k-th frame plus phase changes */
    public static Stride every(int k) {
        if (k < 1) {
            throw new IllegalArgumentException("stride must be >= 1, got " + k);
        }
        return new Stride(k);
    }

    /** @return keyframes only */
    public static Stride keyframes() {
        return new Stride(0);
    }

    /** @return true for keyframes only */
    public boolean keyframesOnly() {
        return every == 0;
    }

    /**
     * @param s a positive integer or {@code keyframes}
     * @return the stride
     * @throws IllegalArgumentException naming what was expected
     */
    public static Stride parse(String s) {
        String t = s == null ? "" : s.strip().toLowerCase(Locale.ROOT);
        if (t.equals("keyframes")) {
            return keyframes();
        }
        try {
            return every(Integer.parseInt(t));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--stride '" + s + "': expected a positive integer k (embed every k-th"
                    + " frame) or 'keyframes'");
        }
    }

    @Override
    public String toString() {
        return keyframesOnly() ? "keyframes" : Integer.toString(every);
    }
}
