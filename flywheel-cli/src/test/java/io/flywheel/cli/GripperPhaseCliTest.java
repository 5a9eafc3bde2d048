package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;

/**
 * Gripper state and phase on the simulated fleet, whose gripper lives inside {@code /joint_states} (16 joints:
 * left_gripper and right_gripper are openings in metres, 0.085 open; only the active arm's closes), checked
 * against {@code ground_truth.json}'s phase intervals.
 *
 * <p>What MotionLabeler's rule can and cannot see decides what is asserted. Closing = grasp, opening = place,
 * closed and still after a grasp = grasp (settling), closed otherwise = lift, open and moving = approach /
 * retreat, open and still = idle. The simulator's "place" phase is the carry to the bin with the gripper closed,
 * then the release at its end: by the rule the carry is lift. So each label must fall inside the true phases
 * the rule allows for it (idle: any), and the share of frames that agree, counting lift for a true place as
 * agreement, is high. Measured on this fleet (preset tiny, 6 episodes, 336 frames): 61.3% exact, 90.5% with the
 * carry counted as lift (every miss left is an idle frame, an arm at rest, or a boundary frame).
 */
class GripperPhaseCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;
    static Path fleet;
    static String lake;
    static GroundTruth truth;
    static JsonNode ingestSummary;

    @BeforeAll
    static void build() throws IOException {
        fleet = tmp.resolve("fleet");
        CliRun sim = CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio");
        assertEquals(0, sim.exitCode(), sim.err());
        truth = FleetSimulator.readGroundTruth(fleet.resolve("ground_truth.json"));
        lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("ingest", lake, fleet.toString(), "--json");
        assertEquals(0, in.exitCode(), in.err());
        ingestSummary = JSON.readTree(in.out());
        CliRun en = CliRun.of("enrich", lake, "--model", "none", "--threads", "2");
        assertEquals(0, en.exitCode(), en.err());
    }

    private static GroundTruth.Episode truthOf(EpisodeRow e) throws IOException {
        Path file = Path.of(URI.create(JSON.readTree(e.metadataJson()).get("source_files").get(0).asText()));
        for (GroundTruth.Episode t : truth.episodes()) {
            if (fleet.resolve(t.file()).equals(file)) {
                return t;
            }
        }
        throw new AssertionError("no ground truth for " + file);
    }

    /** @return the true phase at true time t, or null outside the episode */
    private static GroundTruth.Interval phaseAt(GroundTruth.Episode t, long trueNs) {
        for (GroundTruth.Interval p : t.phases()) {
            if (trueNs >= p.startNs() && trueNs < p.endNs()) {
                return p;
            }
        }
        return null;
    }

    private static GroundTruth.Interval phase(GroundTruth.Episode t, String name) {
        return t.phases().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void theActiveArmsGripperJointIsRecordedAndEveryFrameGetsAPhase() throws IOException {
        Map<String, String> summary = new HashMap<>();
        for (JsonNode r : ingestSummary.get("recordings")) {
            r.get("gripper_joints").fields().forEachRemaining(e -> summary.put(e.getKey(), e.getValue().asText()));
        }
        try (Lake l = Lake.open(lake); LakeTable et = l.table("episodes"); LakeTable ft = l.table("frames")) {
            List<EpisodeRow> eps = et.episodes(ScanRequest.all());
            assertEquals(6, eps.size());
            List<FrameRow> frames = ft.frames(ScanRequest.all());
            for (EpisodeRow e : eps) {
                JsonNode gj = JSON.readTree(e.metadataJson()).get("gripper_joint");
                assertNotNull(gj, e.episodeId());
                assertEquals("/joint_states", gj.get("topic").asText());
                String joint = gj.get("joint").asText();
                assertTrue(joint.equals("left_gripper") || joint.equals("right_gripper"), joint);
                assertEquals("[\"/joint_states:left_gripper\",\"/joint_states:right_gripper\"]", gj.get("candidates").toString());
                // the active arm closes by at least 5 mm (the sim closes to min(0.08, object width) or to 0); the idle
                // arm's gripper stays at 0.085 m with 2e-5 m noise
                assertTrue(gj.get("range_of_motion").asDouble() > 0.005, gj.toString());
                assertEquals("/joint_states:" + joint, summary.get(e.episodeId()));
            }
            assertEquals(336, frames.size());
            for (FrameRow f : frames) {
                assertNotNull(f.gripper(), f.episodeId() + " #" + f.frameIndex());
                assertTrue(f.gripper() >= -0.001 && f.gripper() <= 0.086, "metres of opening: " + f.gripper());
                assertNotNull(f.gripperState(), f.episodeId() + " #" + f.frameIndex());
                assertNotNull(f.phase(), f.episodeId() + " #" + f.frameIndex());
            }
        }
    }

    @Test
    void phasesAgreeWithTheGroundTruthWhereTheRuleCanSeeThem() throws IOException {
        // which true phases each label may fall in, by the rule (see the class comment); idle: any
        Map<String, Set<String>> allowed = Map.of(
                "approach", Set.of("approach"),
                "grasp", Set.of("grasp", "lift"),   // closed and still after closing: settling before the lift starts
                "lift", Set.of("lift", "place"),    // closed and moving: lift and carry to the bin
                "place", Set.of("place"),           // opening (plus one frame period: the rate is a backward difference)
                "retreat", Set.of("retreat"));
        int n = 0;
        int exact = 0;
        int agree = 0;
        Map<String, Integer> confusion = new java.util.TreeMap<>();
        try (Lake l = Lake.open(lake); LakeTable et = l.table("episodes"); LakeTable ft = l.table("frames")) {
            Map<String, List<FrameRow>> byEpisode = new HashMap<>();
            for (FrameRow f : ft.frames(ScanRequest.all())) {
                byEpisode.computeIfAbsent(f.episodeId(), k -> new ArrayList<>()).add(f);
            }
            for (EpisodeRow e : et.episodes(ScanRequest.all())) {
                GroundTruth.Episode t = truthOf(e);
                GroundTruth.Stream head = t.cameras().get("head_camera");
                long period = head.periodNs();
                List<FrameRow> frames = byEpisode.get(e.episodeId());
                frames.sort(Comparator.comparingInt(FrameRow::frameIndex));
                GroundTruth.Interval grasp = phase(t, "grasp");
                GroundTruth.Interval place = phase(t, "place");
                boolean graspOverlaps = false;
                for (FrameRow f : frames) {
                    long trueNs = f.timestampNs() - head.clockOffsetNs(); // the master camera's clock to true time
                    GroundTruth.Interval p = phaseAt(t, trueNs);
                    assertNotNull(p, e.episodeId() + " #" + f.frameIndex() + " outside the true episode");
                    String label = f.phase();
                    confusion.merge(p.name() + "->" + label, 1, Integer::sum);
                    n++;
                    exact += label.equals(p.name()) ? 1 : 0;
                    agree += label.equals(p.name()) || label.equals("lift") && p.name().equals("place") ? 1 : 0;
                    graspOverlaps |= label.equals("grasp") && p == grasp;
                    if (label.equals("place")) {
                        assertTrue(trueNs >= place.startNs() && trueNs < place.endNs() + period, e.episodeId() + " #"
                                + f.frameIndex() + ": place label " + (trueNs - place.endNs()) / 1e6 + " ms after the true place");
                    } else if (!label.equals("idle")) {
                        assertTrue(allowed.get(label).contains(p.name()), e.episodeId() + " #" + f.frameIndex() + ": "
                                + label + " in true " + p.name());
                    }
                }
                assertTrue(graspOverlaps, e.episodeId() + " (" + t.outcome() + "): no grasp label inside the true grasp");
                // the first grasp label (the gripper starts closing at the true grasp start) is inside the true grasp
                FrameRow first = frames.stream().filter(f -> f.phase().equals("grasp")).findFirst().orElseThrow();
                assertEquals(grasp, phaseAt(t, first.timestampNs() - head.clockOffsetNs()), e.episodeId());
            }
        }
        System.out.printf(Locale.ROOT, "phase vs ground truth: %d frames, %.1f%% exact, %.1f%% with carry = lift; %s%n",
                n, 100.0 * exact / n, 100.0 * agree / n, confusion);
        assertEquals(336, n);
        assertTrue(agree >= 0.85 * n, "agreement " + agree + "/" + n + " " + confusion);
        assertTrue(exact >= 0.55 * n, "exact " + exact + "/" + n + " " + confusion);
    }
}
