package io.flywheel.stream.job;

/**
 * Counters of a labeller run, a snapshot.
 *
 * @param records records read
 * @param replayed records skipped as already covered by committed labels (read again after a restart)
 * @param labels labels committed
 * @param commits lake commits
 * @param malformed records that did not decode or lacked ids (dead-lettered)
 * @param unknownEpisode records of an episode whose start and end never came within the allowed lateness
 *     (dead-lettered)
 * @param late records of an episode whose window had closed (dead-lettered)
 * @param openEpisodes episodes seen and not yet labelled
 */
public record LabellerStats(long records, long replayed, long labels, long commits, long malformed,
        long unknownEpisode, long late, long openEpisodes) {
    /** @return records sent to the dead-letter topic */
    public long deadLettered() {
        return malformed + unknownEpisode + late;
    }
}
