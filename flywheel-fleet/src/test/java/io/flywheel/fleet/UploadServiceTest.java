package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.protobuf.ByteString;

import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.client.FleetClient;
import io.flywheel.fleet.client.UploadFailedException;
import io.flywheel.fleet.client.UploadListener;
import io.flywheel.fleet.client.UploadResult;
import io.flywheel.fleet.gateway.FleetGateway;
import io.flywheel.fleet.gateway.GatewayOptions;
import io.flywheel.fleet.upload.IngestSettings;
import io.flywheel.fleet.upload.UploadLimits;
import io.flywheel.fleet.v1.Begin;
import io.flywheel.fleet.v1.Chunk;
import io.flywheel.fleet.v1.End;
import io.flywheel.fleet.v1.FileKind;
import io.flywheel.fleet.v1.UploadAck;
import io.flywheel.fleet.v1.UploadRequest;
import io.flywheel.fleet.v1.UploadState;
import io.flywheel.fleet.v1.UploadStatus;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;
import io.grpc.Status;

/**
 * The upload path end to end over a real gateway on loopback (one per class), with the BridgeData MCAP files of
 * {@code shared/data/camera/bridge-mcap} (90-100 KB each, 8 KiB chunks so that each is 12-13 chunks). Limits: files
 * up to 1 MiB, 160,000 bytes staged per robot (one bridge file, not two).
 */
class UploadServiceTest {
    static final int CHUNK = 8192;

    @TempDir
    static Path tmp;
    static Path lakeDir;
    static Lake lake;
    static FleetGateway gateway;
    static final java.util.Map<String, String> TOKENS = new java.util.HashMap<>();

