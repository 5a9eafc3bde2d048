package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.FrameFilter;
import io.flywheel.fleet.client.LiveEpisode;
import io.flywheel.fleet.client.LiveEpisodeSpec;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.live.McapReplay;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.ingest.FrameSkips;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableSchemas;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.ros.Ros2Schemas;
import io.flywheel.ros.cdr.CdrWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.JpegEncoder;
import io.flywheel.sim.Preset;
import io.flywheel.sim.ProgressListener;
import io.flywheel.sim.SimOptions;
import io.flywheel.testkit.SharedData;

/**
 * Live episodes end to end over a real gateway on loopback: a simulated episode (flywheel-sim, TINY: 2 s, three 30 Hz
 * 160x120 JPEG cameras, 200 Hz joint states, 50 Hz commands; no drops) streamed message by message by
 * {@link McapReplay} lands as an MCAP with exactly the messages sent and is ingested; the frame filter on a crafted
 * camera skips exactly the frames it should and ingest counts them; a gateway restarted mid-stream loses nothing and
 * duplicates nothing.
 */
class LiveStreamTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;
    static Path lakeDir;
    static Lake lake;
    static FleetGateway gateway;
    static Path sim;
    static final Map<String, String> TOKENS = new java.util.HashMap<>();

    @BeforeAll
    static void start() throws IOException {
        lakeDir = tmp.resolve("lake");
        lake = Lake.init(lakeDir);
        for (String r : List.of("arm-1", "arm-2", "arm-3", "arm-4")) {
            TOKENS.put(r, RobotTokens.add(lake, r).token());
        }
        gateway = FleetGateway.start(lake, GatewayOptions.builder().build());
        Path out = tmp.resolve("sim");
        FleetSimulator.run(SimOptions.builder(Preset.TINY).episodes(1).robots(1).episodeSeconds(2)
                .resolution(160, 120).frameDropRate(0).messageDropRate(0).jpegEncoder(JpegEncoder.Kind.IMAGEIO)
                .threads(1).outDir(out).build(), ProgressListener.NONE);
        try (var s = Files.walk(out)) {
            sim = s.filter(p -> p.toString().endsWith(".mcap")).findFirst().orElseThrow();
        }
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (lake != null) {
            lake.close();
        }
    }

    static FleetClient client(String robot, int port) {
        return FleetClient.builder("127.0.0.1:" + port).token(TOKENS.get(robot))
                .backoff(Duration.ofMillis(50), Duration.ofMillis(400)).build();
    }

    /** One message as a file holds it. */
    record Msg(String topic, long logTime, long publishTime, long sequence, ByteBuffer data) {
        /**
         * @return topic, times and the SHA-256 of the bytes (not the sequence: the client numbers each topic's
         *     messages itself, skipped frames included)
         */
        String key() {
            java.security.MessageDigest md = io.flywheel.fleet.upload.UploadIds.sha256();
            md.update(data.duplicate());
            return topic + "@" + logTime + "/" + publishTime + ":" + java.util.HexFormat.of().formatHex(md.digest());
        }
    }

    /** @return the file's messages in file order, skip markers included */
    static List<Msg> messages(Path mcap) throws IOException {
        List<Msg> out = new ArrayList<>();
        Map<Integer, String> topics = new java.util.HashMap<>();
        try (McapStreamReader r = McapStreamReader.open(mcap)) {
            for (Record rec; (rec = r.next()) != null; ) {
                if (rec instanceof Record.Channel c) {
                    topics.put(c.id(), c.topic());
                } else if (rec instanceof Record.Message m) {
                    byte[] d = new byte[m.data().remaining()];
                    m.data().duplicate().get(d);
                    out.add(new Msg(topics.get(m.channelId()), m.logTime(), m.publishTime(), m.sequence(),
                            ByteBuffer.wrap(d)));
                }
            }
        }
        return out;
    }

    /** The two files hold the same messages (topic, log and publish time, bytes) in the same order. */
    static void assertSameMessages(List<Msg> expected, List<Msg> actual) {
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            assertEquals(expected.get(i).key(), actual.get(i).key(), "message " + i + " of " + expected.size());
        }
        assertEquals(expected.size(), actual.size(), "messages");
    }

    static UploadStatus ingested(FleetClient c, String robot, String sha) throws InterruptedException {
        UploadStatus s = c.awaitIngested(robot, sha, Duration.ofSeconds(60));
        assertEquals(UploadState.INGESTED, s.getState(), s.toString());
        return s;
    }

    @Test
    void aSimulatedEpisodeLandsWithExactlyTheMessagesSentAndIsIngested() throws Exception {
        List<Msg> source = messages(sim);
        LiveEpisode.Result r;
        try (FleetClient c = client("arm-1", gateway.port())) {
            r = McapReplay.stream(c, sim, "arm-1", "ep-sim", null, m -> true);
            String sha = r.done().getUpload().getSha256();
            Path landed = lakeDir.resolve("raw/arm-1/" + sha + ".mcap");
            assertEquals("raw/arm-1/" + sha + ".mcap", r.done().getUpload().getLandedPath());
            assertEquals("ep-sim", r.done().getUpload().getEpisodeId());
            assertEquals(sha, FleetClient.sha256(landed));
            assertEquals(source.size(), r.done().getMessages());
            assertEquals(0, r.done().getSkippedFrames());
            assertEquals(source.size(), r.stats().messagesSent());
            assertEquals(0, r.stats().uplinkSaved(), 0.0);
            // the landed file: the source's messages, in the source's order, byte for byte
            assertSameMessages(source, messages(landed));
            try (McapIndexedReader ix = McapIndexedReader.open(landed)) {
                assertFalse(ix.scannedDataSection(), "a summary with chunk indexes");
                assertFalse(ix.chunkIndexes().isEmpty());
                assertEquals(source.size(), ix.statistics().orElseThrow().messageCount());
                assertEquals("ros2", ix.header().profile());
                assertEquals("flywheel-gateway", ix.header().library());
                assertEquals(7, ix.channels().size(), "3 cameras, joints, commands, task, outcome");
            }
            UploadStatus s = ingested(c, "arm-1", sha);
            assertEquals(1, s.getEpisodes());
            // a plain ingest of the simulated file gives as many frame rows: one per master camera frame sent
            try (Lake plain = Lake.init(tmp.resolve("plain"))) {
                io.flywheel.fleet.upload.IngestSettings is = io.flywheel.fleet.upload.IngestSettings.defaults();
                io.flywheel.ingest.IngestJob.Result pr = io.flywheel.ingest.IngestJob.run(plain, List.of(sim),
                        is.optionsFor("arm-1"), is.align(), is.rules(), line -> { });
                lake.refresh();
                RawFileRow row = lake.rawFile(sha).orElseThrow();
                assertEquals(landed.toUri().toString(), row.uri());
                List<EpisodeRow> eps = UploadServiceTest.episodes(lake, "recording_id = '" + row.recordingId() + "'");
                EpisodeRow e = eps.get(0);
                EpisodeRow pe = UploadServiceTest.episodes(plain, "recording_id = '" + pr.recordings().get(0)
                        .recordingId() + "'").get(0);
                long masterSent = source.stream().filter(m -> m.topic().equals(e.masterTopic())).count();
                assertEquals(masterSent, e.frameCount().longValue());
                assertEquals(pe.frameCount(), e.frameCount());
                assertEquals(s.getFrames(), e.frameCount().longValue());
                assertEquals(UploadServiceTest.frames(lake, "episode_id = '" + e.episodeId() + "'").size(), masterSent);
                assertEquals(pe.scene(), e.scene(), "the episode metadata came through END");
                assertEquals(pe.task(), e.task());
                assertEquals(pe.qualityStatus(), e.qualityStatus());
                assertEquals("ep-sim", JSON.readTree(e.metadataJson()).path("flywheel.live.episode_id").asText());
            }
        }
        // opening the landed episode again answers its file, nothing is streamed or landed twice
        try (FleetClient c = client("arm-1", gateway.port())) {
            LiveEpisode again = c.openEpisode(LiveEpisodeSpec.builder("arm-1", "ep-sim").channel("/x", "json", "", "",
                    null).build());
            LiveEpisode.Result a = again.end();
            assertEquals(r.done().getUpload().getSha256(), a.done().getUpload().getSha256());
            assertEquals(UploadState.INGESTED, a.done().getUpload().getState());
        }
        try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
            assertEquals(1, t.countRows("sha256 = '" + r.done().getUpload().getSha256() + "'"));
        }
    }

    /**
     * A buffer of 4 messages and a gateway gone after the OPEN: 4 sends return at once (the messages wait in the
     * buffer), the 5th blocks, and ends only when the client's 3 attempts to reach the gateway have failed, with
     * UNAVAILABLE: what is not acknowledged never grows past the buffer.
     */
    @Test
    void aFullBufferBlocksTheSenderUntilTheGatewayAcknowledgesOrTheRetriesRunOut() throws Exception {
        try (Lake l = Lake.init(tmp.resolve("lake-buffer"))) {
            String token = RobotTokens.add(l, "arm-5").token();
            FleetGateway g = FleetGateway.start(l, GatewayOptions.builder().shutdownGrace(Duration.ZERO).build());
            try (FleetClient c = FleetClient.builder(g.target()).token(token).maxAttempts(3)
                    .backoff(Duration.ofMillis(50), Duration.ofMillis(100)).build()) {
                LiveEpisode ep = c.openEpisode(LiveEpisodeSpec.builder("arm-5", "ep-buffer")
                        .channel("/j", "json", "", "", null).buffer(4, 1 << 20).build());
                g.close();
                for (int i = 0; i < 4; i++) {
                    ep.send("/j", t(i), ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                }
                java.util.concurrent.CompletableFuture<Throwable> fifth = java.util.concurrent.CompletableFuture
                        .supplyAsync(() -> {
                            try {
                                ep.send("/j", t(4), "{}".getBytes(StandardCharsets.UTF_8));
                                return null;
                            } catch (Throwable e) {
                                return e;
                            }
                        });
                Throwable e = fifth.get(60, java.util.concurrent.TimeUnit.SECONDS);
                assertTrue(e instanceof io.flywheel.fleet.client.UploadFailedException, String.valueOf(e));
                assertEquals(io.grpc.Status.Code.UNAVAILABLE, ((io.flywheel.fleet.client.UploadFailedException) e)
                        .code());
                assertTrue(e.getMessage().contains("gave up after 3 attempt(s)"), e.getMessage());
                assertEquals(4, ep.stats().messagesOffered(), "the 5th was never taken");
                assertEquals(0, ep.stats().acknowledgedSeq());
                ep.close();
            } finally {
                g.close();
            }
        }
    }

    static long t(int i) {
        return 1_767_225_600_000_000_000L + Math.round(i * 1e9 / 30);
    }

    /**
     * One camera at 30 Hz (a real 640x480 JPEG 39 times, then another scene) and joint states at 100 Hz over 1.3 s,
     * threshold 4 bits, keyframes after 1 s: frames 0, 31 (the keyframe: 1.033 s after frame 0) and 39 are sent, the
     * 37 others skipped. Ingest: 3 frame rows, the camera's 37 skipped frames counted as received (largest gap one
     * frame period, no camera_gap), skipped_frames {"/cam": 37} in the episode metadata.
     */
    @Test
    void theFilterSkipsExactlyTheRepeatedFramesAndIngestCountsThemAsReceived() throws Exception {
        byte[] same = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg"));
        byte[] other = Files.readAllBytes(SharedData.data("camera/widowx-tictactoe/top_down_cam/td_move5.jpg"));
        CdrWriter cdr = new CdrWriter(1 << 20);
        LiveEpisodeSpec spec = LiveEpisodeSpec.builder("arm-2", "ep-filter").profile("ros2")
                .metadata("task", "stack the cups")
                .channel("/cam", "cdr", Ros2Schemas.COMPRESSED_IMAGE_NAME, Ros2Schemas.ENCODING,
                        Ros2Schemas.COMPRESSED_IMAGE.getBytes(StandardCharsets.UTF_8))
                .channel("/joint_states", "cdr", Ros2Schemas.JOINT_STATE_NAME, Ros2Schemas.ENCODING,
                        Ros2Schemas.JOINT_STATE.getBytes(StandardCharsets.UTF_8))
                .filter(FrameFilter.builder(4).build()).build();
        List<Integer> skipped = new ArrayList<>();
        int[] sameLength = new int[1];
        LiveEpisode.Result r;
        try (FleetClient c = client("arm-2", gateway.port()); LiveEpisode ep = c.openEpisode(spec)) {
            int j = 0;
            for (int i = 0; i < 40; i++) {
                for (; 1_767_225_600_000_000_000L + j * 10_000_000L <= t(i); j++) {
                    long tj = 1_767_225_600_000_000_000L + j * 10_000_000L;
                    ep.send("/joint_states", tj, cdr.reset().header(tj, "base").stringSequence(List.of("a"))
                            .float64Sequence(new double[] {j * 0.01}).float64Sequence(new double[0])
                            .float64Sequence(new double[0]).toByteArray());
                }
                byte[] jpeg = i < 39 ? same : other;
                byte[] msg = cdr.reset().header(t(i), "cam").string("jpeg").byteSequence(jpeg, 0, jpeg.length)
                        .toByteArray();
                if (i == 0) {
                    sameLength[0] = msg.length;
                }
                if (!ep.sendImage("/cam", t(i), t(i), msg, jpeg)) {
                    skipped.add(i);
                }
            }
            r = ep.end(Map.of("outcome", "success"));
            List<Integer> expected = new ArrayList<>();
            for (int i = 1; i < 39; i++) {
                if (i != 31) {
                    expected.add(i);
                }
            }
            assertEquals(expected, skipped);
            assertEquals(37, r.done().getSkippedFrames());
            assertEquals(37, r.stats().framesSkipped());
            assertEquals(37L * sameLength[0], r.stats().bytesSkipped(), "the camera messages not sent");
            assertTrue(r.stats().uplinkSaved() > 0.8, "37 of 40 frames of 640x480 JPEG: " + r.stats());
            Path landed = lakeDir.resolve(r.done().getUpload().getLandedPath());
            List<Msg> ms = messages(landed);
            assertEquals(List.of(t(0), t(31), t(39)), ms.stream().filter(m -> m.topic().equals("/cam"))
                    .map(Msg::logTime).toList());
            // the camera's MCAP sequence counts the frames offered: 1, 32, 40
            assertEquals(List.of(1L, 32L, 40L), ms.stream().filter(m -> m.topic().equals("/cam"))
                    .map(Msg::sequence).toList());
            List<Msg> marks = ms.stream().filter(m -> m.topic().equals(FrameSkips.TOPIC)).toList();
            assertEquals(expected.stream().map(LiveStreamTest::t).toList(), marks.stream().map(Msg::logTime).toList());
            FrameSkips.Skip first = FrameSkips.decode(marks.get(0).data(), landed.toString(), 0);
            assertEquals(new FrameSkips.Skip("/cam", t(1), t(0), 0, 4), first);
            assertEquals(t(31), FrameSkips.decode(marks.get(30).data(), "", 0).repeatsLogTimeNs(), "frame 32 repeats"
                    + " the keyframe 31");
            UploadStatus s = ingested(c, "arm-2", r.done().getUpload().getSha256());
            assertEquals(3, s.getFrames(), "frame rows: the 3 frames sent");
            lake.refresh();
            EpisodeRow e = UploadServiceTest.episodes(lake, "recording_id = '" + s.getRecordingId() + "'").get(0);
            assertEquals("stack the cups", e.task());
            assertEquals("success", e.outcome(), "END's metadata");
            assertEquals(37, JSON.readTree(e.metadataJson()).path("skipped_frames").path("/cam").asInt());
            assertFalse(e.qualityFlags().contains("camera_gap"), e.qualityFlags().toString());
            JsonNode cam = null;
            for (JsonNode m : JSON.readTree(e.qualityMetricsJson()).path("metrics").path("streams")) {
                if (m.path("stream").asText().equals("/cam")) {
                    cam = m;
                }
            }
            assertEquals(3, cam.path("messageCount").asLong());
            assertEquals(37, cam.path("skippedFrames").asLong());
            assertEquals(t(2) - t(1), cam.path("largestGapNs").asLong(), "one frame period, not the 1 s skipped");
        }
    }

    /**
     * The simulated episode with the filter on (threshold 8 bits) and 0.7 s of the head camera lost (never offered):
     * the other cameras, with their skipped frames, have no gap longer than a few frame periods; the head camera's
     * loss is a camera_gap. Ingest's skipped-frame counts are the client's.
     */
    @Test
    void skippedFramesAreNoDropButALostStretchIs() throws Exception {
        long start = messages(sim).stream().mapToLong(Msg::logTime).min().orElseThrow();
        String head = "/head_camera/image_raw/compressed";
        long from = start + 800_000_000L;
        long to = start + 1_500_000_000L;
        LiveEpisode.Result r;
        try (FleetClient c = client("arm-3", gateway.port())) {
            r = McapReplay.stream(c, sim, "arm-3", "ep-lost", FrameFilter.builder(8).build(),
                    m -> !(m.topic().equals(head) && m.logTimeNs() >= from && m.logTimeNs() < to));
            UploadStatus s = ingested(c, "arm-3", r.done().getUpload().getSha256());
            lake.refresh();
            EpisodeRow e = UploadServiceTest.episodes(lake, "recording_id = '" + s.getRecordingId() + "'").get(0);
            JsonNode skips = JSON.readTree(e.metadataJson()).path("skipped_frames");
            long total = 0;
            for (JsonNode m : JSON.readTree(e.qualityMetricsJson()).path("metrics").path("streams")) {
                String topic = m.path("stream").asText();
                if (!topic.endsWith("/compressed")) {
                    continue;
                }
                assertEquals(skips.path(topic).asLong(0), m.path("skippedFrames").asLong(), topic);
                total += m.path("skippedFrames").asLong();
                long gap = m.path("largestGapNs").asLong();
                if (topic.equals(head)) {
                    assertTrue(gap >= to - from - 40_000_000L, head + ": the lost 0.7 s, got " + gap);
                } else {
                    assertTrue(gap < 150_000_000L, topic + ": skipped frames are no gap, got " + gap);
                }
            }
            assertEquals(r.stats().framesSkipped(), total);
            assertEquals(r.done().getSkippedFrames(), total);
            assertTrue(e.qualityFlags().contains("camera_gap"), e.qualityFlags().toString());
            System.out.println("TINY sim episode, threshold 8: " + r.stats() + "; quality " + e.qualityFlags());
        }
    }

    /**
     * The gateway is stopped (no grace) after 300 messages have been offered and a new one started on the same lake
     * and port; the client resumes from the journal the first left: every message of the simulated episode is in the
     * landed file exactly once, in order.
     */
    @Test
    void aGatewayRestartedMidStreamLosesAndDuplicatesNothing() throws Exception {
        Path lakeB = tmp.resolve("lake-restart");
        List<Msg> source = messages(sim);
        try (Lake l = Lake.init(lakeB)) {
            String token = RobotTokens.add(l, "arm-9").token();
            FleetGateway[] gw = {FleetGateway.start(l, GatewayOptions.builder().shutdownGrace(Duration.ZERO).build())};
            int port = gw[0].port();
            AtomicInteger offered = new AtomicInteger();
            try (FleetClient c = FleetClient.builder("127.0.0.1:" + port).token(token)
                    .backoff(Duration.ofMillis(50), Duration.ofMillis(400)).build()) {
                LiveEpisode.Result r = McapReplay.stream(c, sim, "arm-9", "ep-restart", null, m -> {
                    if (offered.incrementAndGet() == 300) {
                        gw[0].close();
                        gw[0] = FleetGateway.start(l, GatewayOptions.builder().port(port).build());
                    }
                    return true;
                });
                assertTrue(r.stats().reconnects() >= 1, r.stats().toString());
                Path landed = lakeB.resolve(r.done().getUpload().getLandedPath());
                assertSameMessages(source, messages(landed));
                assertEquals(source.size(), r.done().getMessages());
                ingested(c, "arm-9", r.done().getUpload().getSha256());
            } finally {
                gw[0].close();
            }
            assertEquals(List.of(), UploadServiceTest.filesUnder(lakeB.resolve("_staging/uploads/arm-9")));
            try (var s = Files.list(lakeB.resolve("_staging/streams/arm-9"))) {
                assertEquals(List.of(".done.json"), s.map(p -> p.getFileName().toString().replaceAll("^l-[0-9a-f]+",
                        "")).toList(), "the journal is gone, the done file stays");
            }
        }
    }
}
