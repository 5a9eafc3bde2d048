package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.TlsFiles;
import io.flywheel.fleet.client.UploadFailedException;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.client.UploadResult;
import io.flywheel.fleet.client.UploadSpec;
import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.grpc.StatusRuntimeException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code flywheel upload --gateway HOST:PORT --robot R --token T FILES...}: recordings to a fleet gateway. */
@Command(name = "upload", mixinStandardHelpOptions = true,
        description = "Upload recordings made offline to a fleet gateway (flywheel gateway): .mcap files, ROS 1 .bag"
                + " files and sidecar videos NAME.<camera>.mp4 (sent before their recording NAME.mcap / NAME.bag, which"
                + " must be among FILES or beside the video). Resumes after a cut connection and retries with backoff;"
                + " a file the lake has already is not sent again. Then waits until the gateway has ingested them"
                + " (--no-wait: not). A refused file is named with the gateway's status and message, the others go"
                + " on, and the exit code is 1.")
final class UploadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--gateway", required = true, paramLabel = "HOST:PORT", description = "the gateway")
    String gateway;

    @Option(names = "--tls", description = "connect over TLS, trusting the JDK's CAs (implied by --tls-ca)")
    boolean tls;

    @Option(names = "--tls-ca", paramLabel = "PEM", description = "connect over TLS, trusting the CA certificates in"
            + " this file (the gateway's --tls-cert was signed by one of them)")
    Path tlsCa;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "this robot's certificate, for a gateway with"
            + " --tls-client-ca (mutual TLS); with --tls-key")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "the PKCS#8 private key of --tls-cert")
    Path tlsKey;

    @Option(names = "--robot", required = true, paramLabel = "ROBOT", description = "this robot's id (its token's)")
    String robot;

    @Option(names = "--token", paramLabel = "TOKEN", description = "the robot's token (gateway token add; default:"
            + " the FLYWHEEL_GATEWAY_TOKEN variable, which keeps it out of the process list)")
    String token;

    @Option(names = "--episode", paramLabel = "ID", description = "the robot's own name of the episode, sent with"
            + " every file (the lake's episode ids come from the content)")
    String episode = "";

    @Option(names = "--chunk-size", paramLabel = "SIZE", converter = ByteSizeArg.class,
            description = "bytes per chunk, 1KiB..4MiB (default: 1MiB)")
    Long chunkSize;

    @Option(names = "--attempts", paramLabel = "N", description = "streams opened per file at most (default:"
            + " ${DEFAULT-VALUE})")
    int attempts = 10;

    @Option(names = "--no-wait", description = "do not wait for ingest")
    boolean noWait;

    @Option(names = "--wait-timeout", paramLabel = "SECONDS", description = "how long to wait for ingest of all files"
            + " (default: ${DEFAULT-VALUE})")
    int waitTimeout = 600;

    @Parameters(arity = "1..*", paramLabel = "FILES", description = ".mcap, .bag or NAME.<camera>.mp4 files")
    List<Path> files;

    @Mixin
    JsonOutput jsonOutput;

    /** One file's outcome, for the summary and --json. */
    record FileOutcome(String file, String kind, String sha256, long bytes, String state, String landedPath,
            boolean alreadyInLake, long resumedFrom, int attempts, double seconds, String recordingId, long episodes,
            long frames, String errorCode, String error) {}

    @Override
    public Integer call() throws Exception {
        String t = token != null ? token : System.getenv("FLYWHEEL_GATEWAY_TOKEN");
        Usage.require(spec, t != null && !t.isBlank(), "Missing required option: '--token=TOKEN' (or set"
                + " FLYWHEEL_GATEWAY_TOKEN)");
        int colon = gateway.lastIndexOf(':');
        Usage.require(spec, colon > 0 && gateway.substring(colon + 1).matches("\\d{1,5}")
                && Integer.parseInt(gateway.substring(colon + 1)) <= 65535, "--gateway must be HOST:PORT, got '"
                + gateway + "'");
        String bad = UploadIds.checkRobotId(robot);
        Usage.require(spec, bad == null, "--robot: " + bad);
        Usage.require(spec, attempts >= 1, "--attempts must be >= 1, got " + attempts);
        Usage.require(spec, waitTimeout >= 0, "--wait-timeout must be >= 0, got " + waitTimeout);
        Usage.require(spec, (tlsCert == null) == (tlsKey == null), "--tls-cert and --tls-key go together");
        FleetClient.Builder cb = FleetClient.builder(gateway).token(t.trim()).maxAttempts(attempts);
        if (tls || tlsCa != null || tlsCert != null) {
            cb.tls(new TlsFiles(tlsCert, tlsKey, tlsCa));
        }
        if (chunkSize != null) {
            Usage.check(spec, "--chunk-size", () -> cb.chunkBytes((int) Math.min(Integer.MAX_VALUE, chunkSize)));
        }
        boolean json = jsonOutput.enabled();
        PrintStream err = System.err;

        // what each file is; sidecars first, each with its recording's hash
        List<Path> sidecars = new ArrayList<>();
        List<Path> recordings = new ArrayList<>();
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw Files.exists(f) ? new io.flywheel.error.BadInputException(f + ": not a file")
                        : new NoSuchFileException(f.toString());
            }
            String n = String.valueOf(f.getFileName()).toLowerCase(Locale.ROOT);
            if (n.endsWith(".mp4")) {
                sidecars.add(f);
            } else if (n.endsWith(".mcap") || n.endsWith(".bag")) {
                recordings.add(f);
            } else {
                throw new io.flywheel.error.BadInputException(f + ": not a .mcap, .bag or .mp4 file");
            }
        }
        List<Path> order = new ArrayList<>(sidecars);
        order.addAll(recordings);
        Map<Path, UploadSpec> specs = new LinkedHashMap<>();
        for (Path f : sidecars) {
            Path rec = recordingOf(f, recordings);
            specs.put(f, UploadSpec.sidecar(robot, episode, FleetClient.sha256(rec), ""));
        }
        for (Path f : recordings) {
            specs.put(f, UploadSpec.of(robot, episode,
                    String.valueOf(f.getFileName()).toLowerCase(Locale.ROOT).endsWith(".bag") ? FileKind.ROS1_BAG
                            : FileKind.MCAP));
        }

        long t0 = System.nanoTime();
        double uploadSecs;
        List<FileOutcome> outcomes = new ArrayList<>();
        List<UploadResult> results = new ArrayList<>();
        try (FleetClient client = cb.build()) {
            int i = 0;
            Map<Path, String> heldBack = new LinkedHashMap<>(); // recording -> why: a sidecar of it was not landed
            for (Path f : order) {
                i++;
                String counter = "[" + i + "/" + order.size() + "] ";
                UploadSpec s = specs.get(f);
                if (heldBack.containsKey(f)) { // sent now, it would be ingested without its video for good
                    results.add(null);
                    String why = f + ": not sent: " + heldBack.get(f) + "; upload the recording with its fixed sidecar";
                    outcomes.add(new FileOutcome(f.toString(), s.kind().name(), "", Files.size(f), "NOT_SENT", "",
                            false, 0, 0, 0, "", 0, 0, "", why));
                    err.println("flywheel upload: " + why);
                    continue;
                }
                try {
                    UploadResult r = client.upload(f, s, json ? UploadListener.NONE : progress(err, counter));
                    results.add(r);
                    UploadStatus st = r.status();
                    outcomes.add(new FileOutcome(f.toString(), s.kind().name(), r.sha256(), r.sizeBytes(),
                            st.getState().name(), st.getLandedPath(), st.getAlreadyInLake(), r.resumedFrom(),
                            r.attempts(), r.seconds(), st.getRecordingId(), st.getEpisodes(), st.getFrames(), "", ""));
                    if (!json) {
                        err.println(counter + f.getFileName() + ": " + (st.getAlreadyInLake() ? "already in the lake ("
                                + st.getLandedUri() + "); not sent" : "landed " + st.getLandedPath() + " ("
                                + ByteSizeArg.human(r.sizeBytes()) + String.format(Locale.ROOT, " in %.1f s", r.seconds())
                                + (r.resumedFrom() > 0 ? ", resumed at " + r.resumedFrom() : "")
                                + (r.attempts() > 1 ? ", " + r.attempts() + " attempts" : "") + ")"));
                    }
                } catch (UploadFailedException e) {
                    if (s.kind() == FileKind.SIDECAR_MP4) {
                        heldBack.put(recordingOf(f, recordings), "its sidecar " + f.getFileName() + " did not land");
                    }
                    results.add(null);
                    outcomes.add(new FileOutcome(f.toString(), s.kind().name(), "", Files.size(f),
                            e.refused() ? "REFUSED" : "FAILED", "", false, 0, e.attempts(), 0, "", 0, 0, e.code().name(),
                            e.getMessage()));
                    err.println("flywheel upload: " + e.getMessage());
                }
            }
            uploadSecs = (System.nanoTime() - t0) / 1e9;
            // wait for ingest of the recordings that landed
            if (!noWait) {
                long end = System.nanoTime() + Duration.ofSeconds(waitTimeout).toNanos();
                for (int k = 0; k < outcomes.size(); k++) {
                    FileOutcome o = outcomes.get(k);
                    UploadResult r = results.get(k);
                    if (r == null || o.alreadyInLake() || "SIDECAR_MP4".equals(o.kind())) {
                        continue;
                    }
                    long left = Math.max(0, end - System.nanoTime());
                    UploadStatus st;
                    try {
                        st = client.awaitIngested(robot, r.sha256(), Duration.ofNanos(left));
                    } catch (StatusRuntimeException e) {
                        err.println("flywheel upload: " + o.file() + ": landed; its ingest state is unknown: "
                                + e.getStatus().getCode() + " " + e.getStatus().getDescription());
                        continue;
                    }
                    outcomes.set(k, new FileOutcome(o.file(), o.kind(), o.sha256(), o.bytes(), st.getState().name(),
                            st.getLandedPath().isEmpty() ? o.landedPath() : st.getLandedPath(), false, o.resumedFrom(),
                            o.attempts(), o.seconds(), st.getRecordingId(),
                            st.getEpisodes(), st.getFrames(), "", st.getState() == UploadState.INGEST_FAILED
                                    ? st.getMessage() : ""));
                    if (st.getState() == UploadState.INGEST_FAILED) {
                        err.println("flywheel upload: " + o.file() + ": landed, but ingest failed: " + st.getMessage());
                    }
                }
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long refused = outcomes.stream().filter(o -> "REFUSED".equals(o.state())).count();
        long failed = outcomes.stream().filter(o -> "FAILED".equals(o.state())).count();
        long notSent = outcomes.stream().filter(o -> "NOT_SENT".equals(o.state())).count();
        long already = outcomes.stream().filter(FileOutcome::alreadyInLake).count();
        long landedNow = outcomes.size() - refused - failed - notSent - already;
        long ingested = outcomes.stream().filter(o -> "INGESTED".equals(o.state()) && !o.alreadyInLake()).count();
        long ingestFailed = outcomes.stream().filter(o -> "INGEST_FAILED".equals(o.state())).count();
        long bytes = outcomes.stream().filter(o -> o.errorCode().isEmpty() && !o.alreadyInLake())
                .mapToLong(FileOutcome::bytes).sum();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ok", refused == 0 && failed == 0 && notSent == 0 && ingestFailed == 0);
            m.put("gateway", gateway);
            m.put("robot_id", robot);
            m.put("files", outcomes);
            m.put("landed", landedNow);
            m.put("already_in_lake", already);
            m.put("refused", refused);
            m.put("failed", failed);
            m.put("not_sent", notSent);
            m.put("ingested", ingested);
            m.put("ingest_failed", ingestFailed);
            m.put("bytes", bytes);
            m.put("seconds", secs);
            Json.print(System.out, m);
        } else {
            System.out.printf(Locale.ROOT, "uploaded %d file(s) to %s as %s: %d landed (%s, %.1f MB/s), %d already in"
                            + " the lake, %d refused, %d failed (gateway unreachable or busy); %s; %.1f s%n",
                    outcomes.size(), gateway, robot, landedNow, ByteSizeArg.human(bytes),
                    bytes / 1e6 / Math.max(uploadSecs, 1e-3), already, refused, failed,
                    noWait ? "ingest not waited for" : String.format(Locale.ROOT, "ingested %d (%d episode(s), %d"
                            + " frame(s)), %d failed", ingested, outcomes.stream().mapToLong(FileOutcome::episodes).sum(),
                            outcomes.stream().mapToLong(FileOutcome::frames).sum(), ingestFailed), secs);
        }
        return refused == 0 && failed == 0 && notSent == 0 && ingestFailed == 0 ? 0 : 1;
    }

    /** @return the recording a sidecar NAME.camera.mp4 belongs to: NAME.mcap or NAME.bag among FILES or beside it */
    private static Path recordingOf(Path mp4, List<Path> recordings) {
        String n = String.valueOf(mp4.getFileName());
        String stem = n.substring(0, n.length() - 4);
        int dot = stem.lastIndexOf('.');
        if (dot <= 0) {
            throw new io.flywheel.error.BadInputException(mp4 + ": a sidecar video is named NAME.<camera>.mp4");
        }
        String name = stem.substring(0, dot);
        for (Path r : recordings) {
            String rn = String.valueOf(r.getFileName());
            if (rn.equals(name + ".mcap") || rn.equals(name + ".bag")) {
                return r;
            }
        }
        Path dir = mp4.toAbsolutePath().getParent();
        for (String ext : List.of(".mcap", ".bag")) {
            Path beside = dir.resolve(name + ext);
            if (Files.isRegularFile(beside)) {
                return beside;
            }
        }
        throw new io.flywheel.error.BadInputException(mp4 + ": its recording " + name + ".mcap or " + name
                + ".bag is neither among the files nor beside it");
    }

    private static UploadListener progress(PrintStream err, String counter) {
        return new UploadListener() {
            long lastNs = System.nanoTime();

            @Override
            public void progress(Path file, long acked, long total) {
                long now = System.nanoTime();
                if (now - lastNs > 1_000_000_000L && acked < total) {
                    lastNs = now;
                    err.printf(Locale.ROOT, "%s%s: %d%% (%s of %s)%n", counter, file.getFileName(),
                            total == 0 ? 100 : acked * 100 / total, ByteSizeArg.human(acked), ByteSizeArg.human(total));
                }
            }

            @Override
            public void retrying(Path file, int attempt, String status, Duration backoff) {
                err.printf(Locale.ROOT, "%s%s: attempt %d failed (%s); retrying in %.1f s%n", counter,
                        file.getFileName(), attempt, status, backoff.toMillis() / 1000.0);
            }
        };
    }
}
