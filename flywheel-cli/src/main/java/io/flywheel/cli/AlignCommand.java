package io.flywheel.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.align.TimelinePlot;
import io.flywheel.ingest.Episode;
import io.flywheel.ingest.Ingest;
import io.flywheel.ingest.Recording;
import io.flywheel.ingest.StreamData;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.StreamMatch;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code flywheel align report LAKE}: how well every stream lines up with the master clock. */
@Command(name = "align", mixinStandardHelpOptions = true, description = "Alignment of streams to the master clock.",
        subcommands = {AlignCommand.Report.class})
final class AlignCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /**
     * Residual distribution of one stream: |matched message time - frame time|. With a simulator's
     * ground truth, also the true error of the same pairings, |true time of the message - true
     * capture time of the frame|, which an unsynced clock hides from the observed residuals.
     */
    record StreamReport(String stream, long frames, long matched, long unmatched, Double p50Ms, Double p90Ms,
                        Double p99Ms, Double maxMs, Double trueP50Ms, Double trueP99Ms) {}

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

        @Option(names = "--window-ms", description = "time span drawn, ms (default: ${DEFAULT-VALUE})")
        double windowMs = 500;

        @Option(names = "--truth", paramLabel = "GROUND_TRUTH_JSON", description = "a simulated fleet's"
                + " ground_truth.json: also show the true error of every pairing next to the observed residual")
        Path truth;

        @Mixin
        JsonOutput jsonOutput;

        private Truth groundTruth;
        private final Map<String, EpisodeRow> episodes = new LinkedHashMap<>();

        @Override
        public Integer call() throws Exception {
            Usage.require(spec, plot == null || episode != null, "--plot needs --episode: it draws one episode");
            Usage.require(spec, stream == null || plot != null, "--stream needs --plot: it names the stream drawn");
            Usage.require(spec, windowMs > 0 && !Double.isInfinite(windowMs),
                    "--window-ms must be a positive number of ms, got " + windowMs);
            String lake = location.uri();
            boolean json = jsonOutput.enabled();
            if (truth != null) {
                groundTruth = Truth.load(truth);
            }
            List<FrameRow> frames;
            EpisodeRow ep = null;
            try (Lake l = location.open(); LakeTable t = l.table("frames")) {
                ScanRequest.Builder b = ScanRequest.builder();
                if (episode != null) {
                    b.filter("episode_id = '" + episode.replace("'", "''") + "'");
                }
                frames = t.frames(b.build());
                if (truth != null) {
                    try (LakeTable e = l.table("episodes")) {
                        for (EpisodeRow r : e.episodes(ScanRequest.all())) {
                            episodes.put(r.episodeId(), r);
                        }
                    }
                }
                if (episode != null) {
                    try (LakeTable e = l.table("episodes")) {
                        List<EpisodeRow> eps = e.episodes(ScanRequest.builder()
                                .filter("episode_id = '" + episode.replace("'", "''") + "'").build());
                        if (eps.isEmpty()) {
                            throw new NotFoundException("no episode '" + episode + "' in " + lake
                                    + "; `flywheel qc report " + lake + "` lists the episode ids");
                        }
                        ep = eps.get(0);
                    }
                }
            }
            Map<String, List<Long>> residuals = new LinkedHashMap<>();
            Map<String, List<Long>> trueErrors = new LinkedHashMap<>();
            Map<String, long[]> counts = new LinkedHashMap<>();
            for (FrameRow f : frames) {
                Truth.Episode te = groundTruth == null ? null : groundTruth.episode(episodes.get(f.episodeId()));
                EpisodeRow er = episodes.get(f.episodeId());
                Long frameTrue = te == null ? null : te.trueTime(er.masterTopic(), f.timestampNs());
                if (frameTrue != null) {
                    trueErrors.computeIfAbsent(er.masterTopic() + " (master stamp)", k -> new ArrayList<>())
                            .add(Math.abs(f.timestampNs() - frameTrue));
                }
                for (StreamMatch m : f.streams()) {
                    long[] c = counts.computeIfAbsent(m.stream(), k -> new long[2]);
                    c[m.matched() ? 0 : 1]++;
                    if (m.matched() && m.residualNs() != null) {
                        residuals.computeIfAbsent(m.stream(), k -> new ArrayList<>()).add(Math.abs(m.residualNs()));
                        Long msgTrue = te == null ? null : te.trueTime(m.stream(), f.timestampNs() + m.residualNs());
                        if (frameTrue != null && msgTrue != null) {
                            trueErrors.computeIfAbsent(m.stream(), k -> new ArrayList<>()).add(Math.abs(msgTrue - frameTrue));
                        }
                    }
                }
            }
            List<StreamReport> reports = new ArrayList<>();
            for (Map.Entry<String, long[]> e : counts.entrySet()) {
                long[] r = residuals.getOrDefault(e.getKey(), List.of()).stream().mapToLong(Long::longValue).sorted()
                        .toArray();
                long[] te = trueErrors.getOrDefault(e.getKey(), List.of()).stream().mapToLong(Long::longValue).sorted()
                        .toArray();
                reports.add(new StreamReport(e.getKey(), e.getValue()[0] + e.getValue()[1], e.getValue()[0],
                        e.getValue()[1], pct(r, 50), pct(r, 90), pct(r, 99), r.length == 0 ? null : r[r.length - 1] / 1e6,
                        te.length == 0 ? null : pct(te, 50), te.length == 0 ? null : pct(te, 99)));
            }
            for (Map.Entry<String, List<Long>> e : trueErrors.entrySet()) {
                if (e.getKey().endsWith("(master stamp)")) {
                    long[] te = e.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
                    reports.add(new StreamReport(e.getKey(), te.length, te.length, 0, null, null, null, null, pct(te, 50),
                            pct(te, 99)));
                }
            }
            if (plot != null) {
                drawPlot(ep, frames);
            }
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("frames", frames.size());
                m.put("streams", reports);
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
                if (r.stream().endsWith("(master stamp)")) {
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
            System.out.println(frames.size() + " frame(s)" + (episode == null ? "" : " of episode " + episode)
                    + (plot == null ? "" : "; timelines drawn to " + plot));
            return 0;
        }

        /** @return milliseconds with 3 decimals, or "-" when there is no value (no message matched) */
        static String ms(Double v) {
            return v == null ? "-" : String.format(Locale.ROOT, "%.3f", v);
        }

        /** @return the p-th percentile of {@code sorted} (nearest rank), ms; null when empty */
        private static Double pct(long[] sorted, int p) {
            if (sorted.length == 0) {
                return null;
            }
            int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
        }

        /** @return the streams aligned to the master in the frames, in the order the first frames name them */
        private static List<String> aligned(List<FrameRow> frames) {
            java.util.Set<String> out = new java.util.LinkedHashSet<>();
            for (FrameRow f : frames) {
                f.streams().forEach(m -> out.add(m.stream()));
            }
            return List.copyOf(out);
        }

        /** Re-reads the episode's raw files for the stream's message times, then draws. */
        private void drawPlot(EpisodeRow ep, List<FrameRow> frames) throws Exception {
            if (frames.isEmpty()) {
                throw new BadInputException("episode " + episode + " has no frames to draw");
            }
            List<String> streams = aligned(frames);
            if (streams.isEmpty()) {
                throw new BadInputException("episode " + episode + " has only its master stream: nothing to pair");
            }
            if (stream != null && !streams.contains(stream)) {
                throw new NotFoundException("episode " + episode + " has no stream '" + stream + "' aligned to "
                        + ep.masterTopic() + "; its streams: " + String.join(", ", streams));
            }
            String topic = stream != null ? stream : streams.get(0);
            Map<?, ?> meta = ep.metadataJson() == null ? Map.of() : Json.MAPPER.readValue(ep.metadataJson(), Map.class);
            List<?> files = (List<?>) meta.get("source_files");
            StreamData s = null;
            for (Object f : files == null ? List.of() : files) {
                Recording rec = Ingest.read(Path.of(java.net.URI.create(f.toString()).getScheme() == null
                        ? f.toString() : java.net.URI.create(f.toString()).getPath()));
                for (Episode e : rec.episodes()) {
                    if (e.episodeId().equals(ep.episodeId())) {
                        s = e.stream(topic).orElse(null);
                    }
                }
                break;
            }
            if (s == null) {
                throw new NotFoundException("stream '" + topic + "' not found in the raw files of " + episode
                        + " (" + (files == null ? "no source_files in its metadata" : files) + ")");
            }
            long[] st = s.timestamps().resolved().usableTimesNs();
            Arrays.sort(st);
            long[] ft = frames.stream().mapToLong(FrameRow::timestampNs).toArray();
            int[] match = new int[ft.length];
            for (int i = 0; i < ft.length; i++) {
                match[i] = -1;
                for (StreamMatch m : frames.get(i).streams()) {
                    if (m.stream().equals(topic) && m.matched() && m.residualNs() != null) {
                        int k = Arrays.binarySearch(st, ft[i] + m.residualNs());
                        match[i] = k >= 0 ? k : -1;
                    }
                }
            }
            long[] trueFrames = null;
            Truth.Episode te = groundTruth == null ? null : groundTruth.episode(ep);
            if (te != null) {
                trueFrames = new long[ft.length];
                for (int i = 0; i < ft.length; i++) {
                    Long t = te.trueTime(ep.masterTopic(), ft[i]);
                    trueFrames[i] = t == null ? ft[i] : t;
                }
            }
            TimelinePlot.render(new TimelinePlot.Spec("episode " + episode + ": " + topic + " against " + ep.masterTopic(),
                    ep.masterTopic(), ft, topic, st, match, trueFrames, ft[0] - (trueFrames == null ? 0 : 20_000_000L),
                    Math.round(windowMs * 1e6)), plot);
        }
    }
}
