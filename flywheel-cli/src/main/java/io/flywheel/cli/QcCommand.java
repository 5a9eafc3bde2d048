package io.flywheel.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

import io.flywheel.curate.SourceFiles;
import io.flywheel.curate.quality.QualityReevaluation;
import io.flywheel.curate.quality.StoredQuality;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EpisodeRow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code flywheel qc report LAKE}: the quality status and flags stored on {@code episodes} ({@link StoredQuality});
 * with {@code --rules}, the stored episode metrics re-evaluated with another rule file (no re-ingest), and with
 * {@code --apply} the new status and flags committed to {@code episodes} as a new version
 * ({@link QualityReevaluation}).
 */
@Command(name = "qc", mixinStandardHelpOptions = true, description = "Quality rules over episodes.",
        subcommands = {QcCommand.Report.class})
final class QcCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
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

        private boolean json;

        @Override
        public Integer call() throws java.io.IOException {
            Usage.require(spec, !apply || rules != null, "--apply needs --rules: it commits a re-evaluation");
            Usage.require(spec, status == null || StoredQuality.STATUSES.contains(status),
                    "--status '" + status + "': expected pass, warn or fail");
            json = jsonOutput.enabled();
            if (rules != null) {
                return reevaluate(io.flywheel.quality.RuleSet.load(rules));
            }
            StoredQuality stored;
            try (Lake l = location.open()) {
                stored = StoredQuality.read(l, status);
            }
            List<EpisodeRow> rows = stored.episodes();
            Map<String, Long> byStatus = stored.byStatus();
            Map<String, Long> byRule = stored.byRule();
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                List<Map<String, Object>> eps = new ArrayList<>();
                for (EpisodeRow r : rows) {
                    Map<String, Object> e = new LinkedHashMap<>();
                    e.put("episode_id", r.episodeId());
                    e.put("source_files", SourceFiles.names(r.metadataJson()));
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
                List<String> files = SourceFiles.names(r.metadataJson());
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

        private int reevaluate(io.flywheel.quality.RuleSet ruleSet) {
            QualityReevaluation q;
            Long toVersion = null;
            try (Lake l = location.open()) {
                q = QualityReevaluation.evaluate(l, ruleSet);
                if (apply) {
                    OptionalLong v = q.commit(l); // nothing when no episode changes (no empty version)
                    toVersion = v.isPresent() ? v.getAsLong() : null;
                }
            }
            long fromVersion = q.episodesVersion();
            Map<String, Long> byStatus = q.byStatus();
            Map<String, Long> transitions = q.statusChanges();
            List<QualityReevaluation.Episode> out = q.episodes().stream()
                    .filter(e -> this.status == null || this.status.equals(e.status())).toList();
            long changed = out.stream().filter(QualityReevaluation.Episode::changed).count();
            if (json) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("rules", q.rules());
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
            for (QualityReevaluation.Episode e : out) {
                System.out.printf(Locale.ROOT, "%-" + w + "s  %-6s -> %-6s  %s%s%n", e.episodeId(), e.oldStatus(), e.status(),
                        String.join(", ", e.flags()), e.changed() ? "" : "  (unchanged)");
                for (String msg : e.messages()) {
                    System.out.println("    " + msg);
                }
            }
            System.out.println(rows(out.size()) + " re-evaluated with " + q.rules() + ": " + changed
                    + " changed; status changes " + transitions + "; now " + byStatus + "; "
                    + (!apply ? "read-only (--apply commits it)" : toVersion == null
                    ? "nothing to commit (episodes stay at version " + fromVersion + ")"
                    : "committed to episodes (version " + fromVersion + " -> " + toVersion + ")"));
            return 0;
        }

        private static String rows(int n) {
            return n + " episode(s)";
        }

        private static String shorten(String s, int max) {
            if (s == null || s.isEmpty()) {
                return "-";
            }
            return s.length() <= max ? s : s.substring(0, max - 3) + "...";
        }
    }
}
