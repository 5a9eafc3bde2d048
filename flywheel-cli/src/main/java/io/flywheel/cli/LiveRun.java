package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.sim.Faults;
import io.flywheel.fleet.sim.LiveCheck;
import io.flywheel.fleet.sim.LiveFleet;
import io.flywheel.fleet.sim.LiveFleetOptions;
import io.flywheel.fleet.sim.LiveFleetReport;
import io.flywheel.fleet.sim.LiveProgress;
import io.flywheel.fleet.sim.TokenFile;
import io.flywheel.lake.Lake;
import io.flywheel.sim.FleetPlan;
import io.flywheel.sim.SimOptions;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code flywheel sim --live}: parses the live options, gets the robots' tokens (a tokens file, or issued in the
 * gateway's lake), runs {@link LiveFleet}, checks the run against the lake ({@link LiveCheck}) and prints the summary.
 * Exit 0 when every upload landed (and was ingested, unless {@code --no-wait}) and every check passed, 1 otherwise.
 */
final class LiveRun {
    /** How long the check waits for the last telemetry batches, ingests and alert links. */
    static final Duration CHECK_WAIT = Duration.ofSeconds(60);

    private final CommandSpec spec;
    private final SimCommand.Live live;
    private final boolean json;
    private boolean keepsFiles;

    LiveRun(CommandSpec spec, SimCommand.Live live, boolean json) {
        this.spec = spec;
        this.live = live;
        this.json = json;
    }

    int run(SimOptions.Builder fleet, Path out, boolean force) throws Exception {
        Usage.require(spec, live.gateway != null, "--live needs --gateway HOST:PORT");
        Usage.require(spec, live.tokens != null || live.lake != null, "--live needs the robots' tokens: --tokens FILE"
                + " or --lake LAKE (tokens issued there)");
        Usage.require(spec, !live.noCheck || live.lake != null, "--no-check is for a run checked against --lake");
        Usage.atLeast(spec, "--wait-timeout", live.waitTimeout, 0);
        double speed = live.speed.equalsIgnoreCase("max") ? 0 : Usage.check(spec, "--speed", () -> {
            try {
                return Double.parseDouble(live.speed);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--speed must be a number or max, got '" + live.speed + "'");
            }
        });
        Faults faults = Usage.check(spec, "--faults", () -> Faults.parse(live.faults));
        keepsFiles = out != null;
        SimOptions checked = Usage.check(spec, null, () -> {
            try {
                return fleet.outDir(keepsFiles ? out : Path.of("robots")).build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(SimCommand.optionNames(e.getMessage()));
            }
        });
        if (live.chunkSize != null) {
            Usage.inRange(spec, "--chunk-size", live.chunkSize, 1024, 4 << 20);
        }
        Usage.check(spec, null, () -> builder(checked, speed, faults).build()); // gateway, broker, chunk size
        if (keepsFiles) {
            SimCommand.prepareOut(out, force);
        }
        Map<String, String> tokens = live.tokens != null ? TokenFile.read(live.tokens) : new TreeMap<>();
        List<String> robots = FleetPlan.plan(checked).robots().stream().map(FleetPlan.Robot::robotId).toList();
        List<String> missing = robots.stream().filter(r -> !tokens.containsKey(r)).toList();
        Lake lake = live.lake != null ? Lake.open(live.lake) : null;
        List<String> issued = new ArrayList<>();
        Path robotsDisk = keepsFiles ? out : null;
        try {
            if (!keepsFiles) {
                robotsDisk = Files.createTempDirectory("flywheel-sim-live");
            }
            SimOptions options = checked.toBuilder().outDir(robotsDisk).build();
            LiveFleetOptions.Builder lb = builder(options, speed, faults);
            if (!missing.isEmpty() && lake != null) {
                for (RobotTokens.Issued t : RobotTokens.add(lake, missing)) {
                    tokens.put(t.robotId(), t.token());
                    issued.add(t.id());
                }
            }
            LiveFleetOptions o = lb.tokens(tokens).build();
            PrintStream err = System.err;
            if (!json) {
                err.println("sim --live: " + robots.size() + " robot(s), " + options.episodes() + " episode(s) of"
                        + " about " + num(options.episodeSeconds()) + " s, to " + live.gateway
                        + (live.mqtt == null ? " (no telemetry)" : " and " + live.mqtt) + ", speed "
                        + (speed == 0 ? "max" : num(speed) + "x") + ", faults " + faults
                        + (issued.isEmpty() ? "" : "; " + issued.size() + " token(s) issued in " + live.lake));
            }
            LiveFleetReport report = LiveFleet.run(o, json ? LiveProgress.Listener.NONE : progress(err));
            LiveCheck.Result check = lake != null && !live.noCheck ? LiveCheck.check(lake, report, CHECK_WAIT) : null;
            if (json) {
                Json.print(System.out, json(report, check, o));
            } else {
                print(System.out, report, check, o);
                for (String f : report.failures()) {
                    err.println("flywheel sim: " + f);
                }
                if (check != null) {
                    for (String p : check.problems()) {
                        err.println("flywheel sim: check: " + p);
                    }
                }
            }
            return report.ok() && (check == null || check.ok()) ? 0 : 1;
        } finally {
            try {
                if (!issued.isEmpty()) {
                    RobotTokens.revoke(lake, issued, List.of());
                }
            } finally {
                if (lake != null) {
                    lake.close();
                }
                if (!keepsFiles && robotsDisk != null) {
                    ScratchFolders.delete(robotsDisk);
                }
            }
        }
    }

