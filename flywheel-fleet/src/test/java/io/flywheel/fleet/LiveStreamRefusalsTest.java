package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.protobuf.ByteString;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.LiveEpisodeSpec;
import io.flywheel.fleet.client.UploadFailedException;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.v1.ChannelInfo;
import io.flywheel.fleet.v1.EndEpisode;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.Observation;
import io.flywheel.fleet.v1.ObservationAck;
import io.flywheel.fleet.v1.ObservationRequest;
import io.flywheel.fleet.v1.OpenEpisode;
import io.flywheel.fleet.v1.SkippedFrame;
import io.flywheel.ingest.FrameSkips;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.TableSchemas;
import io.grpc.Status;

/**
 * StreamObservations refusals, each with its status code and message, on hand-driven streams ({@link RawLive}) to a
 * gateway with small limits: live messages of at most 64 KiB, files (journals) of at most 300,000 bytes, 400,000
 * bytes per robot. A refused message is not journaled (a resume continues before it), and nothing of a refused
 * episode lands in the raw layer or the lake. Also: a cut stream resumed with messages sent again keeps each once.
 */
class LiveStreamRefusalsTest {
    static final long T0 = 1_767_225_600_000_000_000L;

    @TempDir
    static Path tmp;
    static Path lakeDir;
    static Lake lake;
    static FleetGateway gateway;
    static final Map<String, String> TOKENS = new HashMap<>();

