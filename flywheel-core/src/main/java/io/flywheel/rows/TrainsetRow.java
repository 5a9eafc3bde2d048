package io.flywheel.rows;

import java.util.Objects;

/**
 * One row of {@code trainsets}, the registry of committed training sets (one row per set, append-only; see
 * {@code io.flywheel.lake.CurationTables}).
 *
 * @param tag the set's tag, not null
 * @param createdAtNs when the set was committed, int64 ns since the Unix epoch
 * @param samplesVersion version of {@code trainset_samples} holding the set's samples; -1 when written in the commit
 *     that made that version (the set's lake tag pins it then)
 * @param episodesVersion version of {@code trainset_episodes} holding its episodes; -1 as {@code samplesVersion}
 * @param episodeCount episodes in the set
 * @param sampleCount samples in the set
 * @param baseCount episodes taken by the uniform base sample
 * @param minedCount episodes in the set because mining found them
 * @param lineageJson JSON object: what made the set (queries, model, thresholds, seed, source versions), not null
 */
public record TrainsetRow(String tag, long createdAtNs, long samplesVersion, long episodesVersion, long episodeCount,
        long sampleCount, long baseCount, long minedCount, String lineageJson) {
    public TrainsetRow {
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(lineageJson, "lineageJson");
    }
}
