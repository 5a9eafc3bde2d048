package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.testkit.SharedData;

/** Where sidecar videos are found: NAME.<camera>.mp4 beside the recording, and NAME/<camera>.mp4. */
class SidecarLayoutTest {
    @Test
    void bothLayoutsAndCameraNamesWithDots(@TempDir Path tmp) throws Exception {
        Path rec = tmp.resolve("run.2024-05-01.mcap");
        Files.copy(SharedData.data("camera/bridge-mcap/bridge_ep01.mcap"), rec);
        Files.write(tmp.resolve("run.2024-05-01.top.mp4"), new byte[8]);
        Path folder = Files.createDirectories(tmp.resolve("run.2024-05-01"));
        Files.write(folder.resolve("wrist.left.mp4"), new byte[8]);
        Files.writeString(folder.resolve("wrist.left.timestamps"), "1\n");
        Files.write(folder.resolve("notes.txt"), new byte[1]);
        List<Sidecars.Sidecar> s = Sidecars.find(Sources.detect(rec));
        assertEquals(List.of("top", "wrist.left"), s.stream().map(Sidecars.Sidecar::camera).toList());
        assertNull(s.get(0).timestamps());
        assertEquals(folder.resolve("wrist.left.mp4").toAbsolutePath(), s.get(1).video().toAbsolutePath());
        assertEquals(folder.resolve("wrist.left.timestamps").toAbsolutePath(), s.get(1).timestamps().toAbsolutePath());
        assertEquals("/wrist.left/video", s.get(1).topic());

        // one camera in both layouts: which one is meant is unclear, so it is refused
        Files.write(folder.resolve("top.mp4"), new byte[8]);
        IngestException e = assertThrows(IngestException.class, () -> Sidecars.find(Sources.detect(rec)));
        assertTrue(e.getMessage().contains("camera 'top' has two sidecar videos"), e.getMessage());
    }
}