    @BeforeAll
    static void start() {
        lakeDir = tmp.resolve("lake");
        lake = Lake.init(lakeDir);
        for (String r : List.of("r1", "r2", "r3", "r4", "cut", "bad", "quota", "malformed", "truncated")) {
            TOKENS.put(r, RobotTokens.add(lake, r).token());
        }
        gateway = FleetGateway.start(lake, GatewayOptions.builder()
                .limits(UploadLimits.builder().maxFileBytes(1 << 20).robotQuotaBytes(160_000).build()).build());
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

    static Path bridge(int i) {
        return io.flywheel.testkit.SharedData.data(String.format("camera/bridge-mcap/bridge_ep%02d.mcap", i));
    }

    static FleetClient client(String robot) {
        return FleetClient.builder(gateway.target()).token(TOKENS.get(robot)).chunkBytes(CHUNK)
                .backoff(Duration.ofMillis(50), Duration.ofMillis(500)).build();
    }

    static Begin begin(String robot, Path f, String sha) throws Exception {
        return Begin.newBuilder().setRobotId(robot).setFileName(f.getFileName().toString()).setSizeBytes(Files.size(f))
                .setSha256(sha).setKind(FileKind.MCAP).build();
    }

    static UploadRequest req(Begin b) {
        return UploadRequest.newBuilder().setBegin(b).build();
    }

    static UploadRequest chunk(byte[] all, int from, int to) {
        return UploadRequest.newBuilder().setChunk(Chunk.newBuilder().setOffset(from)
                .setData(ByteString.copyFrom(all, from, to - from))).build();
    }

    static UploadRequest end() {
        return UploadRequest.newBuilder().setEnd(End.getDefaultInstance()).build();
    }

    static List<Path> filesUnder(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }

    @Test
    void anUploadedMcapLandsByItsHashAndIngestsTheRowsOfAPlainIngest() throws Exception {
        Path src = bridge(0);
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        UploadResult r;
        try (FleetClient c = client("r1")) {
            r = c.upload(src, "r1", "ep-0", FileKind.MCAP, UploadListener.NONE);
            assertEquals(sha, r.sha256());
            assertEquals(0, r.resumedFrom());
            assertEquals(bytes.length, r.bytesSent());
            assertEquals("raw/r1/" + sha + ".mcap", r.status().getLandedPath());
            UploadStatus s = c.awaitIngested("r1", sha, Duration.ofSeconds(30));
            assertEquals(UploadState.INGESTED, s.getState(), s.toString());
            assertEquals(1, s.getEpisodes());
        }
        Path landed = lakeDir.resolve("raw/r1/" + sha + ".mcap");
        assertArrayEquals(bytes, Files.readAllBytes(landed));
        assertEquals(sha, FleetClient.sha256(landed));
        assertEquals(List.of(), filesUnder(lakeDir.resolve("_staging/uploads/r1")), "staging is empty after ingest");

        // the same file through a plain IngestJob run (as flywheel ingest --robot r1) into another lake
        try (Lake plain = Lake.init(tmp.resolve("plain"))) {
            IngestSettings s = IngestSettings.defaults();
            IngestJob.run(plain, List.of(src), s.optionsFor("r1"), s.align(), s.rules(), line -> { });
            lake.refresh();
            RawFileRow up = lake.rawFile(sha).orElseThrow();
            RawFileRow pl = plain.rawFile(sha).orElseThrow();
            assertEquals(landed.toUri().toString(), up.uri());
            assertEquals(List.of(pl.bytes(), pl.sha256(), pl.format(), pl.recordingId(), pl.robotId(), pl.recordedAtNs(),
                    pl.topicsJson()), List.of(up.bytes(), up.sha256(), up.format(), up.recordingId(), up.robotId(),
                    up.recordedAtNs(), up.topicsJson()));
            assertEquals(bytes.length, up.bytes());
            assertEquals("r1", up.robotId());
            String f = "recording_id = '" + pl.recordingId() + "'";
            List<EpisodeRow> ue = episodes(lake, f);
            List<EpisodeRow> pe = episodes(plain, f);
            assertEquals(1, ue.size());
            assertEquals(pe.get(0).episodeId(), ue.get(0).episodeId());
            assertEquals(pe.get(0).frameCount(), ue.get(0).frameCount());
            assertEquals(pe.get(0).startNs(), ue.get(0).startNs());
            assertEquals(pe.get(0).qualityStatus(), ue.get(0).qualityStatus());
            List<FrameRow> uf = frames(lake, "episode_id = '" + ue.get(0).episodeId() + "'");
            List<FrameRow> pf = frames(plain, "episode_id = '" + pe.get(0).episodeId() + "'");
            assertEquals(pe.get(0).frameCount().intValue(), uf.size());
            assertEquals(pf.size(), uf.size());
            for (int i = 0; i < uf.size(); i += 7) {
                FrameRow a = uf.get(i);
                FrameRow b = pf.get(i);
                assertEquals(b.timestampNs(), a.timestampNs());
                assertArrayEquals(b.state(), a.state());
                assertEquals(b.images().size(), a.images().size());
                assertEquals(b.images().get(0).offset(), a.images().get(0).offset());
                assertEquals(b.images().get(0).length(), a.images().get(0).length());
                assertEquals(landed.toUri().toString(), a.images().get(0).rawUri());
            }
        }

        // the same file again: answered from the lake at BEGIN, nothing sent, nothing committed
        lake.refresh();
        int commits = lake.history().size();
        try (FleetClient c = client("r1")) {
            UploadResult again = c.upload(src, "r1", "ep-0", FileKind.MCAP, UploadListener.NONE);
            assertTrue(again.status().getAlreadyInLake());
            assertEquals(UploadState.INGESTED, again.status().getState());
            assertEquals(0, again.bytesSent());
        }
        Thread.sleep(300);
        lake.refresh();
        assertEquals(commits, lake.history().size(), "no commit for a re-upload");
        try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
            assertEquals(1, t.countRows("sha256 = '" + sha + "'"));
        }
    }

    static List<EpisodeRow> episodes(Lake l, String filter) {
        try (LakeTable t = l.table(TableSchemas.EPISODES)) {
            return t.episodes(ScanRequest.builder().filter(filter).build());
        }
    }

