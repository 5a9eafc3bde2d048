package io.flywheel.quality;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
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

/**
 * An ordered, immutable set of quality rules, loaded from YAML, and their evaluation on episode metrics.
 *
 * <p>File format (YAML 1.1, read with SnakeYAML's node API so errors carry line numbers):
 * <pre>
 * rules:
 *   - id: low_fps                 # required, unique: [A-Za-z0-9_.-]+
 *     metric: frame_rate_ratio    # required, see {@link Metric}
 *     role: camera                # optional selector, stream metrics only
 *     stream: /camera0/image      # optional selector, stream metrics only
 *     op: "&lt;"                     # required: &lt; &lt;= &gt; &gt;= == != (quote it)
 *     value: 0.9                  # required number, in the metric's unit
 *     severity: error             # required: info | warning | error
 *     message: camera below 90% of its nominal rate   # optional
 * </pre>
 * A bare top-level list of rules is accepted too. Unknown keys are errors (a typo must not disable a check).
 *
 * <p>Evaluation: an episode rule gives one {@link RuleResult}; a stream rule gives one per selected stream (and one
 * SKIPPED result when no stream is selected: absent streams are the {@code missing_streams} metric's business). A
 * rule fires when {@code observed OP value}; a null metric value gives SKIPPED.
 */
public final class RuleSet {
    /** Classpath resource of the default rules. */
    public static final String DEFAULT_RESOURCE = "/io/flywheel/quality/default-rules.yaml";
    private static final long MAX_FILE_BYTES = 1 << 20;
    private static final Set<String> KEYS = Set.of("id", "metric", "role", "stream", "op", "value", "severity", "message");

    private final String source;
    private final List<QualityRule> rules;

    /**
     * A rule set from rules built in code.
     *
     * @throws IllegalArgumentException when two rules share an id
     */
    public RuleSet(String source, List<QualityRule> rules) {
        this.source = source;
        this.rules = List.copyOf(rules);
        Map<String, QualityRule> seen = new HashMap<>();
        for (QualityRule r : this.rules) {
            if (seen.put(r.id(), r) != null) throw new IllegalArgumentException(source + ": duplicate rule id '" + r.id() + "'");
        }
    }

    /** Where the rules came from (file name or resource). */
    public String source() { return source; }

    /** The rules in file order. */
    public List<QualityRule> rules() { return rules; }

    /** The rule with id {@code id}, or null. */
    public QualityRule rule(String id) {
        for (QualityRule r : rules) if (r.id().equals(id)) return r;
        return null;
    }

