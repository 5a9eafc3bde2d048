package io.flywheel.curate.trainset;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a training set is made of. Build with {@link #builder(String)}.
 *
 * @param tag the tag the set is committed under, e.g. {@code train-v2}
 * @param seed seed of the uniform base sample
 * @param baseRatio share r of the pool taken uniformly, in [0, 1]
 * @param sampleRateHz training frame rate in Hz; 0 takes every frame
 * @param mined neighbours to add (may name one episode several times, for several queries)
 * @param allowWarn whether episodes whose quality status is {@code warn} are in the pool
 * @param lineage extra lineage entries stored with the set (queries, model, thresholds, command line)
 */
public record TrainsetSpec(String tag, long seed, double baseRatio, double sampleRateHz, List<MinedEpisode> mined,
                           boolean allowWarn, Map<String, Object> lineage) {
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    public TrainsetSpec {
        if (tag == null || !TAG.matcher(tag).matches()) {
            throw new IllegalArgumentException("training-set tag '" + tag
                    + "' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        if (!(baseRatio >= 0 && baseRatio <= 1)) {
            throw new IllegalArgumentException("base ratio must be in [0, 1], got " + baseRatio);
        }
        if (!(sampleRateHz >= 0) || Double.isInfinite(sampleRateHz)) {
            throw new IllegalArgumentException("sample rate must be >= 0 Hz (0 = every frame), got " + sampleRateHz);
        }
        mined = List.copyOf(mined);
        lineage = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(lineage));
    }

    /** @param tag the tag to commit under @return a builder with seed 0, ratio 0.3, 10 Hz, warn allowed */
    public static Builder builder(String tag) {
        return new Builder(tag);
    }

    /** Builder of {@link TrainsetSpec}. */
    public static final class Builder {
        private final String tag;
        private long seed;
        private double baseRatio = 0.3;
        private double sampleRateHz = 10;
        private final List<MinedEpisode> mined = new ArrayList<>();
        private boolean allowWarn = true;
        private final Map<String, Object> lineage = new LinkedHashMap<>();

        private Builder(String tag) {
            this.tag = Objects.requireNonNull(tag, "tag");
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder baseRatio(double ratio) {
            this.baseRatio = ratio;
            return this;
        }

        public Builder sampleRateHz(double hz) {
            this.sampleRateHz = hz;
            return this;
        }

        public Builder mined(List<MinedEpisode> neighbours) {
            this.mined.addAll(neighbours);
            return this;
        }

        public Builder allowWarn(boolean allow) {
            this.allowWarn = allow;
            return this;
        }

        /** Adds a lineage entry (a string, number, boolean, list or map: stored as JSON). */
        public Builder lineage(String key, Object value) {
            this.lineage.put(key, value);
            return this;
        }

        public TrainsetSpec build() {
            return new TrainsetSpec(tag, seed, baseRatio, sampleRateHz, mined, allowWarn, lineage);
        }
    }
}