    static List<FrameRow> frames(Lake l, String filter) {
        try (LakeTable t = l.table(TableSchemas.FRAMES)) {
            List<FrameRow> out = new ArrayList<>(t.frames(ScanRequest.builder().filter(filter).build()));
            out.sort(Comparator.comparingInt(FrameRow::frameIndex));
            return out;
        }
    }

    @Test
    void aCutUploadResumesFromTheAcknowledgedOffsetAndLandsOnce() throws Exception {
        Path src = bridge(1);
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        try (RawUpload u = new RawUpload(gateway.target(), TOKENS.get("cut"))) {
            u.send(req(begin("cut", src, sha)));
            assertEquals(0, u.next().getBegun().getNextOffset());
            for (int i = 0; i < 3; i++) {
                u.send(chunk(bytes, i * CHUNK, (i + 1) * CHUNK));
                assertEquals((i + 1) * CHUNK, u.next().getOffset().getAckedOffset());
            }
            u.cancel();
        }
        UploadResult r;
        try (FleetClient c = client("cut")) {
            UploadStatus s = waitFor(() -> c.status("cut", sha), st -> st.getStagedBytes() == 3 * CHUNK);
            assertEquals(UploadState.STAGING, s.getState());
            assertEquals(3 * CHUNK, s.getStagedBytes());
            List<Long> progress = new ArrayList<>();
            r = c.upload(src, "cut", "", FileKind.MCAP, new UploadListener() {
                @Override
                public void progress(Path file, long acked, long total) {
                    progress.add(acked);
                }
            });
            assertEquals(3 * CHUNK, r.resumedFrom());
            assertEquals(bytes.length - 3 * CHUNK, r.bytesSent());
            assertEquals(3L * CHUNK, progress.get(0));
            assertEquals((long) bytes.length, progress.get(progress.size() - 1));
            assertEquals(UploadState.INGESTED, c.awaitIngested("cut", sha, Duration.ofSeconds(30)).getState());
        }
        Path landed = lakeDir.resolve("raw/cut/" + sha + ".mcap");
        assertArrayEquals(bytes, Files.readAllBytes(landed));
        assertEquals(List.of(landed), filesUnder(lakeDir.resolve("raw/cut")));
        lake.refresh();
        try (LakeTable t = lake.table(TableSchemas.RAW_FILES)) {
            assertEquals(1, t.countRows("sha256 = '" + sha + "'"));
        }
    }

    interface Call<T> {
        T get() throws Exception;
    }

    static <T> T waitFor(Call<T> call, java.util.function.Predicate<T> ok) throws Exception {
        long end = System.nanoTime() + 10_000_000_000L;
        T v = call.get();
        while (!ok.test(v) && System.nanoTime() < end) {
            Thread.sleep(20);
            v = call.get();
        }
        return v;
    }

    @Test
    void aWrongSha256IsDataLossAndNothingLands() throws Exception {
        Path src = bridge(2);
        byte[] bytes = Files.readAllBytes(src);
        String wrong = "ab".repeat(32);
        try (RawUpload u = new RawUpload(gateway.target(), TOKENS.get("bad"))) {
            u.send(req(begin("bad", src, wrong)));
            for (int off = 0; off < bytes.length; off += CHUNK) {
                u.send(chunk(bytes, off, Math.min(bytes.length, off + CHUNK)));
            }
            u.send(end());
            Status s = u.end();
            assertEquals(Status.Code.DATA_LOSS, s.getCode(), s.toString());
            assertTrue(s.getDescription().contains("is " + FleetClient.sha256(src) + ", BEGIN declared " + wrong),
                    s.getDescription());
        }
        assertEquals(List.of(), filesUnder(lakeDir.resolve("raw/bad")));
        assertEquals(List.of(), filesUnder(lakeDir.resolve("_staging/uploads/bad")));
        lake.refresh();
        assertFalse(lake.rawFile(FleetClient.sha256(src)).isPresent());
        assertFalse(lake.rawFile(wrong).isPresent());
    }

