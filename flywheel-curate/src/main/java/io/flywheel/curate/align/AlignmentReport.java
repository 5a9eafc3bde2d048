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
 * left without a value and the |residual| distribution of the pairings stored in the frames, and with a simulator's
 * ground truth the true error ({@link StreamResiduals}); the master clock's gaps; the stamp discontinuities ingest
 * found, with the timeline each such stream followed.
 *
 * @param episode the episode reported, or null for the whole lake
 * @param frames the frames reported (for the timeline of one episode, {@link Timeline})
 * @param streams one report per stream (see {@link StreamResiduals#reports()})
 * @param masterGaps dropped master frames: per episode, the frames after a step of the master clock over
 *     {@value #GAP_PERIODS} nominal periods (its median step), in episode and frame order
 * @param discontinuities the stamp discontinuities ingest found in the episodes' streams (where header stamps step
 *     backwards or leap ahead of the log times) and the timeline each stream then followed, in episode order
 */
public record AlignmentReport(EpisodeRow episode, List<FrameRow> frames, List<StreamReport> streams,
                              List<MasterGap> masterGaps, List<Discontinuity> discontinuities) {
    /** A master step longer than this many periods is a gap (a 30 Hz camera that loses one frame steps 2 periods). */
    public static final double GAP_PERIODS = 1.5;

    public AlignmentReport {
        frames = List.copyOf(frames);
        streams = List.copyOf(streams);
        masterGaps = List.copyOf(masterGaps);
        discontinuities = List.copyOf(discontinuities);
    }

    /**
     * One stamp discontinuity of a stream, as ingest stored it in the episode's metadata
     * ({@code stamp_discontinuities}, {@link io.flywheel.align.StampDiscontinuity}).
     *
     * @param episodeId the episode
     * @param topic the stream
     * @param index the message after the discontinuity, in the order recorded
     * @param logTimeNs its log time, ns
     * @param atS its log time in seconds after the episode's start
     * @param jumpMs how far the stamps jumped against the log times, ms (negative: backwards)
     * @param stampStepMs the step of the stamps there, ms
     * @param direction {@code backward} or {@code forward}
     * @param timeline the timeline the stream's times then followed: {@code log_time} or {@code stamps}
     */
    public record Discontinuity(String episodeId, String topic, int index, long logTimeNs, double atS, double jumpMs,
                                double stampStepMs, String direction, String timeline) {}

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /**
     * @param episodes episode rows
     * @return the stamp discontinuities their metadata records, in episode order; an episode whose metadata is not
     *     JSON or has none adds nothing
     */
    public static List<Discontinuity> discontinuities(java.util.Collection<EpisodeRow> episodes) {
        List<Discontinuity> out = new java.util.ArrayList<>();
        for (EpisodeRow e : episodes) {
            if (e.metadataJson() == null || e.metadataJson().isEmpty()) continue;
            com.fasterxml.jackson.databind.JsonNode ds;
            try {
                ds = JSON.readTree(e.metadataJson()).path(io.flywheel.ingest.IngestJob.STAMP_DISCONTINUITIES);
            } catch (java.io.IOException ex) {
                continue;
            }
            for (com.fasterxml.jackson.databind.JsonNode d : ds) {
                long log = d.path("log_time_ns").asLong();
                out.add(new Discontinuity(e.episodeId(), d.path("topic").asText(), d.path("index").asInt(), log,
                        (log - e.startNs()) / 1e9, d.path("jump_ns").asLong() / 1e6, d.path("stamp_step_ns").asLong() / 1e6,
                        d.path("direction").asText(), d.path("timeline").asText()));
            }
        }
        return out;
    }

    /**
     * Reports frames already read.
     *
     * @param episode the episode reported, or null for a whole lake
     * @param frames the frames, each episode's in frame order
     * @param episodes the episodes of those frames by id (for ground truth and the stamp discontinuities)
     * @param truth a simulated fleet's ground truth for the true-error columns, or null
     * @return the report: residuals of the pairings stored in the frames, master gaps, stamp discontinuities
     */
    public static AlignmentReport of(EpisodeRow episode, List<FrameRow> frames, Map<String, EpisodeRow> episodes,
                                     GroundTruthTimes truth) {
        StreamResiduals acc = new StreamResiduals(truth);
        for (FrameRow f : frames) {
            acc.add(f, truth == null ? null : episodes.get(f.episodeId()));
        }
        return new AlignmentReport(episode, frames, acc.reports(), masterGaps(new java.util.ArrayList<>(frames)),
                discontinuities(episodes.values()));
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
        // the episodes too (small): their metadata holds the stamp discontinuities
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
        return of(episode, frames, episodes, truth);
    }
}
