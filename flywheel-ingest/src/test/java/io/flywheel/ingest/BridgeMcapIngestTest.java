package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

class BridgeMcapIngestTest {
    private static final String[] CAMS = {"/camera0/image/compressed", "/camera1/image/compressed",
            "/camera2/image/compressed"};

    @Test
    void twentyFiveEpisodesOfTenFramesPerCameraWithSevenDimStateAndAction() {
        List<Recording> recs = BridgeData.mcap();
        JsonNode files = BridgeData.expected().get("files");
        assertEquals(25, recs.size());
        int frames = 0;
        for (int e = 0; e < 25; e++) {
            Recording r = recs.get(e);
            JsonNode x = files.get(e);
            assertEquals(SourceFormat.MCAP, r.format());
            assertEquals(1, r.files().size());
            assertEquals(x.get("file_sha256").asText(), r.files().get(0).sha256());
            assertEquals(x.get("size_bytes").asLong(), r.files().get(0).bytes());
            assertEquals(1, r.episodes().size());
            Episode ep = r.episodes().get(0);
            assertEquals(51, ep.messageCount());
            assertEquals("/camera0/image/compressed", ep.masterTopic());
            assertEquals(x.get("task").asText(), ep.task());
            assertEquals(Integer.toString(e), ep.metadata().get("episode_index"));
            assertEquals(3, ep.streams(StreamRole.CAMERA).size());
            for (String cam : CAMS) {
                StreamData s = ep.stream(cam).orElseThrow();
                assertEquals(StreamRole.CAMERA, s.role());
                assertEquals(10, s.size());
                frames += s.size();
            }
            StreamData state = ep.stream("/robot/eef_state").orElseThrow();
            StreamData action = ep.stream("/robot/action").orElseThrow();
            StreamData task = ep.stream("/task").orElseThrow();
            assertEquals(StreamRole.STATE, state.role());
            assertEquals(StreamRole.ACTION, action.role());
            assertEquals(StreamRole.TASK, task.role());
            assertEquals(List.of("x", "y", "z", "roll", "pitch", "yaw", "gripper"), state.names());
            assertEquals(x.get("task").asText(), task.texts().get(0));
            long first = x.get("first_log_time_ns").asLong();
            long period = x.get("step_period_ns").asLong();
            for (int k = 0; k < 10; k++) {
                assertEquals(7, state.values()[k].length);
                assertEquals(7, action.values()[k].length);
                for (int i = 0; i < 7; i++) {
                    assertEquals(x.get("eef_state").get("position").get(k).get(i).asDouble(), state.values()[k][i]);
                    assertEquals(x.get("action").get("data").get(k).get(i).asDouble(), action.values()[k][i]);
                }
                long t = first + k * period;
                assertEquals(t, state.timeNs()[k]);
                assertEquals(t, state.headerStampNs()[k]);
                assertEquals(t, ep.stream(CAMS[0]).orElseThrow().timeNs()[k]);
            }
            assertEquals(first, ep.startNs());
            assertEquals(x.get("last_log_time_ns").asLong(), ep.endNs());
            assertTrue(state.timestamps().clean(), state.timestamps().summary());
            assertEquals(10, state.timestamps().fromHeaderStamp());
            assertEquals(200_000_000L, state.timestamps().medianPeriodNs());
        }
        assertEquals(750, frames);
    }

    @Test
    void everyLocatorReadsBackTheExpectedJpeg() throws Exception {
        List<Recording> recs = BridgeData.mcap();
        JsonNode files = BridgeData.expected().get("files");
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        int checked = 0;
        try (LocatorReader lr = new LocatorReader()) {
            for (int e = 0; e < 25; e++) {
                Episode ep = recs.get(e).episodes().get(0);
                JsonNode imgs = files.get(e).get("images");
                String compression = files.get(e).get("chunk_compression").asText();
                for (String cam : CAMS) {
                    StreamData s = ep.stream(cam).orElseThrow();
                    for (int k = 0; k < 10; k++) {
                        RawLocator loc = s.locators()[k];
                        assertNotNull(loc);
                        assertEquals(compression, loc.compression());
                        assertEquals("jpeg", loc.format());
                        assertTrue(loc.chunkOffset() > 0);
                        assertEquals(imgs.get(cam).get("size_bytes").get(k).asInt(), loc.length());
                        byte[] jpeg = lr.read(loc);
                        assertEquals(0xFF, jpeg[0] & 0xFF);
                        assertEquals(0xD8, jpeg[1] & 0xFF);
                        assertEquals(imgs.get(cam).get("sha256").get(k).asText(),
                                HexFormat.of().formatHex(sha.digest(jpeg)), "episode " + e + " " + cam + " step " + k);
                        checked++;
                    }
                }
            }
        }
        assertEquals(750, checked);
    }

    @Test
    void detectedRolesAreDescribed() {
        Recording r = BridgeData.mcap().get(0);
        String d = r.profile().describe();
        assertTrue(d.contains("master: /camera0/image/compressed"), d);
        assertTrue(d.contains("/robot/eef_state"), d);
        assertTrue(d.contains("type JointState"), d);
        assertEquals(StreamRole.ACTION, r.profile().role("/robot/action"));
        assertEquals(StreamRole.TASK, r.profile().role("/task"));
        assertArrayEquals(new String[] {"/camera0/image/compressed", "/camera1/image/compressed",
                "/camera2/image/compressed", "/robot/eef_state", "/robot/action", "/task"},
                r.episodes().get(0).streams().stream().map(StreamData::topic).toArray());
    }
}
