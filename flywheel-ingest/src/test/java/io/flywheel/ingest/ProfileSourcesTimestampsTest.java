package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.align.StampDiscontinuity;
import io.flywheel.align.StreamTimeline;
import io.flywheel.align.TimestampRule;
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
        assertEquals(StreamRole.STATE, RobotProfile.guess("/tf", "tf2_msgs/msg/TFMessage").role());
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/tf_static", "tf2_msgs/msg/TFMessage").role(),
                "latched static transforms pair with no frame");
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/cam/info", "sensor_msgs/msg/CameraInfo").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/joint_states", "sensor_msgs/msg/JointState").role());
        assertEquals(StreamRole.ACTION, RobotProfile.guess("/cmd", "std_msgs/msg/Float64MultiArray").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/observation/state", "std_msgs/msg/Float64MultiArray").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/arm/joint_positions", "std_msgs/Float32MultiArray").role());
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/camera/raw", "std_msgs/msg/UInt8MultiArray").role(),
                "bytes are not a value vector");
        assertEquals(StreamRole.OTHER, RobotProfile.guess("/blob", "std_msgs/ByteMultiArray").role());
        assertEquals(StreamRole.STATE, RobotProfile.guess("/tf", "tf/tfMessage").role(), "ROS 1 transforms");
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

    /** Feeds one stream through the ingest path (StreamBuilder, core's TimestampRule, TimestampReport). */
    private static StreamData stream(long[] log, long[] stamp, boolean wallClock) {
        return stream(log, stamp, wallClock, StreamTimeline.AUTO);
    }

    private static StreamData stream(long[] log, long[] stamp, boolean wallClock, StreamTimeline timeline) {
        StreamBuilder b = new StreamBuilder("/x", 1, StreamRole.STATE, "sensor_msgs/msg/JointState");
        b.hasHeader(true);
        for (int i = 0; i < log.length; i++) b.add(log[i], stamp[i]);
        return b.build(TimestampRule.defaults(), wallClock, timeline);
    }

    @Test
    void timestampRuleAndReport() {
        long s = 1_700_000_000_000_000_000L; // epoch-stamped
        long p = 100_000_000L; // 10 Hz
        long[] log = {s, s + p, s + 2 * p, 0, s + 4 * p, s + 5 * p, s + 6 * p, s + 60 * p};
        long[] st = {s, 0, s + 2 * p + 50 * p * 10, s + 3 * p, s + 4 * p, s + 3 * p, s + 6 * p, s + 60 * p};
        // forced onto the stamps: 0: stamp; 1: zero stamp -> log; 2: stamp 50 s off -> log; 3: log 0 (absent) ->
        // stamp; 5: the stamp goes back, and the stream is sorted by stamp for alignment
        StreamData d = stream(log, st, true, StreamTimeline.STAMPS);
        TimestampReport r = d.timestamps();
        assertEquals(StreamTimeline.STAMPS, r.timeline());
        assertArrayEquals(new long[] {s, s + p, s + 2 * p, s + 3 * p, s + 4 * p, s + 3 * p, s + 6 * p, s + 60 * p},
                d.timeNs());
        assertEquals(8, r.messages());
        assertEquals(6, r.fromHeaderStamp());
        assertEquals(2, r.fromLogTime());
        assertEquals(1, r.zeroStamps());
        assertEquals(1, r.insaneStamps());
        assertEquals(1, r.logTimeZero());
        assertEquals(0, r.unresolved());
        assertEquals(List.of(5), r.nonMonotonicStamps()); // only 5 goes back among the chosen times
        assertEquals(p, r.medianPeriodNs()); // positive steps p, p, p, p, 3p, 54p
        assertEquals(2, r.jumpCount()); // 5 back by p; 7 forward by 54p = 5.4 s > max(1 s, 10 periods)
        assertEquals(List.of(new TimestampReport.Jump(5, -p, true), new TimestampReport.Jump(7, 54 * p, false)),
                r.jumps());
        // between the sane stamps of 4 and 5 (both with log times) the stamps step back p while the log steps p
        StampDiscontinuity back = new StampDiscontinuity(5, s + 5 * p, s + 3 * p, s + 4 * p, -p, p);
        assertEquals(List.of(back), r.discontinuities());
        assertEquals(-2 * p, back.jumpNs());
        assertEquals("8 msgs, header 6, log 2, zero stamps: 1 at [1], stamps >10 s off log time: 1 at [2], "
                + "log time 0: 1 at [3], non-monotonic stamps: 1 at [5], forward clock jumps: 1 at [7 (+5.400 s)], "
                + "stamp discontinuities: 1 at [5 (stamps -0.200 s)], timeline: stamps", r.summary());
        assertEquals(List.of("zero stamps", "stamps >10 s off log time", "log time 0", "non-monotonic stamps",
                "forward clock jumps", "stamp discontinuities"), r.findings());
        assertFalse(r.clean());

        // the default (auto): the stamps go back, so the stream keeps its recorded order on its log times; message 3
        // has no log time and keeps its stamp; nothing is out of order, the discontinuity is still reported
        StreamData a = stream(log, st, true);
        TimestampReport ar = a.timestamps();
        assertEquals(StreamTimeline.LOG_TIME, ar.timeline());
        assertArrayEquals(new long[] {s, s + p, s + 2 * p, s + 3 * p, s + 4 * p, s + 5 * p, s + 6 * p, s + 60 * p},
                a.timeNs());
        assertEquals(1, ar.fromHeaderStamp());
        assertEquals(7, ar.fromLogTime());
        assertEquals(List.of(), ar.nonMonotonicStamps());
        assertEquals(List.of(new TimestampReport.Jump(7, 54 * p, false)), ar.jumps());
        assertEquals(List.of(back), ar.discontinuities());
        assertEquals(1, ar.resolved().monotonicityViolations(), "the stamps went back once");
        assertEquals("8 msgs, header 1, log 7, zero stamps: 1 at [1], stamps >10 s off log time: 1 at [2], "
                + "log time 0: 1 at [3], forward clock jumps: 1 at [7 (+5.400 s)], "
                + "stamp discontinuities: 1 at [5 (stamps -0.200 s)], timeline: log times", ar.summary());
        assertEquals(List.of("zero stamps", "stamps >10 s off log time", "log time 0", "forward clock jumps",
                "stamp discontinuities"), ar.findings());
    }

    @Test
    void aProfileSetsATopicsTimeline(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("p.yaml");
        Files.writeString(yaml, "timelines:\n  /cam: stamps\n  /joints: log_time\n");
        RobotProfile p = RobotProfile.load(yaml);
        assertEquals(StreamTimeline.STAMPS, p.timeline("/cam").orElseThrow());
        assertEquals(StreamTimeline.LOG_TIME, p.timeline("/joints").orElseThrow());
        assertTrue(p.timeline("/other").isEmpty());
        assertTrue(p.describe().contains("timeline /cam: stamps"), p.describe());
        assertEquals(p.timelines(), p.toBuilder().build().timelines());
        Files.writeString(yaml, "timelines:\n  /cam: sorted\n");
        IngestException e = assertThrows(IngestException.class, () -> RobotProfile.load(yaml));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("timeline of /cam")
                && e.getMessage().contains("expected auto, stamps or log_time"), e.getMessage());
    }

    @Test
    void cameraInfoWithAZeroStampIsNoTimestampFinding() {
        long s = 1_700_000_000_000_000_000L;
        long p = 33_333_333L;
        for (String type : new String[] {"sensor_msgs/msg/CameraInfo", "sensor_msgs/CameraInfo"}) {
            StreamBuilder b = new StreamBuilder("/cam/camera_info", 1, StreamRole.OTHER, type);
            b.hasHeader(true);
            // a latched calibration (stamp 0) then two timed ones
            b.add(s, 0);
            b.add(s + p, s + p - 1000);
            b.add(s + 2 * p, s + 2 * p - 1000);
            StreamData d = b.build(TimestampRule.defaults(), true);
            assertArrayEquals(new long[] {s, s + p - 1000, s + 2 * p - 1000}, d.timeNs(), type);
            assertEquals(0, d.timestamps().zeroStamps(), type);
            assertTrue(d.timestamps().clean(), type + ": " + d.timestamps().summary());
            assertEquals(1, d.timestamps().fromLogTime());
        }
        // the same on a JointState is a finding
        StreamData joints = stream(new long[] {s, s + p}, new long[] {0, s + p}, true);
        assertEquals(1, joints.timestamps().zeroStamps());
    }

    @Test
    void noUsableTimeKeepsZeroAndMakesNoStep() {
        long s = 1_700_000_000_000_000_000L;
        long p = 100_000_000L;
        // message 1: log time 0 on a wall clock and no stamp: nothing usable
        StreamData d = stream(new long[] {s, 0, s + 2 * p, s + 3 * p}, new long[] {s, 0, s + 2 * p, s + 3 * p}, true);
        assertArrayEquals(new long[] {s, 0, s + 2 * p, s + 3 * p}, d.timeNs());
        assertEquals(1, d.timestamps().unresolved());
        assertEquals(0, d.timestamps().jumpCount()); // s -> s + 2p across the gap is no jump, 0 is no time
        assertEquals(2 * p, d.timestamps().medianPeriodNs()); // steps 2p, p: the upper median (index n/2 sorted)
        assertEquals(List.of(), d.timestamps().jumps());
        // the same log times on a relative clock (starting at 0): 0 is a valid log time, the stamp is 1.7e9 s off it
        StreamData rel = stream(new long[] {0, p, 2 * p}, new long[] {0, 0, 0}, false);
        assertArrayEquals(new long[] {0, p, 2 * p}, rel.timeNs());
        assertEquals(0, rel.timestamps().logTimeZero());
        assertEquals(0, rel.timestamps().unresolved());
        assertEquals(3, rel.timestamps().zeroStamps());
    }
}
