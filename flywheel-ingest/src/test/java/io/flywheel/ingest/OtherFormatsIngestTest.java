package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.testkit.SharedData;

class OtherFormatsIngestTest {

    @Test
    void splitRosbag2WithoutMetadataIsOneRecordingOfThreeFiles() throws Exception {
        Path dir = SharedData.data("mcap-real/ros2-rosbag2/multiple_files");
        Sources.Source src = Sources.detect(dir);
        assertEquals(SourceFormat.ROSBAG2, src.format());
        assertEquals(List.of("multiple_files_0.mcap", "multiple_files_1.mcap", "multiple_files_2.mcap"),
                src.files().stream().map(p -> p.getFileName().toString()).toList());
        Recording r = Ingest.read(dir);
        assertEquals(3, r.files().size());
        assertEquals(32605 + 32609 + 13926, r.bytes());
        assertEquals(1, r.episodes().size());
        Episode ep = r.episodes().get(0);
        assertEquals(1324 + 1324 + 529, ep.messageCount());
        StreamData chatter = ep.stream("/chatter").orElseThrow();
        assertEquals(3177, chatter.size());
        assertEquals(StreamRole.OTHER, chatter.role());
        assertEquals("", ep.masterTopic()); // no camera, no state
        assertEquals(0, chatter.timestamps().jumpCount(), chatter.timestamps().summary());
        // the same folder read file by file gives the same messages
        long sum = 0;
        for (Path f : src.files()) sum += Ingest.read(f).episodes().get(0).messageCount();
        assertEquals(3177, sum);
    }

    @Test
    void rosbag2FolderWithMetadataYamlUsesItsFileList() throws Exception {
        Recording r = Ingest.read(SharedData.data("mcap-real/ros2-rosbag2/cdr_test"));
        assertEquals(SourceFormat.ROSBAG2, r.format());
        assertEquals(1, r.files().size());
        assertTrue(r.files().get(0).uri().endsWith("/cdr_test_0.mcap"));
        Episode ep = r.episodes().get(0);
        assertEquals(3, ep.stream("/test_topic").orElseThrow().size());
        assertEquals(4, ep.stream("/array_topic").orElseThrow().size());
    }

    @Test
    void labelboxJsonRecordingsDecodeWithJointStateAndReportZeroTimes() throws Exception {
        Path dir = SharedData.data("mcap-real/labelbox-franka");
        Recording r = Ingest.read(dir.resolve("trajectory_20250527_003358_00m02s.mcap"));
        Episode ep = r.episodes().get(0);
        StreamData js = ep.stream("/joint_states").orElseThrow();
        assertEquals(StreamRole.STATE, js.role());
        assertEquals("/joint_states", ep.masterTopic(), r.profile().describe());
        assertEquals(4, js.size());
        assertEquals(List.of("fr3_joint1", "fr3_joint2", "fr3_joint3", "fr3_joint4", "fr3_joint5", "fr3_joint6",
                "fr3_joint7", "fr3_finger_joint1", "fr3_finger_joint2"), js.names());
        assertArrayEquals(new double[] {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02}, js.values()[0]);
        assertArrayEquals(new double[] {0.1, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.0, 0.0}, js.values()[1]);
        assertEquals(1748331238104014336L, js.timeNs()[0]);
        assertEquals(4, js.timestamps().fromHeaderStamp());
        StreamData action = ep.stream("/action").orElseThrow();
        assertEquals(StreamRole.ACTION, action.role());
        assertEquals(7, action.values()[0].length);
        StreamData rs = ep.stream("/robot_state").orElseThrow();
        assertEquals(StreamRole.STATE, rs.role());
        // /tf: the first message has log time 0 in an epoch-stamped recording and no usable stamp: reported as log
        // time 0 and no usable time at position 0, its time stays 0; it has no time, so 0 -> 1.7e18 is not a clock
        // jump. The other four are ~0.5 s apart (log times ...238104014336, ...238606563328, ...239107394560,
        // ...239609981952): median step 502548992 ns, no jump, nothing backwards.
        StreamData tf = ep.stream("/tf").orElseThrow();
        assertEquals(5, tf.size());
        TimestampReport rep = tf.timestamps();
        assertEquals(1, rep.logTimeZero(), rep.summary());
        assertEquals(List.of(0), java.util.Arrays.stream(rep.resolved().zeroLogTimePositions()).boxed().toList());
        assertEquals(1, rep.unresolved(), rep.summary());
        assertEquals(0, tf.timeNs()[0]);
        assertEquals(1748331238104014336L, tf.timeNs()[1]);
        assertEquals(502_548_992L, rep.medianPeriodNs());
        assertEquals(0, rep.jumpCount(), rep.summary());
        assertEquals("5 msgs, header 0, log 4, log time 0: 1 at [0], no usable time: 1 at [0]", rep.summary());
        assertEquals(List.of("log time 0", "no usable time"), rep.findings());
        StreamData desc = ep.stream("/robot_description").orElseThrow();
        assertEquals(1, desc.timestamps().logTimeZero());
        assertEquals(1, desc.timestamps().unresolved());

        Recording r2 = Ingest.read(dir.resolve("trajectory_20250527_003442_00m02s.mcap"));
        StreamData js2 = r2.episodes().get(0).stream("/joint_states").orElseThrow();
        assertTrue(js2.size() > 0);
        assertEquals(9, js2.values()[0].length);
    }

    @Test
    void turtlesimBagHasStateAndActionRoles() throws Exception {
        Path dir = SharedData.data("ros1-bag");
        Recording r = Ingest.read(dir.resolve("example.bag"));
        assertEquals(SourceFormat.ROS1_BAG, r.format());
        Episode ep = r.episodes().get(0);
        StreamData pose = ep.stream("/turtle1/pose").orElseThrow();
        StreamData cmd = ep.stream("/turtle1/cmd_vel").orElseThrow();
        assertEquals(StreamRole.STATE, pose.role());
        assertEquals(StreamRole.ACTION, cmd.role());
        assertEquals(StreamRole.STATE, ep.stream("/turtle2/pose").orElseThrow().role());
        assertEquals(1344, pose.size());
        assertEquals(List.of("x", "y", "theta", "linear_velocity", "angular_velocity"), pose.names());
        assertEquals(6, cmd.values()[0].length);
        assertEquals(List.of("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z"), cmd.names());
        assertEquals(StreamRole.OTHER, ep.stream("/rosout").orElseThrow().role());
        assertTrue(ep.masterTopic().endsWith("/pose"));
        assertNull(pose.locators());
        // the lz4 copy of the bag gives the same values
        Episode lz4 = Ingest.read(dir.resolve("example-lz4.bag")).episodes().get(0);
        StreamData pose2 = lz4.stream("/turtle1/pose").orElseThrow();
        assertEquals(pose.size(), pose2.size());
        for (int i = 0; i < pose.size(); i++) {
            assertArrayEquals(pose.values()[i], pose2.values()[i]);
            assertEquals(pose.timeNs()[i], pose2.timeNs()[i]);
        }
    }
}