    @Test
    void malformedStreamsAreInvalidArgument() throws Exception {
        Path src = bridge(3);
        byte[] bytes = Files.readAllBytes(src);
        String sha = FleetClient.sha256(src);
        // CHUNK before BEGIN
        assertInvalid(List.of(chunk(bytes, 0, CHUNK)), "CHUNK before BEGIN");
        // malformed sha256
        assertInvalid(List.of(req(begin("malformed", src, "xyz"))), "sha256 'xyz' is not 64 hex digits");
        // a chunk past the declared size (BEGIN says 100 bytes)
        assertInvalid(List.of(req(begin("malformed", src, "cd".repeat(32)).toBuilder().setSizeBytes(100).build()),
                chunk(bytes, 0, 200)),
                "chunk [0, 200) goes past the declared size of 100 bytes");
        // out of order: the first chunk at offset 8192
        assertInvalid(List.of(req(begin("malformed", src, "ef".repeat(32))),
                chunk(bytes, CHUNK, 2 * CHUNK)), "chunk at offset 8192; the next expected offset is 0");
        // not an MCAP at all, with the right hash: refused at END, nothing lands
        byte[] text = "not a recording\n".repeat(10).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Path notMcap = tmp.resolve("fake.mcap");
        Files.write(notMcap, text);
        assertInvalid(List.of(req(begin("malformed", notMcap, FleetClient.sha256(notMcap))), chunk(text, 0, text.length),
                end()), "is not an MCAP file");
        assertEquals(List.of(), filesUnder(lakeDir.resolve("raw/malformed")));
    }

