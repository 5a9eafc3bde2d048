package io.flywheel.stream.rules;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

import io.flywheel.fleet.v1.Alert;
import io.flywheel.quality.RuleFileException;

/**
 * The realtime labelling rules, kept as data (YAML); immutable. Precedence, highest first: an e-stop alert during the
 * episode (failure, rule {@code e_stop}) &gt; operator interventions (needs_review, rule {@code intervention}) &gt; an
 * empty grasp (failure, rule {@code empty_grasp}) &gt; the task's success signal (success, rule
 * {@code success_signal}) &gt; otherwise ({@link #otherwise()}, rule {@code no_success_signal}).
 *
 * <p>File format (every key optional; missing keys take the defaults of {@code default-label-rules.yaml}):
 * <pre>
 * version: label-rules-1          # named in training-set lineage
 * allowed_lateness_s: 10          # seconds after the end event before a label is final
 * e_stop:       { alert_kinds: [E_STOP] }
 * intervention: { min_interventions: 1 }
 * empty_grasp:  { opening_below: 0.05, force_below_n: 1.0, min_duration_s: 0.5 }
 * success:      { otherwise: failure }
 * </pre>
 *
 * @param version          the rules' version, e.g. {@code label-rules-1}
 * @param allowedLateness  how long after an episode's end event its window stays open
 * @param eStopKinds       alert kinds that make an episode a failure
 * @param minInterventions interventions (&ge; 1) that make an episode needs_review
 * @param openingBelow     gripper opening, fraction of range in (0, 1], under which the gripper counts as closed
 * @param forceBelowN      grip force, newtons &gt; 0, under which the gripper counts as empty
 * @param minEmptyGrasp    a closed, empty gripper for longer than this is an empty grasp
 * @param otherwise        the label when no rule fires and no success signal came
 */
