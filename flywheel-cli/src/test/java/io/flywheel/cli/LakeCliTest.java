package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.rows.RawFileRow;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.StreamMatch;
import io.flywheel.testkit.SharedData;

/** {@code flywheel init}, {@code ingest}, {@code align report} and {@code qc report} on the real recordings. */
class LakeCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path lake(Path tmp, String name) {
        Path l = tmp.resolve(name);
        CliRun r = CliRun.of("init", l.toString());
        assertEquals(0, r.exitCode(), r.err());
        return l;
    }

    private static List<FrameRow> frames(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("frames")) {
            return t.frames(ScanRequest.all());
        }
    }

    @Test
    void initRefusesAnExistingLakeUnlessExistOkAndThenChangesNothing(@TempDir Path tmp) throws IOException {
        Path lake = lake(tmp, "lake");
        CliRun again = CliRun.of("init", lake.toString());
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("already exists"), again.err());
        long before;
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("frames")) {
            before = t.latestVersion();
        }
        CliRun ok = CliRun.of("init", lake.toString(), "--exist-ok", "--json");
        assertEquals(0, ok.exitCode(), ok.err());
        assertFalse(JSON.readTree(ok.out()).get("created").asBoolean());
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("frames")) {
            assertEquals(before, t.latestVersion());
        }
        CliRun fresh = CliRun.of("init", tmp.resolve("other").toString(), "--exist-ok", "--json");
        assertEquals(0, fresh.exitCode(), fresh.err());
        assertTrue(JSON.readTree(fresh.out()).get("created").asBoolean());
        Path file = java.nio.file.Files.writeString(tmp.resolve("notes.md"), "# a file\n");
        CliRun onFile = CliRun.of("init", file.toString());
        assertEquals(1, onFile.exitCode());
        assertTrue(onFile.err().contains("cannot init lake at " + file + ": it is a file, not a folder"), onFile.err());
        assertEquals("# a file\n", java.nio.file.Files.readString(file), "the file is untouched");
        // a folder holding other files (the recordings, say) is refused and left as it was; hidden files do not count
        Path fleet = java.nio.file.Files.createDirectories(tmp.resolve("fleet"));
        java.nio.file.Files.writeString(fleet.resolve("ep_00000.mcap"), "x");
        java.nio.file.Files.writeString(fleet.resolve("ground_truth.json"), "{}");
        CliRun onFleet = CliRun.of("init", fleet.toString());
        assertEquals(1, onFleet.exitCode());
        assertTrue(onFleet.err().contains("cannot init lake at " + fleet + ": the folder is not empty (2 entries, e.g."
                + " ep_00000.mcap, ground_truth.json)"), onFleet.err());
        try (var list = java.nio.file.Files.list(fleet)) {
            assertEquals(2, list.count(), "nothing written into the folder");
        }
        Path hidden = java.nio.file.Files.createDirectories(tmp.resolve("hidden"));
        java.nio.file.Files.writeString(hidden.resolve(".DS_Store"), "x");
        assertEquals(0, CliRun.of("init", hidden.toString()).exitCode());
    }

    @Test
    void bridgeEpisodesBecome250FramesWithStateActionAndThreeImagesAndReingestAddsNothing(@TempDir Path tmp)
            throws IOException {
        Path lake = lake(tmp, "lake");
        CliRun r = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode sum = JSON.readTree(r.out());
        assertEquals(25, sum.get("episodes").asLong());
        assertEquals(250, sum.get("frames").asLong());

        JsonNode expected = JSON.readTree(SharedData.data("camera/bridge-mcap/expected.json").toFile()).get("files");
        Map<Long, JsonNode> byStart = new HashMap<>();
        for (JsonNode f : expected) {
            byStart.put(f.get("first_log_time_ns").asLong(), f);
        }
        List<FrameRow> frames = frames(lake);
        assertEquals(250, frames.size());
        Map<String, Long> firstTime = new HashMap<>();
        for (FrameRow f : frames) {
            firstTime.merge(f.episodeId(), f.timestampNs(), Math::min);
        }
        for (FrameRow f : frames) {
            JsonNode exp = byStart.get(firstTime.get(f.episodeId()));
            assertNotNull(exp, "episode starts at a time listed in expected.json");
            int step = f.frameIndex();
            assertEquals(exp.get("first_log_time_ns").asLong() + 200_000_000L * step, f.timestampNs());
            double[] state = f.state();
            double[] action = f.action();
            assertEquals(7, state.length);
            assertEquals(7, action.length);
            for (int j = 0; j < 7; j++) {
                assertEquals(exp.get("eef_state").get("position").get(step).get(j).asDouble(), state[j], 0.0);
                assertEquals(exp.get("action").get("data").get(step).get(j).asDouble(), action[j], 0.0);
            }
            assertEquals(3, f.images().size(), "one locator per camera");
            assertEquals(exp.get("images").get("/camera0/image/compressed").get("size_bytes").get(step).asLong(),
                    f.images().get(0).length());
            assertTrue(f.flags().isEmpty());
        }

        long[] before = versions(lake);
        CliRun again = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString());
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("25 skipped as already in the lake"), again.out());
        assertArrayEquals(before, versions(lake), "a re-ingest commits nothing");

        CliRun qc = CliRun.of("qc", "report", lake.toString(), "--json");
        assertEquals(0, qc.exitCode(), qc.err());
        assertEquals(25, JSON.readTree(qc.out()).get("episodes").size());
        CliRun align = CliRun.of("align", "report", lake.toString(), "--json");
        assertEquals(0, align.exitCode(), align.err());
        for (JsonNode s : JSON.readTree(align.out()).get("streams")) {
            assertEquals(250, s.get("matched").asLong(), "the bridge streams share timestamps: " + s);
            assertEquals(0.0, s.get("max_ms").asDouble(), 0.0);
        }
    }

    @Test
    void rldsGivesTheSameFramesAsTheMcapCopy(@TempDir Path tmp) throws IOException {
        Path mcap = lake(tmp, "mcap");
        Path rlds = lake(tmp, "rlds");
        assertEquals(0, CliRun.of("ingest", mcap.toString(), SharedData.data("camera/bridge-mcap").toString()).exitCode());
        CliRun r = CliRun.of("ingest", rlds.toString(), SharedData.data("camera/bridge-octo-rlds").toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(25, JSON.readTree(r.out()).get("episodes").asLong());
        Map<Long, FrameRow> byTime = new HashMap<>();
        for (FrameRow f : frames(mcap)) {
            byTime.put(f.timestampNs(), f);
        }
        List<FrameRow> fromRlds = frames(rlds);
        assertEquals(250, fromRlds.size());
        for (FrameRow f : fromRlds) {
            FrameRow m = byTime.get(f.timestampNs());
            assertNotNull(m, "RLDS frame at " + f.timestampNs() + " has an MCAP twin");
            assertArrayEquals(m.state(), f.state(), 0.0);
            assertArrayEquals(m.action(), f.action(), 0.0);
            // the TFRecord also holds image_3, an unused placeholder camera the MCAP copy left out
            assertEquals(m.images().size() + 1, f.images().size());
            for (int c = 0; c < m.images().size(); c++) {
                assertEquals(m.images().get(c).length(), f.images().get(c).length(), "same JPEG sizes");
                assertEquals(-1, f.images().get(c).chunkOffset(), "a TFRecord value is a plain byte range");
            }
        }
    }

    @Test
    void splitRosbag2IsOneRecordingAndLabelboxUsesItsJointStates(@TempDir Path tmp) throws IOException {
        Path lake = lake(tmp, "lake");
        CliRun r = CliRun.of("ingest", lake.toString(),
                SharedData.data("mcap-real/ros2-rosbag2/multiple_files").toString(),
                SharedData.data("mcap-real/labelbox-franka").toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        int tfIssues = 0;
        for (JsonNode rec : JSON.readTree(r.out()).get("recordings")) {
            JsonNode profile = rec.get("profile");
            if (rec.get("files").get(0).asText().contains("labelbox")) {
                assertEquals("/joint_states", profile.get("master").asText());
                assertEquals("state", profile.get("topics").get("/joint_states").get("role").asText());
                assertEquals("type JointState", profile.get("topics").get("/joint_states").get("reason").asText());
                for (JsonNode issue : rec.get("timestamp_issues")) {
                    if (issue.get("topic").asText().equals("/tf")) {
                        tfIssues++;
                        assertEquals("[\"log time 0\",\"no usable time\"]", issue.get("findings").toString());
                    }
                }
            }
        }
        assertEquals(2, tfIssues, "each labelbox episode's /tf has one message with log time 0");
        try (Lake l = Lake.open(lake.toString()); LakeTable raw = l.table("raw_files"); LakeTable eps = l.table("episodes")) {
            List<RawFileRow> files = raw.rawFiles(ScanRequest.all());
            assertEquals(5, files.size(), "3 split files + 2 labelbox files");
            long splitIds = files.stream().filter(f -> f.uri().contains("multiple_files")).map(RawFileRow::recordingId)
                    .distinct().count();
            assertEquals(1, splitIds, "the three split files are one recording");
            List<EpisodeRow> episodes = eps.episodes(ScanRequest.all());
            assertEquals(3, episodes.size());
            long franka = episodes.stream().filter(e -> "/joint_states".equals(e.masterTopic())).count();
            assertEquals(2, franka, "labelbox recordings have no camera: their joint states are the master clock");
        }
        for (FrameRow f : frames(lake)) {
            if (f.state() != null && f.state().length == 9) {
                return; // a Franka frame with its 9 joint positions
            }
        }
        throw new AssertionError("no Franka frame carries the 9 joint positions");
    }

    @Test
    void simulatedFleetAsOfNeverPairsALaterMessage(@TempDir Path tmp) throws IOException {
        Path fleet = tmp.resolve("fleet");
        assertEquals(0, CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio").exitCode());
        Path lake = lake(tmp, "lake");
        CliRun r = CliRun.of("ingest", lake.toString(), fleet.toString(), "--policy", "/teleop/command=asof:30",
                "--policy", "/left_wrist_camera/image_raw/compressed=nearest:5",
                "--policy", "/right_wrist_camera/image_raw/compressed=nearest:0.000001", "--json");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(6, JSON.readTree(r.out()).get("episodes").asLong());
        // a 1 ns tolerance pairs no right-wrist frame with the head camera (their clocks differ): no residuals at all
        CliRun align = CliRun.of("align", "report", lake.toString(), "--json");
        assertEquals(0, align.exitCode(), align.err());
        JsonNode right = null;
        for (JsonNode s : JSON.readTree(align.out()).get("streams")) {
            if (s.get("stream").asText().equals("/right_wrist_camera/image_raw/compressed")) {
                right = s;
            }
        }
        assertNotNull(right, align.out());
        assertEquals(0, right.get("matched").asLong(), right.toString());
        for (String k : List.of("p50_ms", "p90_ms", "p99_ms", "max_ms")) {
            assertTrue(right.get(k).isNull(), "no match gives null, not NaN: " + right);
        }
        CliRun text = CliRun.of("align", "report", lake.toString());
        String row = text.out().lines().filter(l -> l.startsWith("/right_wrist_camera/image_raw/compressed")).findFirst()
                .orElseThrow();
        assertTrue(row.matches(".*\\s+-\\s+-\\s+-\\s+-\\s*"), "'-' for p50, p90, p99 and max: " + row);
        CliRun qc = CliRun.of("qc", "report", lake.toString(), "--json");
        JsonNode first = JSON.readTree(qc.out()).get("episodes").get(0);
        assertTrue(first.get("source_files").get(0).asText().matches("ep_\\d+\\.mcap"), first.toString());
        assertTrue(first.get("robot_id").asText().startsWith("robot"), first.toString());
        long asof = 0;
        long nearestUnmatched = 0;
        for (FrameRow f : frames(lake)) {
            for (StreamMatch m : f.streams()) {
                if (m.stream().equals("/joint_states") || m.stream().equals("/teleop/command")) {
                    if (m.matched()) {
                        asof++;
                        assertTrue(m.residualNs() <= 0, "as-of pairs a message at or before the frame: " + m);
                        assertTrue(m.residualNs() >= -(m.stream().equals("/joint_states") ? 50_000_000L : 30_000_000L));
                    }
                } else if (m.stream().equals("/left_wrist_camera/image_raw/compressed")) {
                    if (m.matched()) {
                        assertTrue(Math.abs(m.residualNs()) <= 5_000_000L, m.toString());
                    } else {
                        nearestUnmatched++;
                        assertTrue(f.flags().contains("unmatched:" + m.stream()), f.flags().toString());
                    }
                }
            }
        }
        assertTrue(asof > 500, "as-of pairings checked: " + asof);
        assertTrue(nearestUnmatched > 0, "a 5 ms tolerance leaves some wrist frames unpaired");
    }

    @Test
    void aBadInputIsNamedAndSkippedTheGoodOnesAreCommittedAndAllBadCommitsNothing(@TempDir Path tmp) throws IOException {
        Path lake = lake(tmp, "lake");
        Path bad = tmp.resolve("bad.mcap");
        byte[] bytes = Files.readAllBytes(SharedData.data("camera/bridge-mcap/bridge_ep00.mcap"));
        Files.write(bad, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        Path empty = Files.createDirectory(tmp.resolve("empty"));
        long[] before = versions(lake);

        CliRun all = CliRun.of("ingest", lake.toString(), bad.toString(), empty.toString());
        assertEquals(1, all.exitCode());
        assertTrue(all.err().contains("no recordings found in " + empty), all.err());
        assertTrue(all.out().contains("2 failed"), all.out());
        assertArrayEquals(before, versions(lake), "nothing is committed when every input is bad");

        CliRun r = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap/bridge_ep01.mcap").toString(),
                bad.toString(), SharedData.data("camera/bridge-mcap/bridge_ep02.mcap").toString());
        assertEquals(1, r.exitCode(), "an input failed");
        assertTrue(r.noStackTrace(), r.err());
        String failure = r.err().lines().filter(l -> l.startsWith("flywheel ingest: ")).findFirst().orElseThrow();
        assertTrue(failure.contains("bad.mcap at byte "), "names the file and the offset: " + failure);
        assertTrue(failure.endsWith("(flywheel mcap recover can salvage its readable messages)"), failure);
        assertTrue(r.out().contains("ingested 2 recording(s): 2 episode(s), 20 frame(s); 0 skipped as already in the"
                + " lake; 1 failed"), r.out());
        assertEquals(1, r.out().split("roles guessed for", -1).length - 1, "one block for one distinct guess: " + r.out());
        assertTrue(r.out().contains("roles guessed for 2 recording(s) (bridge_ep01.mcap, bridge_ep02.mcap):"), r.out());
        assertTrue(r.out().contains("/robot/action              action  (type Float32MultiArray)"), r.out());
        try (Lake l = Lake.open(lake.toString()); LakeTable raw = l.table("raw_files")) {
            assertEquals(List.of("bridge_ep01.mcap", "bridge_ep02.mcap"), raw.rawFiles(ScanRequest.all()).stream()
                    .map(f -> f.uri().substring(f.uri().lastIndexOf('/') + 1)).sorted().toList());
        }
        assertEquals(20, frames(lake).size());

        CliRun missing = CliRun.of("ingest", tmp.resolve("no-lake").toString(), bad.toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no-lake"), missing.err());
    }

    /**
     * A folder's {@code .mcap} files that are empty or not recordings are failed inputs like a truncated one (exit 1,
     * named, in --json with the kind {@code bad_input}), and the folder's good recording is committed; a README is no
     * recording and not reported.
     */
    @Test
    void aFolderReportsItsUnreadableRecordingFilesAsFailed(@TempDir Path tmp) throws IOException {
        Path lake = lake(tmp, "lake");
        Path in = Files.createDirectories(tmp.resolve("in"));
        Files.copy(SharedData.data("camera/bridge-mcap/bridge_ep00.mcap"), in.resolve("bridge_ep00.mcap"));
        Files.createFile(in.resolve("empty.mcap"));
        Files.writeString(in.resolve("garbage.mcap"), "hello\n");
        Files.writeString(in.resolve("README.md"), "# notes\n");
        CliRun r = CliRun.of("ingest", lake.toString(), in.toString(), "--json");
        assertEquals(1, r.exitCode(), "two inputs failed: " + r.err());
        JsonNode j = JSON.readTree(r.out());
        assertEquals("ok", j.fieldNames().next(), "every command's JSON starts by saying whether it succeeded");
        assertFalse(j.get("ok").asBoolean(), r.out());
        assertEquals(10, j.get("frames").asLong());
        JsonNode failed = j.get("failed");
        assertEquals(2, failed.size(), failed.toString());
        assertEquals(in.resolve("empty.mcap").toString(), failed.get(0).get("input").asText());
        assertTrue(failed.get(0).get("message").asText().endsWith("found an empty file"), failed.toString());
        assertEquals(in.resolve("garbage.mcap").toString(), failed.get(1).get("input").asText());
        for (JsonNode f : failed) {
            assertEquals("bad_input", f.get("kind").asText(), f.toString());
            assertFalse(f.has("error_type"), "no Java class name: " + f);
        }
        assertTrue(r.err().contains("flywheel ingest: " + in.resolve("empty.mcap") + " at byte 0: not a recording"),
                r.err());
        CliRun text = CliRun.of("ingest", lake.toString(), in.toString());
        assertEquals(1, text.exitCode());
        assertTrue(text.out().contains("ingested 0 recording(s): 0 episode(s), 0 frame(s); 1 skipped as already in"
                + " the lake; 2 failed"), text.out());
    }

    @Test
    void timestampFindingsAreCountedPerTopicOverEpisodes() {
        IngestJob.RecordingResult a = new IngestJob.RecordingResult("rec-a", "MCAP", List.of("file:///x/a.mcap"), false,
                1, 4, null, List.of(new IngestJob.TimestampIssue("a-0", "/tf", List.of("log time 0", "no usable time"),
                "5 msgs"), new IngestJob.TimestampIssue("a-0", "/imu", List.of("forward clock jumps"), "9 msgs")),
                Map.of());
        IngestJob.RecordingResult b = new IngestJob.RecordingResult("rec-b", "MCAP", List.of("file:///x/b.mcap"), false,
                1, 4, null, List.of(new IngestJob.TimestampIssue("b-0", "/tf", List.of("log time 0", "no usable time"),
                "5 msgs")), Map.of());
        List<String> lines = IngestCommand.timestampLines(List.of(a, b));
        assertEquals("timestamps: /imu: forward clock jumps in 1 episode(s)", lines.get(0));
        assertEquals("timestamps: /tf: log time 0 in 2 episode(s), no usable time in 2 episode(s)", lines.get(1));
        assertEquals(3, lines.size());
    }

    /**
     * For nearest and as-of, every stored /joint_states pairing of a simulated fleet equals a brute-force
     * recomputation from the header stamps in the raw files (tight tolerances, so some frames go unpaired),
     * and every master frame's stamp lies within the camera's jitter bound of its true capture time plus
     * the camera's clock offset, as the ground truth states.
     */
    @Test
    void simulatedFleetPairingsEqualABruteForceRecomputationAndTheGroundTruth(@TempDir Path tmp) throws Exception {
        Path fleet = tmp.resolve("fleet");
        assertEquals(0, CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio").exitCode());
        JsonNode truth = JSON.readTree(fleet.resolve("ground_truth.json").toFile());
        for (String method : new String[] {"nearest", "asof"}) {
            // joints come every 5 ms: nearest is at most ~2.5 ms away, as-of at most ~5 ms, so these leave gaps
            long tol = method.equals("nearest") ? 2_000_000L : 3_000_000L;
            Path lake = lake(tmp, "lake-" + method);
            CliRun r = CliRun.of("ingest", lake.toString(), fleet.toString(), "--policy",
                    "/joint_states=" + method + ":" + tol / 1_000_000);
            assertEquals(0, r.exitCode(), r.err());
            Map<String, EpisodeRow> episodes = new HashMap<>();
            try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("episodes")) {
                t.episodes(ScanRequest.all()).forEach(e -> episodes.put(e.episodeId(), e));
            }
            long paired = 0;
            long unpaired = 0;
            Map<String, long[]> jointStamps = new HashMap<>();
            for (FrameRow f : frames(lake)) {
                EpisodeRow ep = episodes.get(f.episodeId());
                String file = JSON.readTree(ep.metadataJson()).get("source_files").get(0).asText();
                long[] js = jointStamps.computeIfAbsent(file, k -> stamps(Path.of(java.net.URI.create(k)), "/joint_states"));
                long t = f.timestampNs();
                int expected = -1;
                for (int j = 0; j < js.length; j++) {
                    boolean better = method.equals("asof") ? js[j] <= t && (expected < 0 || js[j] >= js[expected])
                            : expected < 0 || Math.abs(js[j] - t) < Math.abs(js[expected] - t);
                    if (better) {
                        expected = j;
                    }
                }
                if (expected >= 0 && Math.abs(js[expected] - t) > tol) {
                    expected = -1;
                }
                StreamMatch m = f.streams().stream().filter(s -> s.stream().equals("/joint_states")).findFirst().orElseThrow();
                assertEquals(expected >= 0, m.matched(), method + " frame " + f.episodeId() + "#" + f.frameIndex());
                if (expected >= 0) {
                    assertEquals(js[expected] - t, m.residualNs().longValue(), method + " residual");
                    paired++;
                } else {
                    unpaired++;
                }
                // the master camera's stamp is its true capture time plus its clock offset, within the jitter bound
                String gtFile = java.nio.file.Path.of(java.net.URI.create(file)).getParent().getFileName() + "/"
                        + java.nio.file.Path.of(java.net.URI.create(file)).getFileName();
                JsonNode gt = null;
                for (JsonNode e : truth.get("episodes")) {
                    if (e.get("file").asText().equals(gtFile)) {
                        gt = e.get("cameras").get("head_camera");
                    }
                }
                assertNotNull(gt, gtFile);
                long target = t - gt.get("clock_offset_ns").asLong();
                long k = Math.round((double) (target - gt.get("nominal_start_ns").asLong()) / gt.get("period_ns").asLong());
                JsonNode dev = gt.get("deviation_ns");
                long trueT = gt.get("nominal_start_ns").asLong() + k * gt.get("period_ns").asLong()
                        + (dev.size() > k ? dev.get((int) k).asLong() : 0);
                assertTrue(Math.abs(target - trueT) <= gt.get("stamp_jitter_max_ns").asLong(),
                        "frame stamp - offset - true capture time = " + (target - trueT) + " ns");
            }
            assertTrue(paired > 150, method + ": pairings checked " + paired);
            assertTrue(unpaired > 0, method + ": the tolerance leaves frames without a joint state: " + unpaired);
        }
    }

    /** Header stamps of one topic's messages, in file order. */
    private static long[] stamps(Path file, String topic) {
        List<Long> out = new java.util.ArrayList<>();
        try (io.flywheel.mcap.McapMessages m = io.flywheel.mcap.McapMessages.open(file,
                io.flywheel.mcap.McapIndexedReader.ReadOptions.builder().topic(topic).build())) {
            io.flywheel.mcap.MessageView v;
            while ((v = m.next()) != null) {
                out.add(io.flywheel.ros.cdr.CdrFastPaths.headerStamp(v.message().data()));
            }
        } catch (Exception e) {
            throw new AssertionError(file + ": " + e.getMessage(), e);
        }
        return out.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    /**
     * A real {@code flywheel ingest} process killed at a random moment leaves every table at a committed
     * version: each file in raw_files has its episodes, each episode has either all of its frames or none
     * (an orphan from a kill between commits, repaired by the next ingest), no episode twice; a final
     * ingest completes the lake exactly.
     */
    @Test
    void killingARunningIngestLeavesEveryTableAtACommittedVersion(@TempDir Path tmp) throws Exception {
        Path lake = lake(tmp, "lake");
        String java = ProcessHandle.current().info().command().orElse("java");
        java.util.Random random = new java.util.Random(7);
        for (int round = 0; round < 2; round++) {
            Process p = new ProcessBuilder(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path"), "io.flywheel.cli.Main",
                    "ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString())
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("ingest-" + round + ".log").toFile()).start();
            Thread.sleep(2_000 + random.nextInt(8_000));
            p.destroyForcibly();
            p.waitFor();
            assertConsistent(lake);
        }
        CliRun done = CliRun.of("ingest", lake.toString(), SharedData.data("camera/bridge-mcap").toString());
        assertEquals(0, done.exitCode(), done.err());
        assertConsistent(lake);
        try (Lake l = Lake.open(lake.toString()); LakeTable raw = l.table("raw_files"); LakeTable eps = l.table("episodes")) {
            assertEquals(25, raw.countRows());
            assertEquals(25, eps.countRows());
        }
        assertEquals(250, frames(lake).size());
    }

    private static void assertConsistent(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable raw = l.table("raw_files"); LakeTable eps = l.table("episodes")) {
            List<EpisodeRow> episodes = eps.episodes(ScanRequest.all());
            assertEquals(episodes.size(), episodes.stream().map(EpisodeRow::episodeId).distinct().count(), "no episode twice");
            Map<String, Long> framesPer = new HashMap<>();
            for (FrameRow f : frames(lake)) {
                framesPer.merge(f.episodeId(), 1L, Long::sum);
            }
            for (EpisodeRow e : episodes) {
                long n = framesPer.getOrDefault(e.episodeId(), 0L);
                assertTrue(n == 0 || n == e.frameCount(), e.episodeId() + ": " + n + " of " + e.frameCount() + " frames");
            }
            for (RawFileRow r : raw.rawFiles(ScanRequest.all())) {
                List<EpisodeRow> of = episodes.stream().filter(e -> e.recordingId().equals(r.recordingId())).toList();
                assertTrue(!of.isEmpty(), r.uri() + " is in raw_files, so its episodes are committed");
                for (EpisodeRow e : of) {
                    assertEquals(e.frameCount(), framesPer.getOrDefault(e.episodeId(), 0L), "frames of " + e.episodeId());
                }
            }
        }
    }

    private static long[] versions(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable a = l.table("raw_files"); LakeTable b = l.table("episodes");
             LakeTable c = l.table("frames")) {
            return new long[] {a.version(), b.version(), c.version()};
        }
    }
}
