package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
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
import io.flywheel.fleet.client.TlsFiles;
import io.flywheel.fleet.relay.KafkaRelay;
import io.flywheel.fleet.telemetry.EmbeddedBroker;
import io.flywheel.stream.topics.EmbeddedKafka;
import io.flywheel.fleet.telemetry.TelemetryOptions;
import io.flywheel.fleet.telemetry.TelemetryStats;
import io.flywheel.fleet.telemetry.TelemetrySubscriber;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.live.LiveStreamService;
import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.upload.UploadStats;
import io.flywheel.lake.AlertLinks;
import io.flywheel.lake.FleetTables;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.TelemetryRow;
import picocli.CommandLine.ArgGroup;
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
                + " on a trusted network. With --mqtt URL (a broker such as mosquitto) or --embedded-mqtt (a broker in"
                + " this process), robots' MQTT telemetry (fleet/<robot>/telemetry|alert|audit/<kind>, JSON; QoS 0, 1"
                + " and 2) lands in the lake's telemetry table in micro-batches, QoS 1 and 2 acknowledged only once"
                + " committed. Robots may also stream an episode live (StreamObservations: messages journaled as"
                + " they arrive, the MCAP written, landed and ingested at its end; frames the robot's filter skipped"
                + " are counted, not reported as drops).",
        subcommands = {GatewayCommand.Token.class, GatewayCommand.LinkAlerts.class, GatewayCommand.Telemetry.class})