    private LiveFleetOptions.Builder builder(SimOptions fleet, double speed, Faults faults) {
        LiveFleetOptions.Builder b = LiveFleetOptions.builder(fleet, live.gateway).mqtt(live.mqtt).speed(speed)
                .faults(faults).waitForIngest(!live.noWait, Duration.ofSeconds(live.waitTimeout))
                .streamEvents(live.streamEvents);
        if (live.chunkSize != null) {
            b.chunkBytes(live.chunkSize.intValue());
        }
        return b;
    }

    private static LiveProgress.Listener progress(PrintStream err) {
        boolean console = System.console() != null;
        long[] last = {0};
        boolean[] ended = {false};
        return p -> {
            long now = System.nanoTime();
            boolean done = p.uploaded() == p.total();
            if (ended[0] || !done && now - last[0] < (console ? 250_000_000L : 2_000_000_000L)) {
                return;
            }
            last[0] = now;
            ended[0] = done;
            double s = Math.max(1e-9, p.elapsedNanos() / 1e9);
            err.printf(Locale.ROOT, "%ssim --live: %d/%d episodes uploaded (%d recorded), %.1f episodes/s, %.1f MB/s,"
                            + " %,d messages, %d upload cut(s), %d MQTT cut(s), ETA %s%s", console ? "\r" : "",
                    p.uploaded(), p.total(), p.recorded(), p.episodesPerSecond(), p.bytesUploaded() / s / 1e6,
                    p.published(), p.uploadCuts(), p.mqttCuts(), p.uploaded() == 0 ? "-"
                            : String.format(Locale.ROOT, "%.0fs", p.etaSeconds()), console && !done ? "   " : "\n");
            err.flush();
        };
    }

