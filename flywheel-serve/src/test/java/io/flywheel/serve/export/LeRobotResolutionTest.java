package io.flywheel.serve.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.RgbImage;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.image.FrameAnalyzer;
import io.flywheel.enrich.video.Mp4VideoReader;
import io.flywheel.enrich.video.VideoFrame;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;

/**
 * The videos' size: the real BridgeData frames are 64x64; enriched with 32-px hot copies, the export encodes each
 * camera at its own 64x64 from the raw images by default, 32x32 with {@code resolution = "hot"}, and any size asked.
 */
class LeRobotResolutionTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path tmp;
    private static Path lakeDir;

    @BeforeAll
    static void lake() throws Exception {
        lakeDir = tmp.resolve("lake");
        try (Lake lake = Lake.init(lakeDir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap/bridge_ep01.mcap"),
                    SharedData.data("camera/bridge-mcap/bridge_ep02.mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            EnrichJob.run(lake, null, EnrichOptions.builder().stride(Stride.every(1)).threads(1)
                    .image(FrameAnalyzer.Options.defaults().withHot(32, 90)).build(), p -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("all").baseRatio(1.0).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
        }
    }

    private static LeRobotExportResult export(String name, String resolution) throws Exception {
        try (Lake lake = Lake.open(lakeDir.toString())) {
            return LeRobotExporter.export(lake, "all", tmp.resolve(name),
                    LeRobotExportOptions.builder().resolution(resolution).build(), l -> { });
        }
    }

    private static int[] firstFrameSize(Path out, String key) throws Exception {
        try (Mp4VideoReader r = Mp4VideoReader.open(out.resolve("videos/" + key + "/chunk-000/file-000.mp4"))) {
            VideoFrame f = r.next();
            RgbImage img = f.image();
            return new int[] {img.width(), img.height()};
        }
    }

    @Test
    void eachCameraAtItsOwnSizeByDefaultTheHotCopiesOrAGivenSize() throws Exception {
        LeRobotExportResult own = export("own", null);
        assertEquals(3, own.cameras().size());
        for (LeRobotExportResult.Camera c : own.cameras()) {
            assertEquals(64, c.width(), c.toString());
            assertEquals(64, c.height(), c.toString());
        }
        assertEquals(64, firstFrameSize(own.out(), own.cameras().get(0).key())[0]);
        JsonNode info = JSON.readTree(own.out().resolve("meta/info.json").toFile());
        assertEquals("[64,64,3]", info.get("features").get(own.cameras().get(0).key()).get("shape").toString());
        assertTrue(info.get("robot_type").isTextual(), "robot_type is a string: " + info.get("robot_type"));

        LeRobotExportResult hot = export("hot", "hot");
        assertEquals(32, hot.cameras().get(0).width());
        assertEquals(32, firstFrameSize(hot.out(), hot.cameras().get(0).key())[1]);

        LeRobotExportResult asked = export("asked", "48x40");
        assertEquals(48, asked.cameras().get(0).width());
        assertEquals(40, asked.cameras().get(0).height());
        assertEquals(48, firstFrameSize(asked.out(), asked.cameras().get(0).key())[0]);

        assertThrows(IllegalArgumentException.class, () -> LeRobotExportOptions.builder().resolution("big").build());
        IllegalArgumentException odd = assertThrows(IllegalArgumentException.class,
                () -> LeRobotExportOptions.builder().resolution("47x40").build());
        assertEquals("resolution '47x40': H.264 in yuv420p needs an even width and height, e.g. 48x40", odd.getMessage());
    }

    /** An episode ingested with two of the three cameras: left out and named by default, black frames with fill. */
    @Test
    void anEpisodeLackingACameraIsLeftOutAndNamedOrFilledWithBlackFrames() throws Exception {
        Path dir = tmp.resolve("lake2");
        String lacking;
        try (Lake lake = Lake.init(dir)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap/bridge_ep01.mcap"),
                    SharedData.data("camera/bridge-mcap/bridge_ep02.mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            io.flywheel.ingest.RobotProfile twoCameras = io.flywheel.ingest.RobotProfile.parse(new java.io.StringReader(
                    "master: /camera0/image/compressed\ncameras: [/camera0/image/compressed, /camera1/image/compressed]\n"
                            + "state: /robot/eef_state\naction: /robot/action\n"), "two-cameras.yaml");
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap/bridge_ep03.mcap")),
                    IngestOptions.builder().profile(twoCameras).build(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("all").baseRatio(1.0).seed(1).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
            lacking = io.flywheel.curate.trainset.Trainsets.episodes(lake, io.flywheel.curate.trainset.Trainsets.open(
                    lake, "all")).stream().map(e -> e.info().episodeId()).filter(id -> {
                        try (io.flywheel.lake.LakeTable f = lake.table("frames")) {
                            return f.frames(io.flywheel.lake.ScanRequest.builder().filter("episode_id = '" + id + "'")
                                    .limit(1).build()).get(0).images().size() == 2;
                        }
                    }).findFirst().orElseThrow();
            List<String> lines = new java.util.ArrayList<>();
            LeRobotExportResult left = LeRobotExporter.export(lake, "all", tmp.resolve("left"),
                    LeRobotExportOptions.defaults(), lines::add);
            assertEquals(3, left.cameras().size());
            assertEquals(2, left.episodes());
            assertEquals(List.of(lacking), left.leftOut());
            assertTrue(lines.stream().anyMatch(l -> l.contains("1 episode(s) left out") && l.contains(lacking)), lines
                    .toString());
            LeRobotExportResult filled = LeRobotExporter.export(lake, "all", tmp.resolve("filled"),
                    LeRobotExportOptions.builder().fillMissingCameras(true).build(), l -> { });
            assertEquals(3, filled.episodes());
            assertEquals(3, filled.cameras().size());
            assertEquals(10, filled.blackImages()); // the episode's 10 frames on its missing camera
            assertEquals(List.of(), filled.leftOut());
        }
    }

    @Test
    void aNearestSizeScaleIsBilinearAndKeepsAFlatImageFlat() {
        byte[] px = new byte[4 * 2 * 3];
        java.util.Arrays.fill(px, (byte) 200);
        RgbImage flat = LeRobotExporter.resize(new RgbImage(4, 2, px), 7, 3);
        for (byte b : flat.pixels()) {
            assertEquals(200, b & 0xFF);
        }
        // a left-black, right-white 2x1 image scaled to 4x1: 0, 64, 191, 255 (pixel centres at 0.25, 0.75 of a step)
        RgbImage edge = LeRobotExporter.resize(new RgbImage(2, 1, new byte[] {0, 0, 0, (byte) 255, (byte) 255,
                (byte) 255}), 4, 1);
        assertEquals(List.of(0, 64, 191, 255), List.of(edge.pixels()[0] & 0xFF, edge.pixels()[3] & 0xFF,
                edge.pixels()[6] & 0xFF, edge.pixels()[9] & 0xFF));
    }
}
