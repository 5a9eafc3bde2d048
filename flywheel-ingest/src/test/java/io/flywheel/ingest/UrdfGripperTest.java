package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.testkit.SharedData;

/**
 * The gripper joint of a recording that carries its URDF, on MCAPs written here. Ground truth of every recording:
 * one {@code /joint_states} JointState, 5 messages 100 ms apart; joint 0 is a revolute wrist going
 * 0.0, 0.5, 1.0, 1.5, 2.0 rad (range 2.0), joint 1 a prismatic finger going 0.00, 0.01, 0.02, 0.03, 0.04 m
 * (range 0.04), joint 2 an elbow fixed at 0.3 rad.
 */
class UrdfGripperTest {
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final int N = 5;

    /** A URDF whose j_slide is a prismatic joint moving left_finger_link, mimicked by j_slide_mirror. */
    static String urdf(String wrist, String slide) {
        return "<?xml version=\"1.0\"?>\n<robot name=\"arm\">\n"
                + "  <link name=\"base\"/><link name=\"hand\"/><link name=\"left_finger_link\"/>\n"
                + "  <joint name=\"" + wrist + "\" type=\"revolute\"><parent link=\"base\"/><child link=\"hand\"/>"
                + "<limit lower=\"-2.9\" upper=\"2.9\" effort=\"12\" velocity=\"2.6\"/></joint>\n"
                + "  <joint name=\"" + slide + "\" type=\"prismatic\"><parent link=\"hand\"/>"
                + "<child link=\"left_finger_link\"/><limit lower=\"0.0\" upper=\"0.04\" effort=\"20\" velocity=\"0.2\"/>"
                + "</joint>\n"
                + "  <joint name=\"" + slide + "_mirror\" type=\"prismatic\"><parent link=\"hand\"/><child link=\"r\"/>"
                + "<mimic joint=\"" + slide + "\" multiplier=\"1\"/></joint>\n"
                + "  <joint name=\"j_elbow\" type=\"continuous\"><parent link=\"base\"/><child link=\"e\"/></joint>\n"
                + "</robot>\n";
    }

    /**
     * Writes the recording with joint names {@code wrist}, {@code slide}, {@code j_elbow}; {@code attachment}: the
     * attachment's name, media type and text, or null for none.
     */
    static Path write(Path file, String wrist, String slide, String[] attachment) throws IOException {
        return write(McapWriter.builder(), file, wrist, slide, attachment);
    }

    static Path write(McapWriter.Builder b, Path file, String wrist, String slide, String[] attachment) throws IOException {
        try (McapWriter w = b.build(file)) {
            int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int ch = w.registerChannel("/joint_states", "json", js, Map.of());
            if (attachment != null) {
                w.writeAttachment(attachment[0], attachment[1], T0, T0, attachment[2].getBytes(StandardCharsets.UTF_8));
            }
            for (int k = 0; k < N; k++) {
                long t = T0 + k * 100_000_000L;
                String hdr = "\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L) + ",\"nanosec\":"
                        + (t % 1_000_000_000L) + "},\"frame_id\":\"base\"}";
                String msg = "{" + hdr + ",\"name\":[\"" + wrist + "\",\"" + slide + "\",\"j_elbow\"],\"position\":["
                        + (0.5 * k) + "," + (0.01 * k) + ",0.3],\"velocity\":[],\"effort\":[]}";
                w.writeMessage(ch, k, t, t, msg.getBytes(StandardCharsets.UTF_8));
            }
        }
        return file;
    }

