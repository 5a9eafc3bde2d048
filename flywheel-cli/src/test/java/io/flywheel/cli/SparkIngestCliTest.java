package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RawFileRow;
import io.flywheel.testkit.SharedData;

/**
 * {@code spark ingest} on local[2] (a child JVM with the lance-spark connector) gives the lake the rows {@code ingest}
 * gives on the same input, in one lake commit; a truncated recording fails its own task and leaves no rows.
 */
class SparkIngestCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void sparkIngestEqualsIngestInOneCommitAndListsTheDamagedRecording() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Path bridge = SharedData.data("camera/bridge-mcap");
        Files.copy(bridge.resolve("bridge_ep00.mcap"), in.resolve("bridge_ep00.mcap"));
        Files.copy(bridge.resolve("bridge_ep02.mcap"), in.resolve("bridge_ep02.mcap"));
        Files.copy(SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap"),
                in.resolve("franka.mcap"));
        // bridge_ep01 cut inside its first chunk: the magic and header are there, the chunk is not
        byte[] whole = Files.readAllBytes(bridge.resolve("bridge_ep01.mcap"));
        Files.write(in.resolve("broken.mcap"), java.util.Arrays.copyOf(whole, 50_000));

        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        assertEquals(0, CliRun.of("init", a.toString()).exitCode());
        assertEquals(0, CliRun.of("init", b.toString()).exitCode());
        CliRun one = CliRun.of("ingest", a.toString(), in.toString());
        assertEquals(1, one.exitCode(), one.err()); // the broken file fails there too
        // one recording is in lake b already: the Spark run skips it by content hash
        assertEquals(0, CliRun.of("ingest", b.toString(), in.resolve("franka.mcap").toString()).exitCode());
        Path staging = tmp.resolve("staging");
        CliRun sp = CliRun.of("spark", "ingest", b.toString(), in.toString(), "--master", "local[2]",
                "--staging", staging.toString(), "--keep-staging", "--json");
        assertEquals(1, sp.exitCode(), sp.err());
        JsonNode j = JSON.readTree(sp.out());
        assertFalse(j.path("ok").asBoolean());
        assertEquals(4, j.path("recordings").asInt());
        assertEquals(2, j.path("committed").size());
        assertEquals(1, j.path("skipped").size());
        assertEquals(1, j.path("failed").size());
        JsonNode f = j.path("failed").get(0);
        assertEquals(in.resolve("broken.mcap").toString(), f.path("input").asText());
        assertEquals("bad_input", f.path("kind").asText());
        assertTrue(f.path("message").asText().contains("broken.mcap"), f.toString());
        assertTrue(f.path("message").asText().contains("file ends at byte 50000"), f.toString());
        assertTrue(sp.err().contains("broken.mcap"), sp.err());

        // the staging datasets were written by the connector (lance-core 4.0) in Lance file format 2.1: the footer of
        // a Lance file ends with major version, minor version (u16 little endian each) and the magic "LANC"
        Path data;
        try (var s = Files.walk(staging.resolve("frames.lance").resolve("data"))) {
            data = s.filter(p -> p.toString().endsWith(".lance")).findFirst().orElseThrow();
        }
        try (RandomAccessFile raf = new RandomAccessFile(data.toFile(), "r")) {
            raf.seek(raf.length() - 8);
            byte[] tail = new byte[8];
            raf.readFully(tail);
            assertEquals(2, tail[0] | tail[1] << 8);
            assertEquals(1, tail[2] | tail[3] << 8);
            assertEquals("LANC", new String(tail, 4, 4, java.nio.charset.StandardCharsets.US_ASCII));
        }

        try (Lake la = Lake.open(a.toString()); Lake lb = Lake.open(b.toString())) {
            List<EpisodeRow> ea = episodes(la);
            List<EpisodeRow> eb = episodes(lb);
            assertEquals(3, ea.size());
            assertEquals(ea, eb);
            List<FrameRow> fa = frames(la);
            List<FrameRow> fb = frames(lb);
            assertEquals(fa.size(), fb.size());
            assertEquals(fa, fb);
            assertEquals(fb.size(), eb.stream().mapToLong(EpisodeRow::frameCount).sum());
            long franka = eb.stream().filter(e -> e.masterTopic().equals("/joint_states"))
                    .mapToLong(EpisodeRow::frameCount).sum();
            assertEquals(4, franka); // 2 s of the Franka recording on its 2 Hz joint states
            assertEquals(fb.size() - franka, j.path("frames").asLong()); // the skipped recording's frames not counted
            List<RawFileRow> ra = rawFiles(la);
            List<RawFileRow> rb = rawFiles(lb);
            assertEquals(3, rb.size());
            for (int i = 0; i < ra.size(); i++) { // all but the time of ingest
                RawFileRow x = ra.get(i);
                RawFileRow y = rb.get(i);
                assertEquals(List.of(x.uri(), x.bytes(), x.sha256(), x.format(), String.valueOf(x.recordingId()),
                                String.valueOf(x.robotId()), String.valueOf(x.recordedAtNs()), x.topicsJson(),
                                x.ingestStatus()),
                        List.of(y.uri(), y.bytes(), y.sha256(), y.format(), String.valueOf(y.recordingId()),
                                String.valueOf(y.robotId()), String.valueOf(y.recordedAtNs()), y.topicsJson(),
                                y.ingestStatus()));
                assertFalse(y.uri().contains("broken"), y.uri());
            }
            // a BridgeData episode holds 10 steps (5 Hz): 10 frame rows, one image locator per camera (3)
            String ep00 = rb.stream().filter(r -> r.uri().endsWith("bridge_ep00.mcap")).findFirst().orElseThrow()
                    .recordingId();
            EpisodeRow e00 = eb.stream().filter(e -> ep00.equals(e.recordingId())).findFirst().orElseThrow();
            List<FrameRow> f00 = fb.stream().filter(x -> x.episodeId().equals(e00.episodeId())).toList();
            assertEquals(10, f00.size());
            assertEquals(3, f00.get(0).images().size());
            assertEquals(7, f00.get(0).state().length);
            // one transaction for the two new recordings (ingest commits one per recording): franka's, then Spark's
            assertEquals(3, ingestCommits(la));
            assertEquals(2, ingestCommits(lb));
            assertEquals(j.path("commit").asLong(), lb.log(1).get(0).seq());
        }
    }

    @Test
    void alignmentOptionsMeanWhatTheyMeanForIngest() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Files.copy(SharedData.data("camera/bridge-mcap/bridge_ep00.mcap"), in.resolve("bridge_ep00.mcap"));
        Files.copy(SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap"),
                in.resolve("franka.mcap"));
        // one non-default value of each: a 4 Hz master clock, frames without a match dropped, and a policy for a
        // topic only the Franka recording has (the other recording's task must not fail on it)
        List<String> opts = List.of("--master-rate", "4", "--on-miss", "drop", "--policy", "/action=asof:30:flag");
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        assertEquals(0, CliRun.of("init", a.toString()).exitCode());
        assertEquals(0, CliRun.of("init", b.toString()).exitCode());
        List<String> one = new ArrayList<>(List.of("ingest", a.toString(), in.toString()));
        one.addAll(opts);
        CliRun r1 = CliRun.of(one.toArray(String[]::new));
        assertEquals(0, r1.exitCode(), r1.err());
        List<String> two = new ArrayList<>(List.of("spark", "ingest", b.toString(), in.toString(), "--master", "local[2]"));
        two.addAll(opts);
        CliRun r2 = CliRun.of(two.toArray(String[]::new));
        assertEquals(0, r2.exitCode(), r2.err());
        try (Lake la = Lake.open(a.toString()); Lake lb = Lake.open(b.toString())) {
            List<EpisodeRow> ea = episodes(la);
            assertEquals(2, ea.size());
            assertEquals(ea, episodes(lb));
            List<FrameRow> fa = frames(la);
            assertEquals(fa, frames(lb));
            // the fixed 4 Hz clock: frames on a 250 ms grid (a frame without a match within tolerance is dropped)
            int pairs = 0;
            for (int i = 1; i < fa.size(); i++) {
                if (fa.get(i).episodeId().equals(fa.get(i - 1).episodeId())
                        && fa.get(i).frameIndex() == fa.get(i - 1).frameIndex() + 1) {
                    long d = fa.get(i).timestampNs() - fa.get(i - 1).timestampNs();
                    assertTrue(d > 0 && d % 250_000_000L == 0, d + " ns between frames");
                    pairs++;
                }
            }
            assertTrue(pairs >= 1, fa.size() + " frames");
        }
        // a malformed option is wrong usage, before any job runs
        CliRun bad = CliRun.of("spark", "ingest", b.toString(), in.toString(), "--policy", "/action=sideways");
        assertEquals(2, bad.exitCode(), bad.err());
        assertTrue(bad.err().contains("/action=sideways"), bad.err());
    }

    @Test
    void aBadMasterIsWrongUsage() {
        CliRun r = CliRun.of("spark", "ingest", tmp.resolve("none").toString(), tmp.toString(), "--master", "local[two]");
        assertEquals(2, r.exitCode(), r.err());
        assertTrue(r.err().contains("--master"), r.err());
        assertEquals("", r.out());
    }

    private static long ingestCommits(Lake l) {
        return l.log(100).stream().map(LakeSnapshot::operation).filter("ingest"::equals).count();
    }

    private static List<EpisodeRow> episodes(Lake l) {
        try (LakeTable t = l.table(TableSchemas.EPISODES)) {
            List<EpisodeRow> out = new ArrayList<>(t.episodes(ScanRequest.all()));
            out.sort(Comparator.comparing(EpisodeRow::episodeId));
            return out;
        }
    }

    private static List<FrameRow> frames(Lake l) {
        try (LakeTable t = l.table(TableSchemas.FRAMES)) {
            List<FrameRow> out = new ArrayList<>(t.frames(ScanRequest.all()));
            out.sort(Comparator.comparing(FrameRow::episodeId).thenComparingInt(FrameRow::frameIndex));
            return out;
        }
    }

    private static List<RawFileRow> rawFiles(Lake l) {
        try (LakeTable t = l.table(TableSchemas.RAW_FILES)) {
            List<RawFileRow> out = new ArrayList<>(t.rawFiles(ScanRequest.all()));
            out.sort(Comparator.comparing(RawFileRow::uri));
            return out;
        }
    }
}
