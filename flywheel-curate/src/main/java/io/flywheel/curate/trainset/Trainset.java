package io.flywheel.curate.trainset;

import java.util.Map;

/**
 * A committed training set, as listed in the {@code trainsets} table.
 *
 * @param tag its tag
 * @param createdAtNs commit time, ns since the Unix epoch
 * @param samplesVersion version of {@code trainset_samples} holding its samples (tagged with {@code tag})
 * @param episodesVersion version of {@code trainset_episodes} holding its episodes (tagged with {@code tag})
 * @param episodeCount episodes in the set
 * @param sampleCount samples in the set
 * @param baseCount episodes taken by the uniform sample
 * @param minedCount episodes in the set because mining found them (an episode can be both)
 * @param lineage what made it: queries, model, thresholds, ratios, seed, source versions, command line
 */
public record Trainset(String tag, long createdAtNs, long samplesVersion, long episodesVersion, long episodeCount,
                       long sampleCount, long baseCount, long minedCount, Map<String, Object> lineage) {
}