    /**
     * The default rules shipped in {@code default-rules.yaml}.
     *
     * @throws UncheckedIOException when the resource is missing or invalid (a build error)
     */
    public static RuleSet defaults() {
        try (InputStream in = RuleSet.class.getResourceAsStream(DEFAULT_RESOURCE)) {
            if (in == null) throw new IOException("resource " + DEFAULT_RESOURCE + " not found");
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "default-rules.yaml");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads rules from a YAML file.
     *
     * @throws RuleFileException naming the file, line and rule id when the content is invalid, or when the file is
     *                           larger than 1 MiB
     * @throws IOException       when the file cannot be read
     */
    public static RuleSet load(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_FILE_BYTES) {
            throw new RuleFileException(file.toString(), 0, null, "rule file is " + size + " bytes, over the 1 MiB limit", null);
        }
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses rules from YAML text.
     *
     * @param yaml       the text
     * @param sourceName name used in error messages (file name)
     * @throws RuleFileException naming {@code sourceName}, the 1-based line and the rule id on any problem
     */
    public static RuleSet parse(String yaml, String sourceName) throws RuleFileException {
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
        if (root == null) throw new RuleFileException(sourceName, 0, null, "empty rule file: expected 'rules:' with a list", null);
        Node list = root;
        if (root instanceof MappingNode map) {
            list = null;
            for (NodeTuple t : map.getValue()) {
                String k = scalar(t.getKeyNode());
                if ("rules".equals(k)) {
                    list = t.getValueNode();
                } else {
                    throw new RuleFileException(sourceName, line(t.getKeyNode()), null,
                            "unknown top-level key '" + k + "': expected 'rules'", null);
                }
            }
            if (list == null) throw new RuleFileException(sourceName, line(root), null, "no 'rules:' key", null);
        }
        if (!(list instanceof SequenceNode seq)) {
            throw new RuleFileException(sourceName, line(list), null, "expected a list of rules", null);
        }
        List<QualityRule> rules = new ArrayList<>();
        Map<String, Integer> ids = new HashMap<>();
        for (Node item : seq.getValue()) {
            QualityRule r = rule(item, sourceName);
            Integer prev = ids.put(r.id(), r.line());
            if (prev != null) {
                throw new RuleFileException(sourceName, r.line(), r.id(), "duplicate rule id (first at line " + prev + ")", null);
            }
            rules.add(r);
        }
        return new RuleSet(sourceName, rules);
    }

    private static QualityRule rule(Node item, String src) throws RuleFileException {
        int line = line(item);
        if (!(item instanceof MappingNode map)) {
            throw new RuleFileException(src, line, null, "a rule must be a mapping with id, metric, op, value, severity", null);
        }
        Map<String, Node> f = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
            String k = scalar(t.getKeyNode());
            if (k == null || f.put(k, t.getValueNode()) != null) {
                throw new RuleFileException(src, line(t.getKeyNode()), null, "bad or repeated key '" + k + "'", null);
            }
        }
        String id = f.containsKey("id") ? scalar(f.get("id")) : null;
        if (id == null || !id.matches("[A-Za-z0-9_.\\-]+")) {
            throw new RuleFileException(src, line, null, "missing or bad 'id' (expected letters, digits, _ . -): " + id, null);
        }
        for (Map.Entry<String, Node> e : f.entrySet()) {
            if (!KEYS.contains(e.getKey())) {
                throw new RuleFileException(src, line(e.getValue()), id, "unknown key '" + e.getKey() + "' (expected one of "
                        + KEYS.stream().sorted().collect(Collectors.joining(", ")) + ")", null);
            }
        }
        String metricName = required(f, "metric", id, line, src);
        Metric metric = Metric.parse(metricName);
        if (metric == null) {
            throw new RuleFileException(src, line(f.get("metric")), id, "unknown metric '" + metricName + "' (known: "
                    + Arrays.stream(Metric.values()).map(Metric::label).collect(Collectors.joining(", ")) + ")", null);
        }
        String opText = required(f, "op", id, line, src);
        Op op = Op.parse(opText);
        if (op == null) {
            throw new RuleFileException(src, line(f.get("op")), id, "bad operator '" + opText.strip()
                    + "' (expected one of < <= > >= == !=, quoted: op: \"<\")", null);
        }
        String valueText = required(f, "value", id, line, src);
        double value;
        try {
            value = Double.parseDouble(valueText.strip());
        } catch (NumberFormatException e) {
            throw new RuleFileException(src, line(f.get("value")), id, "value '" + valueText + "' is not a number", null);
        }
        if (Double.isNaN(value)) {
            throw new RuleFileException(src, line(f.get("value")), id, "value must not be NaN", null);
        }
        String sevText = required(f, "severity", id, line, src);
        Severity sev = Severity.parse(sevText);
        if (sev == null) {
            throw new RuleFileException(src, line(f.get("severity")), id, "bad severity '" + sevText
                    + "' (expected info, warning or error)", null);
        }
        String role = optional(f, "role", id, src);
        String stream = optional(f, "stream", id, src);
        String message = optional(f, "message", id, src);
        if (metric.scope() == Metric.Scope.EPISODE && (role != null || stream != null)) {
            throw new RuleFileException(src, line, id, metric.label() + " is an episode metric: remove 'role'/'stream'", null);
        }
        return new QualityRule(id, metric, role, stream, op, value, sev, message, line);
    }

