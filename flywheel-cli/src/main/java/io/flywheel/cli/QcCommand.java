package io.flywheel.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.JsonNode;

import io.flywheel.lake.EpisodeRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flywheel qc report LAKE}: the quality status and flags stored on {@code episodes}. */
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
                    + " frames; then totals.")
    static final class Report implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "LAKE", description = "lake folder or s3:// URI")
        String lake;

        @Option(names = "--status", description = "only episodes with this status: pass, warn or fail")
        String status;

        @Option(names = "--json", description = "machine-readable output")
        boolean json;

        @Override
        public Integer call() {
            List<EpisodeRow> rows;
            try (Lake l = Lake.open(lake); LakeTable t = l.table("episodes")) {
                ScanRequest.Builder b = ScanRequest.builder();
                if (status != null) {
                    if (!status.matches("pass|warn|fail")) {
                        throw new IllegalArgumentException("--status '" + status + "': expected pass, warn or fail");
                    }
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
