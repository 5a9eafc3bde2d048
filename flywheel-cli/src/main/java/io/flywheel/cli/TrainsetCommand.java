package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

import io.flywheel.curate.pool.MinedNeighboursFile;
import io.flywheel.curate.trainset.CompositionChart;
import io.flywheel.curate.trainset.EpisodeInfo;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetDiff;
import io.flywheel.curate.trainset.TrainsetEpisode;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.error.BadInputException;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel trainset build|show|list|diff}: tagged, reproducible training sets. */
@Command(name = "trainset", mixinStandardHelpOptions = true,
        description = "Training sets: committed as tagged table versions with their lineage.",
        subcommands = {TrainsetCommand.Build.class, TrainsetCommand.Show.class, TrainsetCommand.ListSets.class,
                TrainsetCommand.Diff.class})
final class TrainsetCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    @Command(name = "build", mixinStandardHelpOptions = true,
            description = "Build a training set: a seeded uniform sample of the deduplicated, QC-passing, successful"
                    + " episodes plus mined neighbours, expanded to samples at the training rate, committed and tagged.")
    static final class Build implements Callable<Integer> {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Option(names = "--tag", required = true, description = "tag of the new set, e.g. train-v2")
        String tag;

        @Option(names = "--ratio", defaultValue = "0.3", description = "share of the pool sampled uniformly (default ${DEFAULT-VALUE})")
        double ratio;

        @Option(names = "--seed", defaultValue = "0", description = "seed of the uniform sample (default ${DEFAULT-VALUE})")
        long seed;

        @Option(names = "--rate-hz", defaultValue = "10",
                description = "training frame rate in Hz; 0 = every frame (default ${DEFAULT-VALUE})")
        double rateHz;

        @Option(names = "--pass-only", description = "leave out episodes whose quality status is warn")
        boolean passOnly;

        @Option(names = "--mined", paramLabel = "FILE",
                description = "neighbours to add: the file written by `flywheel mine --out FILE` (an object with a list"
                        + " under 'neighbours' of objects with episode_id, query_episode_id, distance, rank; or such a"
                        + " list alone)")
        Path mined;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws IOException {
            boolean json = jsonOutput.enabled();
            TrainsetSpec.Builder b = TrainsetSpec.builder(tag).baseRatio(ratio).seed(seed).sampleRateHz(rateHz)
                    .allowWarn(!passOnly);
            Usage.require(spec, ratio >= 0 && ratio <= 1, "--ratio is a share of the pool in [0, 1], got " + ratio);
            Usage.require(spec, rateHz >= 0 && !Double.isInfinite(rateHz),
                    "--rate-hz must be >= 0 Hz (0: every frame), got " + rateHz);
            Usage.check(spec, "--tag", b::build); // the tag's form, before any file or lake is read
            if (mined != null) {
                MinedNeighboursFile.Contents m;
                try {
                    m = MinedNeighboursFile.read(mined);
                } catch (BadInputException e) {
                    throw new BadInputException("--mined " + e.getMessage(), e);
                }
                b.mined(m.neighbours());
                m.lineage().forEach(b::lineage);
            }
            b.lineage("command_line", "flywheel " + String.join(" ",
                    spec.commandLine().getParseResult().originalArgs()));
            TrainsetBuilder.Result r;
            long t0 = System.nanoTime();
            try (Lake l = lake.open()) {
                r = TrainsetBuilder.build(l, b.build(), json ? TrainsetBuilder.Progress.NONE : progress());
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            Trainset s = r.trainset();
            if (json) {
                Map<String, Object> m = summary(s);
                m.put("pool_size", r.poolSize());
                m.put("mined_outside_pool", r.minedOutsidePool());
                m.put("achieved_sample_rate_hz", Double.isFinite(r.achievedRateHz()) ? r.achievedRateHz() : null);
                m.put("samples_with_action", r.samplesWithAction());
                if (r.samplesWithAction() == 0) {
                    m.put("warning", "no sample has an action");
                }
                m.put("seconds", secs);
                Json.print(System.out, m);
            } else {
                System.out.printf(Locale.ROOT, "built training set '%s': %d episodes (%d uniform of a pool of %d, %d mined,"
                                + " %d of them both%s), %d samples at %s; trainset_samples v%d, trainset_episodes v%d; %.1f s%n",
                        s.tag(), s.episodeCount(), s.baseCount(), r.poolSize(), s.minedCount(),
                        s.baseCount() + s.minedCount() - s.episodeCount(),
                        r.minedOutsidePool() > 0 ? ", " + r.minedOutsidePool() + " mined left out: not in the pool" : "",
                        s.sampleCount(), rateLabel(rateHz, r.achievedRateHz()), s.samplesVersion(),
                        s.episodesVersion(), secs);
                if (r.samplesWithAction() == 0) {
                    System.err.println("warning: no sample of '" + s.tag() + "' has an action (the frames' action"
                            + " column is empty): a policy cannot be trained on it; check the topics' roles at"
                            + " ingest (a command or leader topic taken as state) or name the action in the profile");
                }
            }
            return 0;
        }

        /** @return e.g. "10 Hz" when the frames allow it, "1.00 Hz (10.0 Hz asked; the frames are sparser)" */
        static String rateLabel(double asked, double achieved) {
            if (!Double.isFinite(achieved)) {
                return asked > 0 ? asked + " Hz asked" : "every frame";
            }
            if (asked > 0 && achieved < asked * 0.95) {
                return String.format(Locale.ROOT, "%.3g Hz (%s Hz asked; the frames are sparser)", achieved, asked);
            }
            return String.format(Locale.ROOT, "%.3g Hz", achieved) + (asked > 0 ? "" : " (every frame)");
        }

        private static TrainsetBuilder.Progress progress() {
            long start = System.nanoTime();
            return (done, total) -> {
                double secs = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
                double rate = done / secs;
                System.err.printf(Locale.ROOT, "trainset: %d/%d episodes expanded, %.1f episodes/s, ETA %.0fs%n", done,
                        total, rate, rate > 0 ? (total - done) / rate : 0);
            };
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "A training set's counts, lineage and episodes.")
    static final class Show implements Callable<Integer> {
        @Mixin
        LakeLocation lake;

        @Parameters(index = "1", paramLabel = "TAG", description = "training-set tag")
        String tag;

        @Option(names = "--episodes", description = "also list the episodes and why each is in")
        boolean episodes;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() {
            boolean json = jsonOutput.enabled();
            try (Lake l = lake.open()) {
                Trainset s = Trainsets.open(l, tag);
                List<TrainsetEpisode> eps = episodes || json ? Trainsets.episodes(l, s) : List.of();
                if (json) {
                    Map<String, Object> m = summary(s);
                    List<Map<String, Object>> list = new ArrayList<>();
                    for (TrainsetEpisode e : eps) {
                        Map<String, Object> x = new LinkedHashMap<>();
                        x.put("episode_index", e.episodeIndex());
                        x.put("episode_id", e.info().episodeId());
                        x.put("in_base", e.inBase());
                        x.put("mined_by", e.minedBy().stream().map(q -> Map.of("query_episode_id", q.queryEpisodeId(),
                                "distance", q.distance(), "rank", q.rank())).toList());
                        x.put("samples", e.sampleCount());
                        list.add(x);
                    }
                    m.put("episodes", list);
                    Json.print(System.out, m);
                    return 0;
                }
                System.out.printf(Locale.ROOT, "training set '%s', committed %s%n", s.tag(),
                        Instant.ofEpochMilli(s.createdAtNs() / 1_000_000L));
                System.out.printf(Locale.ROOT, "  %d episodes (%d uniform, %d mined, %d of them both), %d samples%n",
                        s.episodeCount(), s.baseCount(), s.minedCount(), s.baseCount() + s.minedCount() - s.episodeCount(),
                        s.sampleCount());
                System.out.printf(Locale.ROOT, "  tables: trainset_samples v%d, trainset_episodes v%d (both tagged '%s')%n",
                        s.samplesVersion(), s.episodesVersion(), s.tag());
                System.out.println("  lineage:");
                s.lineage().forEach((k, v) -> System.out.println("    " + k + ": " + v));
                for (TrainsetEpisode e : eps) {
                    String why = e.inBase() ? "uniform" : "";
                    for (MinedEpisode q : e.minedBy()) {
                        why += (why.isEmpty() ? "" : ", ") + String.format(Locale.ROOT, "mined for %s (#%d, d=%.4f)",
                                q.queryEpisodeId(), q.rank(), q.distance());
                    }
                    System.out.printf(Locale.ROOT, "  %4d  %-28s %5d samples  %s%n", e.episodeIndex(), e.info().episodeId(),
                            e.sampleCount(), why);
                }
            }
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The training sets of a lake, oldest first.")
    static final class ListSets implements Callable<Integer> {
        @Mixin
        LakeLocation lake;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() {
            boolean json = jsonOutput.enabled();
            try (Lake l = lake.open()) {
                List<Trainset> all = Trainsets.list(l);
                if (json) {
                    Json.print(System.out, Map.of("trainsets", all.stream().map(TrainsetCommand::summary).toList()));
                    return 0;
                }
                for (Trainset s : all) {
                    System.out.printf(Locale.ROOT, "%-16s %s  %6d episodes (%d uniform, %d mined)  %8d samples%n", s.tag(),
                            Instant.ofEpochMilli(s.createdAtNs() / 1_000_000L), s.episodeCount(), s.baseCount(),
                            s.minedCount(), s.sampleCount());
                }
                System.out.println(all.size() + " training set(s)");
            }
            return 0;
        }
    }

    @Command(name = "diff", mixinStandardHelpOptions = true,
            description = "Episodes added and removed between two sets, composition by scene, object, task and robot,"
                    + " the hard-case share, and a chart.")
    static final class Diff implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation lake;

        @Parameters(index = "1", paramLabel = "FROM", description = "older tag")
        String from;

        @Parameters(index = "2", paramLabel = "TO", description = "newer tag")
        String to;

        @Option(names = "--hard-case", paramLabel = "FIELD=V1,V2",
                description = "which episodes are hard cases, e.g. object=glass_cup,steel_bowl (field: scene, object,"
                        + " task or robot); default: the objects of the failure episodes the newer set was mined for")
        String hardCase;

        @Option(names = "--chart", paramLabel = "PNG", description = "where to draw the composition chart"
                + " (default: trainset-diff-FROM-TO.png in the current folder)")
        Path chart;

        @Option(names = "--no-chart", description = "do not draw the chart")
        boolean noChart;

        @Mixin
        JsonOutput jsonOutput;

        @Override
        public Integer call() throws IOException {
            boolean json = jsonOutput.enabled();
            Usage.require(spec, !(noChart && chart != null), "--chart and --no-chart exclude each other");
            String hardField = null;
            Set<String> hardValues = null;
            if (hardCase != null) {
                int eq = hardCase.indexOf('=');
                Usage.require(spec, eq > 0 && eq < hardCase.length() - 1,
                        "--hard-case '" + hardCase + "': expected FIELD=V1,V2");
                hardField = hardCase.substring(0, eq);
                hardValues = new TreeSet<>(List.of(hardCase.substring(eq + 1).split(",")));
                for (String v : hardValues) {
                    Usage.require(spec, !v.contains("=") && !v.isEmpty(), "--hard-case '" + hardCase + "': one FIELD="
                            + " followed by comma-separated values, e.g. object=glass_cup,steel_tumbler; got the value '"
                            + v + "'");
                }
                String f = hardField;
                Usage.check(spec, "--hard-case", () -> new EpisodeInfo("", "", "", "", "", "", "", null).value(f));
            }
            TrainsetDiff d;
            List<String> unmatched;
            try (Lake l = lake.open()) {
                String field;
                Set<String> values;
                if (hardCase != null) {
                    field = hardField;
                    values = hardValues;
                } else {
                    field = "object";
                    values = TrainsetDiff.queryObjects(l, to);
                }
                Predicate<EpisodeInfo> hard = e -> values.contains(e.value(field));
                String rule = values.isEmpty() ? "no hard-case rule: the newer set has no mining queries with an object"
                        : field + " in " + values;
                d = TrainsetDiff.of(l, from, to, hard, rule);
                // a hard-case value in neither set is most likely misspelt: say so rather than report 0% silently
                Map<String, long[]> seen = d.composition().getOrDefault(field, Map.of());
                unmatched = hardCase == null ? List.of() : values.stream().filter(v -> !seen.containsKey(v)).toList();
                if (!unmatched.isEmpty()) {
                    System.err.println("note: --hard-case " + field + " value(s) " + String.join(", ", unmatched)
                            + " match no episode of " + from + " or " + to);
                }
            }
            Path png = noChart ? null : chart != null ? chart : Path.of("trainset-diff-" + from + "-" + to + ".png");
            if (png != null) {
                CompositionChart.write(d, png);
            }
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("from", d.from());
                m.put("to", d.to());
                m.put("added", d.added());
                m.put("removed", d.removed());
                m.put("kept", d.kept());
                m.put("from_episodes", d.fromCount());
                m.put("to_episodes", d.toCount());
                m.put("hard_case_rule", d.hardCaseRule());
                m.put("hard_share_from", d.hardShareFrom());
                m.put("hard_share_to", d.hardShareTo());
                m.put("hard_case_values_unmatched", unmatched);
                Map<String, Object> comp = new LinkedHashMap<>();
                d.composition().forEach((dim, vals) -> {
                    Map<String, Object> v = new LinkedHashMap<>();
                    vals.forEach((k, c) -> v.put(k, Map.of("from", c[0], "to", c[1])));
                    comp.put(dim, v);
                });
                m.put("composition", comp);
                m.put("chart", png == null ? null : png.toAbsolutePath().toString());
                Json.print(System.out, m);
                return 0;
            }
            System.out.printf(Locale.ROOT, "%s (%d episodes) -> %s (%d episodes): %d added, %d removed, %d kept%n",
                    d.from(), d.fromCount(), d.to(), d.toCount(), d.added().size(), d.removed().size(), d.kept());
            for (String dim : TrainsetDiff.DIMENSIONS) {
                System.out.println(dim + ":");
                d.composition().get(dim).forEach((k, c) -> System.out.printf(Locale.ROOT, "  %-40s %5d (%5.1f%%) -> %5d (%5.1f%%)%n",
                        k.isEmpty() ? "(unknown)" : k, c[0], share(c[0], d.fromCount()), c[1], share(c[1], d.toCount())));
            }
            System.out.printf(Locale.ROOT, "hard-case share (%s): %.1f%% -> %.1f%%%n", d.hardCaseRule(),
                    100 * d.hardShareFrom(), 100 * d.hardShareTo());
            if (png != null) {
                System.out.println("chart: " + png.toAbsolutePath());
            }
            return 0;
        }

        private static double share(long n, int total) {
            return total == 0 ? 0 : 100.0 * n / total;
        }
    }

    static Map<String, Object> summary(Trainset s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tag", s.tag());
        m.put("created_at_ns", s.createdAtNs());
        m.put("episodes", s.episodeCount());
        m.put("samples", s.sampleCount());
        m.put("base_episodes", s.baseCount());
        m.put("mined_episodes", s.minedCount());
        m.put("samples_version", s.samplesVersion());
        m.put("episodes_version", s.episodesVersion());
        m.put("lineage", s.lineage());
        return m;
    }
}
