package io.flywheel.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.SerializationFeature;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.upload.UploadStats;
import io.flywheel.lake.Lake;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel gateway LAKE --grpc-port P}: the fleet gateway robots upload episodes to, until Ctrl-C. */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = "Serve the fleet gateway (gRPC, flywheel/fleet/v1/gateway.proto) over a local lake: robots"
                + " holding a token (gateway token add) upload MCAP files, ROS 1 bags and sidecar MP4 videos in"
                + " resumable chunks; each file is checked against its SHA-256, lands in LAKE/raw/<robot>/ and is"
                + " ingested like flywheel ingest --robot ROBOT. Prints a stats line every few seconds; Ctrl-C (or"
                + " SIGTERM) stops it, keeping uploads in flight staged for the next start. Plain-text HTTP/2: keep it"
                + " on a trusted network. Not yet: MQTT telemetry and live observation streams.",
        subcommands = {GatewayCommand.Token.class})
final class GatewayCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "LAKE", description = "lake folder (an s3:// lake cannot"
            + " take uploads yet)")
    String lake;

    @Mixin
    StorageOptions storage;

    @Option(names = "--grpc-port", paramLabel = "P", description = "TCP port; 0 picks a free one (default:"
            + " ${DEFAULT-VALUE})")
    int port = 50051;

    @Option(names = "--host", description = "interface to listen on, 0.0.0.0 for every one (default: ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--max-file-size", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "largest file accepted, e.g. 16GiB (default: 64GiB)")
    Long maxFileSize;

    @Option(names = "--quota", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "most bytes one robot may have staged in unfinished uploads (default: 256GiB)")
    Long quota;

    @Option(names = "--stats-every", paramLabel = "SECONDS", description = "seconds between stats lines; 0 for none"
            + " (default: ${DEFAULT-VALUE})")
    int statsEvery = 5;

    @Option(names = "--json", description = "machine-readable output: one JSON line when listening, one per stats"
            + " line, one when stopped")
    boolean json;

    @Override
    public Integer call() throws Exception {
        Usage.require(spec, lake != null, "Missing required parameter: 'LAKE'");
        Usage.require(spec, port >= 0 && port <= 65535, "--grpc-port must be in 0..65535, got " + port);
        Usage.require(spec, statsEvery >= 0, "--stats-every must be >= 0, got " + statsEvery);
        UploadLimits.Builder lb = UploadLimits.builder();
        if (maxFileSize != null) {
            lb.maxFileBytes(maxFileSize);
        }
        if (quota != null) {
            lb.robotQuotaBytes(quota);
        }
        GatewayOptions options = Usage.check(spec, null,
                () -> GatewayOptions.builder().host(host).port(port).limits(lb.build()).build());
        PrintStream out = System.out;
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        try (Lake l = Lake.open(lake, storage.lakeOptions())) {
            if (l.location().startsWith("s3://")) {
                System.err.println("flywheel gateway: warning: " + l.location() + " is an s3:// lake: every upload is"
                        + " refused (FAILED_PRECONDITION) until staging to S3 multipart uploads is built");
            }
            int tokens = RobotTokens.of(l).list().size();
            FleetGateway gw = FleetGateway.start(l, options);
            Thread hook = new Thread(() -> {
                stop.countDown();
                try {
                    stopped.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    // the JVM is stopping
                }
            }, "flywheel-gateway-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            Instant started = Instant.now();
            try {
                for (String p : gw.problems()) {
                    System.err.println("flywheel gateway: " + p);
                }
                UploadStats at0 = gw.stats();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("event", "listening");
                m.put("lake", l.location());
                m.put("target", gw.target());
                m.put("port", gw.port());
                m.put("tokens", tokens);
                m.put("staged_uploads", at0.staged());
                m.put("ingest_waiting", at0.ingestWaiting());
                if (json) {
                    line(out, m);
                } else {
                    out.println("Flywheel gateway for " + l.location() + " on " + gw.target() + " (gRPC; "
                            + tokens + " robot token(s); " + at0.staged() + " staged upload(s) to resume, "
                            + at0.ingestWaiting() + " landed file(s) to ingest). Ctrl-C stops it.");
                    if (tokens == 0) {
                        out.println("no robot can upload yet: flywheel gateway token add ROBOT " + lake);
                    }
                }
                out.flush();
                UploadStats last = at0;
                long lastNs = System.nanoTime();
                while (!stop.await(statsEvery == 0 ? 3600 : statsEvery, TimeUnit.SECONDS)) {
                    UploadStats s = gw.stats();
                    long now = System.nanoTime();
                    double mbps = (s.bytesReceived() - last.bytesReceived()) / 1e6 / ((now - lastNs) / 1e9);
                    last = s;
                    lastNs = now;
                    if (statsEvery > 0) {
                        if (json) {
                            Map<String, Object> j = stats(s);
                            j.put("event", "stats");
                            j.put("mb_per_s", Math.round(mbps * 100) / 100.0);
                            line(out, j);
                        } else {
                            out.println(statsLine(s, mbps));
                        }
                        out.flush();
                    }
                }
            } finally {
                gw.close();
                UploadStats s = gw.stats();
                double secs = Duration.between(started, Instant.now()).toMillis() / 1000.0;
                if (json) {
                    Map<String, Object> j = stats(s);
                    j.put("event", "stopped");
                    j.put("seconds", secs);
                    line(out, j);
                } else {
                    out.printf(Locale.ROOT, "gateway stopped after %.1f s: %d file(s) landed (%s received), %d"
                                    + " refused, %d ingested, %d ingest failure(s); %d upload(s) stay staged, %d landed"
                                    + " file(s) wait for ingest%n", secs, s.landed(), ByteSizeArg.human(s.bytesReceived()),
                            s.refused(), s.ingested(), s.ingestFailed(), s.staged(), s.ingestWaiting());
                }
                out.flush();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // Ctrl-C: the JVM is already stopping
                }
            }
        } finally {
            stopped.countDown();
        }
        return 0;
    }

    static String statsLine(UploadStats s, double mbps) {
        return String.format(Locale.ROOT, "uploads: %d active, %d staged, %d landed, %d refused; %.1f MB/s;"
                        + " ingest: %d waiting%s, %d ingested, %d failed", s.receiving(), s.staged(), s.landed(),
                s.refused(), mbps, s.ingestWaiting(), s.ingesting() > 0 ? " + 1 running" : "", s.ingested(),
                s.ingestFailed());
    }

    private static Map<String, Object> stats(UploadStats s) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("receiving", s.receiving());
        j.put("staged", s.staged());
        j.put("landed", s.landed());
        j.put("refused", s.refused());
        j.put("bytes_received", s.bytesReceived());
        j.put("ingest_waiting", s.ingestWaiting());
        j.put("ingesting", s.ingesting());
        j.put("ingested", s.ingested());
        j.put("ingest_failed", s.ingestFailed());
        return j;
    }

    static void line(PrintStream out, Object value) throws Exception {
        out.println(Json.MAPPER.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(value));
    }

    /** {@code flywheel gateway token add|list|revoke}: the robots' tokens, hashed in a lake property. */
    @Command(name = "token", mixinStandardHelpOptions = true,
            description = "Robot tokens of a lake's gateway: add (prints a new token once), list, revoke. Stored as"
                    + " salted SHA-256 hashes in the lake property " + RobotTokens.PROPERTY + ", one lake commit per"
                    + " change; a running gateway sees a change within 5 s.",
            subcommands = {Token.Add.class, Token.ListTokens.class, Token.Revoke.class})
    static final class Token implements Runnable {
        @Spec
        CommandSpec spec;

        @Override
        public void run() {
            throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
        }

        /** {@code flywheel gateway token add ROBOT LAKE}. */
        @Command(name = "add", mixinStandardHelpOptions = true,
                description = "Issue a token for a robot and print it once (it is not stored, only its hash): hand it"
                        + " to the robot (flywheel upload --token, or the authorization: Bearer header).")
        static final class Add implements Callable<Integer> {
            @Spec
            CommandSpec spec;

            @Parameters(index = "0", paramLabel = "ROBOT", description = "robot id: 1-64 characters of [A-Za-z0-9._-]")
            String robot;

            @Parameters(index = "1", paramLabel = "LAKE", description = "lake folder or s3://bucket/prefix")
            String lake;

            @Mixin
            StorageOptions storage;

            @Mixin
            JsonOutput json;

            @Override
            public Integer call() {
                String bad = UploadIds.checkRobotId(robot);
                Usage.require(spec, bad == null, "ROBOT: " + bad);
                RobotTokens.Issued t;
                try (Lake l = Lake.open(lake, storage.lakeOptions())) {
                    t = RobotTokens.add(l, robot);
                }
                if (json.enabled()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("robot_id", t.robotId());
                    m.put("token_id", t.id());
                    m.put("token", t.token());
                    m.put("lake_commit", t.lakeCommit());
                    Json.print(System.out, m);
                } else {
                    System.out.println(t.token());
                    System.err.println("token " + t.id() + " for robot " + t.robotId() + " added to " + lake
                            + " (lake commit " + t.lakeCommit() + "); it is shown only now: store it on the robot");
                }
                return 0;
            }
        }

        /** {@code flywheel gateway token list LAKE}. */
        @Command(name = "list", mixinStandardHelpOptions = true, description = "The tokens: id, robot, when issued.")
        static final class ListTokens implements Callable<Integer> {
            @Mixin
            LakeLocation at;

            @Mixin
            JsonOutput json;

            @Override
            public Integer call() {
                List<RobotTokens.TokenInfo> tokens;
                try (Lake l = at.open()) {
                    tokens = RobotTokens.of(l).list();
                }
                if (json.enabled()) {
                    List<Map<String, Object>> rows = new ArrayList<>();
                    for (RobotTokens.TokenInfo t : tokens) {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("token_id", t.id());
                        m.put("robot_id", t.robotId());
                        m.put("created_at_ns", t.createdAtNs());
                        rows.add(m);
                    }
                    Json.print(System.out, Map.of("tokens", rows));
                } else {
                    for (RobotTokens.TokenInfo t : tokens) {
                        System.out.println(t.id() + "  " + t.robotId() + "  "
                                + Instant.ofEpochMilli(t.createdAtNs() / 1_000_000L));
                    }
                    System.out.println(tokens.size() + " token(s) in " + at.uri());
                }
                return 0;
            }
        }

        /** {@code flywheel gateway token revoke LAKE [ID...] [--robot R]}. */
        @Command(name = "revoke", mixinStandardHelpOptions = true,
                description = "Revoke tokens by id, or every token of a robot (--robot); all or nothing.")
        static final class Revoke implements Callable<Integer> {
            @Spec
            CommandSpec spec;

            @Mixin
            LakeLocation at;

            @Parameters(index = "1..*", arity = "0..*", paramLabel = "ID", description = "token ids (token list)")
            List<String> ids;

            @Option(names = "--robot", paramLabel = "ROBOT", description = "revoke every token of this robot"
                    + " (repeatable)")
            List<String> robots;

            @Mixin
            JsonOutput json;

            @Override
            public Integer call() {
                List<String> i = ids == null ? List.of() : ids;
                List<String> r = robots == null ? List.of() : robots;
                Usage.require(spec, !i.isEmpty() || !r.isEmpty(), "name token ids or --robot ROBOT");
                List<RobotTokens.TokenInfo> gone;
                try (Lake l = at.open()) {
                    gone = RobotTokens.revoke(l, i, r);
                }
                if (json.enabled()) {
                    Json.print(System.out, Map.of("revoked", gone.stream().map(RobotTokens.TokenInfo::id).toList()));
                } else {
                    for (RobotTokens.TokenInfo t : gone) {
                        System.out.println("revoked " + t.id() + " (robot " + t.robotId() + ")");
                    }
                    System.out.println(gone.size() + " token(s) revoked in " + at.uri());
                }
                return 0;
            }
        }
    }
}