    @Test
    void aFileIngestCannotReadLeavesTheRawLayerAndIsNotLandedAgain() throws Exception {
        // the first half of a real MCAP: its magic passes the check at END, ingest then finds it cut off
        byte[] whole = Files.readAllBytes(bridge(3));
        Path cut = tmp.resolve("cut-off.mcap");
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length / 2));
        String sha = FleetClient.sha256(cut);
        try (FleetClient c = client("truncated")) {
            UploadResult r = c.upload(cut, "truncated", "ep-t", FileKind.MCAP, UploadListener.NONE);
            assertEquals("raw/truncated/" + sha + ".mcap", r.status().getLandedPath());
            UploadStatus s = c.awaitIngested("truncated", sha, Duration.ofSeconds(30));
            assertEquals(UploadState.INGEST_FAILED, s.getState(), s.toString());
            assertEquals("_staging/rejected/truncated/" + sha + ".mcap", s.getLandedPath());
            assertTrue(s.getMessage().contains("moved out of the raw layer to _staging/rejected/truncated/"),
                    s.getMessage());
            // sent again: answered at once with the same state, nothing lands
            UploadResult again = c.upload(cut, "truncated", "ep-t", FileKind.MCAP, UploadListener.NONE);
            assertEquals(UploadState.INGEST_FAILED, again.status().getState());
            assertEquals(0, again.bytesSent());
        }
        assertEquals(List.of(), filesUnder(lakeDir.resolve("raw/truncated")));
        assertArrayEquals(Files.readAllBytes(cut),
                Files.readAllBytes(lakeDir.resolve("_staging/rejected/truncated/" + sha + ".mcap")));
        lake.refresh();
        assertTrue(lake.rawFile(sha).isEmpty());
    }

    static void assertInvalid(List<UploadRequest> msgs, String expected) throws Exception {
        try (RawUpload u = new RawUpload(gateway.target(), TOKENS.get("malformed"))) {
            for (UploadRequest m : msgs) {
                u.send(m);
            }
            Status s = u.end();
            assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s.toString());
            assertTrue(s.getDescription().contains(expected), s.getDescription());
        }
    }

    @Test
    void tokensAuthenticateOneRobotEach() throws Exception {
        Path src = bridge(4);
        try (FleetClient c = FleetClient.builder(gateway.target()).token("fwt_000000000000.nope").build()) {
            UploadFailedException e = assertThrows(UploadFailedException.class,
                    () -> c.upload(src, "r1", "", FileKind.MCAP, UploadListener.NONE));
            assertEquals(Status.Code.UNAUTHENTICATED, e.code());
            assertTrue(e.getMessage().contains("unknown or revoked token"), e.getMessage());
        }
        try (FleetClient c = client("r1")) {
            UploadFailedException e = assertThrows(UploadFailedException.class,
                    () -> c.upload(src, "r2", "", FileKind.MCAP, UploadListener.NONE));
            assertEquals(Status.Code.PERMISSION_DENIED, e.code());
            assertTrue(e.getMessage().contains("the token is robot r1's; the request names robot r2"),
                    e.getMessage());
        }
    }

    @Test
    void limitsAreResourceExhausted() throws Exception {
        Path a = bridge(5);
        Path b = bridge(6);
        try (RawUpload u = new RawUpload(gateway.target(), TOKENS.get("quota"));
                RawUpload v = new RawUpload(gateway.target(), TOKENS.get("quota"))) {
            // larger than the gateway's 1 MiB
            try (RawUpload w = new RawUpload(gateway.target(), TOKENS.get("quota"))) {
                w.send(req(begin("quota", a, FleetClient.sha256(a)).toBuilder().setSizeBytes(2 << 20).build()));
                Status s = w.end();
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode());
                assertTrue(s.getDescription().contains("at most 1048576 bytes"), s.getDescription());
            }
            u.send(req(begin("quota", a, FleetClient.sha256(a))));
            assertTrue(u.next().hasBegun());
            v.send(req(begin("quota", b, FleetClient.sha256(b))));
            Status s = v.end();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode());
            assertTrue(s.getDescription().contains("robot quota has " + Files.size(a) + " bytes staged in 1 unfinished"
                    + " upload(s)"), s.getDescription());
            // the same file on a second stream while the first is open: ABORTED, the first goes on
            try (RawUpload w = new RawUpload(gateway.target(), TOKENS.get("quota"))) {
                w.send(req(begin("quota", a, FleetClient.sha256(a))));
                Status t = w.end();
                assertEquals(Status.Code.ABORTED, t.getCode(), t.toString());
            }
            byte[] bytes = Files.readAllBytes(a);
            u.send(chunk(bytes, 0, bytes.length)).send(end());
            assertEquals(Status.Code.OK, u.end().getCode());
            UploadAck last = u.acks.get(u.acks.size() - 1);
            assertEquals("raw/quota/" + FleetClient.sha256(a) + ".mcap", last.getDone().getLandedPath());
        }
    }

    @Test
    void fourRobotsUploadAtOnceAndAllLand() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<UploadResult>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String robot = "r" + (i + 1);
                Path src = bridge(10 + i);
                fs.add(pool.submit(() -> {
                    try (FleetClient c = client(robot)) {
                        UploadResult r = c.upload(src, robot, "", FileKind.MCAP, UploadListener.NONE);
                        assertEquals(UploadState.INGESTED, c.awaitIngested(robot, r.sha256(), Duration.ofSeconds(40))
                                .getState());
                        return r;
                    }
                }));
            }
            for (int i = 0; i < 4; i++) {
                UploadResult r = fs.get(i).get();
                Path landed = lakeDir.resolve("raw/r" + (i + 1) + "/" + r.sha256() + ".mcap");
                assertEquals(r.sha256(), FleetClient.sha256(landed));
                assertEquals(Files.size(bridge(10 + i)), Files.size(landed));
                lake.refresh();
                assertTrue(lake.rawFile(r.sha256()).isPresent());
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(gateway.stats().landed() >= 4, gateway.stats().toString());
    }
}
