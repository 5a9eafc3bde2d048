package io.flywheel.curate.align;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.StreamMatch;

/**
 * Per stream, the matches and |residual|s of frames, added one by one, then reported ({@link #reports()}). Fed with
 * frame rows ({@link #add(FrameRow, EpisodeRow)}, with the true errors when a {@link GroundTruthTimes} is given) or
 * with single matches read from a projected scan ({@link #add(String, boolean, Long)}). Not thread-safe.
 */
public final class StreamResiduals {
    /** Suffix of the row of the master camera's own clock error: {@code "<master topic> (master stamp)"}. */
    public static final String MASTER_STAMP = " (master stamp)";

    private final GroundTruthTimes truth;
    private final Map<String, long[]> counts = new LinkedHashMap<>();
    private final Map<String, List<Long>> residuals = new LinkedHashMap<>();
    private final Map<String, List<Long>> trueErrors = new LinkedHashMap<>();

    /** @param truth a simulated fleet's ground truth for the true-error columns, or null */
    public StreamResiduals(GroundTruthTimes truth) {
        this.truth = truth;
    }

    /**
     * Adds one stream match of a frame.
     *
     * @param stream the stream
     * @param matched whether a message matched within tolerance
     * @param residualNs message time - frame time, ns; null when unmatched
     */
    public void add(String stream, boolean matched, Long residualNs) {
        long[] c = counts.computeIfAbsent(stream, k -> new long[2]);
        c[matched ? 0 : 1]++;
        if (matched && residualNs != null) {
            residuals.computeIfAbsent(stream, k -> new ArrayList<>()).add(Math.abs(residualNs));
        }
    }

    /**
     * Adds every stream match of a frame and, with ground truth for its episode, the true errors: of the master stamp
     * (|frame stamp - true capture time|) and of each matched message (|true message time - true capture time|).
     *
     * @param f the frame
     * @param episode its episode row (for the master topic and the source file), or null without ground truth
     */
    public void add(FrameRow f, EpisodeRow episode) {
        GroundTruthTimes.Episode te = truth == null || episode == null ? null : truth.episode(episode);
        Long frameTrue = te == null ? null : te.trueTime(episode.masterTopic(), f.timestampNs());
        if (frameTrue != null) {
            trueErrors.computeIfAbsent(episode.masterTopic() + MASTER_STAMP, k -> new ArrayList<>())
                    .add(Math.abs(f.timestampNs() - frameTrue));
        }
        for (StreamMatch m : f.streams()) {
            add(m.stream(), m.matched(), m.residualNs());
            if (frameTrue != null && m.matched() && m.residualNs() != null) {
                Long msgTrue = te.trueTime(m.stream(), f.timestampNs() + m.residualNs());
                if (msgTrue != null) {
                    trueErrors.computeIfAbsent(m.stream(), k -> new ArrayList<>()).add(Math.abs(msgTrue - frameTrue));
                }
            }
        }
    }

    /**
     * @return one report per stream, in the order the frames first named them, then one master-stamp row per master
     *     topic with ground truth
     */
    public List<StreamReport> reports() {
        List<StreamReport> out = new ArrayList<>();
        for (Map.Entry<String, long[]> e : counts.entrySet()) {
            ResidualDistribution r = ResidualDistribution.of(array(residuals.get(e.getKey())));
            ResidualDistribution t = ResidualDistribution.of(array(trueErrors.get(e.getKey())));
            out.add(new StreamReport(e.getKey(), e.getValue()[0] + e.getValue()[1], e.getValue()[0], e.getValue()[1],
                    r.p50Ms(), r.p90Ms(), r.p99Ms(), r.maxMs(), t.p50Ms(), t.p99Ms()));
        }
        for (Map.Entry<String, List<Long>> e : trueErrors.entrySet()) {
            if (StreamReport.isMasterStamp(e.getKey())) {
                ResidualDistribution t = ResidualDistribution.of(array(e.getValue()));
                out.add(new StreamReport(e.getKey(), t.count(), t.count(), 0, null, null, null, null, t.p50Ms(),
                        t.p99Ms()));
            }
        }
        return out;
    }

    private static long[] array(List<Long> v) {
        return v == null ? new long[0] : v.stream().mapToLong(Long::longValue).toArray();
    }
}
