package io.flywheel.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.align.TimelinePlot;
import io.flywheel.curate.SourceFiles;
import io.flywheel.curate.align.AlignmentReport;
import io.flywheel.curate.align.EpisodeStreams;
import io.flywheel.curate.align.GroundTruthTimes;
import io.flywheel.curate.align.StreamReport;
import io.flywheel.curate.align.Timeline;
import io.flywheel.error.BadInputException;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EpisodeRow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flywheel align report LAKE}: how well every stream lines up with the master clock ({@link AlignmentReport}),
 * and one episode's timelines ({@link Timeline}).
 */
@Command(name = "align", mixinStandardHelpOptions = true, description = "Alignment of streams to the master clock.",
        subcommands = {AlignCommand.Report.class})
final class AlignCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    @Command(name = "report", mixinStandardHelpOptions = true,
            description = "Per stream: frames matched and left without a value, and the |residual| distribution"
                    + " (p50, p90, p99, max). --plot draws one episode's two timelines with the pairings.")
    static final class Report implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation location;

        @Option(names = "--episode", paramLabel = "ID", description = "only this episode")
        String episode;

        @Option(names = "--plot", paramLabel = "PNG", description = "draw the timelines of --episode and --stream")
        Path plot;

        @Option(names = "--stream", paramLabel = "TOPIC", description = "stream to draw (default: the first one)")
        String stream;

        @Option(names = "--window-ms", description = "time span drawn, ms (default: ${DEFAULT-VALUE}); an overview"
                + " strip above it shows the whole episode")
        double windowMs = 500;

        @Option(names = "--from-ms", description = "where the drawn window starts, ms after the episode's first frame"
                + " (default: ${DEFAULT-VALUE})")
        double fromMs = 0;

        @Option(names = "--truth", paramLabel = "GROUND_TRUTH_JSON", description = "a simulated fleet's"
                + " ground_truth.json: also show the true error of every pairing next to the observed residual")
        Path truth;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws Exception {
            Usage.require(spec, plot == null || episode != null, "--plot needs --episode: it draws one episode");
            Usage.require(spec, stream == null || plot != null, "--stream needs --plot: it names the stream drawn");
            Usage.require(spec, windowMs > 0 && !Double.isInfinite(windowMs),
                    "--window-ms must be a positive number of ms, got " + windowMs);
            Usage.require(spec, fromMs >= 0 && !Double.isInfinite(fromMs),
                    "--from-ms must be a number of ms >= 0, got " + fromMs);
            boolean json = jsonOutput.enabled();
            GroundTruthTimes groundTruth = null;
            if (truth != null) {
                try {
                    groundTruth = GroundTruthTimes.read(truth);
                } catch (BadInputException e) {
                    throw new BadInputException("--truth " + e.getMessage(), e);
                }
            }
            AlignmentReport report;
            try (Lake l = location.open()) {
                report = AlignmentReport.read(l, episode, groundTruth);
            }
            List<StreamReport> reports = report.streams();
            if (plot != null) {
                EpisodeRow ep = report.episode();
                String topic = Timeline.stream(ep, report.frames(), stream);
                EpisodeStreams raw = EpisodeStreams.read(ep.episodeId(), SourceFiles.uris(ep.metadataJson()),
                        EpisodeStreams.timelines(ep.metadataJson()),
                        SourceFiles::localPath);
                TimelinePlot.render(Timeline.spec(ep, report.frames(), topic, raw.timesNs(topic), groundTruth,
                        Math.round(fromMs * 1e6), Math.round(windowMs * 1e6)), plot);
            }
            int frames = report.frames().size();
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("frames", frames);
                m.put("streams", reports);
                m.put("master_gaps", report.masterGaps().stream().map(g -> Map.of("episode_id", g.episodeId(),
                        "frame_index", g.frameIndex(), "step_ms", g.stepMs(), "period_ms", g.periodMs())).toList());
                m.put("stamp_discontinuities", report.discontinuities().stream().map(d -> {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("episode_id", d.episodeId());
                    o.put("topic", d.topic());
                    o.put("index", d.index());
                    o.put("log_time_ns", d.logTimeNs());
                    o.put("at_s", d.atS());
                    o.put("jump_ms", d.jumpMs());
                    o.put("stamp_step_ms", d.stampStepMs());
                    o.put("direction", d.direction());
                    o.put("timeline", d.timeline());
                    return o;
                }).toList());
                if (plot != null) {
                    m.put("plot", plot.toString());
                }
                Json.print(System.out, m);
                return 0;
            }
            int w = Math.max(6, reports.stream().mapToInt(r -> r.stream().length()).max().orElse(6));
            System.out.printf(Locale.ROOT, "%-" + w + "s %8s %8s %9s %9s %9s %9s %9s%s%n", "stream", "frames", "matched",
                    "no value", "p50 ms", "p90 ms", "p99 ms", "max ms", truth == null ? "" : "  true p50  true p99");
            for (StreamReport r : reports) {
                String tr = r.trueP50Ms() == null ? "" : String.format(Locale.ROOT, " %9.3f %9.3f", r.trueP50Ms(), r.trueP99Ms());
                if (StreamReport.isMasterStamp(r.stream())) {
                    System.out.printf(Locale.ROOT, "%-" + w + "s %8d %8s %9s %9s %9s %9s %9s%s%n", r.stream(), r.frames(),
                            "", "", "", "", "", "", tr);
                    continue;
                }
                System.out.printf(Locale.ROOT, "%-" + w + "s %8d %8d %9d %9s %9s %9s %9s%s%n", r.stream(), r.frames(),
                        r.matched(), r.unmatched(), ms(r.p50Ms()), ms(r.p90Ms()), ms(r.p99Ms()), ms(r.maxMs()), tr);
            }
            if (truth != null) {
                System.out.println("true columns: |true time of the paired message - true capture time of the frame|;"
                        + " '(master stamp)': |frame stamp - true capture time|, the master camera's own clock error");
            }
            List<AlignmentReport.MasterGap> gaps = report.masterGaps();
            if (!gaps.isEmpty()) {
                System.out.printf(Locale.ROOT, "master gaps over %.1f periods (dropped master frames): %d, e.g. %s%n",
                        AlignmentReport.GAP_PERIODS, gaps.size(), String.join(", ", gaps.stream().limit(5).map(g ->
                                String.format(Locale.ROOT, "%s frame %d (+%.1f ms, period %.1f ms)", g.episodeId(),
                                        g.frameIndex(), g.stepMs(), g.periodMs())).toList()));
            }
            List<AlignmentReport.Discontinuity> ds = report.discontinuities();
            if (!ds.isEmpty()) {
                System.out.printf(Locale.ROOT, "stamp discontinuities (header stamps against log times): %d%n", ds.size());
                for (AlignmentReport.Discontinuity d : ds.subList(0, Math.min(ds.size(), 10))) {
                    System.out.printf(Locale.ROOT, "  %s %s message %d at %.3f s (log time %d): stamps %s %.3f s,"
                                    + " timeline %s%n", d.episodeId(), d.topic(), d.index(), d.atS(), d.logTimeNs(),
                            d.direction(), Math.abs(d.jumpMs()) / 1e3,
                            d.timeline().equals("log_time") ? "log times" : "stamps");
                }
                if (ds.size() > 10) {
                    System.out.println("  ... (all of them: --json, stamp_discontinuities)");
                }
            }
            System.out.println(frames + " frame(s)" + (episode == null ? "" : " of episode " + episode)
                    + (plot == null ? "" : "; timelines drawn to " + plot));
            return 0;
        }

        /** @return milliseconds with 3 decimals, or "-" when there is no value (no message matched) */
        static String ms(Double v) {
            return v == null ? "-" : String.format(Locale.ROOT, "%.3f", v);
        }
    }
}
