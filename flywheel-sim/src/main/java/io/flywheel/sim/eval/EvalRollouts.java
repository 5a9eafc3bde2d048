package io.flywheel.sim.eval;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * Simulated evaluation rollouts of a policy with known true success rates per cell ({@code flywheel sim --eval}):
 * every cell of task x object x lighting x robot gets a number of rollouts, each a Bernoulli draw at the cell's true
 * rate, so reports and comparisons can be checked against the truth rather than against themselves.
 *
 * <p>The true rate of a cell is {@code clamp(object + lighting + task + robot + shifts, 0.02, 0.98)} with the base
 * rates of {@link #OBJECT_RATE} and the offsets of {@link #LIGHTING_OFFSET}, {@link #TASK_OFFSET} and
 * {@link #ROBOT_OFFSET}; a {@link Shift} adds its delta to every cell with its dimension's value (a policy that got
 * worse on glass cups: {@code object=glass_cup:-0.35}). Robots {@code arm-1} and {@code arm-2} get
 * {@code rolloutsPerCell} rollouts per cell, {@code arm-3} an eighth of that (at least 4): its cells are the small ones a
 * comparison tests with Fisher's exact test. Successes last 8-12 s, failures 12-20 s; a failure's mode depends on the
 * object ({@code slip} for glass, else {@code miss} or {@code drop}), and 30% of failures had an intervention.
 * Everything follows from the seed and the policy version.
 */
public final class EvalRollouts {
    private EvalRollouts() {}

    public static final List<String> TASKS = List.of("pick_place", "stack");
    public static final List<String> OBJECTS = List.of("bowl", "cup", "glass_cup", "sponge");
    public static final List<String> LIGHTINGS = List.of("backlit", "bright", "dim");
    public static final List<String> ROBOTS = List.of("arm-1", "arm-2", "arm-3");

    public static final Map<String, Double> OBJECT_RATE = Map.of("bowl", 0.85, "cup", 0.9, "glass_cup", 0.65,
            "sponge", 0.95);
    public static final Map<String, Double> LIGHTING_OFFSET = Map.of("backlit", -0.12, "bright", 0.0, "dim", -0.08);
    public static final Map<String, Double> TASK_OFFSET = Map.of("pick_place", 0.0, "stack", -0.06);
    public static final Map<String, Double> ROBOT_OFFSET = Map.of("arm-1", 0.0, "arm-2", -0.03, "arm-3", 0.02);

    /** A change of the true rate of every cell whose {@code dimension} is {@code value}. */
    public record Shift(String dimension, String value, double delta) {
        /**
         * @param spec {@code DIMENSION=VALUE:DELTA}, e.g. {@code object=glass_cup:-0.35}
         * @throws IllegalArgumentException when malformed or naming an unknown dimension or value
         */
        public static Shift parse(String spec) {
            int eq = spec.indexOf('=');
            int colon = spec.lastIndexOf(':');
            if (eq <= 0 || colon < eq) {
                throw new IllegalArgumentException("'" + spec + "': expected DIMENSION=VALUE:DELTA, e.g."
                        + " object=glass_cup:-0.35");
            }
            String dim = spec.substring(0, eq);
            String value = spec.substring(eq + 1, colon);
            double delta;
            try {
                delta = Double.parseDouble(spec.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + spec + "': the delta is not a number");
            }
            List<String> values = values(dim);
            if (values == null) {
                throw new IllegalArgumentException("'" + spec + "': unknown dimension '" + dim + "'; dimensions: task,"
                        + " object, lighting, robot");
            }
            if (!values.contains(value)) {
                throw new IllegalArgumentException("'" + spec + "': " + dim + " has no value '" + value + "'; values: "
                        + values);
            }
            if (!(delta >= -1 && delta <= 1)) {
                throw new IllegalArgumentException("'" + spec + "': the delta must be in [-1, 1]");
            }
            return new Shift(dim, value, delta);
        }

        boolean applies(Cell c) {
            return switch (dimension) {
                case "task" -> c.task().equals(value);
                case "object" -> c.object().equals(value);
                case "lighting" -> c.lighting().equals(value);
                default -> c.robot().equals(value);
            };
        }
    }

    private static List<String> values(String dim) {
        return switch (dim) {
            case "task" -> TASKS;
            case "object" -> OBJECTS;
            case "lighting" -> LIGHTINGS;
            case "robot" -> ROBOTS;
            default -> null;
        };
    }

    /** A cell: one value of each dimension. */
    public record Cell(String task, String object, String lighting, String robot) {}

    /** One simulated rollout: a row of an evaluation results file. */
    public record Rollout(String episodeId, Cell cell, boolean success, double durationS, String failureMode,
            boolean intervention) {}

    /**
     * What to simulate.
     *
     * @param policy the policy version evaluated
     * @param runId the run id
     * @param seed the random seed
     * @param rolloutsPerCell rollouts per cell of arm-1 and arm-2 (arm-3: an eighth, at least 4), &ge; 1
     * @param shifts changes of the true rates
     * @param only the cells simulated: dimension (task, object, lighting, robot) to the one value kept; empty: every
     *     cell ({@link #parseCell})
     */
    public record Options(String policy, String runId, long seed, int rolloutsPerCell, List<Shift> shifts,
            Map<String, String> only) {
        public Options {
            if (rolloutsPerCell < 1) {
                throw new IllegalArgumentException("rollouts per cell must be >= 1, got " + rolloutsPerCell);
            }
            shifts = List.copyOf(shifts);
            only = Map.copyOf(only);
        }

        /** Options over every cell. */
        public Options(String policy, String runId, long seed, int rolloutsPerCell, List<Shift> shifts) {
            this(policy, runId, seed, rolloutsPerCell, shifts, Map.of());
        }
    }

    /**
     * @param spec {@code DIMENSION=VALUE}, e.g. {@code robot=arm-1}
     * @return the dimension and value
     * @throws IllegalArgumentException when malformed or naming an unknown dimension or value
     */
    public static Map.Entry<String, String> parseCell(String spec) {
        int eq = spec.indexOf('=');
        if (eq <= 0 || eq == spec.length() - 1) {
            throw new IllegalArgumentException("'" + spec + "': expected DIMENSION=VALUE, e.g. robot=arm-1");
        }
        String dim = spec.substring(0, eq);
        String value = spec.substring(eq + 1);
        List<String> values = values(dim);
        if (values == null) {
            throw new IllegalArgumentException("'" + spec + "': unknown dimension '" + dim + "'; dimensions: task,"
                    + " object, lighting, robot");
        }
        if (!values.contains(value)) {
            throw new IllegalArgumentException("'" + spec + "': " + dim + " has no value '" + value + "'; values: "
                    + values);
        }
        return Map.entry(dim, value);
    }

    private static boolean kept(Cell c, Map<String, String> only) {
        for (Map.Entry<String, String> e : only.entrySet()) {
            if (!new Shift(e.getKey(), e.getValue(), 0).applies(c)) {
                return false;
            }
        }
        return true;
    }

    /** The rollouts and the true rate of every cell. */
    public record Result(Options options, List<Rollout> rollouts, Map<Cell, Double> trueRates) {
        /** @return the cells some shift changed */
        public List<Cell> shiftedCells() {
            List<Cell> out = new ArrayList<>();
            for (Cell c : trueRates.keySet()) {
                if (options.shifts().stream().anyMatch(s -> s.applies(c) && s.delta() != 0)) {
                    out.add(c);
                }
            }
            return out;
        }
    }

    /** @return the true success rate of a cell without shifts */
    public static double baseRate(Cell c) {
        return OBJECT_RATE.get(c.object()) + LIGHTING_OFFSET.get(c.lighting()) + TASK_OFFSET.get(c.task())
                + ROBOT_OFFSET.get(c.robot());
    }

    /** @return the cells, in key order (task, object, lighting, robot) */
    public static List<Cell> cells() {
        List<Cell> out = new ArrayList<>();
        for (String t : TASKS) {
            for (String o : OBJECTS) {
                for (String l : LIGHTINGS) {
                    for (String r : ROBOTS) {
                        out.add(new Cell(t, o, l, r));
                    }
                }
            }
        }
        return out;
    }

    /** @return the simulated rollouts and their truth */
    public static Result generate(Options o) {
        SplittableRandom rnd = new SplittableRandom(o.seed() * 0x9E3779B97F4A7C15L + o.policy().hashCode());
        Map<Cell, Double> truth = new LinkedHashMap<>();
        List<Rollout> rollouts = new ArrayList<>();
        int k = 0;
        for (Cell c : cells()) {
            if (!kept(c, o.only())) {
                continue;
            }
            double rate = baseRate(c);
            for (Shift s : o.shifts()) {
                if (s.applies(c)) {
                    rate += s.delta();
                }
            }
            rate = Math.max(0.02, Math.min(0.98, rate));
            truth.put(c, rate);
            int n = c.robot().equals("arm-3") ? Math.max(4, o.rolloutsPerCell() / 8) : o.rolloutsPerCell();
            for (int i = 0; i < n; i++) {
                boolean ok = rnd.nextDouble() < rate;
                double d = ok ? 8 + 4 * rnd.nextDouble() : 12 + 8 * rnd.nextDouble();
                String mode = null;
                boolean intervention = false;
                if (!ok) {
                    mode = c.object().equals("glass_cup") ? "slip" : rnd.nextDouble() < 0.5 ? "miss" : "drop";
                    intervention = rnd.nextDouble() < 0.3;
                }
                rollouts.add(new Rollout(String.format(Locale.ROOT, "%s-%05d", o.runId(), k++), c, ok,
                        Math.round(d * 1000) / 1000.0, mode, intervention));
            }
        }
        return new Result(o, rollouts, truth);
    }

    /**
     * Writes the rollouts as an evaluation results CSV ({@code flywheel eval ingest} reads it): run_id,
     * policy_version, episode_id, task, object, lighting, robot_id, scene, success, duration_s, failure_mode,
     * intervention.
     */
    public static void writeCsv(Result r, Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("run_id,policy_version,episode_id,task,object,lighting,robot_id,scene,success,duration_s,"
                    + "failure_mode,intervention\n");
            for (Rollout x : r.rollouts()) {
                w.write(r.options().runId() + "," + r.options().policy() + "," + x.episodeId() + "," + x.cell().task()
                        + "," + x.cell().object() + "," + x.cell().lighting() + "," + x.cell().robot() + ",sim_table,"
                        + x.success() + "," + x.durationS() + "," + (x.failureMode() == null ? "" : x.failureMode())
                        + "," + x.intervention() + "\n");
            }
        }
    }

    /** The name of the MCAP Metadata record that holds a recorded rollout's outcome ({@code eval ingest}). */
    public static final String METADATA_NAME = "flywheel.eval";

    /**
     * The outcome metadata of a recorded rollout (an MCAP Metadata record named {@link #METADATA_NAME}): run_id,
     * policy_version, task, object, lighting, scene, robot, success ({@code true}/{@code false}), duration_s (the
     * rollout's duration, seconds), failure_mode (failures only), intervention ({@code true}/{@code false}).
     */
    public static Map<String, String> metadata(Result r, Rollout x) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("run_id", r.options().runId());
        m.put("policy_version", r.options().policy());
        m.put("task", x.cell().task());
        m.put("object", x.cell().object());
        m.put("lighting", x.cell().lighting());
        m.put("scene", "sim_table");
        m.put("robot", x.cell().robot());
        m.put("success", Boolean.toString(x.success()));
        m.put("duration_s", Double.toString(x.durationS()));
        if (x.failureMode() != null) {
            m.put("failure_mode", x.failureMode());
        }
        m.put("intervention", Boolean.toString(x.intervention()));
        return m;
    }

    /** Writes the truth: the options and every cell's true rate, as JSON. */
    public static void writeTruth(Result r, Path file) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_id", r.options().runId());
        m.put("policy_version", r.options().policy());
        m.put("seed", r.options().seed());
        m.put("rollouts_per_cell", r.options().rolloutsPerCell());
        List<Map<String, Object>> shifts = new ArrayList<>();
        for (Shift s : r.options().shifts()) {
            shifts.add(Map.of("dimension", s.dimension(), "value", s.value(), "delta", s.delta()));
        }
        m.put("shifts", shifts);
        m.put("only", new java.util.TreeMap<>(r.options().only()));
        List<Map<String, Object>> cells = new ArrayList<>();
        for (Map.Entry<Cell, Double> e : r.trueRates().entrySet()) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("task", e.getKey().task());
            c.put("object", e.getKey().object());
            c.put("lighting", e.getKey().lighting());
            c.put("robot", e.getKey().robot());
            c.put("true_rate", Math.round(e.getValue() * 1e6) / 1e6);
            cells.add(c);
        }
        m.put("cells", cells);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), m);
    }
}
