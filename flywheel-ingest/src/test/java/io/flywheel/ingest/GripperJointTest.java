package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.flywheel.testkit.SharedData;

/**
 * The gripper joint of an episode without a gripper topic, on the real Franka FR3 recordings (labelbox-franka:
 * {@code /joint_states} holds fr3_joint1..7 and fr3_finger_joint1/2; both fingers go 0.02 -> 0.0 -> 0.02 m in the
 * first file), and the profile's {@code gripper_joints} key.
 */
class GripperJointTest {
    private static final Path FRANKA = SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap");

    private static Recording franka(RobotProfile profile) throws IOException {
        IngestOptions.Builder b = IngestOptions.builder();
        if (profile != null) {
            b.profile(profile);
        }
        return Ingest.read(FRANKA, b.build());
    }

    @Test
    void frankaFingerJointIsFoundByNameAndTheFirstOfTwoEqualFingersWins() throws IOException {
        Recording r = franka(null);
        Episode ep = r.episodes().get(0);
        GripperJoint g = GripperJoint.select(ep, r.profile()).orElseThrow();
        assertEquals("/joint_states", g.topic());
        assertEquals("fr3_finger_joint1", g.joint());
        assertEquals(7, g.index());
        assertEquals(0.02, g.rangeOfMotion(), 1e-12, "0.02 m open, 0.0 closed");
        assertEquals(List.of("/joint_states:fr3_finger_joint1", "/joint_states:fr3_finger_joint2"), g.candidates());
    }

    /**
     * A recording whose joints are not named like grippers (j1, j7, j8) but whose metadata declares its end-effector
     * joint: j8 is taken (range 0.04 m) although j1 moves more (1.5 rad); without the declaration nothing is taken;
     * a profile's list wins over the declaration.
     */
    @Test
    void jointsTheRecordingDeclaresAreTakenWhenNoNameSaysGripper() {
        double[][] v = {{0.0, 0.1, 0.00}, {1.5, 0.1, 0.04}, {0.7, 0.1, 0.02}};
        long[] t = {1_000_000_000L, 1_100_000_000L, 1_200_000_000L};
        StreamData js = new StreamData("/joint_states", 1, StreamRole.STATE, "sensor_msgs/msg/JointState", t, t, t, v,
                List.of("j1", "j7", "j8"), null, null, new TimestampReport("/joint_states",
                        io.flywheel.align.TimestampRule.defaults().resolve(t, t, null, false)));
        assertEquals(List.of("j8"), GripperJoint.declaredJoints(java.util.Map.of("robot.end_effector_joints", "[\"j8\"]")));
        assertEquals(List.of("a", "b"), GripperJoint.declaredJoints(java.util.Map.of("gripper_joints", "a, b")));
        Episode declared = new Episode("e", 0, "", "unknown", "", "", "", java.util.Map.of("robot.end_effector_joints",
                "[\"j8\"]"), "/joint_states", List.of(js), List.of());
        GripperJoint g = GripperJoint.select(declared, null).orElseThrow();
        assertEquals("j8", g.joint());
        assertEquals(2, g.index());
        assertEquals(0.04, g.rangeOfMotion(), 1e-12);
        Episode plain = new Episode("e", 0, "", "unknown", "", "", "", java.util.Map.of(), "/joint_states", List.of(js),
                List.of());
        assertTrue(GripperJoint.select(plain, null).isEmpty(), "no name, no declaration: no gripper joint");
        RobotProfile p = RobotProfile.builder().gripperJoints(List.of("j7")).build();
        assertEquals("j7", GripperJoint.select(declared, p).orElseThrow().joint(), "the profile wins");
    }

