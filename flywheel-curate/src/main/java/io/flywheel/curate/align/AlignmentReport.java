package io.flywheel.curate.align;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.error.NotFoundException;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;

/**
 * The alignment report of a lake or of one episode ({@code flywheel align report}): per stream, frames matched and
 * left without a value and the |residual| distribution, and with a simulator's ground truth the true error
 * ({@link StreamResiduals}).
 *
 * @param episode the episode reported, or null for the whole lake
 * @param frames the frames reported (for the timeline of one episode, {@link Timeline})
 * @param streams one report per stream (see {@link StreamResiduals#reports()})
 * @param masterGaps dropped master frames: per episode, the frames after a step of the master clock over
 *     {@value #GAP_PERIODS} nominal periods (its median step), in episode and frame order
 */
public record AlignmentReport(EpisodeRow episode, List<FrameRow> frames, List<StreamReport> streams,
                              List<MasterGap> masterGaps) {
    /** A master step longer than this many periods is a gap (a 30 Hz camera that loses one frame steps 2 periods). */
    public static final double GAP_PERIODS = 1.5;

    public AlignmentReport {
        frames = List.copyOf(frames);
        streams = List.copyOf(streams);
        masterGaps = List.copyOf(masterGaps);
    }

    /**
     * One gap of the master clock.
     *
     * @param episodeId the episode
     * @param frameIndex the frame after the gap
     * @param stepMs the step from the previous frame, ms
     * @param periodMs the episode's nominal master period (median step), ms
     */
    public record MasterGap(String episodeId, int frameIndex, double stepMs, double periodMs) {}

    /**
     * @param frames frames of any episodes, each episode's in frame order
     * @return the master gaps of those frames: steps over {@value #GAP_PERIODS} times the episode's median step
     */
    public static List<MasterGap> masterGaps(List<FrameRow> frames) {
        Map<String, List<FrameRow>> byEpisode = new LinkedHashMap<>();
        frames.forEach(f -> byEpisode.computeIfAbsent(f.episodeId(), k -> new java.util.ArrayList<>()).add(f));
        List<MasterGap> out = new java.util.ArrayList<>();
        byEpisode.forEach((id, fs) -> {
            fs.sort(java.util.Comparator.comparingInt(FrameRow::frameIndex));
            long[] d = new long[Math.max(0, fs.size() - 1)];
            for (int i = 1; i < fs.size(); i++) {
                d[i - 1] = fs.get(i).timestampNs() - fs.get(i - 1).timestampNs();
            }
            long[] sorted = d.clone();
            java.util.Arrays.sort(sorted);
            if (sorted.length == 0 || sorted[sorted.length / 2] <= 0) {
                return;
            }
            double period = sorted[sorted.length / 2];
            for (int i = 0; i < d.length; i++) {
                if (d[i] > GAP_PERIODS * period) {
                    out.add(new MasterGap(id, fs.get(i + 1).frameIndex(), d[i] / 1e6, period / 1e6));
                }
            }
        });
        return out;
    }

    /**
     * Reads the frames (of one episode, or all) and reports them.
     *
     * @param lake an open lake
     * @param episodeId only this episode, or null for every frame of the lake
     * @param truth a simulated fleet's ground truth for the true-error columns, or null
     * @return the report
     * @throws NotFoundException when the lake has no episode {@code episodeId}
     */
    public static AlignmentReport read(Lake lake, String episodeId, GroundTruthTimes truth) {
        List<FrameRow> frames;
        Map<String, EpisodeRow> episodes = new LinkedHashMap<>();
        try (LakeTable t = lake.table(TableSchemas.FRAMES)) {
            ScanRequest.Builder b = ScanRequest.builder();
            if (episodeId != null) {
                b.filter(TableSchemas.EPISODE_ID + " = " + Sql.quote(episodeId));
            }
            frames = t.frames(b.build());
        }
        EpisodeRow episode = null;
        if (truth != null || episodeId != null) {
            try (LakeTable e = lake.table(TableSchemas.EPISODES)) {
                ScanRequest.Builder b = ScanRequest.builder();
                if (episodeId != null) {
                    b.filter(TableSchemas.EPISODE_ID + " = " + Sql.quote(episodeId));
                }
                for (EpisodeRow r : e.episodes(b.build())) {
                    episodes.put(r.episodeId(), r);
                }
            }
            if (episodeId != null) {
                episode = episodes.get(episodeId);
                if (episode == null) {
                    throw new NotFoundException("no episode '" + episodeId + "' in " + lake.location()
                            + "; `flywheel qc report " + lake.location() + "` lists the episode ids");
                }
            }
        }
        StreamResiduals acc = new StreamResiduals(truth);
        for (FrameRow f : frames) {
            acc.add(f, episodes.get(f.episodeId()));
        }
        return new AlignmentReport(episode, frames, acc.reports(), masterGaps(new java.util.ArrayList<>(frames)));
    }
}