    @BeforeAll
    static void start() {
        lakeDir = tmp.resolve("lake");
        lake = Lake.init(lakeDir);
        for (String r : List.of("r1", "r2", "bad", "big", "quota", "cut")) {
            TOKENS.put(r, RobotTokens.add(lake, r).token());
        }
        gateway = FleetGateway.start(lake, GatewayOptions.builder().limits(UploadLimits.builder()
                .maxObservationBytes(64 << 10).maxFileBytes(300_000).robotQuotaBytes(400_000).build()).build());
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

    static RawLive stream(String robot) {
        return new RawLive(gateway.target(), TOKENS.get(robot));
    }

    /** OPEN of episode {@code ep}: channel 1 /cam (CDR images), channel 2 /joints (JSON). */
    static ObservationRequest open(String robot, String ep) {
        return ObservationRequest.newBuilder().setOpen(OpenEpisode.newBuilder().setRobotId(robot).setEpisodeId(ep)
                .addChannels(ChannelInfo.newBuilder().setId(1).setTopic("/cam").setMessageEncoding("cdr"))
                .addChannels(ChannelInfo.newBuilder().setId(2).setTopic("/joints").setMessageEncoding("json")))
                .build();
    }

    static ObservationRequest obs(long seq, int channel, long logTime, int bytes) {
        return ObservationRequest.newBuilder().setObservation(Observation.newBuilder().setSeq(seq)
                .setChannelId(channel).setLogTimeNs(logTime).setPublishTimeNs(logTime)
                .setData(ByteString.copyFrom(new byte[bytes]))).build();
    }

    static ObservationRequest skip(long seq, int channel, long logTime, long repeats) {
        return ObservationRequest.newBuilder().setSkippedFrame(SkippedFrame.newBuilder().setSeq(seq)
                .setChannelId(channel).setLogTimeNs(logTime).setRepeatsLogTimeNs(repeats).setHammingDistance(1)
                .setThresholdBits(4)).build();
    }

    static ObservationRequest end(long lastSeq) {
        return ObservationRequest.newBuilder().setEnd(EndEpisode.newBuilder().setLastSeq(lastSeq)).build();
    }

    /** Sends the requests on a new stream of robot "bad" and returns how it ended. */
    static Status refused(ObservationRequest... reqs) throws Exception {
        try (RawLive s = stream("bad")) {
            for (ObservationRequest r : reqs) {
                s.send(r);
            }
            return s.end();
        }
    }

    static void assertStatus(Status.Code code, String text, Status s) {
        assertEquals(code, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains(text), s.getDescription());
    }

    @Test
    void malformedStreamsAreInvalidArgument() throws Exception {
        assertStatus(Status.Code.INVALID_ARGUMENT, "Observation before OPEN", refused(obs(1, 1, T0, 10)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "/flywheel/frame_skips is the gateway's own channel",
                refused(ObservationRequest.newBuilder().setOpen(open("bad", "e0").getOpen().toBuilder()
                        .addChannels(ChannelInfo.newBuilder().setId(3).setTopic(FrameSkips.TOPIC)
                                .setMessageEncoding("json"))).build()));
        assertStatus(Status.Code.INVALID_ARGUMENT, "episode_id must be 1-256 characters", refused(open("bad", "")));
        assertStatus(Status.Code.INVALID_ARGUMENT, "Observation seq 1 is on channel 7, which OPEN does not declare",
                refused(open("bad", "e1"), obs(1, 7, T0, 10)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "seq 3 after 1; the next expected seq is 2",
                refused(open("bad", "e2"), obs(1, 1, T0, 10), obs(3, 1, T0 + 1, 10)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "Observation seq 3 on /cam: log time " + (T0 + 5) + " ns is before"
                + " the channel's previous one, " + (T0 + 10) + " ns",
                refused(open("bad", "e3"), obs(1, 1, T0 + 10, 10), obs(2, 2, T0, 10), obs(3, 1, T0 + 5, 10)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "SkippedFrame seq 1 on /cam before any frame was sent on it",
                refused(open("bad", "e4"), skip(1, 1, T0, T0)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "repeats the frame logged at " + (T0 + 1) + " ns; the last frame"
                + " sent on it was logged at " + T0 + " ns",
                refused(open("bad", "e5"), obs(1, 1, T0, 10), skip(2, 1, T0 + 2, T0 + 1)));
        assertStatus(Status.Code.INVALID_ARGUMENT, "END says last_seq 5; the last seq received is 2: send seq 3..5"
                + " first", refused(open("bad", "e6"), obs(1, 1, T0, 10), obs(2, 1, T0, 10), end(5)));
        // the refused seq 3 of e2 was not journaled: the episode continues at seq 2
        try (RawLive s = stream("bad")) {
            s.send(open("bad", "e2"));
            assertEquals(2, s.next().getOpened().getNextSeq());
            // a resumed OPEN must be the first one
            s.cancel();
        }
        assertStatus(Status.Code.INVALID_ARGUMENT, "was opened with another OPEN (2 channel(s) [1:/cam, 2:/joints],"
                + " now 1 [1:/cam])", refused(ObservationRequest.newBuilder().setOpen(open("bad", "e2").getOpen()
                .toBuilder().removeChannels(1)).build()));
        assertNothingLanded("bad");
    }

    @Test
    void limitsAreResourceExhausted() throws Exception {
        Status big = refused(open("bad", "e7"), obs(1, 1, T0, 70 << 10));
        assertStatus(Status.Code.RESOURCE_EXHAUSTED, "Observation seq 1 on /cam is 71680 bytes; the gateway takes"
                + " messages of at most 65536 bytes", big);
        try (RawLive s = stream("big")) {
            s.send(open("big", "long"));
            for (int i = 1; i <= 5; i++) {
                s.send(obs(i, 1, T0 + i, 60_000));
            }
            assertStatus(Status.Code.RESOURCE_EXHAUSTED, "would pass the gateway's maximum file size of 300000 bytes"
                    + " with seq 5", s.end());
        }
        // robot "quota": episode A left open with 4 x 60 KB, episode B (50 KB messages) passes 400,000 bytes at its 4th
        try (RawLive a = stream("quota")) {
            a.send(open("quota", "A"));
            assertEquals(1, a.next().getOpened().getNextSeq());
            for (int i = 1; i <= 4; i++) {
                a.send(obs(i, 1, T0 + i, 60_000));
            }
            assertEquals(4, a.nextWritten(), "the 4 messages are journaled");
            a.cancel();
        }
        try (RawLive b = stream("quota")) {
            b.send(open("quota", "B"));
            for (int i = 1; i <= 4; i++) {
                b.send(obs(i, 1, T0 + i, 50_000));
            }
            Status s = b.end();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s.toString());
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("robot quota has (\\d+) bytes staged in"
                    + " unfinished uploads and live episodes; (\\d+) bytes more would pass its quota of 400000 bytes")
                    .matcher(s.getDescription());
            assertTrue(m.find(), s.getDescription());
            long staged = Long.parseLong(m.group(1));
            assertTrue(staged > 4 * 60_000 + 3 * 50_000 && staged < 4 * 60_100 + 3 * 50_100, "A's 4 and B's 3: " + staged);
            assertTrue(Long.parseLong(m.group(2)) > 50_000, s.getDescription());
        }
        // and an upload of the same robot counts the live journals
        try (FleetClient c = FleetClient.builder(gateway.target()).token(TOKENS.get("quota")).build()) {
            UploadFailedException e = assertThrows(UploadFailedException.class, () -> c.upload(
                    io.flywheel.testkit.SharedData.data("camera/bridge-mcap/bridge_ep00.mcap"), "quota", "",
                    FileKind.MCAP, io.flywheel.fleet.client.UploadListener.NONE));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
            assertTrue(e.getMessage().contains(" in live episodes; with bridge_ep00.mcap"), e.getMessage());
        }
        assertNothingLanded("big");
        assertNothingLanded("quota");
    }

    @Test
    void robotsStreamOnlyAsThemselvesAndOneStreamPerEpisode() throws Exception {
        try (RawLive s = stream("r1")) {
            s.send(open("r2", "e"));
            assertStatus(Status.Code.PERMISSION_DENIED, "the token is robot r1's; the request names robot r2",
                    s.end());
        }
        try (RawLive s = new RawLive(gateway.target(), "fwt_000000000000.nope")) {
            s.send(open("r1", "e"));
            assertStatus(Status.Code.UNAUTHENTICATED, "unknown or revoked token", s.end());
        }
        try (FleetClient c = FleetClient.builder(gateway.target()).token(TOKENS.get("r1")).build()) {
            UploadFailedException e = assertThrows(UploadFailedException.class, () -> c.openEpisode(
                    LiveEpisodeSpec.builder("r2", "e").channel("/a", "json", "", "", null).build()));
            assertEquals(Status.Code.PERMISSION_DENIED, e.code());
        }
        try (RawLive a = stream("r1"); RawLive b = stream("r1")) {
            a.send(open("r1", "twice"));
            assertTrue(a.next().hasOpened());
            b.send(open("r1", "twice"));
            assertStatus(Status.Code.ABORTED, "is being streamed on another stream right now", b.end());
            a.cancel();
        }
        assertNothingLanded("r1");
        assertNothingLanded("r2");
    }

    /**
     * Cut after 5 messages (all acknowledged), resumed: the gateway names seq 6; the robot sends seq 3 to 8 (3 to 5
     * again, as a robot whose acknowledgements were lost would) and END: the landed file has 8 messages, each once.
     */
    @Test
    void aCutStreamResumedWithResentMessagesKeepsEachOnce() throws Exception {
        try (RawLive s = stream("cut")) {
            s.send(open("cut", "ep"));
            assertEquals(1, s.next().getOpened().getNextSeq());
            for (int i = 1; i <= 5; i++) {
                s.send(obs(i, 1 + i % 2, T0 + i, 100 + i));
            }
            assertEquals(5, s.nextWritten(), "acknowledged within 20 ms");
            s.cancel();
        }
        ObservationAck done;
        try (RawLive s = stream("cut")) {
            s.send(open("cut", "ep"));
            assertEquals(6, s.next().getOpened().getNextSeq());
            for (int i = 3; i <= 8; i++) {
                s.send(obs(i, 1 + i % 2, T0 + i, 100 + i));
            }
            s.send(end(8));
            assertEquals(Status.Code.OK, s.end().getCode());
            done = s.acks.get(s.acks.size() - 1);
        }
        assertEquals(8, done.getDone().getMessages());
        // zero bytes are no CDR or JSON: ingest rejects the file and moves it; the final state says where it is
        io.flywheel.fleet.v1.UploadStatus s;
        try (FleetClient c = FleetClient.builder(gateway.target()).token(TOKENS.get("cut")).build()) {
            s = c.awaitIngested("cut", done.getDone().getUpload().getSha256(), java.time.Duration.ofSeconds(30));
        }
        assertEquals(io.flywheel.fleet.v1.UploadState.INGEST_FAILED, s.getState(), s.toString());
        List<LiveStreamTest.Msg> ms = LiveStreamTest.messages(lakeDir.resolve(s.getLandedPath()));
        assertEquals(List.of(T0 + 1, T0 + 2, T0 + 3, T0 + 4, T0 + 5, T0 + 6, T0 + 7, T0 + 8),
                ms.stream().map(LiveStreamTest.Msg::logTime).toList());
        assertEquals(List.of(101, 102, 103, 104, 105, 106, 107, 108),
                ms.stream().map(m -> m.data().remaining()).toList());
    }

    /**
     * A journal cut inside its last record (a gateway killed mid-append) is read up to the last complete one by the
     * next gateway: the episode continues at that seq. A record damaged before the end is DATA_LOSS, the journal kept.
     */
    @Test
    void aTornJournalTailIsCutOffAndDamageBeforeItIsDataLoss() throws Exception {
        Path lakeB = tmp.resolve("lake-torn");
        try (Lake l = Lake.init(lakeB)) {
            String token = RobotTokens.add(l, "arm").token();
            Path journal;
            try (FleetGateway g = FleetGateway.start(l, GatewayOptions.builder().build());
                    RawLive s = new RawLive(g.target(), token)) {
                s.send(open("arm", "torn"));
                assertTrue(s.next().hasOpened());
                for (int i = 1; i <= 3; i++) {
                    s.send(obs(i, 1, T0 + i, 1000));
                }
                assertEquals(3, s.nextWritten());
                journal = lakeB.resolve("_staging/streams/arm/" + s.acks.get(0).getOpened().getStreamId()
                        + ".journal");
            }
            long size = java.nio.file.Files.size(journal);
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(journal,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(size - 10); // seq 3's record loses its last 10 bytes
            }
            try (FleetGateway g = FleetGateway.start(l, GatewayOptions.builder().build());
                    RawLive s = new RawLive(g.target(), token)) {
                s.send(open("arm", "torn"));
                assertEquals(3, s.next().getOpened().getNextSeq());
                s.cancel();
            }
            assertEquals(size - 8 - obs(3, 1, T0 + 3, 1000).getSerializedSize(), java.nio.file.Files.size(journal),
                    "cut back to the end of seq 2");
            byte[] b = java.nio.file.Files.readAllBytes(journal);
            int second = 8 + obs(2, 1, T0 + 2, 1000).getSerializedSize();
            b[b.length - second - 500] ^= 0x5A; // inside seq 1's bytes, seq 2's record after it
            java.nio.file.Files.write(journal, b);
            try (FleetGateway g = FleetGateway.start(l, GatewayOptions.builder().build());
                    RawLive s = new RawLive(g.target(), token)) {
                s.send(open("arm", "torn"));
                assertStatus(Status.Code.DATA_LOSS, "the CRC-32 of a", s.end());
                assertTrue(s.status.getDescription().contains("bytes of records follow it; it is kept as it is"),
                        s.status.getDescription());
            }
            assertTrue(java.nio.file.Files.exists(journal));
        }
    }

    static void assertNothingLanded(String robot) throws Exception {
        assertEquals(List.of(), UploadServiceTest.filesUnder(lakeDir.resolve("raw/" + robot)));
        lake.refresh();
        if (lake.hasTable(TableSchemas.RAW_FILES)) {
            try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
                assertEquals(0, t.countRows("robot_id = '" + robot + "'"));
            }
        }
        assertFalse(java.nio.file.Files.exists(lakeDir.resolve("_staging/uploads/" + robot)), "no upload staged");
    }
}
