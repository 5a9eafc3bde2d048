package io.flywheel.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code flywheel qc report LAKE}: the quality status and flags stored on {@code episodes}; with {@code --rules}, the
 * stored episode metrics re-evaluated with another rule file (no re-ingest), and with {@code --apply} the new
 * status and flags committed to {@code episodes} as a new version.
 */
@Command(name = "qc", mixinStandardHelpOptions = true, description = "Quality rules over episodes.",
        subcommands = {QcCommand.Report.class})
final class QcCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    @Command(name = "report", mixinStandardHelpOptions = true,
            description = "Per episode: source file, robot, task, status (pass / warn / fail), failed rules, duration and"
                    + " frames; then totals. With --rules: the stored metrics re-evaluated with that rule file, old and new"
                    + " status side by side (read-only unless --apply).")
    static final class Report implements Callable<Integer> {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @picocli.CommandLine.Mixin
        LakeLocation location;

        @Option(names = "--status", description = "only episodes with this status: pass, warn or fail")
        String status;

        @Option(names = "--rules", paramLabel = "YAML", description = "re-evaluate the episode metrics stored in the"
                + " lake with this rule file instead of showing the stored status; nothing is re-ingested")
        java.nio.file.Path rules;

        @Option(names = "--apply", description = "with --rules: commit the new quality_status, quality_flags and rule"
                + " results to episodes as a new table version (default: read-only)")
        boolean apply;

        @picocli.CommandLine.Mixin
        JsonOutput jsonOutput;

        private String lake;
        private boolean json;

        @Override
        public Integer call() throws java.io.IOException {
            Usage.require(spec, !apply || rules != null, "--apply needs --rules: it commits a re-evaluation");
            Usage.require(spec, status == null || status.matches("pass|warn|fail"),
                    "--status '" + status + "': expected pass, warn or fail");
            lake = location.uri();
            json = jsonOutput.enabled();
            if (rules != null) {
                return reevaluate(io.flywheel.quality.RuleSet.load(rules));
            }
            List<EpisodeRow> rows;
            try (Lake l = location.open(); LakeTable t = l.table("episodes")) {
                ScanRequest.Builder b = ScanRequest.builder();
                if (status != null) {
                    b.filter("quality_status = '" + status + "'");
                }
                rows = new ArrayList<>(t.episodes(b.build()));
            }
            rows.sort((a, b) -> a.episodeId().compareTo(b.episodeId()));
            Map<String, Long> byStatus = new TreeMap<>();
            Map<String, Long> byRule = new TreeMap<>();
            for (EpisodeRow r : rows) {
                byStatus.merge(r.qualityStatus(), 1L, Long::sum);
                for (String f : r.qualityFlags() == null ? List.<String>of() : r.qualityFlags()) {
                    byRule.merge(f, 1L, Long::sum);
                }
            }
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                List<Map<String, Object>> eps = new ArrayList<>();
                for (EpisodeRow r : rows) {
                    Map<String, Object> e = new LinkedHashMap<>();
                    e.put("episode_id", r.episodeId());
                    e.put("source_files", sourceFiles(r));
                    e.put("robot_id", r.robotId());
                    e.put("task", r.task());
                    e.put("status", r.qualityStatus());
                    e.put("flags", r.qualityFlags() == null ? List.of() : r.qualityFlags());
                    e.put("duration_ns", r.durationNs() == null ? 0 : r.durationNs());
                    e.put("frames", r.frameCount() == null ? 0 : r.frameCount());
                    eps.add(e);
                }
                m.put("episodes", eps);
                m.put("by_status", byStatus);
                m.put("by_rule", byRule);
                Json.print(System.out, m);
                return 0;
            }
            List<String[]> cells = new ArrayList<>();
            for (EpisodeRow r : rows) {
                List<String> files = sourceFiles(r);
                cells.add(new String[] {r.episodeId(),
                        files.isEmpty() ? "-" : files.get(0) + (files.size() > 1 ? " +" + (files.size() - 1) : ""),
                        r.robotId() == null || r.robotId().isEmpty() ? "-" : r.robotId(), shorten(r.task(), 40)});
            }
            int[] w = {7, 4, 5, 4};
            for (String[] c : cells) {
                for (int i = 0; i < w.length; i++) {
                    w[i] = Math.max(w[i], c[i].length());
                }
            }
            String head = "%-" + w[0] + "s  %-" + w[1] + "s  %-" + w[2] + "s  %-" + w[3] + "s  ";
            System.out.printf(Locale.ROOT, head + "%-6s %9s %7s  %s%n", "episode", "file", "robot", "task", "status",
                    "duration", "frames", "flags");
            for (int i = 0; i < rows.size(); i++) {
                EpisodeRow r = rows.get(i);
                String[] c = cells.get(i);
                System.out.printf(Locale.ROOT, head + "%-6s %8.2fs %7d  %s%n", c[0], c[1], c[2], c[3],
                        r.qualityStatus(), r.durationNs() == null ? 0 : r.durationNs() / 1e9,
                        r.frameCount() == null ? 0 : r.frameCount(),
                        r.qualityFlags() == null ? "" : String.join(", ", r.qualityFlags()));
            }
            System.out.println(rows.size() + " episode(s): " + byStatus + (byRule.isEmpty() ? "" : "; rules fired: " + byRule));
            return 0;
        }

        /** Reads the stored metrics (written by the ingest with Jackson's default, camelCase field names). */
        private static final com.fasterxml.jackson.databind.ObjectMapper METRICS = new com.fasterxml.jackson.databind.ObjectMapper()
                .configure(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

        /**
         * One episode re-evaluated.
         *
         * @param episodeId the episode
         * @param sourceFiles its raw file names
         * @param oldStatus status stored in the lake
         * @param status status under the new rules
         * @param oldFlags flags stored
         * @param flags flags under the new rules
         * @param changed status or flags differ
         * @param messages one line per rule that fired under the new rules (the rule's message with the value)
         */
        record Reevaluated(String episodeId, List<String> sourceFiles, String oldStatus, String status,
                           List<String> oldFlags, List<String> flags, boolean changed, List<String> messages) {}

        private int reevaluate(io.flywheel.quality.RuleSet ruleSet) throws java.io.IOException {
            List<Reevaluated> out = new ArrayList<>();
            List<EpisodeRow> updated = new ArrayList<>();
            Map<String, Long> byStatus = new TreeMap<>();
            Map<String, Long> transitions = new TreeMap<>();
            Long fromVersion = null;
            Long toVersion = null;
            boolean anyChanged = false;
            try (Lake l = location.open()) {
                List<EpisodeRow> rows;
                try (LakeTable t = l.table("episodes")) {
                    rows = new ArrayList<>(t.episodes(ScanRequest.all()));
                    fromVersion = t.version();
                }
                rows.sort((a, b) -> a.episodeId().compareTo(b.episodeId()));
                for (EpisodeRow r : rows) {
                    JsonNode stored;
                    io.flywheel.quality.EpisodeMetrics m;
                    try {
                        stored = METRICS.readTree(r.qualityMetricsJson() == null ? "" : r.qualityMetricsJson());
                        if (stored == null || !stored.has("metrics")) {
                            throw new IllegalStateException("no \"metrics\" object");
                        }
                        m = METRICS.treeToValue(stored.get("metrics"), io.flywheel.quality.EpisodeMetrics.class);
                    } catch (java.io.IOException | RuntimeException e) {
                        throw new io.flywheel.error.BadInputException(lake + ": episode " + r.episodeId()
                                + ": stored quality_metrics cannot be read as episode metrics (" + e.getMessage().lines().findFirst().orElse("")
                                + "); re-ingest it", e);
                    }
                    io.flywheel.quality.QualityReport q = ruleSet.evaluate(m);
                    String status = q.status().name().toLowerCase(Locale.ROOT);
                    List<String> oldFlags = r.qualityFlags() == null ? List.of() : r.qualityFlags();
                    boolean changed = !status.equals(r.qualityStatus()) || !q.flags().equals(oldFlags);
                    anyChanged |= changed;
                    List<String> msgs = new ArrayList<>();
                    for (io.flywheel.quality.RuleResult rr : q.results()) {
                        if (rr.outcome() == io.flywheel.quality.RuleResult.Outcome.FAIL) {
                            msgs.add(rr.message());
                        }
                    }
                    byStatus.merge(status, 1L, Long::sum);
                    if (!status.equals(r.qualityStatus())) {
                        transitions.merge(r.qualityStatus() + " -> " + status, 1L, Long::sum);
                    }
                    Reevaluated e = new Reevaluated(r.episodeId(), sourceFiles(r), r.qualityStatus(), status, oldFlags,
                            q.flags(), changed, msgs);
                    if (this.status == null || this.status.equals(status)) {
                        out.add(e);
                    }
                    Map<String, Object> qm = new LinkedHashMap<>();
                    qm.put("metrics", stored.get("metrics"));
                    qm.put("results", q.results());
                    qm.put("rules", ruleSet.source());
                    updated.add(new EpisodeRow(r.episodeId(), r.recordingId(), r.robotId(), r.task(), r.scene(),
                            r.operator(), r.outcome(), r.startNs(), r.endNs(), r.durationNs(), r.masterTopic(),
                            r.frameCount(), status, q.flags(), METRICS.writeValueAsString(qm), r.metadataJson()));
                }
                // a rule file that changes no episode's status or flags commits nothing (no empty version)
                if (apply && anyChanged) {
                    // column-scoped: only the quality columns are written; embeddings, enrichment and labels keep
                    // their bytes
                    toVersion = l.begin("qc").summary("rules", ruleSet.source())
                            .updateEpisodes(io.flywheel.lake.TableSchemas.QUALITY_COLUMNS, updated).commit()
                            .table("episodes").toVersion();
                }
            }
            long changed = out.stream().filter(Reevaluated::changed).count();
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("rules", ruleSet.source());
                m.put("episodes", out);
                m.put("by_status", byStatus);
                m.put("status_changes", transitions);
                m.put("changed", changed);
                m.put("applied", apply);
                m.put("committed", toVersion != null);
                m.put("episodes_version", toVersion != null ? toVersion : fromVersion);
                Json.print(System.out, m);
                return 0;
            }
            int w = Math.max(7, out.stream().mapToInt(e -> e.episodeId().length()).max().orElse(7));
            System.out.printf(Locale.ROOT, "%-" + w + "s  %-6s    %-6s  %s%n", "episode", "stored", "new", "new flags");
            for (Reevaluated e : out) {
                System.out.printf(Locale.ROOT, "%-" + w + "s  %-6s -> %-6s  %s%s%n", e.episodeId(), e.oldStatus(), e.status(),
                        String.join(", ", e.flags()), e.changed() ? "" : "  (unchanged)");
                for (String msg : e.messages()) {
                    System.out.println("    " + msg);
                }
            }
            System.out.println(rows(out.size()) + " re-evaluated with " + ruleSet.source() + ": " + changed
                    + " changed; status changes " + transitions + "; now " + byStatus + "; "
                    + (!apply ? "read-only (--apply commits it)" : toVersion == null
                    ? "nothing to commit (episodes stay at version " + fromVersion + ")"
                    : "committed to episodes (version " + fromVersion + " -> " + toVersion + ")"));
            return 0;
        }

        private static String rows(int n) {
            return n + " episode(s)";
        }

        /** @return the file names (no folder) of the episode's {@code source_files} metadata, in order; empty if none */
        static List<String> sourceFiles(EpisodeRow r) {
            if (r.metadataJson() == null || r.metadataJson().isEmpty()) {
                return List.of();
            }
            JsonNode files;
            try {
                files = Json.MAPPER.readTree(r.metadataJson()).path("source_files");
            } catch (java.io.IOException e) {
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (JsonNode f : files) {
                String u = f.asText();
                String path = u.startsWith("file:") ? java.net.URI.create(u).getPath() : u;
                out.add(path.substring(path.lastIndexOf('/') + 1));
            }
            return out;
        }

        private static String shorten(String s, int max) {
            if (s == null || s.isEmpty()) {
                return "-";
            }
            return s.length() <= max ? s : s.substring(0, max - 3) + "...";
        }
    }
}
