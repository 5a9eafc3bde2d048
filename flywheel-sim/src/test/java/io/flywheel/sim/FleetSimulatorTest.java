package io.flywheel.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.flywheel.testkit.Node;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Generates small fleets and checks the files against the ground truth: determinism, clock
 * offsets, dropped frames and messages, near-duplicates, failure mechanics, and that the
 * reference reader (@mcap/core) opens them.
 */
class FleetSimulatorTest {
    @TempDir
    static Path tmp;
    static Path a;
    static GroundTruth truthA;
    static SimSummary summaryA;

    static SimOptions.Builder tiny(Path out) {
        // Drop rates raised above the defaults so that every stream has losses to check.
        return SimOptions.builder(Preset.TINY).outDir(out).resolution(160, 120).frameDropRate(0.05)
                .messageDropRate(0.02).threads(2);
    }

    @BeforeAll
    static void generate() throws IOException {
        a = tmp.resolve("a");
        summaryA = FleetSimulator.run(tiny(a).build(), ProgressListener.NONE);
        truthA = FleetSimulator.readGroundTruth(a.resolve(FleetSimulator.GROUND_TRUTH));
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(dir::relativize).sorted().toList();
        }
    }

    @Test
    void summaryAndLayoutMatchTheGroundTruth() throws IOException {
        assertEquals(6, summaryA.episodes());
        assertEquals(2, summaryA.robots());
        List<Path> f = files(a);
        assertEquals(7, f.size(), "6 episodes + ground_truth.json: " + f);
        for (GroundTruth.Episode e : truthA.episodes()) {
            Path p = a.resolve(e.file());
            assertTrue(Files.isRegularFile(p), e.file());
            assertEquals(Files.size(p), e.bytes());
            assertEquals(e.robotId() + "/" + e.episodeId() + ".mcap", e.file());
        }
        long msgs = truthA.episodes().stream().mapToLong(GroundTruth.Episode::messages).sum();
        assertEquals(msgs, summaryA.messages());
        assertEquals(1, truthA.fleet().failures());
        assertEquals(1, truthA.fleet().glassCupFailures());
    }

    @Test
    void sameSeedGivesByteIdenticalFilesAndOtherSeedsDoNot() throws IOException {
        Path b = tmp.resolve("b");
        FleetSimulator.run(tiny(b).threads(1).build(), ProgressListener.NONE);
        List<Path> fa = files(a);
        assertEquals(fa, files(b));
        for (Path rel : fa) {
            assertArrayEquals(Files.readAllBytes(a.resolve(rel)), Files.readAllBytes(b.resolve(rel)), rel.toString());
        }
        Path c = tmp.resolve("c");
        FleetSimulator.run(tiny(c).seed(7).build(), ProgressListener.NONE);
        assertFalse(java.util.Arrays.equals(Files.readAllBytes(a.resolve(FleetSimulator.GROUND_TRUTH)),
                Files.readAllBytes(c.resolve(FleetSimulator.GROUND_TRUTH))));
        GroundTruth tc = FleetSimulator.readGroundTruth(c.resolve(FleetSimulator.GROUND_TRUTH));
        Path ea = a.resolve(truthA.episodes().get(0).file());
        Path ec = c.resolve(tc.episodes().get(0).file());
        assertFalse(java.util.Arrays.equals(Files.readAllBytes(ea), Files.readAllBytes(ec)));
    }

    /** Checks one stream of one file against its ground truth; returns the sequences present. */
    private static Set<Long> checkStream(String what, GroundTruth.Stream s, List<Episodes.Msg> msgs, boolean stamped) {
        Set<Integer> dropped = new HashSet<>();
        for (int k : s.dropped()) {
            dropped.add(k);
        }
        Set<Long> seen = new HashSet<>();
        for (Episodes.Msg m : msgs) {
            int k = (int) m.sequence();
            assertFalse(dropped.contains(k), what + " message " + k + " is listed as dropped but present");
            long trueT = s.trueTimeNs(k);
            long err = stamped ? m.stamp() - trueT - s.clockOffsetNs() : 0;
            assertTrue(Math.abs(err) <= s.stampJitterMaxNs(),
                    what + " #" + k + ": header stamp - true time - offset = " + err + " ns");
            long lat = m.logTime() - trueT;
            assertTrue(lat >= s.latencyMinNs() && lat <= s.latencyMaxNs(), what + " #" + k + ": latency " + lat);
            assertEquals(m.logTime(), m.publishTime());
            assertTrue(seen.add(m.sequence()), what + " duplicate sequence " + k);
        }
        assertEquals(s.count() - s.dropped().length, msgs.size(), what + " message count");
        for (int k = 0; k < s.count(); k++) {
            assertEquals(!dropped.contains(k), seen.contains((long) k), what + " #" + k);
        }
        return seen;
    }

    @Test
    void stampsOffsetsDropsAndMetadataMatchTheFiles() throws IOException {
        int droppedFrames = 0;
        int droppedMessages = 0;
        boolean sawUnsynced = false;
        for (GroundTruth.Episode e : truthA.episodes()) {
            Episodes.Content c = Episodes.read(a.resolve(e.file()));
            for (Map.Entry<String, GroundTruth.Stream> cam : e.cameras().entrySet()) {
                GroundTruth.Stream s = cam.getValue();
                List<Episodes.Msg> msgs = c.byTopic().get(s.topic());
                checkStream(e.episodeId() + " " + s.topic(), s, msgs, true);
                droppedFrames += s.dropped().length;
                // The recorded offset really is (header stamp - true capture time), on average.
                double mean = msgs.stream().mapToLong(m -> m.stamp() - s.trueTimeNs((int) m.sequence())).average().orElseThrow();
                assertEquals(s.clockOffsetNs(), mean, s.stampJitterMaxNs() / 2.0, e.episodeId() + " " + cam.getKey());
                if (s.clockOffsetNs() > 11_000_000L) {
                    sawUnsynced = true;
                    assertTrue(mean > 11e6 && mean < 13.1e6, "unsynced camera stamps ~12 ms ahead: " + mean);
                }
            }
            droppedMessages += e.jointStates().dropped().length + e.commands().dropped().length;
            checkStream(e.episodeId() + " joint_states", e.jointStates(), c.byTopic().get(EpisodeGenerator.JOINT_TOPIC), true);
            checkStream(e.episodeId() + " command", e.commands(), c.byTopic().get(EpisodeGenerator.COMMAND_TOPIC), false);
            Map<String, String> md = c.metadata().get("episode");
            assertNotNull(md);
            assertEquals(e.robotId(), md.get("robot_id"));
            assertEquals(e.scene(), md.get("scene"));
            assertEquals(e.task(), md.get("task"));
            assertEquals(e.operator(), md.get("operator"));
            assertEquals(e.outcome(), md.get("outcome"));
            assertEquals(e.task(), Episodes.string(c.byTopic().get(EpisodeGenerator.TASK_TOPIC).get(0).data()));
            String outcome = Episodes.string(c.byTopic().get(EpisodeGenerator.OUTCOME_TOPIC).get(0).data());
            assertEquals(e.failureCause() == null ? "success" : "failure: " + e.failureCause(), outcome);
            long total = c.byTopic().values().stream().mapToLong(List::size).sum();
            assertEquals(e.messages(), total);
        }
        assertTrue(sawUnsynced, "robot_01 always has one unsynced camera");
        assertTrue(droppedFrames > 0, "frame drop rate 5% over ~1,000 frames drops some");
        assertTrue(droppedMessages > 0, "message drop rate 2% drops some");
    }

    private static double[][] positions(GroundTruth.Episode e) throws IOException {
        List<Episodes.Msg> js = Episodes.read(a.resolve(e.file())).byTopic().get(EpisodeGenerator.JOINT_TOPIC);
        double[][] q = new double[e.jointStates().count()][];
        for (Episodes.Msg m : js) {
            q[(int) m.sequence()] = Episodes.jointState(m.data())[0];
        }
        return q;
    }

    /** RMS joint difference (rad, arm joints only) over samples present in both. */
    private static double rms(double[][] p, double[][] q) {
        double sum = 0;
        int n = 0;
        for (int k = 0; k < Math.min(p.length, q.length); k++) {
            if (p[k] == null || q[k] == null) {
                continue;
            }
            for (int j = 0; j < 16; j++) {
                if (j != 7 && j != 15) {
                    sum += (p[k][j] - q[k][j]) * (p[k][j] - q[k][j]);
                    n++;
                }
            }
        }
        return Math.sqrt(sum / n);
    }

    /** Mean abs pixel difference of the frames nearest to index k, averaged over the three cameras. */
    private static double imageDistance(GroundTruth.Episode x, GroundTruth.Episode y, int k) throws IOException {
        Episodes.Content cx = Episodes.read(a.resolve(x.file()));
        Episodes.Content cy = Episodes.read(a.resolve(y.file()));
        double sum = 0;
        for (String cam : EpisodeGenerator.CAMERAS) {
            String topic = EpisodeGenerator.cameraTopic(cam);
            sum += Episodes.meanAbsDiff(frame(cx.byTopic().get(topic), k), frame(cy.byTopic().get(topic), k));
        }
        return sum / 3;
    }

    private static BufferedImage frame(List<Episodes.Msg> msgs, int k) throws IOException {
        for (Episodes.Msg m : msgs) {
            if (m.sequence() >= k) {
                return Episodes.image(m.data());
            }
        }
        throw new AssertionError("no frame >= " + k);
    }

    @Test
    void nearDuplicatesAreNearAndOthersAreNot() throws IOException {
        assertFalse(truthA.duplicateGroups().isEmpty(), "the tiny preset always has a duplicate group");
        Map<String, GroundTruth.Episode> byId = new java.util.HashMap<>();
        truthA.episodes().forEach(e -> byId.put(e.episodeId(), e));
        for (GroundTruth.DuplicateGroup g : truthA.duplicateGroups()) {
            GroundTruth.Episode x = byId.get(g.episodes().get(0));
            GroundTruth.Episode y = byId.get(g.episodes().get(1));
            assertEquals(x.operator(), y.operator());
            assertEquals(x.object(), y.object());
            assertEquals(x.durationNs(), y.durationNs());
            double r = rms(positions(x), positions(y));
            assertTrue(r < 0.02, "duplicates " + g.episodes() + ": joint RMS " + r + " rad");
            int mid = x.cameras().get("head_camera").count() / 2;
            double d = imageDistance(x, y, mid);
            assertTrue(d > 0, "near, not identical");
            assertTrue(d < 4, "duplicates " + g.episodes() + ": mean abs pixel difference " + d);
        }
        // A non-duplicate pair on the same robot (same scene, same table): clearly apart.
        List<GroundTruth.Episode> robot1 = new ArrayList<>();
        for (GroundTruth.Episode e : truthA.episodes()) {
            if (e.robotId().equals("robot_02")) {
                robot1.add(e);
            }
        }
        GroundTruth.Episode p = robot1.get(0);
        GroundTruth.Episode q = robot1.stream().filter(e -> e.duplicateGroup() < 0 || e.duplicateGroup() != p.duplicateGroup())
                .filter(e -> e != p).findFirst().orElseThrow();
        double r = rms(positions(p), positions(q));
        assertTrue(r > 0.05, p.episodeId() + " vs " + q.episodeId() + ": joint RMS " + r);
        int mid = Math.min(p.cameras().get("head_camera").count(), q.cameras().get("head_camera").count()) / 2;
        double d = imageDistance(p, q, mid);
        assertTrue(d > 8, p.episodeId() + " vs " + q.episodeId() + ": mean abs pixel difference " + d);
    }

    @Test
    void glassCupFailureClosesTheGripperOnNothing() throws IOException {
        GroundTruth.Episode fail = truthA.episodes().stream().filter(e -> "failure".equals(e.outcome())).findFirst().orElseThrow();
        assertEquals("glass_cup", fail.object());
        assertTrue(fail.transparent());
        assertEquals("gripper_closed_on_nothing", fail.failureCause());
        GroundTruth.Episode ok = truthA.episodes().stream().filter(e -> "success".equals(e.outcome())).findFirst().orElseThrow();
        assertEquals(0.0, gripperDuringLift(fail)[0], 0.002, "failure: the gripper closes fully (on nothing)");
        assertEquals(0.0, gripperDuringLift(fail)[1], 0.5, "failure: no grip force");
        double[] g = gripperDuringLift(ok);
        assertTrue(g[0] > 0.02 && g[0] < 0.08, "success: the gripper holds the object, opening " + g[0]);
        assertTrue(g[1] > 10, "success: grip force " + g[1]);
    }

    /** @return {min opening over both grippers, max gripper effort} at the middle of the lift phase */
    private static double[] gripperDuringLift(GroundTruth.Episode e) throws IOException {
        GroundTruth.Interval lift = e.phases().get(2);
        assertEquals("lift", lift.name());
        long mid = (lift.startNs() + lift.endNs()) / 2;
        GroundTruth.Stream s = e.jointStates();
        for (Episodes.Msg m : Episodes.read(a.resolve(e.file())).byTopic().get(EpisodeGenerator.JOINT_TOPIC)) {
            if (s.trueTimeNs((int) m.sequence()) >= mid) {
                double[][] js = Episodes.jointState(m.data());
                return new double[] {Math.min(js[0][7], js[0][15]), Math.max(js[2][7], js[2][15])};
            }
        }
        throw new AssertionError("no joint state in the lift phase of " + e.episodeId());
    }

    @Test
    void referenceReaderOpensEveryFile() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (GroundTruth.Episode e : truthA.episodes()) {
            Node.Result r = Node.run("sim-check.mjs", a.resolve(e.file()).toString());
            assertEquals(0, r.exitCode(), r.stderr());
            JsonNode n = json.readTree(r.stdout());
            assertEquals("ros2", n.get("profile").asText());
            assertEquals(e.messages(), n.get("messages").asLong());
            assertEquals(Long.toString(e.messages()), n.get("statisticsMessageCount").asText());
            assertTrue(n.get("ordered").asBoolean(), "log-time order");
            assertEquals("zstd", n.get("compression").get(0).asText());
            assertEquals(e.outcome(), n.get("metadata").get(0).get("metadata").get("outcome").asText());
        }
    }
}
