package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.curate.DedupSweep;
import io.flywheel.curate.pool.ContactSheet;
import io.flywheel.curate.pool.DedupJob;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel dedup LAKE} and {@code flywheel dedup sweep LAKE}: near-duplicate episodes and frames. */
@Command(name = "dedup", mixinStandardHelpOptions = true,
        description = "Group near-duplicate episodes (episode embeddings within a cosine distance of each other)"
                + " and near-duplicate frames (master-camera pHash within a Hamming distance of each other: every two"
                + " members of a group within the threshold, groups never chain); one representative per"
                + " group stays in the mining pool and training sets. Nothing is deleted.",
        subcommands = {DedupCommand.Sweep.class})
final class DedupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    // optional here so that `dedup sweep LAKE` parses (picocli checks a parent's required parameters before its
    // subcommand's); `dedup` itself requires it (checked in call). Hence no LakeLocation: the same parameter and
    // StorageOptions, spelt out.
    @Parameters(index = "0", arity = "0..1", paramLabel = "LAKE", description = "lake folder or s3://bucket/prefix")
    String lake;

    @Mixin
    StorageOptions storage;

    @Option(names = "--episode-threshold", defaultValue = "0.0005",
            description = "cosine distance for episodes (default ${DEFAULT-VALUE}; calibrate with `dedup sweep`)")
    double episodeThreshold;

    @Option(names = "--frame-threshold", defaultValue = "4",
            description = "Hamming distance in bits for frames; -1 skips frames (default ${DEFAULT-VALUE})")
    int frameThreshold;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        Usage.require(spec, lake != null, "Missing required parameter: 'LAKE'");
        Usage.require(spec, episodeThreshold >= 0 && episodeThreshold <= 2,
                "--episode-threshold is a cosine distance in [0, 2], got " + episodeThreshold);
        Usage.require(spec, frameThreshold >= -1 && frameThreshold <= 63,
                "--frame-threshold is a Hamming distance in [0, 63] bits (-1: skip frames), got " + frameThreshold);
        DedupJob.Options o = new DedupJob.Options(episodeThreshold, frameThreshold);
        long t0 = System.nanoTime();
        DedupJob.Result r;
        try (Lake l = Lake.open(lake, storage.lakeOptions())) {
            r = DedupJob.run(l, o);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (json.enabled()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("episodes", r.episodes());
            m.put("episode_groups", r.episodeGroups());
            m.put("episodes_removed", r.episodesRemoved());
            m.put("episode_threshold", episodeThreshold);
            m.put("frames", r.frames());
            m.put("frame_groups", r.frameGroups());
            m.put("frames_removed", r.framesRemoved());
            m.put("frame_threshold", frameThreshold);
            m.put("embedding_model", r.model());
            m.put("episode_groups_version", r.episodeGroupsVersion());
            m.put("frame_groups_version", r.frameGroupsVersion());
            m.put("seconds", secs);
            Json.print(System.out, m);
            return 0;
        }
        System.out.printf(Locale.ROOT, "episodes: %d -> %d kept (%d near-duplicates within cosine distance %.4f, model %s)%n",
                r.episodes(), r.episodeGroups(), r.episodesRemoved(), episodeThreshold, r.model());
        if (frameThreshold >= 0) {
            System.out.printf(Locale.ROOT, "frames (master camera): %d -> %d kept (%d near-duplicates within %d bits)%n",
                    r.frames(), r.frameGroups(), r.framesRemoved(), frameThreshold);
        }
        System.out.printf(Locale.ROOT, "episode_groups at v%d%s (a re-run with the same result commits nothing); %.1f s%n",
                r.episodeGroupsVersion(),
                frameThreshold >= 0 ? ", frame_groups v" + r.frameGroupsVersion() : "", secs);
        return 0;
    }

    @Command(name = "sweep", mixinStandardHelpOptions = true,
            description = "For a range of thresholds: groups and remaining pool size, plus a contact sheet (HTML and PNG)"
                    + " of the pairs merged just inside each threshold, to pick the threshold by eye.")
    static final class Sweep implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Option(names = "--episode-thresholds", split = ",", defaultValue = "0.0002,0.0005,0.001,0.002,0.005,0.01,0.02,0.05",
                description = "cosine distances (default ${DEFAULT-VALUE}: around the dedup default 0.0005; max-pooled"
                        + " (MAC) models put near copies nearer 0.001)")
        double[] episodeThresholds;

        @Option(names = "--frame-thresholds", split = ",", defaultValue = "0,2,4,6,8,12",
                description = "Hamming distances in bits (default ${DEFAULT-VALUE})")
        int[] frameThresholds;

        @Option(names = "--pairs", defaultValue = "6", description = "pairs shown per threshold (default ${DEFAULT-VALUE})")
        int pairs;

        @Option(names = "--out", defaultValue = "dedup-sweep",
                description = "folder for sweep.html and sweep.png (default ${DEFAULT-VALUE})")
        Path out;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() throws IOException {
            for (double t : episodeThresholds) {
                Usage.require(spec, t >= 0 && t <= 2, "--episode-thresholds: " + t + " is not a cosine distance in [0, 2]");
            }
            for (int t : frameThresholds) {
                Usage.require(spec, t >= 0 && t <= 63, "--frame-thresholds: " + t + " is not a Hamming distance in [0, 63]"
                        + " bits");
            }
            Usage.require(spec, episodeThresholds.length > 0 && frameThresholds.length > 0,
                    "--episode-thresholds and --frame-thresholds need at least one value each");
            Usage.require(spec, pairs >= 0, "--pairs must be >= 0, got " + pairs);
            ContactSheet.Report report;
            try (Lake l = lake.open()) {
                report = ContactSheet.sweep(l, episodeThresholds, frameThresholds, pairs, out);
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("episodes", steps(report.episodes()));
                m.put("frames", steps(report.frames()));
                m.put("html", report.html().toAbsolutePath().toString());
                m.put("png", report.pngs().get(0).toAbsolutePath().toString());
                m.put("png_pages", report.pngs().stream().map(p -> p.toAbsolutePath().toString()).toList());
                Json.print(System.out, m);
                return 0;
            }
            System.out.println("episodes (cosine distance): threshold -> groups (= pool size), removed, pairs newly merged");
            for (DedupSweep.Step s : report.episodes()) {
                System.out.printf(Locale.ROOT, "  %8.4f -> %6d kept, %6d removed, %6d new pairs%n", s.threshold(), s.groups(),
                        s.removed(), s.justInsideTotal());
            }
            System.out.println("frames, master camera (Hamming bits): threshold -> groups, removed, pairs newly merged");
            for (DedupSweep.Step s : report.frames()) {
                System.out.printf(Locale.ROOT, "  %8.0f -> %6d kept, %6d removed, %6d new pairs%n", s.threshold(), s.groups(),
                        s.removed(), s.justInsideTotal());
            }
            System.out.println("contact sheet: " + report.html().toAbsolutePath() + " and " + report.pngs().get(0)
                    .toAbsolutePath() + (report.pngs().size() > 1 ? " (" + report.pngs().size() + " pages)" : ""));
            return 0;
        }

        private static List<Map<String, Object>> steps(List<DedupSweep.Step> steps) {
            List<Map<String, Object>> out = new ArrayList<>();
            for (DedupSweep.Step s : steps) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("threshold", s.threshold());
                m.put("items", s.items());
                m.put("groups", s.groups());
                m.put("removed", s.removed());
                m.put("new_pairs", s.justInsideTotal());
                out.add(m);
            }
            return out;
        }
    }
}
