package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapFormatException;
import io.flywheel.testkit.SharedData;

class ProfileSourcesTimestampsTest {

    @Test
    void profileYamlSetsRolesMasterOffsetsLimitsAndRates(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("widowx.yaml");
        Files.writeString(yaml, String.join("\n",
                "robot_id: widowx-1",
                "master: /camera2/image/compressed",
                "cameras: [/camera0/image/compressed, /camera2/image/compressed]",
                "state: /robot/eef_state",
                "action: /robot/action",
                "task: /task",
                "clock_offsets_ns:",
                "  /camera2/image/compressed: -12_000_000",
                "joint_limits:",
                "  x: [0.1, 0.4]",
                "nominal_rates_hz:",
                "  /camera0/image/compressed: 5",
                ""));
        RobotProfile p = RobotProfile.load(yaml);
        assertEquals("widowx-1", p.robotId());
        assertEquals(-12_000_000L, p.clockOffsetNs("/camera2/image/compressed"));
        assertEquals(0L, p.clockOffsetNs("/camera0/image/compressed"));
        assertArrayEquals(new double[] {0.1, 0.4}, p.jointLimits().get("x"));
        assertEquals(5.0, p.nominalRateHz("/camera0/image/compressed").getAsDouble());

        Recording r = Ingest.read(BridgeData.dir().resolve("bridge_ep03.mcap"), IngestOptions.builder().profile(p).build());
        Episode ep = r.episodes().get(0);
        assertEquals("widowx-1", r.robotId());
        assertEquals("widowx-1", ep.robotId());
        assertEquals("/camera2/image/compressed", ep.masterTopic());
        assertEquals(2, ep.streams(StreamRole.CAMERA).size());
        assertEquals(StreamRole.OTHER, ep.stream("/camera1/image/compressed").orElseThrow().role());
        assertTrue(r.profile().describe().contains("not in profile"), r.profile().describe());
    }

    @Test
    void profileErrorsNameFileAndLine(@TempDir Path tmp) throws Exception {
        Path bad = tmp.resolve("bad.yaml");
        Files.writeString(bad, "robot_id: a\nroles:\n  /cam: kamera\n");
        IngestException e = assertThrows(IngestException.class, () -> RobotProfile.load(bad));
        assertTrue(e.getMessage().contains("bad.yaml") && e.getMessage().contains("line 3")
                && e.getMessage().contains("unknown role 'kamera'"), e.getMessage());

        Files.writeString(bad, "robot_id: a\nmaster_topic: /x\n");
        e = assertThrows(IngestException.class, () -> RobotProfile.load(bad));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("unknown key 'master_topic'"), e.getMessage());

        Files.writeString(bad, "joint_limits:\n  j1: [1.0]\n");
        e = assertThrows(IngestException.class, () -> RobotProfile.load(bad));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("[lower, upper]"), e.getMessage());

        Files.writeString(bad, "state: [a, b\n");
        e = assertThrows(IngestException.class, () -> RobotProfile.load(bad));
        assertTrue(e.getMessage().contains("not valid YAML"), e.getMessage());
    }

    @Test
    void rolesAreGuessedFromTypesAndTopicNames() {
        assertEquals(StreamRole.CAMERA, RobotProfile.guess("/cam", "sensor_msgs/msg/Image").role());
        assertEquals(StreamRole.CAMERA, RobotProfile.guess("/cam", "foxglove.CompressedImage").role());
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/cam/info", "sensor_msgs/msg/CameraInfo").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/joint_states", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/cmd", "std_msgs/msg/Float64MultiArray").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/cmd_vel", "geometry_msgs/Twist").role());
        assertEquals(StreamRole.TASK, RobotProfile.guess("/language_instruction", "std_msgs/msg/String").role());
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/chatter", "std_msgs/msg/String").role());
        assertEquals(StreamRole.OUTCOME, RobotProfile.guess("/episode/outcome", "std_msgs/msg/String").role());
        assertEquals(StreamRole.GRIPPER, RobotProfile.guess("/gripper/position", "std_msgs/msg/Float64").role());
    }

    @Test
    void formatsAreDetectedByContentAndGarbageIsNamed(@TempDir Path tmp) throws Exception {
        assertEquals(SourceFormat.MCAP, Sources.formatOf(BridgeData.dir().resolve("bridge_ep00.mcap")));
        assertEquals(SourceFormat.ROS1_BAG, Sources.formatOf(SharedData.data("ros1-bag/example-bz2.bag")));
        assertEquals(SourceFormat.RLDS_TFRECORD, Sources.formatOf(
                SharedData.data("camera/bridge-octo-rlds/bridge_dataset-train.tfrecord-00000-of-00001")));
        Path junk = tmp.resolve("junk.bin");
        Files.write(junk, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
        IngestException e = assertThrows(IngestException.class, () -> Ingest.read(junk));
        assertTrue(e.getMessage().contains("junk.bin at byte 0") && e.getMessage().contains("01 02 03 04"), e.getMessage());
        // a folder of many independent MCAP files is many recordings
        assertEquals(25, Sources.scan(BridgeData.dir()).size());
        assertThrows(IngestException.class, () -> Sources.detect(BridgeData.dir()));
    }

    @Test
    void aTruncatedMcapNamesFileAndOffset(@TempDir Path tmp) throws Exception {
        byte[] b = Files.readAllBytes(BridgeData.dir().resolve("bridge_ep00.mcap"));
        Path cut = tmp.resolve("cut.mcap");
        Files.write(cut, java.util.Arrays.copyOf(b, 5000));
        McapFormatException e = assertThrows(McapFormatException.class, () -> Ingest.read(cut));
        assertTrue(e.getMessage().contains("cut.mcap") && e.offset() >= 0, e.getMessage());
    }

    @Test
    void timestampRuleAndReport() {
        long s = 1_000_000_000_000L;
        long p = 100_000_000L; // 10 Hz
        long[] log = {s, s + p, s + 2 * p, 0, s + 4 * p, s + 5 * p, s + 6 * p, s + 60 * p};
        long[] st = {s, 0, s + 2 * p + 50 * p * 10, s + 3 * p, s + 4 * p, s + 3 * p, s + 6 * p, s + 60 * p};
        long[] chosen = new long[log.length];
        TimestampReport r = Timestamps.choose("/x", log, st, true, chosen);
        // 0: stamp; 1: zero stamp -> log; 2: stamp 50 s off -> log; 3: log 0 -> stamp; 5: stamp goes back
        assertArrayEquals(new long[] {s, s + p, s + 2 * p, s + 3 * p, s + 4 * p, s + 3 * p, s + 6 * p, s + 60 * p}, chosen);
        assertEquals(6, r.fromHeaderStamp());
        assertEquals(2, r.fromLogTime());
        assertEquals(1, r.zeroStamps());
        assertEquals(1, r.insaneStamps());
        assertEquals(1, r.logTimeZero());
        assertEquals(0, r.unresolved());
        assertEquals(List.of(3, 5), r.nonMonotonicStamps()); // 3 < the 50 s-off stamp at 2; 5 < 4
        assertEquals(p, r.medianPeriodNs());
        assertEquals(2, r.jumpCount());
        assertEquals(new TimestampReport.Jump(5, -p, true), r.jumps().get(0));
        assertEquals(new TimestampReport.Jump(7, 54 * p, false), r.jumps().get(1));
        assertTrue(!r.clean());
    }
}