    @Test
    void profileGripperJointsReplaceTheNameRule() throws IOException {
        RobotProfile p = RobotProfile.parse(new StringReader("gripper_joints: [fr3_finger_joint2]\n"), "franka.yaml");
        assertEquals(List.of("fr3_finger_joint2"), p.gripperJoints());
        Recording r = franka(p);
        assertEquals(List.of("fr3_finger_joint2"), r.profile().gripperJoints(), "kept when roles are detected");
        GripperJoint g = GripperJoint.select(r.episodes().get(0), r.profile()).orElseThrow();
        assertEquals("fr3_finger_joint2", g.joint());
        assertEquals(8, g.index());
        assertEquals(List.of("/joint_states:fr3_finger_joint2"), g.candidates());

        // a profile naming an arm joint takes it, name or not (fr3_joint1 goes 0.0 -> 0.1 rad)
        RobotProfile arm = RobotProfile.builder().gripperJoints(List.of("fr3_joint1")).build();
        GripperJoint a = GripperJoint.select(r.episodes().get(0), arm).orElseThrow();
        assertEquals("fr3_joint1", a.joint());
        assertEquals(0.1, a.rangeOfMotion(), 1e-12);

        RobotProfile none = RobotProfile.builder().gripperJoints(List.of("no_such_joint")).build();
        assertEquals(Optional.empty(), GripperJoint.select(r.episodes().get(0), none));
    }

    @Test
    void gripperJointsYamlForms() throws IOException {
        RobotProfile scalar = RobotProfile.parse(new StringReader("gripper_joints: left_gripper\n"), "p.yaml");
        assertEquals(List.of("left_gripper"), scalar.gripperJoints());
        RobotProfile two = RobotProfile.parse(new StringReader("gripper_joints:\n  - left_gripper\n  - right_gripper\n"),
                "p.yaml");
        assertEquals(List.of("left_gripper", "right_gripper"), two.gripperJoints());
        assertEquals(two.gripperJoints(), two.toBuilder().build().gripperJoints());
        assertTrue(two.describe().contains("gripper joints: left_gripper, right_gripper"), two.describe());
        assertEquals(List.of(), RobotProfile.builder().build().gripperJoints());

        IngestException bad = assertThrows(IngestException.class,
                () -> RobotProfile.parse(new StringReader("robot_id: r\ngripper_joints: {a: 1}\n"), "bad.yaml"));
        assertTrue(bad.getMessage().contains("bad.yaml") && bad.getMessage().contains("line 2"), bad.getMessage());
        IngestException typo = assertThrows(IngestException.class,
                () -> RobotProfile.parse(new StringReader("gripper_joint: [a]\n"), "typo.yaml"));
        assertTrue(typo.getMessage().contains("gripper_joints"), typo.getMessage());
    }

    @Test
    void fingerJointNamesBeatALargerRangeInRadians() {
        // a revolute wrist joint named "gripper_rotate" sweeps 1.5 rad; the finger opens 0.04 m
        long[] t = {0, 100_000_000L, 200_000_000L};
        double[][] v = {{0.0, 0.0, 0.3}, {0.75, 0.04, 0.3}, {1.5, 0.01, 0.3}};
        StreamData js = new StreamData("/joint_states", 1, StreamRole.STATE, "sensor_msgs/msg/JointState", t, t, t,
                v, List.of("gripper_rotate", "left_gripper_finger", "elbow"), null, null, null);
        Episode ep = new Episode("e0", 0, "", "", "", "", "", java.util.Map.of(), "/joint_states", List.of(js),
                List.of());
        GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
        assertEquals("left_gripper_finger", g.joint());
        assertEquals(1, g.index());
        assertEquals(0.04, g.rangeOfMotion(), 1e-12);
        assertEquals(List.of("/joint_states:gripper_rotate", "/joint_states:left_gripper_finger"), g.candidates());
        assertEquals(2, GripperJoint.nameRank("panda_finger_joint1"));
        assertEquals(1, GripperJoint.nameRank("gripper_rotate"));
        assertEquals(0, GripperJoint.nameRank("elbow"));
    }

    @Test
    void nameRule() {
        assertTrue(GripperJoint.looksLikeGripper("left_gripper"));
        assertTrue(GripperJoint.looksLikeGripper("panda_FINGER_joint1"));
        assertTrue(GripperJoint.looksLikeGripper("Gripper"));
        assertFalse(GripperJoint.looksLikeGripper("left_joint_7"));
        assertFalse(GripperJoint.looksLikeGripper("wrist"));
    }
}
