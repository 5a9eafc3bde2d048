package io.flywheel.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

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
            description = "Per episode: status (pass / warn / fail), failed rules, duration and frames; then totals.")
    static final class Report implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "LAKE")
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
                m.put("episodes", rows.stream().map(r -> Map.of("episode_id", r.episodeId(), "status", r.qualityStatus(),
                        "flags", r.qualityFlags() == null ? List.of() : r.qualityFlags(),
                        "duration_ns", r.durationNs() == null ? 0 : r.durationNs(),
                        "frames", r.frameCount() == null ? 0 : r.frameCount())).toList());
                m.put("by_status", byStatus);
                m.put("by_rule", byRule);
                Json.print(System.out, m);
                return 0;
            }
            int w = rows.stream().mapToInt(r -> r.episodeId().length()).max().orElse(10);
            System.out.printf(Locale.ROOT, "%-" + w + "s  %-6s %9s %7s  %s%n", "episode", "status", "duration", "frames",
                    "flags");
            for (EpisodeRow r : rows) {
                System.out.printf(Locale.ROOT, "%-" + w + "s  %-6s %8.2fs %7d  %s%n", r.episodeId(), r.qualityStatus(),
                        r.durationNs() == null ? 0 : r.durationNs() / 1e9, r.frameCount() == null ? 0 : r.frameCount(),
                        r.qualityFlags() == null ? "" : String.join(", ", r.qualityFlags()));
            }
            System.out.println(rows.size() + " episode(s): " + byStatus + (byRule.isEmpty() ? "" : "; rules fired: " + byRule));
            return 0;
        }
    }
}
