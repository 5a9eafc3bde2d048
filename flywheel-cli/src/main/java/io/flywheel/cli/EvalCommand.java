package io.flywheel.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.eval.EvalComparison;
import io.flywheel.eval.EvalReport;
import io.flywheel.eval.Evaluations;
import io.flywheel.eval.Heatmap;
import io.flywheel.eval.RecordedRollouts;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalRunRow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel eval ...}: evaluation runs: ingest results, report success rates by cell, compare two runs. */
@Command(name = "eval", mixinStandardHelpOptions = true, description = "Evaluation runs: ingest results, report"
        + " success rates by task, object, lighting and robot, compare two runs.",
        subcommands = {EvalCommand.Ingest.class, EvalCommand.Report.class, EvalCommand.Compare.class,
                EvalCommand.Runs.class})
final class EvalCommand implements Runnable {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec);
    }

    static final String DEFAULT_BY = "task,object,lighting,robot";

    /** {@code flywheel eval ingest LAKE FILE}. */
    @Command(name = "ingest", mixinStandardHelpOptions = true, description = "Read evaluation results (CSV, JSON or"
            + " Parquet: run_id, policy_version, episode_id, task, object, lighting, robot_id, success, duration_s,"
            + " failure_mode, intervention, scene) and commit their runs, policies and rollouts as one lake commit;"
            + " or ingest eval episodes recorded as MCAP (a .mcap file or a folder of them) with their outcome in a"
            + " flywheel.eval Metadata record: each recording and its rollout row in one lake commit.")
    static final class Ingest implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Parameters(index = "1", paramLabel = "FILE", description = "results file: .csv, .json, .jsonl or .parquet;"
                + " or recorded eval episodes: a .mcap file or a folder of them")
        Path file;

        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Option(names = "--run", paramLabel = "ID", description = "run id of every row (instead of a run_id column)")
        String run;

        @Option(names = "--policy", paramLabel = "VERSION", description = "policy version of every run (instead of a"
                + " policy_version column)")
        String policy;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() throws java.io.IOException {
            if (java.nio.file.Files.isDirectory(file) || file.getFileName().toString().toLowerCase(Locale.ROOT)
                    .endsWith(".mcap")) {
                Usage.require(spec, run == null && policy == null, "--run and --policy apply to results files; a"
                        + " recorded eval episode names its run and policy in its flywheel.eval metadata");
                return recordings();
            }
            Evaluations.IngestSummary s;
            try (Lake lake = at.open()) {
                s = Evaluations.ingest(lake, file, run, policy, null);
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("file", file);
                m.put("lake_commit", s.lakeCommit());
                m.put("rows", s.rows());
                m.put("minable", s.minable());
                m.put("new_policies", s.newPolicies());
                List<Map<String, Object>> runs = new ArrayList<>();
                for (Evaluations.RunSummary r : s.runs()) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("run_id", r.runId());
                    x.put("policy_version", r.policyVersion());
                    x.put("episodes", r.episodes());
                    x.put("successes", r.successes());
                    x.put("minable", r.minable());
                    runs.add(x);
                }
                m.put("runs", runs);
                Json.print(System.out, m);
            } else {
                for (Evaluations.RunSummary r : s.runs()) {
                    System.out.printf(Locale.ROOT, "run %s (policy %s): %d rollouts, %d succeeded (%.1f%%); %d with a"
                                    + " recording in the lake (minable), %d not%n", r.runId(), r.policyVersion(),
                            r.episodes(), r.successes(), 100.0 * r.successes() / r.episodes(), r.minable(),
                            r.episodes() - r.minable());
                }
                System.out.println("ingested " + s.rows() + " rollout(s) of " + s.runs().size() + " run(s) from " + file
                        + " in lake commit " + s.lakeCommit() + (s.newPolicies().isEmpty() ? "" : "; new policies: "
                        + String.join(", ", s.newPolicies())));
            }
            return 0;
        }

        /** Recorded eval episodes ({@link RecordedRollouts}): exit 1 when a recording could not be ingested. */
        private int recordings() throws java.io.IOException {
            RecordedRollouts.Summary s;
            java.io.PrintWriter err = spec.commandLine().getErr();
            try (Lake lake = at.open()) {
                s = RecordedRollouts.ingest(lake, file, json.enabled() ? line -> { } : line -> {
                    err.println("eval ingest: " + line);
                    err.flush();
                });
            }
            IngestJob.Result r = s.ingest();
            boolean ok = r.failed().isEmpty();
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ok", ok);
                m.put("input", file);
                m.put("files", s.files().size());
                m.put("recordings_ingested", r.recordings().stream().filter(x -> !x.skipped()).count());
                m.put("recordings_skipped", r.skipped());
                m.put("rows", s.rowsAdded());
                m.put("rows_present", s.rowsPresent());
                m.put("new_policies", s.newPolicies());
                List<Map<String, Object>> runs = new ArrayList<>();
                for (Evaluations.RunSummary x : s.runs()) {
                    Map<String, Object> y = new LinkedHashMap<>();
                    y.put("run_id", x.runId());
                    y.put("policy_version", x.policyVersion());
                    y.put("episodes", x.episodes());
                    y.put("successes", x.successes());
                    y.put("minable", x.minable());
                    runs.add(y);
                }
                m.put("runs", runs);
                Map<String, String> ids = new LinkedHashMap<>();
                s.episodeIds().forEach((f, id) -> ids.put(f.toString(), id));
                m.put("episode_ids", ids);
                List<Map<String, Object>> failed = new ArrayList<>();
                for (IngestJob.Failure f : r.failed()) {
                    failed.add(Map.of("input", f.input(), "kind", f.kind(), "message", IngestCommand.failureLine(f)));
                    err.println("flywheel eval ingest: failed: " + IngestCommand.failureLine(f)); // stderr, as README
                }
                err.flush();
                m.put("failed", failed);
                Json.print(System.out, m);
            } else {
                for (Evaluations.RunSummary x : s.runs()) {
                    System.out.printf(Locale.ROOT, "run %s (policy %s): %d recorded rollouts, %d succeeded (%.1f%%);"
                                    + " %d linked to their lake episodes%n", x.runId(), x.policyVersion(), x.episodes(),
                            x.successes(), 100.0 * x.successes() / x.episodes(), x.minable());
                }
                System.out.println("ingested " + r.episodes() + " episode(s) (" + r.skipped() + " already in the lake) and "
                        + s.rowsAdded() + " eval row(s) (" + s.rowsPresent() + " already there) from " + s.files().size()
                        + " MCAP file(s) in " + file + (s.newPolicies().isEmpty() ? "" : "; new policies: "
                        + String.join(", ", s.newPolicies())));
                for (IngestJob.Failure f : r.failed()) {
                    err.println("failed: " + IngestCommand.failureLine(f));
                }
                err.flush();
            }
            return ok ? 0 : 1;
        }
    }

    /** {@code flywheel eval runs LAKE}. */
    @Command(name = "runs", mixinStandardHelpOptions = true, description = "The evaluation runs in the lake.")
    static final class Runs implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            List<EvalRunRow> runs;
            try (Lake lake = at.open()) {
                runs = Evaluations.runs(lake);
            }
            if (json.enabled()) {
                List<Map<String, Object>> out = new ArrayList<>();
                for (EvalRunRow r : runs) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("run_id", r.runId());
                    x.put("policy_version", r.policyVersion());
                    x.put("started_at", java.time.Instant.ofEpochSecond(0, r.startedAtNs()).toString());
                    x.put("episodes", r.episodeCount());
                    x.put("config", r.configJson());
                    out.add(x);
                }
                Json.print(System.out, Map.of("runs", out));
            } else {
                for (EvalRunRow r : runs) {
                    System.out.println(r.runId() + "  policy " + r.policyVersion() + "  " + r.episodeCount()
                            + " rollouts  started " + java.time.Instant.ofEpochSecond(0, r.startedAtNs()));
                }
                System.out.println(runs.size() + " eval run(s) in " + at.uri());
            }
            return 0;
        }
    }

    /** {@code flywheel eval report LAKE --run R --by ...}. */
    @Command(name = "report", mixinStandardHelpOptions = true, description = "Success rate per cell (one value of"
            + " each --by dimension) with its Wilson 95%% interval, rollouts, mean duration, interventions and failure"
            + " modes; optionally a heatmap PNG.")
    static final class Report implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation at;

        @Option(names = "--run", required = true, paramLabel = "RUN", description = "the run")
        String run;

        @Option(names = "--by", paramLabel = "DIMS", description = "dimensions, comma separated, of task, object,"
                + " lighting, scene, robot (default: ${DEFAULT-VALUE})")
        String by = DEFAULT_BY;

        @Option(names = "--heatmap", paramLabel = "PNG", description = "also draw the cells as a heatmap (rows: all"
                + " dimensions but the last; columns: the last)")
        Path heatmap;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() throws Exception {
            EvalReport r;
            try (Lake lake = at.open()) {
                r = EvalReport.of(lake, run, split(by));
            }
            if (heatmap != null) {
                Heatmap.write(r, heatmap);
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("run_id", r.run().runId());
                m.put("policy_version", r.run().policyVersion());
                m.put("dimensions", r.dimensions());
                m.put("total", cellJson(r.total()));
                m.put("cells", r.cells().stream().map(EvalCommand::cellJson).toList());
                m.put("heatmap", heatmap);
                Json.print(System.out, m);
                return 0;
            }
            List<String> header = new ArrayList<>(r.dimensions());
            header.addAll(List.of("n", "ok", "rate", "95% CI", "mean s", "interv", "failure modes"));
            List<List<String>> rows = new ArrayList<>();
            for (EvalReport.Cell c : r.cells()) {
                List<String> row = new ArrayList<>(c.key().values());
                row.addAll(cellText(c));
                rows.add(row);
            }
            TextTable.print(System.out, header, rows);
            EvalReport.Cell t = r.total();
            System.out.printf(Locale.ROOT, "run %s (policy %s): %d cell(s), %d rollouts, success %.3f [%.3f, %.3f]"
                            + " (Wilson 95%%), mean %s s, %d intervention(s); failure modes: %s%s%n", r.run().runId(),
                    r.run().policyVersion(), r.cells().size(), t.episodes(), t.successRate(), t.low(), t.high(),
                    t.meanDurationS() == null ? "-" : String.format(Locale.ROOT, "%.1f", t.meanDurationS()),
                    t.interventions(), modes(t.failureModes()), heatmap == null ? "" : "; heatmap " + heatmap);
            return 0;
        }
    }

    /** {@code flywheel eval compare LAKE RUN_A RUN_B}. */
    @Command(name = "compare", mixinStandardHelpOptions = true, description = "Per cell: both success rates, B - A,"
            + " a two-sided two-proportion z-test (Fisher's exact test below 10 rollouts of a cell in either run) and"
            + " Benjamini-Hochberg across cells at --q; cells whose rate fell significantly are regressions.")
    static final class Compare implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation at;

        @Parameters(index = "1", paramLabel = "RUN_A", description = "the baseline run")
        String runA;

        @Parameters(index = "2", paramLabel = "RUN_B", description = "the run compared with it")
        String runB;

        @Option(names = "--by", paramLabel = "DIMS", description = "dimensions (default: ${DEFAULT-VALUE})")
        String by = DEFAULT_BY;

        @Option(names = "--q", paramLabel = "Q", description = "false-discovery rate (default: ${DEFAULT-VALUE})")
        double q = 0.05;

        @Option(names = "--heatmap", paramLabel = "PNG", description = "also draw B - A per cell, regressions"
                + " outlined")
        Path heatmap;

        @Option(names = "--all", description = "list every cell, not only the flagged ones")
        boolean all;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() throws Exception {
            Usage.require(spec, q > 0 && q < 1, "--q must be in (0, 1), got " + q);
            EvalComparison c;
            try (Lake lake = at.open()) {
                c = EvalComparison.of(lake, runA, runB, split(by), q);
            }
            if (heatmap != null) {
                Heatmap.write(c, heatmap);
            }
            long tested = c.cells().stream().filter(x -> x.test() != null).count();
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("run_a", c.a().runId());
                m.put("run_b", c.b().runId());
                m.put("policy_a", c.a().policyVersion());
                m.put("policy_b", c.b().policyVersion());
                m.put("dimensions", c.dimensions());
                m.put("q", c.q());
                m.put("cells_tested", tested);
                m.put("regressions", c.regressions().size());
                m.put("improvements", c.improvements().size());
                List<Map<String, Object>> cells = new ArrayList<>();
                for (EvalComparison.Cell x : c.cells()) {
                    Map<String, Object> j = new LinkedHashMap<>(x.key());
                    j.put("episodes_a", x.episodesA());
                    j.put("successes_a", x.successesA());
                    j.put("episodes_b", x.episodesB());
                    j.put("successes_b", x.successesB());
                    j.put("rate_a", x.rateA());
                    j.put("rate_b", x.rateB());
                    j.put("difference", x.difference());
                    j.put("test", x.test());
                    j.put("p", x.p());
                    j.put("adjusted_p", x.adjustedP());
                    j.put("verdict", x.verdict());
                    cells.add(j);
                }
                m.put("cells", cells);
                m.put("heatmap", heatmap);
                Json.print(System.out, m);
                return 0;
            }
            List<String> header = new ArrayList<>(c.dimensions());
            header.addAll(List.of("A", "B", "B-A", "test", "p", "BH p", "verdict"));
            List<List<String>> rows = new ArrayList<>();
            for (EvalComparison.Cell x : c.cells()) {
                if (!all && (x.verdict().equals("unchanged") || x.verdict().startsWith("only"))) {
                    continue;
                }
                List<String> row = new ArrayList<>(x.key().values());
                row.add(x.episodesA() == 0 ? "-" : x.successesA() + "/" + x.episodesA());
                row.add(x.episodesB() == 0 ? "-" : x.successesB() + "/" + x.episodesB());
                row.add(x.difference() == null ? "-" : String.format(Locale.ROOT, "%+.3f", x.difference()));
                row.add(x.test() == null ? "-" : x.test());
                row.add(x.p() == null ? "-" : String.format(Locale.ROOT, "%.2g", x.p()));
                row.add(x.adjustedP() == null ? "-" : String.format(Locale.ROOT, "%.2g", x.adjustedP()));
                row.add(x.verdict().toUpperCase(Locale.ROOT).equals("REGRESSION") ? "REGRESSION" : x.verdict());
                rows.add(row);
            }
            if (!rows.isEmpty()) {
                TextTable.print(System.out, header, rows);
            }
            long fisher = c.cells().stream().filter(x -> "fisher".equals(x.test())).count();
            long only = c.cells().size() - tested;
            System.out.printf(Locale.ROOT, "%s (policy %s) vs %s (policy %s): %d cell(s) tested (%d by Fisher's exact"
                            + " test), %d regression(s), %d improvement(s) at BH q=%s%s%s%n", c.b().runId(),
                    c.b().policyVersion(), c.a().runId(), c.a().policyVersion(), tested, fisher,
                    c.regressions().size(), c.improvements().size(), c.q(),
                    only == 0 ? "" : "; " + only + " cell(s) in one run only", heatmap == null ? "" : "; heatmap "
                            + heatmap);
            return 0;
        }
    }

    static List<String> split(String by) {
        return Arrays.stream(by.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    static Map<String, Object> cellJson(EvalReport.Cell c) {
        Map<String, Object> j = new LinkedHashMap<>(c.key());
        j.put("episodes", c.episodes());
        j.put("successes", c.successes());
        j.put("success_rate", c.successRate());
        j.put("wilson_low", c.low());
        j.put("wilson_high", c.high());
        j.put("mean_duration_s", c.meanDurationS());
        j.put("interventions", c.interventions());
        j.put("failure_modes", c.failureModes());
        return j;
    }

    static List<String> cellText(EvalReport.Cell c) {
        return List.of(String.valueOf(c.episodes()), String.valueOf(c.successes()),
                String.format(Locale.ROOT, "%.3f", c.successRate()),
                String.format(Locale.ROOT, "[%.3f, %.3f]", c.low(), c.high()),
                c.meanDurationS() == null ? "-" : String.format(Locale.ROOT, "%.1f", c.meanDurationS()),
                String.valueOf(c.interventions()), modes(c.failureModes()));
    }

    static String modes(Map<String, Long> m) {
        if (m.isEmpty()) {
            return "-";
        }
        StringBuilder b = new StringBuilder();
        m.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(v));
        return b.toString();
    }
}
