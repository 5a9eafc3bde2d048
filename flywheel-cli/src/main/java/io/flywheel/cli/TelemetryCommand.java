package io.flywheel.cli;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.eval.TelemetryDetail;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code flywheel telemetry ...}: fleet telemetry detail over the telemetry table (DuckDB over Lance scans). */
@Command(name = "telemetry", mixinStandardHelpOptions = true, description = "Fleet telemetry detail over the lake's"
        + " telemetry table.", subcommands = {TelemetryCommand.Hourly.class})
final class TelemetryCommand implements Runnable {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec);
    }

    /** {@code flywheel telemetry hourly LAKE}. */
    @Command(name = "hourly", mixinStandardHelpOptions = true, description = "Per robot and UTC hour: median and 99th"
            + " percentile of the joint temperatures (every reading of the joint_temp messages), readings, alerts.")
    static final class Hourly implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Mixin
        LakeLocation at;

        @Option(names = "--robot", paramLabel = "ID", description = "one robot only")
        String robot;

        @Option(names = "--since", paramLabel = "TIME", converter = TimeArg.class, description = "from ts_ns TIME on"
                + " (seconds, 123ns, or ISO-8601)")
        Long since;

        @Option(names = "--until", paramLabel = "TIME", converter = TimeArg.class, description = "before ts_ns TIME")
        Long until;

        @Option(names = "--kind", paramLabel = "KIND", description = "the temperature messages' kind (default:"
                + " ${DEFAULT-VALUE})")
        String kind = TelemetryDetail.JOINT_TEMP;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            Usage.require(spec, since == null || until == null || since < until, "--since must be before --until");
            long t0 = System.nanoTime();
            TelemetryDetail d;
            try (Lake lake = at.open()) {
                d = TelemetryDetail.of(lake, new TelemetryDetail.Query(robot, since, until, kind));
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            long alerts = d.hours().stream().mapToLong(TelemetryDetail.Hour::alerts).sum();
            long readings = d.hours().stream().mapToLong(TelemetryDetail.Hour::readings).sum();
            long robots = d.hours().stream().map(TelemetryDetail.Hour::robotId).distinct().count();
            if (json.enabled()) {
                List<Map<String, Object>> hs = new ArrayList<>();
                for (TelemetryDetail.Hour h : d.hours()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("robot_id", h.robotId());
                    m.put("hour", Instant.ofEpochSecond(0, h.hourStartNs()).toString());
                    m.put("hour_start_ns", h.hourStartNs());
                    m.put("p50", h.p50());
                    m.put("p99", h.p99());
                    m.put("readings", h.readings());
                    m.put("alerts", h.alerts());
                    hs.add(m);
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("kind", kind);
                m.put("robots", robots);
                m.put("readings", readings);
                m.put("alerts", alerts);
                m.put("hours", hs);
                m.put("seconds", Math.round(secs * 1000) / 1000.0);
                Json.print(System.out, m);
                return 0;
            }
            List<List<String>> rows = new ArrayList<>();
            for (TelemetryDetail.Hour h : d.hours()) {
                rows.add(List.of(h.robotId(), Instant.ofEpochSecond(0, h.hourStartNs()).toString(),
                        h.p50() == null ? "-" : String.format(Locale.ROOT, "%.2f", h.p50()),
                        h.p99() == null ? "-" : String.format(Locale.ROOT, "%.2f", h.p99()),
                        String.valueOf(h.readings()), String.valueOf(h.alerts())));
            }
            if (!rows.isEmpty()) {
                TextTable.print(System.out, List.of("robot", "hour", kind + " p50", "p99", "readings", "alerts"), rows);
            }
            System.out.printf(Locale.ROOT, "%d robot-hour(s) of %d robot(s): %d %s reading(s), %d alert(s), in %.2f s%n",
                    d.hours().size(), robots, readings, kind, alerts, secs);
            return 0;
        }
    }
}
