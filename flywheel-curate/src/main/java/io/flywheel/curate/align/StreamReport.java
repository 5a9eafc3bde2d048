package io.flywheel.curate.align;

/**
 * How well one stream lines up with the master clock over a set of frames ({@code flywheel align report}): frames
 * matched and left without a value, and the |residual| distribution, |matched message time - frame time|. With a
 * simulator's ground truth, also the true error of the same pairings, |true time of the message - true capture time
 * of the frame|, which an unsynced clock hides from the observed residuals. A row whose stream ends with
 * {@link StreamResiduals#MASTER_STAMP} is the master camera's own clock error, |frame stamp - true capture time|, with
 * only the true columns set.
 *
 * @param stream stream (topic) name
 * @param frames frames that name the stream
 * @param matched frames with a message within tolerance
 * @param unmatched frames without one
 * @param p50Ms median |residual| of the matched frames, ms; null when none matched
 * @param p90Ms 90th percentile, ms
 * @param p99Ms 99th percentile, ms
 * @param maxMs largest, ms
 * @param trueP50Ms median true error, ms; null without ground truth
 * @param trueP99Ms 99th percentile true error, ms; null without ground truth
 */
public record StreamReport(String stream, long frames, long matched, long unmatched, Double p50Ms, Double p90Ms,
                           Double p99Ms, Double maxMs, Double trueP50Ms, Double trueP99Ms) {
    /** @return whether a report's stream name is the master stamp row */
    public static boolean isMasterStamp(String stream) {
        return stream.endsWith(StreamResiduals.MASTER_STAMP);
    }
}
