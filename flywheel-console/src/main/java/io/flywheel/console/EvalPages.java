package io.flywheel.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.flywheel.eval.EvalComparison;
import io.flywheel.eval.EvalReport;
import io.flywheel.eval.Evaluations;
import io.flywheel.eval.Heatmap;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EvalRunRow;

/**
 * The console's evaluation page and API: the runs, the cube of one run (success rate with its Wilson 95% interval,
 * rollouts, mean duration, failure modes per cell), its heatmap, and the regressions of one run against another.
 * <ul>
 *   <li>{@code /eval?run=R&by=task,object,lighting,robot&against=A}</li>
 *   <li>{@code /api/eval/runs}, {@code /api/eval/report?run&by}, {@code /api/eval/compare?a&b&by},
 *       {@code /api/eval/heatmap.png?run&by} or {@code ?a&b&by}</li>
 * </ul>
 */
final class EvalPages {
    static final String DEFAULT_BY = "task,object,lighting,robot";

    private final Lake lake;

    EvalPages(Lake lake) {
        this.lake = lake;
    }

    static List<String> by(String by) {
        return Arrays.stream((by == null || by.isBlank() ? DEFAULT_BY : by).split(",")).map(String::trim)
                .filter(s -> !s.isEmpty()).toList();
    }

    Map<String, Object> runs() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (EvalRunRow r : Evaluations.runs(lake)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("run_id", r.runId());
            m.put("policy_version", r.policyVersion());
            m.put("started_at_ns", r.startedAtNs());
            m.put("episodes", r.episodeCount());
            out.add(m);
        }
        return Map.of("runs", out);
    }

    Map<String, Object> report(String run, String by) {
        EvalReport r = EvalReport.of(lake, run, by(by));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_id", r.run().runId());
        m.put("policy_version", r.run().policyVersion());
        m.put("dimensions", r.dimensions());
        m.put("total", cell(r.total()));
        m.put("cells", r.cells().stream().map(EvalPages::cell).toList());
        return m;
    }

    Map<String, Object> compare(String a, String b, String by) {
        return compare(a, b, by, 0.05);
    }

    /** @param q the false discovery rate, in (0, 1) */
    Map<String, Object> compare(String a, String b, String by, double q) {
        EvalComparison c = EvalComparison.of(lake, a, b, by(by), q);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_a", a);
        m.put("run_b", b);
        m.put("dimensions", c.dimensions());
        m.put("q", c.q());
        m.put("regressions", c.regressions().size());
        m.put("improvements", c.improvements().size());
        List<Map<String, Object>> cells = new ArrayList<>();
        for (EvalComparison.Cell x : c.cells()) {
            Map<String, Object> j = new LinkedHashMap<>(x.key());
            j.put("episodes_a", x.episodesA());
            j.put("successes_a", x.successesA());
            j.put("episodes_b", x.episodesB());
            j.put("successes_b", x.successesB());
            j.put("difference", x.difference());
            j.put("test", x.test());
            j.put("p", x.p());
            j.put("adjusted_p", x.adjustedP());
            j.put("verdict", x.verdict());
            cells.add(j);
        }
        m.put("cells", cells);
        return m;
    }

    byte[] heatmap(String run, String a, String b, String by) throws IOException {
        java.awt.image.BufferedImage img = run != null ? Heatmap.image(EvalReport.of(lake, run, by(by)))
                : Heatmap.image(EvalComparison.of(lake, a, b, by(by), 0.05));
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        javax.imageio.ImageIO.write(img, "png", bo);
        return bo.toByteArray();
    }

    private static Map<String, Object> cell(EvalReport.Cell c) {
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

    /** @return the page's body: run choice, the cube, the heatmap, and the regressions against {@code against} */
    String body(String run, String by, String against) {
        List<EvalRunRow> runs = Evaluations.runs(lake);
        StringBuilder b = new StringBuilder("<h1>Evaluation</h1>\n");
        if (runs.isEmpty()) {
            return b.append("<p id=\"no-runs\">No evaluation run in the lake yet (flywheel eval ingest LAKE FILE).</p>")
                    .toString();
        }
        String chosen = run != null ? run : runs.get(runs.size() - 1).runId();
        String dims = by == null || by.isBlank() ? DEFAULT_BY : by;
        b.append("<form class=\"filters\" method=\"get\" action=\"/eval\"><label>run <select name=\"run\" id=\"eval-run\">");
        for (EvalRunRow r : runs) {
            b.append("<option").append(r.runId().equals(chosen) ? " selected" : "").append(" value=\"")
                    .append(Pages.esc(r.runId())).append("\">").append(Pages.esc(r.runId() + " (" + r.policyVersion()
                            + ")")).append("</option>");
        }
        b.append("</select></label> <label>by <input name=\"by\" value=\"").append(Pages.esc(dims))
                .append("\"></label> <label>against <select name=\"against\" id=\"eval-against\"><option value=\"\">-"
                        + "</option>");
        for (EvalRunRow r : runs) {
            b.append("<option").append(r.runId().equals(against) ? " selected" : "").append(" value=\"")
                    .append(Pages.esc(r.runId())).append("\">").append(Pages.esc(r.runId())).append("</option>");
        }
        b.append("</select></label> <button type=\"submit\">Show</button></form>\n");
        EvalReport r = EvalReport.of(lake, chosen, by(dims));
        EvalReport.Cell t = r.total();
        b.append(String.format(Locale.ROOT, "<p class=\"summary\" id=\"eval-summary\">run %s (policy %s): %d cells,"
                        + " %d rollouts, success %.3f [%.3f, %.3f] (Wilson 95%%)</p>\n", Pages.esc(chosen),
                Pages.esc(r.run().policyVersion()), r.cells().size(), t.episodes(), t.successRate(), t.low(), t.high()));
        String q = "run=" + Pages.url(chosen) + "&by=" + Pages.url(dims);
        b.append("<section><h2>Heatmap</h2><img id=\"eval-heatmap\" alt=\"success rate per cell\" src=\"/api/eval/"
                + "heatmap.png?").append(Pages.esc(q)).append("\"></section>\n");
        if (against != null && !against.isBlank()) {
            EvalComparison c = EvalComparison.of(lake, against, chosen, by(dims), 0.05);
            b.append("<section><h2>Regressions against ").append(Pages.esc(against)).append("</h2>")
                    .append(String.format(Locale.ROOT, "<p class=\"summary\" id=\"eval-compare-summary\">%d regression(s),"
                            + " %d improvement(s) at BH q=0.05</p>", c.regressions().size(), c.improvements().size()))
                    .append("<table class=\"grid\" id=\"eval-regressions\"><thead><tr>");
            c.dimensions().forEach(d -> b.append("<th>").append(Pages.esc(d)).append("</th>"));
            b.append("<th>").append(Pages.esc(against)).append("</th><th>").append(Pages.esc(chosen))
                    .append("</th><th>B-A</th><th>test</th><th>BH p</th><th>verdict</th></tr></thead><tbody>\n");
            for (EvalComparison.Cell x : c.cells()) {
                if (!x.regression() && !"improvement".equals(x.verdict())) {
                    continue;
                }
                b.append("<tr class=\"").append(x.verdict()).append("\">");
                x.key().values().forEach(v -> b.append("<td>").append(Pages.esc(v)).append("</td>"));
                b.append(String.format(Locale.ROOT, "<td>%d/%d</td><td>%d/%d</td><td>%+.3f</td><td>%s</td><td>%.2g</td>"
                                + "<td>%s</td></tr>\n", x.successesA(), x.episodesA(), x.successesB(), x.episodesB(),
                        x.difference(), x.test(), x.adjustedP(), x.verdict()));
            }
            b.append("</tbody></table><img id=\"eval-compare-heatmap\" alt=\"difference per cell\" src=\"/api/eval/"
                    + "heatmap.png?").append(Pages.esc("a=" + Pages.url(against) + "&b=" + Pages.url(chosen) + "&by="
                    + Pages.url(dims))).append("\"></section>\n");
        }
        b.append("<section><h2>Cells</h2><table class=\"grid\" id=\"eval-cells\"><thead><tr>");
        r.dimensions().forEach(d -> b.append("<th>").append(Pages.esc(d)).append("</th>"));
        b.append("<th>rollouts</th><th>ok</th><th>rate</th><th>95% CI</th><th>mean s</th><th>failure modes</th>"
                + "</tr></thead><tbody>\n");
        for (EvalReport.Cell c : r.cells()) {
            b.append("<tr>");
            c.key().values().forEach(v -> b.append("<td>").append(Pages.esc(v)).append("</td>"));
            StringBuilder modes = new StringBuilder();
            c.failureModes().forEach((k, v) -> modes.append(modes.length() == 0 ? "" : ", ").append(k).append(' ')
                    .append(v));
            b.append(String.format(Locale.ROOT, "<td>%d</td><td>%d</td><td>%.3f</td><td>[%.3f, %.3f]</td><td>%s</td>"
                            + "<td>%s</td></tr>\n", c.episodes(), c.successes(), c.successRate(), c.low(), c.high(),
                    c.meanDurationS() == null ? "-" : String.format(Locale.ROOT, "%.1f", c.meanDurationS()),
                    Pages.esc(modes.toString())));
        }
        b.append("</tbody></table></section>\n");
        return b.toString();
    }
}
