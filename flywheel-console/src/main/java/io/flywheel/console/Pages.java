package io.flywheel.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.flywheel.curate.pool.DedupTables;
import io.flywheel.lake.TableSchemas;

/**
 * The console's HTML pages, rendered on the server from {@link ConsoleApi} values: the episodes
 * table (paging, filters and sorting as links and a GET form, so it works without script), the
 * episode, alignment, map and training-set pages (facts and tables here; the frame strip, plots,
 * timelines, map and charts are drawn as SVG by {@code /static/console.js} from the JSON API).
 * Every value from the lake is HTML-escaped.
 */
final class Pages {
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final List<String[]> EPISODE_COLUMNS = List.of(
            new String[] {TableSchemas.EPISODE_ID, "episode"}, new String[] {TableSchemas.ROBOT_ID, "robot"},
            new String[] {TableSchemas.TASK, "task"}, new String[] {TableSchemas.SCENE, "scene"},
            new String[] {TableSchemas.OUTCOME, "outcome"}, new String[] {TableSchemas.STREAM_OUTCOME, "stream label"},
            new String[] {TableSchemas.DURATION_NS, "duration s"},
            new String[] {TableSchemas.FRAME_COUNT, "frames"}, new String[] {TableSchemas.QUALITY_STATUS, "QC"},
            new String[] {TableSchemas.QUALITY_FLAGS, "QC flags"}, new String[] {DedupTables.DUPLICATE_OF, "duplicate group"});

    /** Seconds between reloads of the fleet page. */
    static final int FLEET_REFRESH_S = 5;
    /** Seconds between reloads of the stream labels page. */
    static final int LABELS_REFRESH_S = 2;

    private final ConsoleApi api;

    Pages(ConsoleApi api) {
        this.api = api;
    }