final class GatewayCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "LAKE", description = "lake folder or s3://bucket/prefix"
            + " (uploads then go into S3 multipart uploads, through a local spool: --spool)")
    String lake;

    @Mixin
    StorageOptions storage;

    @Option(names = "--grpc-port", paramLabel = "P", description = "TCP port; 0 picks a free one (default:"
            + " ${DEFAULT-VALUE})")
    int port = 50051;

    @Option(names = "--host", description = "interface to listen on, 0.0.0.0 for every one (default: ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--max-file-size", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "largest file accepted (also a live episode's journal), e.g. 16GiB (default: 64GiB)")
    Long maxFileSize;

    @Option(names = "--quota", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "most bytes one robot may have staged in unfinished uploads and live episodes (default:"
                    + " 256GiB)")
    Long quota;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "serve over TLS with this certificate chain (its"
            + " subject alternative names hold the host robots dial); with --tls-key")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "the PKCS#8 private key of --tls-cert")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "PEM", description = "mutual TLS: every robot must present a"
            + " certificate signed by a CA in this file (on top of its token); needs --tls-cert")
    Path tlsClientCa;

    @Option(names = "--spool", paramLabel = "DIR", description = "for an s3:// lake: the local folder uploads are"
            + " staged in on their way into the bucket; keep it across restarts (default:"
            + " ~/.cache/flywheel/gateway-spool/<hash of the lake URI>)")
    Path spool;

    @Option(names = "--stream-window", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "HTTP/2 flow-control window of each upload stream, 64KiB..16MiB: the gateway holds at most"
                    + " about this plus one chunk per robot uploading (default: 1MiB)")
    Long streamWindow;

    @Option(names = "--staging-rate", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "most bytes per second written to staging by all uploads and live episodes together, e.g."
                    + " 100MiB; the robots are slowed down, not refused (default: no limit)")
    Long stagingRate;

    @Option(names = "--staged-expiry", paramLabel = "D", converter = AgeArg.class,
            description = "remove a staged upload after this long without new bytes (its robot gone), e.g. 7d, 12h;"
                    + " 0s for never (default: 7d)")
    Duration stagedExpiry;

    @Option(names = "--stats-every", paramLabel = "SECONDS", description = "seconds between stats lines; 0 for none"
            + " (default: ${DEFAULT-VALUE})")
    int statsEvery = 5;

    @Option(names = "--json", description = "machine-readable output: one JSON line when listening, one per stats"
            + " line, one when stopped")
    boolean json;

    /** Where telemetry comes from: an external broker or one in this process. */
    static final class Broker {
        @Option(names = "--mqtt", paramLabel = "URL", description = "MQTT broker to read the fleet's telemetry from,"
                + " tcp://host:port (e.g. mosquitto)")
        String url;

        @Option(names = "--embedded-mqtt", description = "run an MQTT broker (Moquette, MQTT 3.1.1) in this process"
                + " on --host and --mqtt-port, and read the telemetry from it")
        boolean embedded;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Broker broker;

    /** Where the fleet stream is relayed to: an external Kafka cluster or a broker in this process. */
    static final class Kafka {
        @Option(names = "--kafka", paramLabel = "HOST:PORT", description = "relay the fleet stream (episode events,"
                + " observation summaries and alerts the robots publish over MQTT) to this Kafka cluster's fleet.episodes,"
                + " fleet.observations and fleet.alerts topics")
        String bootstrap;

        @Option(names = "--embedded-kafka", description = "as --kafka, to a Kafka broker (KRaft) started in this process")
        boolean embedded;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Kafka kafka;

    @Option(names = "--mqtt-port", paramLabel = "P", description = "port of the embedded broker; 0 picks a free one"
            + " (default: ${DEFAULT-VALUE})")
    int mqttPort = 1883;

    @Option(names = "--mqtt-user", paramLabel = "USER", description = "user name for the --mqtt broker")
    String mqttUser;

    @Option(names = "--mqtt-password-env", paramLabel = "VAR", description = "environment variable holding the"
            + " --mqtt broker's password (default: FLYWHEEL_MQTT_PASSWORD when --mqtt-user is given)")
    String mqttPasswordEnv;

    @Option(names = "--mqtt-version", paramLabel = "V", description = "MQTT protocol with the --mqtt broker: 5 or"
            + " 3.1.1 (default: 5; the embedded broker speaks 3.1.1)")
    String mqttVersion = "5";

    @Option(names = "--mqtt-client-id", paramLabel = "ID", description = "MQTT client id of the gateway, which names"
            + " its persistent session: keep it across restarts (default: ${DEFAULT-VALUE})")
    String mqttClientId = "flywheel-gateway";

    @Option(names = "--telemetry-batch", paramLabel = "MS,ROWS", description = "micro-batch bounds: at most MS"
            + " milliseconds and ROWS rows per lake commit (default: 1000,5000)")
    String telemetryBatch = "1000,5000";

    @Override
    public Integer call() throws Exception {
        Usage.require(spec, lake != null, "Missing required parameter: 'LAKE'");
        Usage.require(spec, port >= 0 && port <= 65535, "--grpc-port must be in 0..65535, got " + port);
        Usage.require(spec, statsEvery >= 0, "--stats-every must be >= 0, got " + statsEvery);
        UploadLimits.Builder lb = UploadLimits.builder();
        if (maxFileSize != null) {
            lb.maxFileBytes(maxFileSize);
        }
        if (streamWindow != null) {
            Usage.require(spec, streamWindow >= 64 << 10 && streamWindow <= 16 << 20,
                    "--stream-window must be 64KiB..16MiB, got " + streamWindow + " bytes");
            lb.streamWindowBytes(streamWindow.intValue());
        }
        if (stagingRate != null) {
            Usage.require(spec, stagingRate > 0, "--staging-rate must be > 0");
            lb.stagingBytesPerSecond(stagingRate);
        }
        if (quota != null) {
            lb.robotQuotaBytes(quota);
        }
        if (stagedExpiry != null) {
            lb.stagedExpiry(stagedExpiry);
        }
        Usage.require(spec, (tlsCert == null) == (tlsKey == null), "--tls-cert and --tls-key go together");
        Usage.require(spec, tlsClientCa == null || tlsCert != null, "--tls-client-ca needs --tls-cert and --tls-key");
        TlsFiles tls = tlsCert == null ? null : new TlsFiles(tlsCert, tlsKey, tlsClientCa);
        GatewayOptions options = Usage.check(spec, null,
                () -> GatewayOptions.builder().host(host).port(port).limits(lb.build()).tls(tls).spool(spool)
                        .log(line -> System.err.println("flywheel gateway: " + line)).build());
        boolean embedded = broker != null && broker.embedded;
        for (String o : List.of("--telemetry-batch", "--mqtt-port", "--mqtt-user", "--mqtt-password-env",
                "--mqtt-version", "--mqtt-client-id")) {
            Usage.require(spec, broker != null || !spec.commandLine().getParseResult().hasMatchedOption(o),
                    o + " is for telemetry: give --mqtt URL or --embedded-mqtt too");
        }
        Usage.require(spec, embedded || !spec.commandLine().getParseResult().hasMatchedOption("--mqtt-port"),
                "--mqtt-port is the embedded broker's port (--embedded-mqtt); a --mqtt broker's port is in its URL");
        Usage.require(spec, mqttPort >= 0 && mqttPort <= 65535, "--mqtt-port must be in 0..65535, got " + mqttPort);
        Usage.require(spec, mqttVersion.equals("5") || mqttVersion.equals("3.1.1"), "--mqtt-version must be 5 or"
                + " 3.1.1, got '" + mqttVersion + "'");
        String[] tb = telemetryBatch.split(",", -1);
        Usage.require(spec, tb.length == 2 && tb[0].matches("\\d{1,7}") && tb[1].matches("\\d{1,7}"),
                "--telemetry-batch must be MS,ROWS (e.g. 1000,5000), got '" + telemetryBatch + "'");
        Usage.require(spec, !embedded || mqttUser == null, "--mqtt-user is for a --mqtt broker (the embedded one"
                + " takes anonymous clients)");
        String password = null;
        if (mqttUser != null) {
            password = System.getenv(mqttPasswordEnv != null ? mqttPasswordEnv : "FLYWHEEL_MQTT_PASSWORD");
        }
        final String mqttPassword = password;
        Usage.require(spec, kafka == null || broker != null, (kafka != null && kafka.embedded ? "--embedded-kafka" : "--kafka")
                + " relays what the robots publish over MQTT: give --mqtt URL or --embedded-mqtt too");
        Usage.require(spec, kafka == null || kafka.embedded
                || kafka.bootstrap.matches("[^\\s:,]+:\\d{1,5}(,[^\\s:,]+:\\d{1,5})*"),
                "--kafka must be HOST:PORT[,HOST:PORT...], got '" + (kafka == null ? "" : kafka.bootstrap) + "'");
        TelemetryOptions.Builder telemetry = broker == null ? null : Usage.check(spec, "--mqtt", () -> {
            TelemetryOptions.Builder b = TelemetryOptions.builder(embedded ? "tcp://" + host + ":1" : broker.url)
                    .mqtt5(!embedded && mqttVersion.equals("5")).clientId(mqttClientId)
                    .credentials(mqttUser, mqttPassword)
                    .batchInterval(Duration.ofMillis(Long.parseLong(tb[0])))
                    .batchRows(Integer.parseInt(tb[1]));
            b.build();
            return b;
        });
        PrintStream out = System.out;
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        try (Lake l = Lake.open(lake, storage.lakeOptions())) {
            int tokens = RobotTokens.of(l).list().size();
            FleetGateway gw = FleetGateway.start(l, options);
            EmbeddedBroker mqttBroker = null;
            TelemetrySubscriber sub = null;
            EmbeddedKafka embeddedKafka = null;
            KafkaRelay relay = null;
            try {
                if (telemetry != null) {
                    if (embedded) {
                        mqttBroker = EmbeddedBroker.start(host, mqttPort);
                        telemetry = TelemetryOptions.builder(mqttBroker.url()).mqtt5(false).clientId(mqttClientId)
                                .batchInterval(telemetry.build().batchInterval())
                                .batchRows(telemetry.build().batchRows());
                    }
                    sub = TelemetrySubscriber.start(l, telemetry.build(),
                            line -> System.err.println("flywheel gateway: " + line));
                }
                if (kafka != null) {
                    if (kafka.embedded) {
                        embeddedKafka = EmbeddedKafka.start(null, 2, StreamCommand.defaultBrokerLog());
                    }
                    String id = mqttClientId.length() > 17 ? mqttClientId.substring(0, 17) : mqttClientId;
                    relay = KafkaRelay.start(mqttBroker != null ? mqttBroker.url() : broker.url, id + "-kafka",
                            embeddedKafka != null ? embeddedKafka.bootstrap() : kafka.bootstrap,
                            line -> System.err.println("flywheel gateway: " + line));
                }
            } catch (RuntimeException e) {
                if (sub != null) {
                    sub.close();
                }
                if (embeddedKafka != null) {
                    embeddedKafka.close();
                }
                gw.close();
                if (mqttBroker != null) {
                    mqttBroker.close();
                }
                throw e;
            }
            final TelemetrySubscriber telemetrySub = sub;
            final EmbeddedBroker embeddedBroker = mqttBroker;
            final KafkaRelay kafkaRelay = relay;
            final EmbeddedKafka kafkaBroker = embeddedKafka;
            Thread hook = new Thread(() -> {
                stop.countDown();
                try {
                    stopped.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    // the JVM is stopping
                }
            }, "flywheel-gateway-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            Signals.stopOn(stop);
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
                m.put("tls", tls == null ? "none" : tlsClientCa == null ? "tls" : "mutual");
                m.put("tokens", tokens);
                m.put("staged_uploads", at0.staged());
                m.put("ingest_waiting", at0.ingestWaiting());
                if (telemetrySub != null) {
                    m.put("mqtt", telemetrySub.broker());
                    m.put("mqtt_embedded", embeddedBroker != null);
                }
                if (kafkaRelay != null) {
                    m.put("kafka", kafkaBroker != null ? kafkaBroker.bootstrap() : kafka.bootstrap);
                    m.put("kafka_embedded", kafkaBroker != null);
                }
                if (json) {
                    line(out, m);
                } else {
                    out.println("Flywheel gateway for " + l.location() + " on " + gw.target() + " (gRPC "
                            + (tls == null ? "in plain text" : tlsClientCa == null ? "over TLS" : "over mutual TLS") + "; "
                            + tokens + " robot token(s); " + at0.staged() + " staged upload(s) to resume, "
                            + at0.ingestWaiting() + " landed file(s) to ingest). Ctrl-C stops it.");
                    if (telemetrySub != null) {
                        out.println("telemetry from " + (embeddedBroker != null ? "the embedded MQTT broker on "
                                : "") + telemetrySub.broker() + " (fleet/<robot>/telemetry|alert|audit/<kind>)");
                    }
                    if (kafkaRelay != null) {
                        out.println("fleet stream (fleet/<robot>/stream/episode|observation, alerts) relayed to Kafka at "
                                + (kafkaBroker != null ? kafkaBroker.bootstrap() + " (embedded; broker log "
                                + StreamCommand.defaultBrokerLog() + ")" : kafka.bootstrap));
                    }
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
                        TelemetryStats ts = telemetrySub == null ? null : telemetrySub.stats();
                        if (json) {
                            Map<String, Object> j = stats(s);
                            j.put("event", "stats");
                            j.put("mb_per_s", Math.round(mbps * 100) / 100.0);
                            j.put("live", liveJson(gw.liveStats()));
                            if (ts != null) {
                                j.put("telemetry", telemetryJson(ts));
                            }
                            if (kafkaRelay != null) {
                                j.put("kafka", relayJson(kafkaRelay.stats()));
                            }
                            line(out, j);
                        } else {
                            out.println(statsLine(s, mbps) + "; " + liveLine(gw.liveStats())
                                    + (ts == null ? "" : "; " + telemetryLine(ts))
                                    + (kafkaRelay == null ? "" : "; " + relayLine(kafkaRelay.stats())));
                        }
                        out.flush();
                    }
                }
            } finally {
                if (kafkaRelay != null) {
                    kafkaRelay.flush();
                    kafkaRelay.close();
                }
                if (kafkaBroker != null) {
                    kafkaBroker.close();
                }
                if (telemetrySub != null) {
                    telemetrySub.close();
                }
                if (embeddedBroker != null) {
                    embeddedBroker.close();
                }
                gw.close();
                UploadStats s = gw.stats();
                double secs = Duration.between(started, Instant.now()).toMillis() / 1000.0;
                if (json) {
                    Map<String, Object> j = stats(s);
                    j.put("event", "stopped");
                    j.put("seconds", secs);
                    if (telemetrySub != null) {
                        j.put("telemetry", telemetryJson(telemetrySub.stats()));
                    }
                    if (kafkaRelay != null) {
                        j.put("kafka", relayJson(kafkaRelay.stats()));
                    }
                    line(out, j);
                } else {
                    out.printf(Locale.ROOT, "gateway stopped after %.1f s: %d file(s) landed (%s received), %d"
                                    + " refused, %d ingested, %d ingest failure(s); %d upload(s) stay staged, %d landed"
                                    + " file(s) wait for ingest%n", secs, s.landed(), ByteSizeArg.human(s.bytesReceived()),
                            s.refused(), s.ingested(), s.ingestFailed(), s.staged(), s.ingestWaiting());
                    if (telemetrySub != null) {
                        out.println(telemetryLine(telemetrySub.stats()));
                    }
                    if (kafkaRelay != null) {
                        out.println(relayLine(kafkaRelay.stats()));
                    }
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

    static String relayLine(KafkaRelay.Stats r) {
        return String.format(Locale.ROOT, "kafka: %d episode event(s), %d observation second(s), %d alert(s) relayed,"
                + " %d refused", r.episodes(), r.observations(), r.alerts(), r.refused());
    }

    static Map<String, Object> relayJson(KafkaRelay.Stats r) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("episodes", r.episodes());
        j.put("observations", r.observations());
        j.put("alerts", r.alerts());
        j.put("refused", r.refused());
        return j;
    }

    static String liveLine(LiveStreamService.Stats l) {
        return String.format(Locale.ROOT, "live: %d streaming, %d unfinished, %d landed, %d refused, %d message(s),"
                + " %d frame(s) skipped by robots", l.open(), l.unfinished(), l.landed(), l.refused(), l.messages(),
                l.skippedFrames());
    }

    static Map<String, Object> liveJson(LiveStreamService.Stats l) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("streaming", l.open());
        j.put("unfinished", l.unfinished());
        j.put("landed", l.landed());
        j.put("refused", l.refused());
        j.put("messages", l.messages());
        j.put("skipped_frames", l.skippedFrames());
        j.put("bytes_received", l.bytesReceived());
        j.put("resent", l.resent());
        return j;
    }

    static String telemetryLine(TelemetryStats t) {
        return String.format(Locale.ROOT, "telemetry: %s, %d received, %d committed in %d batch(es), %d duplicate(s)"
                        + " dropped, %d malformed, %d waiting (lag %d ms), %d alert(s) linked", t.connected()
                        ? "connected" : "DISCONNECTED", t.received(), t.committed(), t.batches(), t.duplicates(),
                t.malformed(), t.pending(), t.lagMs(), t.linkedAtWrite() + t.linkedLater());
    }

    static Map<String, Object> telemetryJson(TelemetryStats t) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("connected", t.connected());
        j.put("received", t.received());
        j.put("committed", t.committed());
        j.put("batches", t.batches());
        j.put("duplicates", t.duplicates());
        j.put("malformed", t.malformed());
        j.put("pending", t.pending());
        j.put("lag_ms", t.lagMs());
        j.put("linked_at_write", t.linkedAtWrite());
        j.put("linked_later", t.linkedLater());
        j.put("commit_failures", t.commitFailures());
        return j;
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
        j.put("expired", s.expired());
        Runtime rt = Runtime.getRuntime();
        j.put("heap_used_bytes", rt.totalMemory() - rt.freeMemory());
        j.put("heap_max_bytes", rt.maxMemory());
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
                Usage.require(spec, i.isEmpty() || r.isEmpty(), "name token ids or --robot ROBOT, not both");
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

    /** {@code flywheel gateway link-alerts LAKE}: alerts linked to the episodes ingested after them. */
    @Command(name = "link-alerts", mixinStandardHelpOptions = true,
            description = "Give each alert in the telemetry table that has no episode the episode its robot was"
                    + " recording at its ts_ns (episodes.robot_id, start_ns..end_ns), for episodes ingested after the"
                    + " alert arrived (a running gateway does this itself every few seconds). One lake commit"
                    + " (link-alerts) updating telemetry.episode_id only; none when nothing matches.")
    static final class LinkAlerts implements Callable<Integer> {
        @Mixin
        LakeLocation at;

        @Option(names = "--robot", paramLabel = "ROBOT", description = "only this robot's alerts (repeatable)")
        List<String> robots;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            AlertLinks.Result r;
            try (Lake l = at.open()) {
                r = AlertLinks.link(l, robots == null || robots.isEmpty() ? null : robots);
            }
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("unlinked_before", r.unlinked());
                m.put("linked", r.linked());
                m.put("lake_commit", r.lakeCommit() < 0 ? null : r.lakeCommit());
                Json.print(System.out, m);
            } else {
                System.out.println("linked " + r.linked() + " of " + r.unlinked() + " alert(s) without an episode"
                        + (r.lakeCommit() < 0 ? " (nothing committed)" : " (lake commit " + r.lakeCommit() + ")"));
            }
            return 0;
        }
    }

    /** {@code flywheel gateway telemetry LAKE}: the newest telemetry rows. */
    @Command(name = "telemetry", mixinStandardHelpOptions = true,
            description = "List telemetry rows (newest first by the robot's ts_ns): robot, time, class, kind, QoS,"
                    + " message id, values, text, episode. A lake without telemetry lists none.")
    static final class Telemetry implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        LakeLocation at;

        @Option(names = "--robot", paramLabel = "ROBOT", description = "only this robot")
        String robot;

        @Option(names = "--kind", paramLabel = "KIND", description = "only this kind (heartbeat, battery, estop, ...)")
        String kind;

        @Option(names = "--class", paramLabel = "CLASS", description = "only telemetry, alert or audit")
        String messageClass;

        @Option(names = "--since", paramLabel = "TIME", converter = TimeArg.class, description = "only rows with"
                + " ts_ns at or after TIME (seconds, 123ns, or ISO-8601)")
        Long since;

        @Option(names = "--limit", paramLabel = "N", description = "at most N rows (default: ${DEFAULT-VALUE})")
        long limit = 100;

        @Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            Usage.require(spec, limit >= 1, "--limit must be >= 1, got " + limit);
            Usage.require(spec, messageClass == null || List.of(TelemetryRow.TELEMETRY, TelemetryRow.ALERT,
                    TelemetryRow.AUDIT).contains(messageClass), "--class must be telemetry, alert or audit, got '"
                    + messageClass + "'");
            List<String> where = new ArrayList<>();
            if (robot != null) {
                where.add(TableSchemas.ROBOT_ID + " = " + Sql.quote(robot));
            }
            if (kind != null) {
                where.add(FleetTables.KIND + " = " + Sql.quote(kind));
            }
            if (messageClass != null) {
                where.add(FleetTables.MESSAGE_CLASS + " = " + Sql.quote(messageClass));
            }
            if (since != null) {
                where.add(FleetTables.TS_NS + " >= " + since);
            }
            List<TelemetryRow> rows = new ArrayList<>();
            long total = 0;
            try (Lake l = at.open()) {
                if (l.hasTable(FleetTables.TELEMETRY)) {
                    try (LakeTable t = l.table(FleetTables.TELEMETRY)) {
                        ScanRequest.Builder b = ScanRequest.builder().limit(limit)
                                .orderBy(ScanRequest.SortKey.desc(FleetTables.TS_NS));
                        if (!where.isEmpty()) {
                            b.filter(String.join(" AND ", where));
                        }
                        rows.addAll(t.rows(FleetTables.TELEMETRY_TABLE, b.build()));
                        total = where.isEmpty() ? t.countRows() : t.countRows(String.join(" AND ", where));
                    }
                }
            }
            if (json.enabled()) {
                List<Map<String, Object>> out = new ArrayList<>();
                for (TelemetryRow r : rows) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("robot_id", r.robotId());
                    m.put("ts_ns", r.tsNs());
                    m.put("received_ns", r.receivedNs());
                    m.put("message_class", r.messageClass());
                    m.put("kind", r.kind());
                    m.put("qos", r.qos());
                    m.put("message_id", r.messageId());
                    m.put("topic", r.topic());
                    m.put("values", r.values());
                    m.put("text", r.text());
                    m.put("episode_id", r.episodeId());
                    out.add(m);
                }
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("matching", total);
                doc.put("rows", out);
                Json.print(System.out, doc);
            } else {
                for (TelemetryRow r : rows) {
                    StringBuilder v = new StringBuilder();
                    r.values().forEach((k, x) -> v.append(v.length() == 0 ? "" : " ").append(k).append('=').append(x));
                    System.out.println(Instant.ofEpochSecond(0, r.tsNs()) + "  " + r.robotId() + "  " + r.messageClass()
                            + "/" + r.kind() + "  qos " + r.qos() + "  " + (r.messageId() == null ? "-" : r.messageId())
                            + (v.length() == 0 ? "" : "  " + v) + (r.text() == null ? "" : "  \"" + r.text() + "\"")
                            + (r.episodeId() == null ? "" : "  episode " + r.episodeId()));
                }
                System.out.println(rows.size() + " of " + total + " telemetry row(s) in " + at.uri());
            }
            return 0;
        }
    }
}
