package io.flywheel.stream.rules;

import java.util.Locale;

/** A stream label: the outcome vocabulary's {@code success}, {@code failure} and {@code needs_review}. */
public enum Outcome {
    SUCCESS, FAILURE, NEEDS_REVIEW;

    /** @return the lake's spelling: {@code success}, {@code failure}, {@code needs_review} */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param s {@code success}, {@code failure} or {@code needs_review} (any case)
     * @return the outcome, or null when {@code s} is none of them
     */
    public static Outcome parse(String s) {
        if (s == null) {
            return null;
        }
        for (Outcome o : values()) {
            if (o.label().equalsIgnoreCase(s.strip())) {
                return o;
            }
        }
        return null;
    }
}