    static String esc(Object o) {
        if (o == null) {
            return "";
        }
        String s = o.toString();
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    static String url(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private String layout(String title, String page, Map<String, String> data, String body) {
        StringBuilder attrs = new StringBuilder();
        data.forEach((k, v) -> attrs.append(" data-").append(k).append("=\"").append(esc(v)).append('"'));
        return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                + (page.equals("fleet") ? "<meta http-equiv=\"refresh\" content=\"" + FLEET_REFRESH_S + "\">" : "")
                + (page.equals("labels") ? "<meta http-equiv=\"refresh\" content=\"" + LABELS_REFRESH_S + "\">" : "")
                + "<title>" + esc(title) + " - Flywheel</title><link rel=\"stylesheet\" href=\"/static/console.css\"></head>\n"
                + "<body data-page=\"" + page + "\"" + attrs + ">\n<header><a class=\"brand\" href=\"/episodes\">Flywheel</a>"
                + "<nav><a href=\"/episodes\"" + (page.startsWith("episode") || page.equals("align") ? " class=\"on\"" : "")
                + ">Episodes</a><a href=\"/map\"" + (page.equals("map") ? " class=\"on\"" : "") + ">Embedding map</a>"
                + "<a href=\"/trainsets\"" + (page.equals("trainsets") ? " class=\"on\"" : "") + ">Training sets</a>"
                + "<a href=\"/eval\"" + (page.equals("eval") ? " class=\"on\"" : "") + ">Evaluation</a>"
                + "<a href=\"/fleet\"" + (page.equals("fleet") ? " class=\"on\"" : "") + ">Fleet</a>"
                + "<a href=\"/labels\"" + (page.equals("labels") ? " class=\"on\"" : "") + ">Labels</a></nav>"
                + "<span class=\"lake\" title=\"lake\">" + esc(api.lake().location()) + "</span></header>\n<main>\n"
                + body + "\n</main>\n<script src=\"/static/console.js\"></script>\n</body></html>\n";
    }

    /** @return the evaluation page around its body ({@link EvalPages#body}) */
    String eval(String body) {
        return layout("Evaluation", "eval", Map.of(), body);
    }

    String error(int status, String message) {
        return layout("Error " + status, "error", Map.of(), "<h1>Error " + status + "</h1><p class=\"error\" id=\"error\">"
                + esc(message) + "</p><p><a href=\"/episodes\">Back to the episodes</a></p>");
    }

    // ------------------------------------------------------------------ episodes

    String episodes(EpisodeQuery q) {
        Map<String, Object> page = api.episodes(q);
        @SuppressWarnings("unchecked")
        List<String> have = (List<String>) page.get("columns");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) page.get("rows");
        long total = (Long) page.get("total");
        String sort = (String) page.get("sort");
        boolean desc = "desc".equals(page.get("order"));
        StringBuilder b = new StringBuilder();
        b.append("<h1>Episodes</h1>\n<form class=\"filters\" method=\"get\" action=\"/episodes\" id=\"filters\">");
        for (String f : ConsoleApi.FILTERS.keySet()) {
            b.append("<label>").append(f).append(" <input name=\"").append(f).append("\" value=\"")
                    .append(esc(q.filters().getOrDefault(f, ""))).append("\" size=\"10\"></label> ");
        }
        b.append("<label>id or task contains <input name=\"q\" value=\"").append(esc(q.text() == null ? "" : q.text()))
                .append("\" size=\"12\"></label> <label>QC flag <input name=\"flag\" value=\"")
                .append(esc(q.flag() == null ? "" : q.flag())).append("\" size=\"10\"></label> ")
                .append("<input type=\"hidden\" name=\"sort\" value=\"").append(esc(sort)).append("\">")
                .append("<input type=\"hidden\" name=\"order\" value=\"").append(desc ? "desc" : "asc").append("\">")
                .append("<input type=\"hidden\" name=\"limit\" value=\"").append(q.limit()).append("\">")
                .append("<button type=\"submit\" id=\"apply\">Filter</button> <a href=\"/episodes\">clear</a></form>\n");
        long from = total == 0 ? 0 : Math.min(total, q.offset() + 1);
        long to = Math.min(total, q.offset() + rows.size());
        b.append("<p class=\"count\"><span id=\"range\">").append(from).append("-").append(to).append("</span> of <span id=\"total\">")
                .append(total).append("</span> episodes, sorted by ").append(esc(sort)).append(desc ? " (descending)" : "")
                .append("</p>\n");
        b.append(pager(q, total, sort, desc));
        b.append("<table id=\"episodes-table\" class=\"grid\"><thead><tr>");
        for (String[] c : EPISODE_COLUMNS) {
            if (!have.contains(c[0])) {
                continue;
            }
            if (ConsoleApi.SORTABLE.contains(c[0])) {
                boolean on = c[0].equals(sort);
                String next = on && !desc ? "desc" : "asc";
                b.append("<th><a class=\"sort").append(on ? " on" : "").append("\" data-col=\"").append(c[0])
                        .append("\" href=\"").append(esc(link(q, 0, c[0], next))).append("\">").append(esc(c[1]))
                        .append(on ? (desc ? " &#9660;" : " &#9650;") : "").append("</a></th>");
            } else {
                b.append("<th>").append(esc(c[1])).append("</th>");
            }
        }
        b.append("</tr></thead><tbody>\n");
        for (Map<String, Object> r : rows) {
            String id = (String) r.get(TableSchemas.EPISODE_ID);
            b.append("<tr data-episode=\"").append(esc(id)).append("\">");
            for (String[] c : EPISODE_COLUMNS) {
                if (!have.contains(c[0])) {
                    continue;
                }
                Object v = r.get(c[0]);
                b.append("<td class=\"c-").append(c[0]).append("\">");
                switch (c[0]) {
                    case TableSchemas.EPISODE_ID -> b.append("<a href=\"/episodes/").append(esc(url(id))).append("\">").append(esc(id))
                            .append("</a>");
                    case TableSchemas.DURATION_NS -> b.append(v == null ? "" : String.format(Locale.ROOT, "%.2f", ((Long) v) / 1e9));
                    case TableSchemas.QUALITY_STATUS -> b.append("<span class=\"qc qc-").append(esc(v)).append("\">").append(esc(v))
                            .append("</span>");
                    case TableSchemas.QUALITY_FLAGS -> b.append(v instanceof List<?> l ? esc(String.join(", ",
                            l.stream().map(String::valueOf).toList())) : "");
                    case DedupTables.DUPLICATE_OF -> b.append(v == null || v.equals(id) ? "" : "<a href=\"/episodes/" + esc(url(v.toString()))
                            + "\">" + esc(v) + "</a>");
                    default -> b.append(esc(v));
                }
                b.append("</td>");
            }
            b.append("</tr>\n");
        }
        b.append("</tbody></table>\n");
        if (rows.isEmpty()) {
            b.append("<p class=\"empty\" id=\"empty\">No episode matches.</p>");
        }
        b.append(pager(q, total, sort, desc));
        return layout("Episodes", "episodes", Map.of(), b.toString());
    }

    private String pager(EpisodeQuery q, long total, String sort, boolean desc) {
        StringBuilder b = new StringBuilder("<div class=\"pager\">");
        String order = desc ? "desc" : "asc";
        if (q.offset() > 0) {
            b.append("<a class=\"prev\" href=\"").append(esc(link(q, Math.max(0, q.offset() - q.limit()), sort, order)))
                    .append("\">&larr; previous ").append(q.limit()).append("</a> ");
        }
        if (q.offset() + q.limit() < total) {
            b.append("<a class=\"next\" href=\"").append(esc(link(q, q.offset() + q.limit(), sort, order)))
                    .append("\">next ").append(q.limit()).append(" &rarr;</a>");
        }
        return b.append("</div>\n").toString();
    }

    private static String link(EpisodeQuery q, long offset, String sort, String order) {
        Map<String, String> p = new LinkedHashMap<>(q.filters());
        if (q.text() != null) {
            p.put("q", q.text());
        }
        if (q.flag() != null) {
            p.put("flag", q.flag());
        }
        p.put("sort", sort);
        p.put("order", order);
        p.put("offset", Long.toString(offset));
        p.put("limit", Integer.toString(q.limit()));
        StringBuilder b = new StringBuilder("/episodes?");
        p.forEach((k, v) -> b.append(url(k)).append('=').append(url(v)).append('&'));
        b.setLength(b.length() - 1);
        return b.toString();
    }

    // ------------------------------------------------------------------ one episode

    String episode(String id) {
        Map<String, Object> e = api.episode(id);
        StringBuilder b = new StringBuilder();
        b.append("<h1>Episode <span id=\"episode-id\">").append(esc(id)).append("</span></h1>\n");
        b.append("<p class=\"links\"><a id=\"align-link\" href=\"/episodes/").append(esc(url(id)))
                .append("/align\">Alignment view</a> &middot; <a href=\"/api/episodes/").append(esc(url(id)))
                .append("\">JSON</a></p>\n");
        b.append("<table class=\"facts\" id=\"facts\">");
        for (String k : List.of(TableSchemas.ROBOT_ID, TableSchemas.TASK, TableSchemas.SCENE, TableSchemas.OPERATOR,
                "effective_outcome", "outcome_source", TableSchemas.OUTCOME, TableSchemas.STREAM_OUTCOME,
                TableSchemas.STREAM_RULE, TableSchemas.STREAM_RULES_VERSION, TableSchemas.FRAME_COUNT,
                TableSchemas.MASTER_TOPIC, TableSchemas.QUALITY_STATUS,
                TableSchemas.RECORDING_ID, DedupTables.DUPLICATE_OF, "embedding_model")) {
            if (e.containsKey(k)) {
                b.append("<tr><th>").append(esc(k)).append("</th><td class=\"f-").append(esc(k)).append("\">")
                        .append(esc(e.get(k))).append("</td></tr>");
            }
        }
        Object start = e.get(TableSchemas.START_NS);
        if (start instanceof Long s) {
            b.append("<tr><th>start</th><td>").append(esc(Instant.ofEpochSecond(s / 1_000_000_000L, s % 1_000_000_000L)))
                    .append("</td></tr>");
        }
        if (e.get(TableSchemas.DURATION_NS) instanceof Long d) {
            b.append("<tr><th>duration</th><td>").append(String.format(Locale.ROOT, "%.3f s", d / 1e9)).append("</td></tr>");
        }
        b.append("<tr><th>enrichment</th><td id=\"enrichment\">").append(Boolean.TRUE.equals(e.get("enriched"))
                ? "enriched" : "not enriched yet").append("</td></tr>");
        for (String k : List.of(TableSchemas.STATE_NAMES, TableSchemas.ACTION_NAMES)) {
            // the names of the state / action values, in vector order (the plots' legend)
            if (e.get(k) instanceof List<?> names && !names.isEmpty()) {
                b.append("<tr><th>").append(esc(k)).append("</th><td class=\"f-").append(esc(k)).append("\">")
                        .append(names.size()).append(": ").append(esc(String.join(", ", names.stream()
                                .map(String::valueOf).toList()))).append("</td></tr>");
            }
        }
        b.append("</table>\n");
        b.append("<section><h2>Frames</h2><div id=\"viewer\" data-frames=\"").append(esc(e.get("frame_count")))
                .append("\" data-cameras=\"").append(esc(json(e.get("cameras"))))
                .append("\" data-state-names=\"").append(esc(json(e.get(TableSchemas.STATE_NAMES))))
                .append("\" data-action-names=\"").append(esc(json(e.get(TableSchemas.ACTION_NAMES)))).append("\">"
                + "<div class=\"camera-picker\" id=\"camera-picker\"></div>"
                + "<div class=\"frame-view\"><img id=\"frame-image\" alt=\"frame\"><div id=\"frame-label\"></div></div>"
                + "<input type=\"range\" id=\"scrubber\" min=\"0\" value=\"0\">"
                + "<div id=\"strip\" class=\"strip\"></div><svg id=\"timeline\" class=\"chart\"></svg>"
                + "<div id=\"plots\"></div></div></section>\n");
        b.append("<section><h2>Quality rules</h2>");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> results = (List<Map<String, Object>>) e.get("quality_results");
        if (results == null || results.isEmpty()) {
            b.append("<p id=\"qc-none\">No quality rule results stored.</p>");
        } else {
            b.append("<table class=\"grid\" id=\"qc-table\"><thead><tr><th>rule</th><th>stream</th><th>severity</th>"
                    + "<th>result</th><th>observed</th><th>threshold</th><th>message</th></tr></thead><tbody>");
            for (Map<String, Object> r : results) {
                String verdict = String.valueOf(first(r, "outcome", "status")).toLowerCase(Locale.ROOT);
                b.append("<tr class=\"qc-").append(esc(verdict)).append("\"><td>").append(esc(first(r, "ruleId", "rule_id", "rule")))
                        .append("</td><td>").append(esc(first(r, "stream"))).append("</td><td>")
                        .append(esc(String.valueOf(first(r, "severity")).toLowerCase(Locale.ROOT))).append("</td><td>")
                        .append(esc(verdict)).append("</td><td>").append(esc(first(r, "observed")))
                        .append("</td><td>").append(esc(first(r, "op"))).append(' ').append(esc(first(r, "threshold")))
                        .append("</td><td>").append(esc(first(r, "message"))).append("</td></tr>");
            }
            b.append("</tbody></table>");
        }
        b.append("</section>\n<section><h2>Alignment residuals per stream</h2>");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> res = (List<Map<String, Object>>) e.get("residuals");
        b.append("<table class=\"grid\" id=\"residuals-table\"><thead><tr><th>stream</th><th>matched</th><th>no value</th>"
                + "<th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>");
        for (Map<String, Object> r : res) {
            b.append("<tr><td>").append(esc(r.get("stream"))).append("</td><td>").append(esc(r.get("matched")))
                    .append("</td><td>").append(esc(r.get("unmatched"))).append("</td><td>").append(ms(r.get("p50_ms")))
                    .append("</td><td>").append(ms(r.get("p99_ms"))).append("</td><td>").append(ms(r.get("max_ms")))
                    .append("</td></tr>");
        }
        b.append("</tbody></table></section>\n");
        Map<String, String> data = new LinkedHashMap<>();
        data.put("episode", id);
        return layout("Episode " + id, "episode", data, b.toString());
    }

    private static Object first(Map<String, Object> m, String... keys) {
        for (String k : keys) {
            if (m.get(k) != null) {
                return m.get(k);
            }
        }
        return "";
    }

    private static String ms(Object v) {
        return v instanceof Double d ? String.format(Locale.ROOT, "%.3f", d) : "-";
    }

    static String json(Object o) {
        try {
            return PRETTY.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            return String.valueOf(o);
        }
    }

    // ------------------------------------------------------------------ alignment

    String align(String id) {
        Map<String, Object> e = api.episode(id); // 404 for an unknown episode
        StringBuilder b = new StringBuilder();
        b.append("<h1>Alignment of <a href=\"/episodes/").append(esc(url(id))).append("\">").append(esc(id)).append("</a></h1>\n");
        b.append("<p>Master clock: <b id=\"master-topic\">").append(esc(e.get("master_topic"))).append("</b>. Pairs are"
                + " recomputed from the message times in the raw files with the policy below.</p>\n");
        b.append("<form id=\"align-form\" class=\"filters\" onsubmit=\"return false\">"
                + "<label>stream <select id=\"stream\" name=\"stream\"></select></label> "
                + "<label>method <select id=\"method\" name=\"method\"><option>nearest</option><option>asof</option>"
                + "<option>interpolate</option></select></label> "
                + "<label>tolerance ms <input id=\"tolerance\" name=\"tolerance_ms\" type=\"number\" min=\"0\" step=\"any\" value=\"20\" size=\"6\"></label> "
                + "<label>clock offset ms <input id=\"offset\" name=\"offset_ms\" type=\"number\" step=\"any\" value=\"0\" size=\"6\"></label> "
                + "<label>on miss <select id=\"on-miss\" name=\"on_miss\"><option>flag</option><option>drop</option></select></label> "
                + "<label>from frame <input id=\"from\" name=\"from\" type=\"number\" min=\"0\" value=\"0\" size=\"5\"></label> "
                + "<label>frames <input id=\"count\" name=\"count\" type=\"number\" min=\"1\" max=\"5000\" value=\"60\" size=\"5\"></label> "
                + "<button id=\"recompute\" type=\"button\">Recompute</button></form>\n"
                + "<p id=\"align-summary\" class=\"summary\">loading...</p>\n"
                + "<svg id=\"align-svg\" class=\"chart\"></svg>\n"
                + "<p class=\"legend\"><span class=\"sw master\"></span> master frame <span class=\"sw msg\"></span> stream message"
                + " <span class=\"sw pair\"></span> pairing <span class=\"sw miss\"></span> frame without a message (flagged or"
                + " dropped)</p>");
        return layout("Alignment " + id, "align", Map.of("episode", id), b.toString());
    }

    // ------------------------------------------------------------------ map

    String map() {
        String b = "<h1>Embedding map</h1>\n<p>Episode embeddings projected on their first two principal components"
                + " (PCA), coloured by scene; failures crossed in red, episodes mined into the training set ringed."
                + " Click a point to open its episode. <a href=\"/api/map.png\">PNG</a></p>\n"
                + "<p id=\"map-status\" class=\"summary\">loading...</p>\n<div class=\"map-wrap\"><svg id=\"map\" class=\"chart\">"
                + "</svg><div id=\"map-legend\" class=\"legend-box\"></div></div>";
        return layout("Embedding map", "map", Map.of(), b);
    }

    // ------------------------------------------------------------------ training sets

    String trainsets() {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> sets = (List<Map<String, Object>>) api.trainsets().get("trainsets");
        StringBuilder b = new StringBuilder("<h1>Training sets</h1>\n");
        if (sets.isEmpty()) {
            b.append("<p id=\"no-trainsets\">No training set was built yet (flywheel trainset build).</p>");
            return layout("Training sets", "trainsets", Map.of(), b.toString());
        }
        b.append("<table class=\"grid\" id=\"trainsets-table\"><thead><tr><th>tag</th><th>created</th><th>parent</th>"
                + "<th>episodes</th><th>samples</th><th>base</th><th>mined</th><th>lineage</th></tr></thead><tbody>\n");
        for (Map<String, Object> s : sets) {
            long ns = (Long) s.get("created_at_ns");
            String tag = (String) s.get("tag");
            b.append("<tr data-tag=\"").append(esc(tag)).append("\"><td><a href=\"#\" class=\"tag\" data-tag=\"")
                    .append(esc(tag)).append("\">").append(esc(tag)).append("</a></td><td>")
                    .append(esc(Instant.ofEpochSecond(ns / 1_000_000_000L, ns % 1_000_000_000L))).append("</td><td>")
                    .append(esc(s.get("parent") == null ? "" : s.get("parent"))).append("</td><td class=\"n-episodes\">")
                    .append(s.get("episodes")).append("</td><td>").append(s.get("samples")).append("</td><td>")
                    .append(s.get("base")).append("</td><td class=\"n-mined\">").append(s.get("mined"))
                    .append("</td><td><details><summary>lineage</summary><pre>").append(esc(json(s.get("lineage"))))
                    .append("</pre></details></td></tr>\n");
        }
        b.append("</tbody></table>\n");
        b.append("<section><h2>Composition of <span id=\"comp-tag\"></span></h2><svg id=\"composition\" class=\"chart\"></svg>"
                + "</section>\n");
        b.append("<section><h2>Diff</h2><form id=\"diff-form\" class=\"filters\" onsubmit=\"return false\">"
                + "<label>from <select id=\"diff-from\">");
        for (int i = 0; i < sets.size(); i++) {
            String t = (String) sets.get(i).get("tag");
            b.append("<option").append(i == Math.max(0, sets.size() - 2) ? " selected" : "").append(">").append(esc(t))
                    .append("</option>");
        }
        b.append("</select></label> <label>to <select id=\"diff-to\">");
        for (int i = 0; i < sets.size(); i++) {
            String t = (String) sets.get(i).get("tag");
            b.append("<option").append(i == sets.size() - 1 ? " selected" : "").append(">").append(esc(t)).append("</option>");
        }
        b.append("</select></label> <button id=\"diff-button\" type=\"button\">Diff</button></form>"
                + "<p id=\"diff-summary\" class=\"summary\"></p><svg id=\"diff-chart\" class=\"chart\"></svg>"
                + "<div class=\"cols\"><div><h3>added</h3><ul id=\"diff-added\"></ul></div><div><h3>removed</h3>"
                + "<ul id=\"diff-removed\"></ul></div></div><p><a id=\"diff-png\" href=\"#\">chart as PNG</a></p></section>");
        return layout("Training sets", "trainsets", Map.of(), b.toString());
    }

    // ------------------------------------------------------------------ stream labels

    @SuppressWarnings("unchecked")
    String labels() {
        Map<String, Object> l = api.labels(100);
        List<Map<String, Object>> rows = (List<Map<String, Object>>) l.get("labels");
        StringBuilder b = new StringBuilder("<h1>Stream labels</h1>\n");
        if (!(Boolean) l.get("label_history")) {
            b.append("<p id=\"no-labels\">No stream label yet: run the labeller (flywheel stream run LAKE). Reloads every ")
                    .append(LABELS_REFRESH_S).append(" s.</p>\n");
            return layout("Stream labels", "labels", Map.of(), b.toString());
        }
        StringBuilder counts = new StringBuilder();
        ((Map<String, Integer>) l.get("by_label")).forEach((k, v) -> counts.append(counts.length() == 0 ? "" : ", ")
                .append("<span class=\"n-label\" data-label=\"").append(esc(k)).append("\">").append(v).append(' ')
                .append(esc(k)).append("</span>"));
        b.append("<p class=\"summary\" id=\"labels-summary\"><b id=\"n-episodes\">").append(l.get("episodes"))
                .append("</b> stream episode(s) labelled (").append(counts).append("), <b id=\"n-applied\">")
                .append(l.get("applied")).append("</b> applied to lake episodes; label_history version <b id=\"version\">")
                .append(l.get("version")).append("</b>, rules ").append(esc(String.join(", ", (List<String>) l.get("rules_versions"))))
                .append(". Newest first; reloads every ").append(LABELS_REFRESH_S)
                .append(" s. <a href=\"/api/labels\">JSON</a></p>\n");
        b.append("<table class=\"grid\" id=\"labels-table\"><thead><tr><th>labelled at</th><th>robot</th>"
                + "<th>stream episode</th><th>label</th><th>rule</th><th>rules</th><th>lake episode</th></tr></thead><tbody>\n");
        for (Map<String, Object> r : rows) {
            String ep = (String) r.get("lake_episode_id");
            b.append("<tr data-episode=\"").append(esc(r.get("episode_id"))).append("\"><td>")
                    .append(esc(time(r.get("labelled_at_ns")))).append("</td><td>").append(esc(r.get("robot_id")))
                    .append("</td><td>").append(esc(r.get("episode_id"))).append("</td><td class=\"c-label\">")
                    .append(esc(r.get("label"))).append("</td><td class=\"c-rule\">").append(esc(r.get("rule")))
                    .append("</td><td>").append(esc(r.get("rules_version"))).append("</td><td class=\"c-lake\">")
                    .append(ep == null ? "not ingested yet" : "<a href=\"/episodes/" + esc(url(ep)) + "\">" + esc(ep) + "</a>")
                    .append("</td></tr>\n");
        }
        b.append("</tbody></table>\n");
        return layout("Stream labels", "labels", Map.of(), b.toString());
    }

    // ------------------------------------------------------------------ fleet

    @SuppressWarnings("unchecked")
    String fleet() {
        Map<String, Object> f = api.fleet();
        Map<String, Object> t = (Map<String, Object>) f.get("totals");
        List<Map<String, Object>> robots = (List<Map<String, Object>>) f.get("robots");
        List<Map<String, Object>> alerts = (List<Map<String, Object>>) f.get("alerts");
        List<Map<String, Object>> uploads = (List<Map<String, Object>>) f.get("uploads");
        StringBuilder b = new StringBuilder("<h1>Fleet</h1>\n");
        b.append("<p class=\"summary\" id=\"fleet-summary\"><b id=\"n-robots\">").append(t.get("robots"))
                .append("</b> robot(s); <b id=\"n-landed\">").append(t.get("landed"))
                .append("</b> file(s) landed by the gateway, <b id=\"n-ingested\">").append(t.get("ingested"))
                .append("</b> ingested, <b id=\"n-waiting\">").append(t.get("waiting_for_ingest"))
                .append("</b> waiting for ingest; <b id=\"n-uploading\">").append(t.get("uploading"))
                .append("</b> upload(s) in progress; ").append(t.get("telemetry_rows")).append(" telemetry row(s).")
                .append(" Reloads every ").append(FLEET_REFRESH_S).append(" s. <a href=\"/api/fleet\">JSON</a></p>\n");
        b.append("<h2>Robots</h2>\n");
        if (robots.isEmpty()) {
            b.append("<p id=\"no-robots\">No robot yet: issue a token (flywheel gateway token add ROBOT LAKE) and start"
                    + " the gateway (flywheel gateway LAKE).</p>\n");
        } else {
            b.append("<table class=\"grid\" id=\"robots-table\"><thead><tr><th>robot</th><th>tokens</th>"
                    + "<th>last heartbeat</th><th>heard</th><th>battery</th><th>episodes</th><th>landed</th>"
                    + "<th>ingested</th><th>waiting</th><th>ingest failed</th><th>uploading</th></tr></thead><tbody>\n");
            for (Map<String, Object> r : robots) {
                String id = (String) r.get("robot_id");
                Object age = r.get("heartbeat_age_s");
                b.append("<tr data-robot=\"").append(esc(id)).append("\"><td><a href=\"/episodes?robot=")
                        .append(esc(url(id))).append("\">").append(esc(id)).append("</a></td><td>").append(r.get("tokens"))
                        .append("</td><td class=\"c-heartbeat\">").append(esc(time(r.get("last_heartbeat_ts_ns"))))
                        .append("</td><td class=\"c-age\">").append(age == null ? "never" : esc(ago((Double) age)))
                        .append("</td><td class=\"c-battery\">").append(esc(battery((Map<String, Double>) r.get("battery"))))
                        .append("</td><td class=\"c-episodes\">").append(r.get("episodes"))
                        .append("</td><td class=\"c-landed\">").append(r.get("landed"))
                        .append("</td><td class=\"c-ingested\">").append(r.get("ingested"))
                        .append("</td><td class=\"c-waiting\">").append(r.get("waiting_for_ingest"))
                        .append("</td><td class=\"c-failed\">").append(r.get("ingest_failed"))
                        .append("</td><td class=\"c-uploading\">").append(r.get("uploading")).append("</td></tr>\n");
            }
            b.append("</tbody></table>\n");
        }
        b.append("<h2>Latest alerts</h2>\n");
        if (alerts.isEmpty()) {
            b.append("<p id=\"no-alerts\">No alert in the telemetry table.</p>\n");
        } else {
            b.append("<table class=\"grid\" id=\"alerts-table\"><thead><tr><th>time (robot clock)</th><th>robot</th>"
                    + "<th>kind</th><th>text</th><th>values</th><th>episode</th></tr></thead><tbody>\n");
            for (Map<String, Object> a : alerts) {
                String ep = (String) a.get("episode_id");
                StringBuilder v = new StringBuilder();
                ((Map<String, Double>) a.get("values")).forEach((k, x) -> v.append(v.length() == 0 ? "" : " ").append(k)
                        .append('=').append(x));
                b.append("<tr data-message=\"").append(esc(a.get("message_id"))).append("\"><td>")
                        .append(esc(time(a.get("ts_ns")))).append("</td><td>").append(esc(a.get("robot_id")))
                        .append("</td><td class=\"c-kind\">").append(esc(a.get("kind"))).append("</td><td>")
                        .append(esc(a.get("text"))).append("</td><td>").append(esc(v)).append("</td><td class=\"c-episode\">")
                        .append(ep == null ? "" : "<a href=\"/episodes/" + esc(url(ep)) + "\">" + esc(ep) + "</a>")
                        .append("</td></tr>\n");
            }
            b.append("</tbody></table>\n");
        }
        b.append("<h2>Uploads in progress</h2>\n");
        if (!(Boolean) f.get("local_staging")) {
            b.append("<p>The gateway of an s3:// lake stages uploads in its own spool folder, which the console does not"
                    + " see.</p>\n");
        } else if (uploads.isEmpty()) {
            b.append("<p id=\"no-uploads\">None: every upload the gateway began has landed.</p>\n");
        } else {
            b.append("<table class=\"grid\" id=\"uploads-table\"><thead><tr><th>robot</th><th>file</th><th>episode</th>"
                    + "<th>staged</th><th>of</th><th>%</th><th>last chunk</th></tr></thead><tbody>\n");
            for (Map<String, Object> u : uploads) {
                b.append("<tr data-upload=\"").append(esc(u.get("upload_id"))).append("\"><td>").append(esc(u.get("robot_id")))
                        .append("</td><td>").append(esc(u.get("file_name"))).append("</td><td>").append(esc(u.get("episode_id")))
                        .append("</td><td class=\"c-staged\">").append(u.get("staged_bytes")).append("</td><td class=\"c-size\">")
                        .append(u.get("size_bytes")).append("</td><td class=\"c-percent\">").append(u.get("percent"))
                        .append("</td><td>").append(esc(ago((Double) u.get("idle_s")))).append("</td></tr>\n");
            }
            b.append("</tbody></table>\n");
        }
        return layout("Fleet", "fleet", Map.of(), b.toString());
    }

    private static String time(Object ns) {
        if (!(ns instanceof Long n)) {
            return "";
        }
        return Instant.ofEpochSecond(n / 1_000_000_000L, n % 1_000_000_000L).toString();
    }

    /** @return an age in words: "4.2 s ago", "3 min ago", "5 h ago", "2 d ago" */
    static String ago(double seconds) {
        if (seconds < 60) {
            return String.format(Locale.ROOT, "%.1f s ago", seconds);
        }
        if (seconds < 3600) {
            return String.format(Locale.ROOT, "%.0f min ago", seconds / 60);
        }
        if (seconds < 86400) {
            return String.format(Locale.ROOT, "%.0f h ago", seconds / 3600);
        }
        return String.format(Locale.ROOT, "%.0f d ago", seconds / 86400);
    }

    private static String battery(Map<String, Double> values) {
        if (values == null) {
            return "";
        }
        if (values.containsKey("soc_pct")) {
            return String.format(Locale.ROOT, "%.0f%%", values.get("soc_pct"));
        }
        StringBuilder v = new StringBuilder();
        values.forEach((k, x) -> v.append(v.length() == 0 ? "" : " ").append(k).append('=').append(x));
        return v.toString();
    }
}