    private static String required(Map<String, Node> f, String key, String id, int line, String src) throws RuleFileException {
        Node n = f.get(key);
        if (n == null) throw new RuleFileException(src, line, id, "missing '" + key + "'", null);
        String s = scalar(n);
        if (s == null || s.isBlank()) {
            String hint = key.equals("op") ? " (operators must be quoted: op: \">\"; a plain > or | starts a YAML block scalar)" : "";
            throw new RuleFileException(src, line(n), id, "'" + key + "' must be a plain, non-empty value" + hint, null);
        }
        return s;
    }

    private static String optional(Map<String, Node> f, String key, String id, String src) throws RuleFileException {
        Node n = f.get(key);
        if (n == null) return null;
        String s = scalar(n);
        if (s == null) throw new RuleFileException(src, line(n), id, "'" + key + "' must be a plain value", null);
        return s;
    }

    private static String scalar(Node n) {
        return n instanceof ScalarNode s ? s.getValue() : null;
    }

    private static int line(Node n) {
        return n == null || n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }

    /**
     * Evaluates every rule on {@code m}.
     *
     * @return results in rule order, flags and overall status
     */
    public QualityReport evaluate(EpisodeMetrics m) {
        List<RuleResult> results = new ArrayList<>();
        List<String> flags = new ArrayList<>();
        boolean error = false;
        boolean warning = false;
        for (QualityRule r : rules) {
            boolean fired = false;
            if (r.metric().scope() == Metric.Scope.EPISODE) {
                RuleResult res = result(r, null, r.metric().of(m), m);
                results.add(res);
                fired = !res.passed();
            } else {
                boolean any = false;
                for (StreamMetrics s : m.streams()) {
                    if (!r.selects(s)) continue;
                    any = true;
                    RuleResult res = result(r, s.stream(), r.metric().of(s), m);
                    results.add(res);
                    fired |= !res.passed();
                }
                if (!any) {
                    results.add(new RuleResult(r.id(), r.severity(), r.metric().label(), null, RuleResult.Outcome.SKIPPED,
                            null, r.op().symbol(), r.value(), r.id() + ": no stream selected by " + r.condition()));
                }
            }
            if (fired) {
                flags.add(r.id());
                error |= r.severity() == Severity.ERROR;
                warning |= r.severity() == Severity.WARNING;
            }
        }
        QualityReport.Status status = error ? QualityReport.Status.FAIL
                : warning ? QualityReport.Status.WARN : QualityReport.Status.PASS;
        return new QualityReport(m.episodeId(), results, flags, status);
    }

    private static RuleResult result(QualityRule r, String stream, Double observed, EpisodeMetrics m) {
        String what = (stream != null ? stream + " " : "") + r.metric().label();
        if (observed == null) {
            return new RuleResult(r.id(), r.severity(), r.metric().label(), stream, RuleResult.Outcome.SKIPPED, null,
                    r.op().symbol(), r.value(), r.id() + ": " + what + " unknown");
        }
        boolean fired = r.op().test(observed, r.value());
        String msg = r.id() + ": " + what + " = " + fmt(observed) + (fired ? " " + r.op().symbol() + " " : " not "
                + r.op().symbol() + " ") + QualityRule.fmt(r.value());
        if (fired && r.metric() == Metric.MISSING_STREAMS) msg += " (missing roles: " + String.join(", ", m.missingRoles()) + ")";
        if (fired && r.message() != null) msg += ": " + r.message();
        return new RuleResult(r.id(), r.severity(), r.metric().label(), stream,
                fired ? RuleResult.Outcome.FAIL : RuleResult.Outcome.PASS, observed, r.op().symbol(), r.value(), msg);
    }

    private static String fmt(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return String.format(java.util.Locale.ROOT, "%.4g", v);
    }
}