public record LabelRules(String version, Duration allowedLateness, Set<Alert.Kind> eStopKinds, int minInterventions,
        double openingBelow, double forceBelowN, Duration minEmptyGrasp, Outcome otherwise) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** The classpath resource with the default rules. */
    public static final String DEFAULT_RESOURCE = "/io/flywheel/stream/rules/default-label-rules.yaml";
    private static final long MAX_FILE_BYTES = 1 << 20;
    private static final Set<String> TOP = Set.of("version", "allowed_lateness_s", "e_stop", "intervention", "empty_grasp", "success");

    /** @throws IllegalArgumentException when a value is out of range */
    public LabelRules {
        if (version == null || version.isBlank()) {
            throw new IllegalArgumentException("version must not be blank");
        }
        if (allowedLateness.isNegative()) {
            throw new IllegalArgumentException("allowed lateness must be >= 0, got " + allowedLateness);
        }
        eStopKinds = Set.copyOf(eStopKinds);
        if (minInterventions < 1) {
            throw new IllegalArgumentException("min_interventions must be >= 1, got " + minInterventions);
        }
        if (!(openingBelow > 0 && openingBelow <= 1)) {
            throw new IllegalArgumentException("opening_below must be in (0, 1], got " + openingBelow);
        }
        if (!(forceBelowN > 0)) {
            throw new IllegalArgumentException("force_below_n must be > 0, got " + forceBelowN);
        }
        if (minEmptyGrasp.isNegative()) {
            throw new IllegalArgumentException("min_duration_s must be >= 0, got " + minEmptyGrasp);
        }
        if (otherwise == null) {
            throw new IllegalArgumentException("otherwise must be set");
        }
    }

    /** @return the rules of {@code default-label-rules.yaml} */
    public static LabelRules defaults() {
        try (InputStream in = LabelRules.class.getResourceAsStream(DEFAULT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + DEFAULT_RESOURCE);
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "default-label-rules.yaml", null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads rules from a YAML file; keys it leaves out take the defaults.
     *
     * @throws RuleFileException naming the file, the 1-based line and what was expected, when the content is invalid
     *     or the file is over 1 MiB
     * @throws IOException when the file cannot be read
     */
    public static LabelRules load(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_FILE_BYTES) {
            throw new RuleFileException(file.toString(), 0, null, "rule file is " + size + " bytes, over the 1 MiB limit", null);
        }
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString(), defaults());
    }

    /**
     * Parses rules from YAML text.
     *
     * @param yaml the text
     * @param sourceName the name used in error messages (a file name)
     * @param base the rules missing keys are taken from; null when every key must be present
     * @throws RuleFileException naming {@code sourceName}, the line and what was expected
     */
    public static LabelRules parse(String yaml, String sourceName, LabelRules base) throws RuleFileException {
        Node root;
        try {
            root = new Yaml(new LoaderOptions()).compose(new StringReader(yaml));
        } catch (MarkedYAMLException e) {
            Mark m = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            throw new RuleFileException(sourceName, m == null ? 0 : m.getLine() + 1, null,
                    "invalid YAML: " + (e.getProblem() != null ? e.getProblem() : e.getMessage()), e);
        } catch (YAMLException e) {
            throw new RuleFileException(sourceName, 0, null, "invalid YAML: " + e.getMessage(), e);
        }
        if (!(root instanceof MappingNode)) {
            throw new RuleFileException(sourceName, root == null ? 0 : line(root), null,
                    "expected a mapping with keys " + String.join(", ", TOP.stream().sorted().toList()), null);
        }
        Map<String, Node> top = mapping(root, sourceName, null, TOP);
        Parser p = new Parser(sourceName, base);
        String version = p.string(top, "version", null, base == null ? null : base.version);
        Duration lateness = seconds(p.number(top, "allowed_lateness_s", null, base == null ? null : base.allowedLateness.toNanos() / 1e9, 0, 86_400));
        Map<String, Node> eStop = p.section(top, "e_stop", Set.of("alert_kinds"));
        Set<Alert.Kind> kinds = base == null ? null : base.eStopKinds;
        if (eStop.containsKey("alert_kinds")) {
            kinds = p.kinds(eStop.get("alert_kinds"));
        } else if (kinds == null) {
            throw new RuleFileException(sourceName, line(root), "e_stop", "missing 'alert_kinds'", null);
        }
        Map<String, Node> inter = p.section(top, "intervention", Set.of("min_interventions"));
        double minInter = p.number(inter, "min_interventions", "intervention", base == null ? null : (double) base.minInterventions, 1, 1e6);
        if (minInter != Math.rint(minInter)) {
            throw new RuleFileException(sourceName, line(inter.get("min_interventions")), "intervention",
                    "min_interventions must be a whole number, got " + minInter, null);
        }
        Map<String, Node> grasp = p.section(top, "empty_grasp", Set.of("opening_below", "force_below_n", "min_duration_s"));
        double opening = p.number(grasp, "opening_below", "empty_grasp", base == null ? null : base.openingBelow, 1e-9, 1);
        double force = p.number(grasp, "force_below_n", "empty_grasp", base == null ? null : base.forceBelowN, 1e-9, 1e6);
        double minDur = p.number(grasp, "min_duration_s", "empty_grasp", base == null ? null : base.minEmptyGrasp.toNanos() / 1e9, 0, 3600);
        Map<String, Node> success = p.section(top, "success", Set.of("otherwise"));
        String otherwiseText = p.string(success, "otherwise", "success", base == null ? null : base.otherwise.label());
        Outcome otherwise = Outcome.parse(otherwiseText);
        if (otherwise == null) {
            throw new RuleFileException(sourceName, success.containsKey("otherwise") ? line(success.get("otherwise")) : 0, "success",
                    "otherwise must be success, failure or needs_review, got '" + otherwiseText + "'", null);
        }
        return new LabelRules(version, lateness, kinds, (int) minInter, opening, force, seconds(minDur), otherwise);
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }

    private static int line(Node n) {
        return n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }

    private static Map<String, Node> mapping(Node n, String src, String section, Set<String> keys) throws RuleFileException {
        if (!(n instanceof MappingNode map)) {
            throw new RuleFileException(src, line(n), section, "expected a mapping with keys "
                    + String.join(", ", keys.stream().sorted().toList()), null);
        }
        Map<String, Node> out = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
            String k = t.getKeyNode() instanceof ScalarNode s ? s.getValue() : null;
            if (k == null || !keys.contains(k)) {
                throw new RuleFileException(src, line(t.getKeyNode()), section, "unknown key '" + k + "' (expected one of "
                        + String.join(", ", keys.stream().sorted().toList()) + ")", null);
            }
            if (out.put(k, t.getValueNode()) != null) {
                throw new RuleFileException(src, line(t.getKeyNode()), section, "repeated key '" + k + "'", null);
            }
        }
        return out;
    }

    private record Parser(String src, LabelRules base) {
        Map<String, Node> section(Map<String, Node> top, String name, Set<String> keys) throws RuleFileException {
            Node n = top.get(name);
            return n == null ? Map.of() : mapping(n, src, name, keys);
        }

        String string(Map<String, Node> m, String key, String section, String dflt) throws RuleFileException {
            Node n = m.get(key);
            if (n == null) {
                if (dflt == null) {
                    throw new RuleFileException(src, 0, section, "missing '" + key + "'", null);
                }
                return dflt;
            }
            if (!(n instanceof ScalarNode s) || s.getValue().isBlank()) {
                throw new RuleFileException(src, line(n), section, "'" + key + "' must be a non-empty string", null);
            }
            return s.getValue().strip();
        }

        double number(Map<String, Node> m, String key, String section, Double dflt, double min, double max) throws RuleFileException {
            Node n = m.get(key);
            if (n == null) {
                if (dflt == null) {
                    throw new RuleFileException(src, 0, section, "missing '" + key + "'", null);
                }
                return dflt;
            }
            String text = n instanceof ScalarNode s ? s.getValue().strip() : null;
            double v;
            try {
                v = Double.parseDouble(text);
            } catch (NumberFormatException | NullPointerException e) {
                throw new RuleFileException(src, line(n), section, "'" + key + "' must be a number in [" + fmt(min) + ", "
                        + fmt(max) + "], got '" + text + "'", null);
            }
            if (!(v >= min && v <= max)) {
                throw new RuleFileException(src, line(n), section, "'" + key + "' must be in [" + fmt(min) + ", " + fmt(max)
                        + "], got " + text, null);
            }
            return v;
        }

        Set<Alert.Kind> kinds(Node n) throws RuleFileException {
            if (!(n instanceof SequenceNode seq)) {
                throw new RuleFileException(src, line(n), "e_stop", "alert_kinds must be a list such as [E_STOP]", null);
            }
            List<Alert.Kind> out = new ArrayList<>();
            for (Node item : seq.getValue()) {
                String k = item instanceof ScalarNode s ? s.getValue().strip() : null;
                Alert.Kind kind = null;
                for (Alert.Kind c : Alert.Kind.values()) {
                    if (c != Alert.Kind.UNRECOGNIZED && c != Alert.Kind.KIND_UNSPECIFIED && c.name().equalsIgnoreCase(k)) {
                        kind = c;
                    }
                }
                if (kind == null) {
                    throw new RuleFileException(src, line(item), "e_stop", "unknown alert kind '" + k
                            + "' (expected E_STOP, FAULT or WARNING)", null);
                }
                out.add(kind);
            }
            return out.isEmpty() ? Set.of() : EnumSet.copyOf(out);
        }

        private static String fmt(double d) {
            return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
        }
    }
}