    /**
     * The real Franka FR3 recording carries its URDF as an attachment named {@code robot_description}
     * ({@code application/xml}, 12,768 bytes, 14 joints): fr3_joint1..7 revolute, fr3_finger_joint1/2 prismatic with
     * limits 0.0..0.04 m, joint2 mimicking joint1. The finger joints are still found by name; the URDF gives their unit.
     */
    @Test
    void theRealFrankaRecordingsUrdfAttachment() throws IOException {
        Episode ep = episode(SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap"));
        assertEquals("attachment robot_description", ep.metadata().get("robot_description.source"));
        Urdf u = GripperJoint.urdf(ep).orElseThrow();
        assertEquals(14, u.joints().size());
        assertEquals(7, u.joints().stream().filter(j -> j.type().equals("revolute")).count());
        Urdf.Joint f1 = u.joint("fr3_finger_joint1").orElseThrow();
        assertEquals("prismatic", f1.type());
        assertEquals("fr3_leftfinger", f1.child());
        assertEquals(0.0, f1.lower(), 0.0);
        assertEquals(0.04, f1.upper(), 0.0);
        assertEquals("fr3_finger_joint1", u.joint("fr3_finger_joint2").orElseThrow().mimic());
        assertEquals(List.of("fr3_finger_joint1", "fr3_finger_joint2"), u.gripperJoints());
        GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
        assertEquals("fr3_finger_joint1", g.joint());
        assertEquals(GripperJoint.SOURCE_NAME, g.source());
        assertEquals("m", g.unit());
        assertEquals(0.02, g.rangeOfMotion(), 1e-12);
    }

    /** The same recording with one byte of its URDF attachment changed: read on, without the attachment, with a warning. */
    @Test
    void aDamagedUrdfAttachmentIsAWarningNotAFailedRecording(@TempDir Path tmp) throws IOException {
        Path real = SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap");
        byte[] b = java.nio.file.Files.readAllBytes(real);
        int at = new String(b, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("<robot");
        assertTrue(at > 0, "the URDF attachment is stored uncompressed");
        b[at + 1] = 'R';
        Path file = java.nio.file.Files.write(tmp.resolve("damaged.mcap"), b);
        Episode whole = episode(real);
        Episode ep = episode(file);
        String warning = ep.metadata().get("robot_description.warning");
        assertTrue(warning != null && warning.contains("attachment robot_description at byte 708 is damaged"),
                String.valueOf(warning));
        // the recording's /robot_description topic carries the same URDF: it is taken instead
        assertEquals("topic /robot_description", ep.metadata().get("robot_description.source"));
        GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
        assertEquals("fr3_finger_joint1", g.joint());
        assertEquals("m", g.unit());
        assertEquals(GripperJoint.select(whole, null).orElseThrow().rangeOfMotion(), g.rangeOfMotion(), 0.0);

        // a file with a data section CRC, which the damaged attachment breaks too: its chunk CRCs vouch for the
        // messages, so it is read on; a damaged message byte (a chunk CRC) still fails the recording
        Path made = write(McapWriter.builder().compression(McapWriter.Compression.NONE), tmp.resolve("made.mcap"), "j_wrist", "j_slide", new String[] {"arm.urdf", "", urdf("j_wrist", "j_slide")});
        byte[] m = java.nio.file.Files.readAllBytes(made);
        String text = new String(m, java.nio.charset.StandardCharsets.ISO_8859_1);
        byte[] attach = m.clone();
        attach[text.indexOf("<robot") + 1] = 'R';
        Episode read = episode(java.nio.file.Files.write(tmp.resolve("made-attach.mcap"), attach));
        assertTrue(read.metadata().get("robot_description.warning").contains("attachment arm.urdf at byte"),
                read.metadata().toString());
        assertEquals(N, read.stream("/joint_states").orElseThrow().size());
        byte[] message = m.clone();
        message[text.lastIndexOf("j_elbow")] = (byte) 'J'; // in the last message (the URDF names j_elbow too)
        Path bad = java.nio.file.Files.write(tmp.resolve("made-message.mcap"), message);
        assertThrows(java.io.IOException.class, () -> episode(bad));
    }

    private static Episode episode(Path file) throws IOException {
        return Ingest.read(file, IngestOptions.builder().build()).episodes().get(0);
    }

    @Test
    void theUrdfMakesTheNeutrallyNamedPrismaticFingerTheGripper(@TempDir Path tmp) throws IOException {
        Path with = write(tmp.resolve("with.mcap"), "j_wrist", "j_slide",
                new String[] {"arm.urdf", "application/octet-stream", urdf("j_wrist", "j_slide")});
        Episode ep = episode(with);
        assertEquals("attachment arm.urdf", ep.metadata().get("robot_description.source"));
        Urdf u = GripperJoint.urdf(ep).orElseThrow();
        assertEquals("arm", u.robot());
        assertEquals(List.of("j_wrist", "j_slide", "j_slide_mirror", "j_elbow"),
                u.joints().stream().map(Urdf.Joint::name).toList());
        assertEquals("rad", u.joint("j_wrist").orElseThrow().unit());
        assertEquals(-2.9, u.joint("j_wrist").orElseThrow().lower(), 0.0);
        assertEquals(0.04, u.joint("j_slide").orElseThrow().upper(), 0.0);
        assertEquals("j_slide", u.joint("j_slide_mirror").orElseThrow().mimic());
        assertEquals("rad", u.joint("j_elbow").orElseThrow().unit(), "continuous: radians");
        assertEquals(List.of("j_slide", "j_slide_mirror"), u.gripperJoints(), "child link finger + mimic pair");

        GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
        assertEquals("j_slide", g.joint());
        assertEquals(1, g.index());
        assertEquals(0.04, g.rangeOfMotion(), 1e-12);
        assertEquals(GripperJoint.SOURCE_URDF, g.source());
        assertEquals("m", g.unit());
        assertEquals(List.of("/joint_states:j_slide"), g.candidates(), "the mirror joint is not in the recording");

        // today's rule without the URDF: neutral names and no declaration give no gripper joint
        Path without = write(tmp.resolve("without.mcap"), "j_wrist", "j_slide", null);
        assertTrue(GripperJoint.select(episode(without), null).isEmpty());

        // the profile still wins over the URDF, and the unit still comes from the URDF's type
        RobotProfile p = RobotProfile.builder().gripperJoints(List.of("j_wrist")).build();
        GripperJoint fromProfile = GripperJoint.select(ep, p).orElseThrow();
        assertEquals("j_wrist", fromProfile.joint());
        assertEquals(GripperJoint.SOURCE_PROFILE, fromProfile.source());
        assertEquals("rad", fromProfile.unit());
        assertEquals(2.0, fromProfile.rangeOfMotion(), 1e-12);
    }

    @Test
    void withGripperNamesTheUrdfTypeKeepsRadiansFromBeatingMetres(@TempDir Path tmp) throws IOException {
        // both joints are named *gripper* (name rank 1): today the larger range wins, the wrist's 2.0 rad
        Path without = write(tmp.resolve("without.mcap"), "gripper_wrist", "gripper_slide", null);
        GripperJoint today = GripperJoint.select(episode(without), null).orElseThrow();
        assertEquals("gripper_wrist", today.joint());
        assertEquals(2.0, today.rangeOfMotion(), 1e-12);
        assertEquals(GripperJoint.SOURCE_NAME, today.source());
        assertEquals("", today.unit(), "no URDF: no unit, the range does not make one");

        // an application/xml attachment with a <robot> root is a URDF too; its types put the finger first
        Path with = write(tmp.resolve("with.mcap"), "gripper_wrist", "gripper_slide",
                new String[] {"description.xml", "application/xml", urdf("gripper_wrist", "gripper_slide")});
        GripperJoint g = GripperJoint.select(episode(with), null).orElseThrow();
        assertEquals("gripper_slide", g.joint());
        assertEquals(0.04, g.rangeOfMotion(), 1e-12);
        assertEquals(GripperJoint.SOURCE_NAME, g.source(), "names come before what the recording declares");
        assertEquals("m", g.unit());
        assertEquals(List.of("/joint_states:gripper_wrist", "/joint_states:gripper_slide"), g.candidates());
    }

    @Test
    void aMalformedUrdfIsAWarningNamingTheAttachment(@TempDir Path tmp) throws IOException {
        String broken = "<robot name=\"arm\">\n  <joint name=\"j_slide\" type=\"prismatic\">\n</robot>\n";
        Path file = write(tmp.resolve("broken.mcap"), "j_wrist", "j_slide",
                new String[] {"arm.urdf", "text/plain", broken});
        Episode ep = episode(file);
        String warning = ep.metadata().get("robot_description.warning");
        assertTrue(warning != null && warning.contains("attachment arm.urdf") && warning.contains("line 3"),
                String.valueOf(warning));
        assertFalse(ep.metadata().containsKey("robot_description"));
        assertTrue(GripperJoint.urdf(ep).isEmpty());
        assertTrue(GripperJoint.select(ep, null).isEmpty(), "as without a URDF");

        // the whole ingest goes on and keeps the warning in the episode row
        MultiTopicStateTest.Rows sink = new MultiTopicStateTest.Rows();
        List<String> lines = new java.util.ArrayList<>();
        IngestJob.Result r = IngestJob.run(sink, List.of(file), IngestOptions.builder().build(),
                IngestJob.AlignConfig.defaults(), io.flywheel.quality.RuleSet.defaults(), lines::add);
        assertTrue(r.failed().isEmpty(), r.failed().toString());
        EpisodeRow row = sink.rows.get(0).episodes().get(0);
        assertTrue(row.metadataJson().contains("\"robot_description.warning\":\"attachment arm.urdf: not a well-formed"),
                row.metadataJson());
        assertEquals(1, lines.stream().filter(l -> l.contains("warning: ") && l.contains("broken.mcap: attachment arm.urdf:"
                + " not a well-formed URDF: line 3")).count(), lines.toString());
    }

    @Test
    void theEpisodeRowRecordsWhereTheGripperChoiceCameFrom(@TempDir Path tmp) throws IOException {
        Path file = write(tmp.resolve("with.mcap"), "j_wrist", "j_slide",
                new String[] {"arm.urdf", "", urdf("j_wrist", "j_slide")});
        MultiTopicStateTest.Rows sink = new MultiTopicStateTest.Rows();
        IngestJob.Result r = MultiTopicStateTest.ingest(sink, file, RobotProfile.builder().build());
        assertTrue(r.failed().isEmpty(), r.failed().toString());
        EpisodeRow row = sink.rows.get(0).episodes().get(0);
        String json = row.metadataJson();
        assertTrue(json.contains("\"gripper_joint\":{\"topic\":\"/joint_states\",\"joint\":\"j_slide\","
                + "\"range_of_motion\":0.04,\"candidates\":[\"/joint_states:j_slide\"],\"source\":\"urdf\",\"unit\":\"m\"}"),
                json);
        assertTrue(json.contains("\"robot_description.source\":\"attachment arm.urdf\""), json);
        assertFalse(json.contains("<robot"), "the attachment is not copied into the row");
        assertEquals(List.of(0.0, 0.01, 0.02, 0.03, 0.04),
                sink.rows.get(0).frames().stream().map(f -> Math.round(f.gripper() * 1e6) / 1e6).toList(),
                "the frames' gripper column is the finger's opening");
    }

    @Test
    void metadataAndTopicUrdfsAndWhatIsNotAUrdf(@TempDir Path tmp) throws IOException {
        // an MCAP metadata record's robot_description
        Path md2 = tmp.resolve("md2.mcap");
        try (McapWriter w = McapWriter.builder().build(md2)) {
            int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int ch = w.registerChannel("/joint_states", "json", js, Map.of());
            w.writeMetadata("robot", Map.of("robot_description", urdf("j_wrist", "j_slide")));
            for (int k = 0; k < N; k++) {
                long t = T0 + k * 100_000_000L;
                w.writeMessage(ch, k, t, t, ("{\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L) + ",\"nanosec\":"
                        + (t % 1_000_000_000L) + "},\"frame_id\":\"\"},\"name\":[\"j_wrist\",\"j_slide\"],\"position\":["
                        + (0.5 * k) + "," + (0.01 * k) + "],\"velocity\":[],\"effort\":[]}").getBytes(StandardCharsets.UTF_8));
            }
        }
        Episode ep = episode(md2);
        assertEquals("metadata robot.robot_description", GripperJoint.urdf(ep).orElseThrow().source());
        GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
        assertEquals("j_slide", g.joint());
        assertEquals(GripperJoint.SOURCE_URDF, g.source());

        // an application/xml attachment whose root is not <robot> is not read as a URDF
        Path cfg = write(tmp.resolve("cfg.mcap"), "j_wrist", "j_slide",
                new String[] {"config.xml", "application/xml", "<config><joint name=\"j_slide\" type=\"prismatic\"/></config>"});
        Episode c = episode(cfg);
        assertFalse(c.metadata().containsKey("robot_description"));
        assertFalse(c.metadata().containsKey("robot_description.warning"));

        // external entities are refused, not fetched
        String xxe = "<?xml version=\"1.0\"?><!DOCTYPE robot [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                + "<robot name=\"&x;\"/>";
        IngestException e = assertThrows(IngestException.class,
                () -> Urdf.parse(xxe.getBytes(StandardCharsets.UTF_8), "attachment evil.urdf"));
        assertTrue(e.getMessage().startsWith("attachment evil.urdf: not a well-formed URDF"), e.getMessage());
        IngestException badLimit = assertThrows(IngestException.class, () -> Urdf.parse(("<robot><joint name=\"a\" "
                + "type=\"revolute\"><limit lower=\"x\" upper=\"1\"/></joint></robot>").getBytes(StandardCharsets.UTF_8), "u"));
        assertEquals("u: joint \"a\": <limit lower=\"x\"> is not a number", badLimit.getMessage());
    }
    @Test
    void aProfilesUrdfWinsOverTheRecordingsAndItsErrorsNameTheProfile(@TempDir Path tmp) throws IOException {
        // the recording's URDF says j_slide is the finger; the profile's URDF says it is j_wrist's child, no finger,
        // and declares no gripper joint: with neutral names nothing is taken
        java.nio.file.Files.createDirectories(tmp.resolve("robots"));
        String plain = "<robot name=\"plain\"><joint name=\"j_wrist\" type=\"revolute\"><child link=\"hand\"/></joint>"
                + "<joint name=\"j_slide\" type=\"prismatic\"><child link=\"tool\"/></joint></robot>";
        java.nio.file.Files.writeString(tmp.resolve("robots/plain.urdf"), plain);
        Path yaml = java.nio.file.Files.writeString(tmp.resolve("robots/arm.yaml"), "urdf: plain.urdf\n");
        RobotProfile p = RobotProfile.load(yaml);
        assertEquals(tmp.resolve("robots/plain.urdf").toAbsolutePath().toString(), p.urdf().orElseThrow().source());
        assertTrue(p.describe().contains("urdf: ") && p.describe().contains("(2 joints)"), p.describe());
        Path file = write(tmp.resolve("with.mcap"), "j_wrist", "j_slide",
                new String[] {"arm.urdf", "", urdf("j_wrist", "j_slide")});
        Recording r = Ingest.read(file, IngestOptions.builder().profile(p).build());
        assertTrue(r.profile().urdf().isPresent(), "kept when roles are detected");
        assertTrue(GripperJoint.select(r.episodes().get(0), r.profile()).isEmpty());
        // with gripper_joints the profile's URDF gives the unit
        RobotProfile named = p.toBuilder().gripperJoints(List.of("j_slide")).build();
        GripperJoint g = GripperJoint.select(r.episodes().get(0), named).orElseThrow();
        assertEquals(GripperJoint.SOURCE_PROFILE, g.source());
        assertEquals("m", g.unit());

        java.nio.file.Files.writeString(tmp.resolve("robots/bad.yaml"), "robot_id: r\nurdf: missing.urdf\n");
        IngestException missing = assertThrows(IngestException.class, () -> RobotProfile.load(tmp.resolve("robots/bad.yaml")));
        assertTrue(missing.getMessage().contains("bad.yaml") && missing.getMessage().contains("line 2")
                && missing.getMessage().contains("missing.urdf"), missing.getMessage());
        java.nio.file.Files.writeString(tmp.resolve("robots/broken.urdf"), "<robot><joint name=\"a\"></robot>");
        java.nio.file.Files.writeString(tmp.resolve("robots/b2.yaml"), "urdf: broken.urdf\n");
        IngestException broken = assertThrows(IngestException.class, () -> RobotProfile.load(tmp.resolve("robots/b2.yaml")));
        assertTrue(broken.getMessage().contains("b2.yaml: line 1: urdf: ") && broken.getMessage().contains("broken.urdf")
                && broken.getMessage().contains("not a well-formed URDF"), broken.getMessage());
    }

    @Test
    void aRobotDescriptionTopicIsAUrdf(@TempDir Path tmp) throws IOException {
        String urdf = urdf("j_wrist", "j_slide");
        for (String enc : List.of("json", "cdr")) {
            Path file = tmp.resolve("topic-" + enc + ".mcap");
            try (McapWriter w = McapWriter.builder().build(file)) {
                int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
                int ch = w.registerChannel("/joint_states", "json", js, Map.of());
                byte[] msg;
                int rd;
                if (enc.equals("json")) {
                    int str = w.registerSchema("std_msgs/msg/String", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
                    rd = w.registerChannel("/robot_description", "json", str, Map.of());
                    String text = urdf.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
                    msg = ("{\"data\":\"" + text + "\"}").getBytes(StandardCharsets.UTF_8);
                } else {
                    int str = w.registerSchema("std_msgs/msg/String", "ros2msg", "string data".getBytes(StandardCharsets.UTF_8));
                    rd = w.registerChannel("/robot_description", "cdr", str, Map.of());
                    byte[] b = urdf.getBytes(StandardCharsets.UTF_8);
                    msg = java.nio.ByteBuffer.allocate(8 + b.length + 1).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                            .put(new byte[] {0, 1, 0, 0}).putInt(b.length + 1).put(b).put((byte) 0).array();
                }
                w.writeMessage(rd, 0, T0, T0, msg);
                for (int k = 0; k < N; k++) {
                    long t = T0 + k * 100_000_000L;
                    w.writeMessage(ch, k, t, t, ("{\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L)
                            + ",\"nanosec\":" + (t % 1_000_000_000L) + "},\"frame_id\":\"\"},\"name\":[\"j_wrist\","
                            + "\"j_slide\"],\"position\":[" + (0.5 * k) + "," + (0.01 * k) + "],\"velocity\":[],"
                            + "\"effort\":[]}").getBytes(StandardCharsets.UTF_8));
                }
            }
            Episode ep = episode(file);
            assertEquals("topic /robot_description", GripperJoint.urdf(ep).orElseThrow().source(), enc);
            assertEquals(urdf, ep.metadata().get("robot_description"), enc);
            GripperJoint g = GripperJoint.select(ep, null).orElseThrow();
            assertEquals("j_slide", g.joint(), enc);
            assertEquals(GripperJoint.SOURCE_URDF, g.source(), enc);
            assertEquals("m", g.unit(), enc);
        }
    }
}
