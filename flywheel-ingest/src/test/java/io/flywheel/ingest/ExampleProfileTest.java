package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.rows.FrameRow;

/** The example profile in examples/profiles parses and, on the bundled BridgeData episode, names the roles guessed. */
class ExampleProfileTest {
    static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @Test
    void theBridgeProfileGivesTheRolesAndFramesOfTheGuess() throws IOException {
        Path yaml = ROOT.resolve("examples/profiles/bridge-widowx.yaml");
        Path file = ROOT.resolve("examples/data/camera/bridge-mcap/bridge_ep00.mcap");
        assertTrue(Files.isRegularFile(yaml) && Files.isRegularFile(file), "examples are part of the repository");
        RobotProfile p = RobotProfile.load(yaml);
        assertEquals("widowx-250", p.robotId());
        assertEquals("/camera0/image/compressed", p.master().orElseThrow());
        for (int c = 0; c < 3; c++) {
            assertEquals(StreamRole.CAMERA, p.role("/camera" + c + "/image/compressed"));
        }
        assertEquals(StreamRole.STATE, p.role("/robot/eef_state"));
        assertEquals(StreamRole.ACTION, p.role("/robot/action"));
        assertEquals(io.flywheel.align.AlignMethod.ASOF, p.align("/robot/eef_state").orElseThrow().method());

        MultiTopicStateTest.Rows guessed = new MultiTopicStateTest.Rows();
        MultiTopicStateTest.ingest(guessed, file, RobotProfile.builder().build());
        MultiTopicStateTest.Rows profiled = new MultiTopicStateTest.Rows();
        MultiTopicStateTest.ingest(profiled, file, p);
        List<FrameRow> a = guessed.rows.get(0).frames();
        List<FrameRow> b = profiled.rows.get(0).frames();
        assertEquals(10, a.size(), "one frame per /camera0 message (mcap info: 10)");
        assertEquals(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.get(i).timestampNs(), b.get(i).timestampNs(), "frame " + i);
            assertEquals(3, b.get(i).images().size(), "frame " + i);
            // the guess (/robot/eef_state, JointState) and the profile agree; 100 ms matches what 50 ms does
            assertTrue(a.get(i).state() != null, "frame " + i + " has a state");
            assertArrayEquals(a.get(i).state(), b.get(i).state(), "frame " + i);
            assertArrayEquals(a.get(i).action(), b.get(i).action(), "frame " + i);
        }
    }
}