    private void print(PrintStream o, LiveFleetReport r, LiveCheck.Result c, LiveFleetOptions opt) {
        long[] q = r.published();
        o.printf(Locale.ROOT, "live fleet of %d robot(s) to %s: %d episode(s) recorded, %d uploaded, %d already in the"
                        + " lake, %s; %.1f MB (%.1f MB/s)%n", r.robots(), opt.gateway(), r.episodesRecorded(),
                r.uploaded(), r.alreadyInLake(), opt.waitForIngest() ? r.ingested() + " ingested, " + r.ingestFailed()
                        + " failed" : "ingest not waited for", r.bytes() / 1e6,
                r.bytes() / 1e6 / Math.max(1e-3, r.wallSeconds()));
        if (opt.mqtt() != null) {
            o.printf(Locale.ROOT, "telemetry to %s: %,d message(s): %,d QoS 0, %,d QoS 1, %,d QoS 2%n", opt.mqtt(),
                    r.publishedTotal(), q[0], q[1], q[2]);
        }
        if (opt.faults().any()) {
            o.printf(Locale.ROOT, "faults (%s): %d upload(s) cut, %d resumed from a staged offset (%,d bytes sent"
                            + " again); %d alert(s) published twice; %d MQTT cut(s) with %d QoS 1/2 message(s) in"
                            + " flight, %d reconnect(s)%n", opt.faults(), r.uploadCuts(), r.uploadsResumed(),
                    Math.max(0, r.bytesSent() - r.bytes()), r.duplicatesInjected(), r.mqttCuts(), r.inFlightAtCuts(),
                    r.reconnects());
        }
        o.printf(Locale.ROOT, "robot time: %.0f s recorded, a day of %.0f s per robot lived in %.1f s (%.1fx real time,"
                        + " --speed %s); %.1f s in all%n", r.recordedSeconds(), r.timelineSeconds(),
                r.recordingWallSeconds(), r.speedAchieved(), opt.speed() == 0 ? "max" : num(opt.speed()),
                r.wallSeconds());
        if (c != null) {
            o.printf(Locale.ROOT, "check against %s: %d/%d episode(s) in raw_files once with one episodes row, %d/%d"
                            + " QoS 1/2 message(s) in telemetry once, %d/%d alert(s) linked to their episode: %s%n",
                    live.lake, c.episodesOnce(), c.episodes(), c.messagesOnce(), c.messages(), c.alertsLinked(),
                    c.alerts(), c.ok() ? "ok" : "FAILED");
        }
        o.println(keepsFiles ? "ground truth: " + r.groundTruth() + (opt.streamEvents() ? ", stream labels' truth: "
                + r.groundTruth().resolveSibling(io.flywheel.fleet.sim.LiveFleet.STREAM_TRUTH) : "")
                : "the recordings were on a temporary disk, removed now (--out DIR keeps them, with ground_truth.json)");
    }

    private Map<String, Object> json(LiveFleetReport r, LiveCheck.Result c, LiveFleetOptions o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", r.ok() && (c == null || c.ok()));
        m.put("gateway", o.gateway());
        m.put("mqtt", o.mqtt());
        m.put("speed", o.speed());
        m.put("faults", Map.of("cut", o.faults().cut(), "duplicate", o.faults().duplicate(), "reconnect",
                o.faults().reconnect()));
        m.put("robots", r.robots());
        m.put("episodes_recorded", r.episodesRecorded());
        m.put("uploaded", r.uploaded());
        m.put("already_in_lake", r.alreadyInLake());
        m.put("ingested", r.ingested());
        m.put("ingest_failed", r.ingestFailed());
        m.put("bytes", r.bytes());
        m.put("bytes_sent", r.bytesSent());
        m.put("upload_cuts", r.uploadCuts());
        m.put("uploads_resumed", r.uploadsResumed());
        m.put("published", Map.of("qos0", r.published()[0], "qos1", r.published()[1], "qos2", r.published()[2]));
        m.put("duplicates_injected", r.duplicatesInjected());
        m.put("mqtt_cuts", r.mqttCuts());
        m.put("reconnects", r.reconnects());
        m.put("in_flight_at_cuts", r.inFlightAtCuts());
        m.put("unacknowledged", r.unacknowledged());
        m.put("recorded_seconds", r.recordedSeconds());
        m.put("timeline_seconds", r.timelineSeconds());
        m.put("recording_wall_seconds", r.recordingWallSeconds());
        m.put("speed_achieved", r.speedAchieved());
        m.put("wall_seconds", r.wallSeconds());
        m.put("failures", r.failures());
        m.put("check", c);
        m.put("ground_truth", keepsFiles ? r.groundTruth() : null);
        m.put("episodes", r.episodeList());
        m.put("messages", r.messages());
        return m;
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
