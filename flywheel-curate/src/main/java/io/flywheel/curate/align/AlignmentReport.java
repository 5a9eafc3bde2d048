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
 */
public record AlignmentReport(EpisodeRow episode, List<FrameRow> frames, List<StreamReport> streams) {
    public AlignmentReport {
        frames = List.copyOf(frames);
        streams = List.copyOf(streams);
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
        return new AlignmentReport(episode, frames, acc.reports());
    }
}
