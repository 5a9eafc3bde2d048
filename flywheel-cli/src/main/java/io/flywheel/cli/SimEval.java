package io.flywheel.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.flywheel.error.BadInputException;
import io.flywheel.sim.eval.EvalRollouts;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code flywheel sim --eval POLICY --out DIR}: simulated evaluation rollouts with known true success rates per cell
 * ({@link EvalRollouts}), written as {@code DIR/eval_results.csv} (for {@code eval ingest}) and
 * {@code DIR/eval_truth.json} (every cell's true rate, the shifts, the seed).
 */
final class SimEval {
    private SimEval() {}

    static final String RESULTS = "eval_results.csv";
    static final String TRUTH = "eval_truth.json";

    /** Rollouts per cell of arm-1 and arm-2 (a constant: an ArgGroup's {@code ${DEFAULT-VALUE}} shows null). */
    static final int DEFAULT_PER_CELL = 20;

    /** The options of the evaluation branch of {@code sim}. */
    static final class Options {
        @Option(names = "--eval", required = true, paramLabel = "POLICY_VERSION", description = "write evaluation"
                + " rollouts of this policy (eval_results.csv, eval_truth.json) instead of a fleet")
        String policy;

        @Option(names = "--eval-shift", paramLabel = "DIM=VALUE:DELTA", description = "change the true rate of"
                + " every cell with that value by DELTA, e.g. object=glass_cup:-0.35 (repeatable)")
        List<String> shifts = new ArrayList<>();

        @Option(names = "--rollouts-per-cell", paramLabel = "N", description = "rollouts per cell of arm-1 and arm-2"
                + " (arm-3: an eighth, at least 4; default: " + DEFAULT_PER_CELL + ")")
        int perCell = DEFAULT_PER_CELL;

        @Option(names = "--run", paramLabel = "ID", description = "the run id (default: POLICY_VERSION-sSEED)")
        String run;

        @Option(names = "--eval-cell", paramLabel = "DIM=VALUE", description = "simulate only the cells with that"
                + " value, e.g. robot=arm-1 (repeatable, one per dimension)")
        List<String> only = new ArrayList<>();

        @Option(names = "--mcap", description = "also record every rollout as a small MCAP episode (1 s, 64x48) with"
                + " its outcome in a flywheel.eval Metadata record, under DIR/episodes/ROBOT/EPISODE_ID.mcap, for"
                + " eval ingest LAKE DIR/episodes")
        boolean mcap;
    }

    static final String EPISODES = "episodes";

    /** A run id or policy version as the console addresses them, and safe as a file name: exit 2 otherwise. */
    private static final java.util.regex.Pattern ID = java.util.regex.Pattern.compile(
            "[A-Za-z0-9_:@+-][A-Za-z0-9._:@+-]{0,199}");

    private static void checkId(CommandSpec spec, String option, String what, String v) {
        Usage.require(spec, v != null && ID.matcher(v).matches() && !v.contains(".."), option + ": " + what + " '" + v
                + "' is not valid: expected 1-200 letters, digits or ._:@+- (not starting with '.', no '..')");
    }

    static int run(CommandSpec spec, Options o, Path out, long seed, boolean force, boolean json,
            io.flywheel.sim.JpegEncoder.Kind jpeg) throws Exception {
        Usage.require(spec, o.perCell >= 1 && o.perCell <= 100_000, "--rollouts-per-cell must be in [1, 100000], got "
                + o.perCell);
        List<EvalRollouts.Shift> shifts = new ArrayList<>();
        for (String s : o.shifts) {
            shifts.add(Usage.check(spec, "--eval-shift", () -> EvalRollouts.Shift.parse(s)));
        }
        Map<String, String> only = new LinkedHashMap<>();
        for (String c : o.only) {
            Map.Entry<String, String> e = Usage.check(spec, "--eval-cell", () -> EvalRollouts.parseCell(c));
            Usage.require(spec, only.put(e.getKey(), e.getValue()) == null, "--eval-cell: dimension '" + e.getKey()
                    + "' is given twice");
        }
        checkId(spec, "--eval", "policy version", o.policy);
        if (o.run != null) {
            checkId(spec, "--run", "run id", o.run);
        }
        String runId = o.run != null ? o.run : o.policy + "-s" + seed;
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new BadInputException("--out " + out + " is a file, not a folder");
        }
        Path results = out.resolve(RESULTS);
        Path truth = out.resolve(TRUTH);
        Path episodes = out.resolve(EPISODES);
        if (!force && (Files.exists(results) || Files.exists(truth) || o.mcap && Files.exists(episodes))) {
            throw new BadInputException("--out " + out + " holds earlier evaluation rollouts (" + RESULTS + "); add"
                    + " --force to replace them");
        }
        Files.createDirectories(out);
        EvalRollouts.Result r = EvalRollouts.generate(new EvalRollouts.Options(o.policy, runId, seed, o.perCell,
                shifts, only));
        if (r.rollouts().isEmpty()) {
            throw new BadInputException("no cell has every --eval-cell value: " + o.only);
        }
        EvalRollouts.writeCsv(r, results);
        EvalRollouts.writeTruth(r, truth);
        List<Path> recorded = List.of();
        if (Files.exists(episodes)) { // --force: an earlier run's recordings go, with --mcap or without
            try (java.util.stream.Stream<Path> w = Files.walk(episodes)) {
                for (Path p : w.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        if (o.mcap) {
            int total = r.rollouts().size();
            long t0 = System.nanoTime();
            java.io.PrintWriter err = spec.commandLine().getErr();
            recorded = io.flywheel.sim.EvalRecordings.write(r, episodes, jpeg, n -> {
                if (n % 100 == 0 || n == total) {
                    double s = (System.nanoTime() - t0) / 1e9;
                    err.printf(Locale.ROOT, "sim --eval --mcap: %d/%d recordings, %.0f/s, ETA %.0f s%n", n, total,
                            n / Math.max(s, 1e-9), (total - n) * s / n);
                    err.flush();
                }
            });
        }
        long ok = r.rollouts().stream().filter(EvalRollouts.Rollout::success).count();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("run_id", runId);
            m.put("policy_version", o.policy);
            m.put("seed", seed);
            m.put("rollouts", r.rollouts().size());
            m.put("successes", ok);
            m.put("cells", r.trueRates().size());
            m.put("shifted_cells", r.shiftedCells().size());
            m.put("results", results);
            m.put("truth", truth);
            if (o.mcap) {
                m.put("recordings", recorded.size());
                m.put("episodes_dir", episodes);
            }
            Json.print(System.out, m);
        } else {
            System.out.printf(Locale.ROOT, "wrote %d rollouts of run %s (policy %s, seed %d) over %d cells (%d shifted),"
                            + " %d succeeded: %s, truth in %s%n", r.rollouts().size(), runId, o.policy, seed,
                    r.trueRates().size(), r.shiftedCells().size(), ok, results, truth);
            if (o.mcap) {
                System.out.println("recorded " + recorded.size() + " rollouts as MCAP episodes (flywheel.eval metadata)"
                        + " under " + episodes);
            }
            System.out.println("next: flywheel eval ingest LAKE " + (o.mcap ? episodes : results));
        }
        return 0;
    }
}
