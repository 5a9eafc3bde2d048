package io.flywheel.curate.align;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.flywheel.align.TimelinePlot;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.StreamMatch;

/**
 * The data of one episode's alignment timeline ({@code flywheel align report --plot}): the master clock's frames, a
 * stream's messages (times from the raw files, {@link EpisodeStreams}), the message each frame was paired with at
 * ingest (from the frame's stored residual), and with ground truth the frames' true capture times. Drawn by
 * {@link TimelinePlot}.
 */
public final class Timeline {
    /** When the true capture times are drawn, the window starts this much before the first frame, ns. */
    static final long TRUTH_LEAD_NS = 20_000_000L;

    private Timeline() {}

    /**
     * @param frames an episode's frames
     * @return the streams aligned to the master in the frames, in the order the first frames name them
     */
    public static List<String> alignedStreams(List<FrameRow> frames) {
        Set<String> out = new LinkedHashSet<>();
        for (FrameRow f : frames) {
            f.streams().forEach(m -> out.add(m.stream()));
        }
        return List.copyOf(out);
    }

    /**
     * Chooses the stream drawn.
     *
     * @param episode the episode
     * @param frames its frames
     * @param requested the stream asked for, or null for the first aligned one
     * @return the stream
     * @throws BadInputException when the episode has no frames, or only its master stream
     * @throws NotFoundException when {@code requested} is not aligned in the frames (naming the streams that are)
     */
    public static String stream(EpisodeRow episode, List<FrameRow> frames, String requested) {
        if (frames.isEmpty()) {
            throw new BadInputException("episode " + episode.episodeId() + " has no frames to draw");
        }
        List<String> streams = alignedStreams(frames);
        if (streams.isEmpty()) {
            throw new BadInputException("episode " + episode.episodeId() + " has only its master stream: nothing to pair");
        }
        if (requested != null && !streams.contains(requested)) {
            throw new NotFoundException("episode " + episode.episodeId() + " has no stream '" + requested
                    + "' aligned to " + episode.masterTopic() + "; its streams: " + String.join(", ", streams));
        }
        return requested != null ? requested : streams.get(0);
    }

    /**
     * @param episode the episode
     * @param frames its frames, in frame order
     * @param topic the stream drawn ({@link #stream})
     * @param streamTimesNs the stream's message times from the raw files, ascending, int64 ns
     *     ({@link EpisodeStreams#timesNs})
     * @param truth ground truth for a third timeline of true capture times, or null
     * @param windowNs time span drawn, ns, &gt; 0
     * @return what {@link TimelinePlot#render} draws: the window starts at the first frame ({@value #TRUTH_LEAD_NS}
     *     ns before it with ground truth); a frame whose stored pairing names no message of {@code streamTimesNs} is
     *     drawn unpaired
     */
    public static TimelinePlot.Spec spec(EpisodeRow episode, List<FrameRow> frames, String topic, long[] streamTimesNs,
                                         GroundTruthTimes truth, long windowNs) {
        return spec(episode, frames, topic, streamTimesNs, truth, 0, windowNs);
    }

    /**
     * As {@link #spec(EpisodeRow, List, String, long[], GroundTruthTimes, long)}, the window starting
     * {@code fromNs} after the first frame.
     *
     * @param fromNs where the window starts, ns after the episode's first frame, &ge; 0
     */
    public static TimelinePlot.Spec spec(EpisodeRow episode, List<FrameRow> frames, String topic, long[] streamTimesNs,
                                         GroundTruthTimes truth, long fromNs, long windowNs) {
        long[] ft = frames.stream().mapToLong(FrameRow::timestampNs).toArray();
        int[] match = new int[ft.length];
        for (int i = 0; i < ft.length; i++) {
            match[i] = -1;
            for (StreamMatch m : frames.get(i).streams()) {
                if (m.stream().equals(topic) && m.matched() && m.residualNs() != null) {
                    int k = Arrays.binarySearch(streamTimesNs, ft[i] + m.residualNs());
                    match[i] = k >= 0 ? k : -1;
                }
            }
        }
        long[] trueFrames = null;
        GroundTruthTimes.Episode te = truth == null ? null : truth.episode(episode);
        if (te != null) {
            trueFrames = new long[ft.length];
            for (int i = 0; i < ft.length; i++) {
                Long t = te.trueTime(episode.masterTopic(), ft[i]);
                trueFrames[i] = t == null ? ft[i] : t;
            }
        }
        return new TimelinePlot.Spec("episode " + episode.episodeId() + ": " + topic + " against "
                + episode.masterTopic(), episode.masterTopic(), ft, topic, streamTimesNs, match, trueFrames,
                ft[0] + fromNs - (trueFrames == null ? 0 : TRUTH_LEAD_NS), windowNs);
    }
}
