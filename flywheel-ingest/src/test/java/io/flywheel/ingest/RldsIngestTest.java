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

import io.flywheel.testkit.SharedData;

class RldsIngestTest {
    private static Path tfrecord() {
        return SharedData.data("camera/bridge-octo-rlds/bridge_dataset-train.tfrecord-00000-of-00001");
    }

    @Test
    void rldsEpisodesEqualTheBridgeMcapEpisodes() throws Exception {
        Recording rlds = Ingest.read(tfrecord());
        assertEquals(SourceFormat.RLDS_TFRECORD, rlds.format());
        assertEquals("4f0f6f6b88eb11bff02c85aa9df3825162d3be3945df67f731970044b07e6266", rlds.files().get(0).sha256());
        assertEquals(25, rlds.episodes().size());
        List<Recording> mcap = BridgeData.mcap();
        int images = 0;
        try (LocatorReader lr = new LocatorReader()) {
            for (Recording m : mcap) {
                Episode me = m.episodes().get(0);
                int index = Integer.parseInt(me.metadata().get("episode_index"));
                Episode re = rlds.episodes().get(index);
                assertEquals(Integer.toString(index), re.metadata().get("rlds.record_index"));
                assertEquals(me.metadata().get("rlds_episode_id"), re.metadata().get("episode_id"));
                assertEquals(me.metadata().get("original_file_path"), re.metadata().get("file_path"));
                assertEquals(me.task(), re.task());
                assertEquals("steps/observation/image_0", re.masterTopic());
                StreamData rs = re.stream("steps/observation/state").orElseThrow();
                StreamData ra = re.stream("steps/action").orElseThrow();
                StreamData ms = me.stream("/robot/eef_state").orElseThrow();
                StreamData ma = me.stream("/robot/action").orElseThrow();
                assertEquals(StreamRole.STATE, rs.role());
                assertEquals(StreamRole.ACTION, ra.role());
                assertEquals(10, rs.size());
                for (int k = 0; k < 10; k++) {
                    assertArrayEquals(ms.values()[k], rs.values()[k], "state, episode " + index + " step " + k);
                    assertArrayEquals(ma.values()[k], ra.values()[k], "action, episode " + index + " step " + k);
                    assertEquals(ms.timeNs()[k], rs.timeNs()[k], "nominal 5 Hz time");
                }
                for (int cam = 0; cam < 3; cam++) {
                    StreamData rc = re.stream("steps/observation/image_" + cam).orElseThrow();
                    StreamData mc = me.stream("/camera" + cam + "/image/compressed").orElseThrow();
                    assertEquals(StreamRole.CAMERA, rc.role());
                    for (int k = 0; k < 10; k++) {
                        RawLocator rl = rc.locators()[k];
                        assertTrue(rl.isPlainRange());
                        assertEquals("jpeg", rl.format());
                        assertArrayEquals(lr.read(mc.locators()[k]), lr.read(rl), "episode " + index + " cam " + cam);
                        assertEquals(mc.timeNs()[k], rc.timeNs()[k]);
                        images++;
                    }
                }
            }
        }
        assertEquals(750, images);
    }

    @Test
    void rldsRateAndEpochAreConfigurable() throws Exception {
        Recording r = Ingest.read(tfrecord(), IngestOptions.builder().rldsRateHz(10).rldsEpochNs(0)
                .rldsEpisodeSpacingNs(1_000_000_000_000L).build());
        StreamData s = r.episodes().get(2).stream("steps/action").orElseThrow();
        assertEquals(2_000_000_000_000L, s.timeNs()[0]);
        assertEquals(2_000_000_000_000L + 3 * 100_000_000L, s.timeNs()[3]);
        assertEquals(0, s.headerStampNs()[3]);
        assertEquals(100_000_000L, s.timestamps().medianPeriodNs());
    }

    @Test
    void aCorruptRecordNamesTheFileAndOffset(@TempDir Path tmp) throws Exception {
        byte[] b = Files.readAllBytes(tfrecord());
        b[5000] ^= 0x40; // inside record 0's data
        Path bad = tmp.resolve("bad.tfrecord");
        Files.write(bad, b);
        IngestException e = assertThrows(IngestException.class, () -> Ingest.read(bad));
        assertTrue(e.getMessage().contains("bad.tfrecord"), e.getMessage());
        assertTrue(e.getMessage().contains("data CRC"), e.getMessage());
        assertTrue(e.offset() > 5000, e.getMessage());

        Path cut = tmp.resolve("cut.tfrecord");
        Files.write(cut, java.util.Arrays.copyOf(Files.readAllBytes(tfrecord()), 200_000));
        IngestException c = assertThrows(IngestException.class, () -> Ingest.read(cut));
        assertTrue(c.getMessage().contains("declares length"), c.getMessage());
        // cut inside the first record (144,644 bytes): a truncated TFRecord, not "not a recording"
        Path early = tmp.resolve("early.tfrecord");
        Files.write(early, java.util.Arrays.copyOf(Files.readAllBytes(tfrecord()), 100));
        IngestException t = assertThrows(IngestException.class, () -> Ingest.read(early));
        assertTrue(t.getMessage().contains("TFRecord record 0 declares length 144644 but only 84 bytes of data and CRC"
                + " follow"), t.getMessage());
    }
}
