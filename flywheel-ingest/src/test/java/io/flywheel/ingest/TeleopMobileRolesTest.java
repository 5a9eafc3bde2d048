package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapWriter;

/**
 * Role guesses for teleoperation and mobile-robot topics, on an MCAP of our own making with the shape of a
 * leader/follower arm on a mobile base (JSON-encoded ROS messages): leader -> action, follower -> state, printed
 * with their reasons; Odometry, PoseStamped, PoseWithCovarianceStamped and TF as state with their pose (and twist)
 * values, covariances left out; Twist as action.
 */
class TeleopMobileRolesTest {

    @Test
    void guessesFromTopicNamesAndTypes() {
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/left_lead", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/arm/right_leader", "sensor_msgs/JointState").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/left_follow", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/right_follower", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/arm/command", "std_msgs/msg/Float64MultiArray").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/arm/target", "sensor_msgs/msg/JointState").role());
        assertEquals("teleoperation leader (topic *_lead) -> action",
                RobotProfile.guess("/left_lead", "sensor_msgs/msg/JointState").reason());
        // a gripper stays a gripper, an image named like a leader stays a camera
        assertEquals(StreamRole.GRIPPER, RobotProfile.guess("/gripper_lead", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.CAMERA, RobotProfile.guess("/cam_lead", "sensor_msgs/msg/CompressedImage").role());
        // a plain joint_states stays state
        assertEquals(StreamRole.STATE, RobotProfile.guess("/joint_states", "sensor_msgs/msg/JointState").role());
        for (String t : List.of("nav_msgs/msg/Odometry", "geometry_msgs/msg/PoseStamped",
                "geometry_msgs/msg/PoseWithCovarianceStamped", "tf2_msgs/msg/TFMessage")) {
            assertEquals(StreamRole.STATE, RobotProfile.guess("/x", t).role(), t);
        }
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/cmd_vel", "geometry_msgs/msg/Twist").role());
    }

    @Test
    void leaderFollowerAndMobileBaseIngest(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("teleop_base.mcap");
        long t0 = 1_700_000_000_000_000_000L;
        int n = 5;
        try (McapWriter w = McapWriter.builder().build(file)) {
            int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int od = w.registerSchema("nav_msgs/msg/Odometry", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int pc = w.registerSchema("geometry_msgs/msg/PoseWithCovarianceStamped", "jsonschema",
                    "{}".getBytes(StandardCharsets.UTF_8));
            int tf = w.registerSchema("tf2_msgs/msg/TFMessage", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int tw = w.registerSchema("geometry_msgs/msg/Twist", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int lead = w.registerChannel("/left_lead", "json", js, Map.of());
            int follow = w.registerChannel("/left_follow", "json", js, Map.of());
            int odom = w.registerChannel("/odom", "json", od, Map.of());
            int amcl = w.registerChannel("/amcl_pose", "json", pc, Map.of());
            int tfc = w.registerChannel("/tf", "json", tf, Map.of());
            int cmd = w.registerChannel("/cmd_vel", "json", tw, Map.of());
            w.writeMetadata("task_info", Map.of("task", "pick the red cube", "scene", "kitchen_2",
                    "operator", "op-17"));
            w.writeMetadata("session", Map.of("goal", "stack the cups", "site", "lab-b"));
            for (int k = 0; k < n; k++) {
                long t = t0 + k * 100_000_000L;
                String hdr = "\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L) + ",\"nanosec\":"
                        + (t % 1_000_000_000L) + "},\"frame_id\":\"base\"}";
                w.writeMessage(lead, k, t, t, json("{" + hdr + ",\"name\":[\"joint_1\",\"joint_2\"],\"position\":["
                        + (0.1 * k) + "," + (0.2 * k) + "],\"velocity\":[],\"effort\":[]}"));
                w.writeMessage(follow, k, t + 1000, t + 1000, json("{" + hdr + ",\"name\":[\"joint_1\",\"joint_2\"],"
                        + "\"position\":[" + (0.1 * k - 0.01) + "," + (0.2 * k - 0.01) + "],\"velocity\":[],\"effort\":[]}"));
                String cov = "[" + "0.5,".repeat(35) + "0.5]";
                String pose = "{\"position\":{\"x\":" + k + ",\"y\":" + (2 * k) + ",\"z\":0},"
                        + "\"orientation\":{\"x\":0,\"y\":0,\"z\":0,\"w\":1}}";
                String twist = "{\"linear\":{\"x\":0.5,\"y\":0,\"z\":0},\"angular\":{\"x\":0,\"y\":0,\"z\":" + (0.1 * k) + "}}";
                w.writeMessage(odom, k, t + 2000, t + 2000, json("{" + hdr + ",\"child_frame_id\":\"base_link\","
                        + "\"pose\":{\"pose\":" + pose + ",\"covariance\":" + cov + "},"
                        + "\"twist\":{\"twist\":" + twist + ",\"covariance\":" + cov + "}}"));
                w.writeMessage(amcl, k, t + 3000, t + 3000, json("{" + hdr + ",\"pose\":{\"pose\":" + pose
                        + ",\"covariance\":" + cov + "}}"));
                w.writeMessage(tfc, k, t + 4000, t + 4000, json("{\"transforms\":[{" + hdr
                        + ",\"child_frame_id\":\"odom\",\"transform\":{\"translation\":{\"x\":" + k + ",\"y\":0,\"z\":0},"
                        + "\"rotation\":{\"x\":0,\"y\":0,\"z\":0,\"w\":1}}},{" + hdr
                        + ",\"child_frame_id\":\"base_link\",\"transform\":{\"translation\":{\"x\":0,\"y\":" + k
                        + ",\"z\":0.1},\"rotation\":{\"x\":0,\"y\":0,\"z\":0,\"w\":1}}}]}"));
                w.writeMessage(cmd, k, t + 5000, t + 5000, json(twist));
            }
        }
        Recording r = Ingest.read(file);
        RobotProfile p = r.profile();
        assertEquals(StreamRole.ACTION, p.role("/left_lead"));
        assertEquals(StreamRole.STATE, p.role("/left_follow"));
        assertEquals(StreamRole.STATE, p.role("/odom"));
        assertEquals(StreamRole.STATE, p.role("/amcl_pose"));
        assertEquals(StreamRole.STATE, p.role("/tf"));
        assertEquals(StreamRole.ACTION, p.role("/cmd_vel"));
        String described = p.describe();
        assertTrue(described.contains("teleoperation leader (topic *_lead) -> action"), described);
        assertTrue(described.contains("teleoperation follower (topic *_follow) -> state"), described);
        // master: the follower (a JointState STATE), not the leader
        Episode ep = r.episodes().get(0);
        assertEquals("/left_follow", ep.masterTopic());

        StreamData lead = ep.stream("/left_lead").orElseThrow();
        assertEquals(List.of("joint_1", "joint_2"), lead.names());
        assertArrayEquals(new double[] {0.30000000000000004, 0.6000000000000001}, lead.values()[3], 1e-12);

        StreamData odom = ep.stream("/odom").orElseThrow();
        assertEquals(List.of("pose.position.x", "pose.position.y", "pose.position.z", "pose.orientation.x",
                "pose.orientation.y", "pose.orientation.z", "pose.orientation.w", "twist.linear.x", "twist.linear.y",
                "twist.linear.z", "twist.angular.x", "twist.angular.y", "twist.angular.z"), odom.names());
        assertArrayEquals(new double[] {3, 6, 0, 0, 0, 0, 1, 0.5, 0, 0, 0, 0, 0.30000000000000004},
                odom.values()[3], 1e-12);

        StreamData amcl = ep.stream("/amcl_pose").orElseThrow();
        assertEquals(List.of("position.x", "position.y", "position.z", "orientation.x", "orientation.y",
                "orientation.z", "orientation.w"), amcl.names());
        assertArrayEquals(new double[] {4, 8, 0, 0, 0, 0, 1}, amcl.values()[4], 1e-12);

        StreamData tfs = ep.stream("/tf").orElseThrow();
        assertEquals(14, tfs.names().size());
        assertEquals("odom.translation.x", tfs.names().get(0));
        assertEquals("base_link.translation.y", tfs.names().get(8));
        assertArrayEquals(new double[] {2, 0, 0, 0, 0, 0, 1, 0, 2, 0.1, 0, 0, 0, 1}, tfs.values()[2], 1e-12);

        StreamData cmd = ep.stream("/cmd_vel").orElseThrow();
        assertArrayEquals(new double[] {0.5, 0, 0, 0, 0, 0.2}, cmd.values()[2], 1e-12);

        // a task_info metadata record fills task, scene and operator
        assertEquals("pick the red cube", ep.task());
        assertEquals("kitchen_2", ep.scene());
        assertEquals("op-17", ep.operator());

        // a profile maps other keys, and wins over the task_info record
        RobotProfile mapping = RobotProfile.parse(new java.io.StringReader(
                "metadata_keys:\n  task: session.goal\n  scene: session.site\n"), "p.yaml");
        assertEquals(Map.of("task", "session.goal", "scene", "session.site"), mapping.metadataKeys());
        Episode mapped = Ingest.read(file, IngestOptions.builder().profile(mapping).build()).episodes().get(0);
        assertEquals("stack the cups", mapped.task());
        assertEquals("lab-b", mapped.scene());
        assertEquals("op-17", mapped.operator(), "fields the profile does not map keep the name rule");

        // a profile master missing from the episode: an error naming the episode, unless allowed
        RobotProfile cam = RobotProfile.builder().master("/front/image/compressed").build();
        IngestException missing = org.junit.jupiter.api.Assertions.assertThrows(IngestException.class,
                () -> Ingest.read(file, IngestOptions.builder().profile(cam).build()));
        assertTrue(missing.getMessage().contains("episode " + ep.episodeId())
                && missing.getMessage().contains("/front/image/compressed")
                && missing.getMessage().contains("--allow-missing-master"), missing.getMessage());
        Episode allowed = Ingest.read(file, IngestOptions.builder().profile(cam).allowMissingMaster(true).build())
                .episodes().get(0);
        assertEquals("", allowed.masterTopic());

        IngestException bad = org.junit.jupiter.api.Assertions.assertThrows(IngestException.class,
                () -> RobotProfile.parse(new java.io.StringReader("metadata_keys:\n  taks: a.b\n"), "bad.yaml"));
        assertTrue(bad.getMessage().contains("bad.yaml") && bad.getMessage().contains("taks")
                && bad.getMessage().contains("task, scene, operator"), bad.getMessage());
    }

    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
