package io.flywheel.curate.align;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.align.TimelinePlot;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.lake.Lake;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.StreamMatch;

/**
 * A hand-made episode: master camera {@code /cam} every 100 ms from t0 = 1 s, stamped 5 ms late by its device;
 * {@code /joint} every 10 ms from t0 on the true clock; {@code /cmd} never matched. Frame k's stamp is t0 + k * 100 ms
 * + 5 ms, halfway between joint messages 10k and 10k + 1: frames 0 and 1 were paired with the earlier one (residual
 * -5 ms, true error 0), frame 2 with the later one (+5 ms, true error 10 ms).
 */
class AlignmentReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    private static final String TRUTH = "{\"episodes\": [{\"file\": \"ep_00000.mcap\","
            + " \"cameras\": {\"head\": {\"topic\": \"/cam\", \"nominal_start_ns\": 1000000000, \"period_ns\": 100000000,"
            + " \"clock_offset_ns\": 5000000, \"count\": 3}},"
            + " \"joint_states\": {\"topic\": \"/joint\", \"nominal_start_ns\": 1000000000, \"period_ns\": 10000000,"
            + " \"clock_offset_ns\": 0, \"count\": 30}}]}";

    private static EpisodeRow episode(String id) {
        return new EpisodeRow(id, "rec", "robot", "task", "scene", "op", "success", T0, T0 + 200 * MS, 200 * MS, "/cam",
                3L, "pass", List.of(), "{}", "{\"source_files\": [\"file:/data/" + (id.equals("a") ? "ep_00000" : "other")
                        + ".mcap\"]}");
    }

    private static List<FrameRow> frames(String id) {
        long[] residual = {-5 * MS, -5 * MS, 5 * MS};
        List<FrameRow> out = new java.util.ArrayList<>();
        for (int k = 0; k < 3; k++) {
            out.add(new FrameRow(id, k, T0 + k * 100 * MS + 5 * MS, null, null, null, List.of(),
                    List.of(new StreamMatch("/joint", true, residual[k]), new StreamMatch("/cmd", false, null)), List.of()));
        }
        return out;
    }

    private static GroundTruthTimes truth() throws Exception {
        return GroundTruthTimes.of("gt.json", JSON.readTree(TRUTH));
    }

    @Test
    void residualDistributionIsNearestRankInMilliseconds() {
        ResidualDistribution d = ResidualDistribution.of(new long[] {5 * MS, 1 * MS, 3 * MS, 2 * MS, 4 * MS});
        assertEquals(new ResidualDistribution(5, 3.0, 5.0, 5.0, 5.0), d, "p50 = 3rd of 5, p90 = 5th of 5");
        assertEquals(new ResidualDistribution(0, null, null, null, null), ResidualDistribution.of(new long[0]));
        assertEquals(1.0, ResidualDistribution.percentileMs(new long[] {1 * MS, 2 * MS}, 50));
    }

    @Test
    void streamsReportObservedResidualsAndWithGroundTruthTheTrueErrors() throws Exception {
        StreamResiduals plain = new StreamResiduals(null);
        frames("a").forEach(f -> plain.add(f, episode("a")));
        assertEquals(List.of(new StreamReport("/joint", 3, 3, 0, 5.0, 5.0, 5.0, 5.0, null, null),
                new StreamReport("/cmd", 3, 0, 3, null, null, null, null, null, null)), plain.reports());

        StreamResiduals withTruth = new StreamResiduals(truth());
        frames("a").forEach(f -> withTruth.add(f, episode("a")));
        assertEquals(List.of(new StreamReport("/joint", 3, 3, 0, 5.0, 5.0, 5.0, 5.0, 0.0, 10.0),
                new StreamReport("/cmd", 3, 0, 3, null, null, null, null, null, null),
                new StreamReport("/cam (master stamp)", 3, 3, 0, null, null, null, null, 5.0, 5.0)),
                withTruth.reports());
        assertTrue(StreamReport.isMasterStamp("/cam (master stamp)"));

        StreamResiduals otherFile = new StreamResiduals(truth()); // an episode the ground truth does not know
        frames("b").forEach(f -> otherFile.add(f, episode("b")));
        assertNull(otherFile.reports().get(0).trueP50Ms());
    }

    @Test
    void aLakeReportIsOfOneEpisodeOrAllAndAnUnknownEpisodeIsNamed() throws Exception {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            List<FrameRow> fs = new java.util.ArrayList<>(frames("a"));
            fs.addAll(frames("b"));
            lake.begin("ingest").appendEpisodes(List.of(episode("a"), episode("b"))).appendFrames(fs).commit();
            AlignmentReport all = AlignmentReport.read(lake, null, null);
            assertNull(all.episode());
            assertEquals(6, all.frames().size());
            assertEquals(6, all.streams().get(0).frames());
            AlignmentReport a = AlignmentReport.read(lake, "a", truth());
            assertEquals("a", a.episode().episodeId());
            assertEquals(3, a.frames().size());
            assertEquals(10.0, a.streams().get(0).trueP99Ms());
            NotFoundException e = assertThrows(NotFoundException.class, () -> AlignmentReport.read(lake, "zz", null));
            assertEquals("no episode 'zz' in " + lake.location() + "; `flywheel qc report " + lake.location()
                    + "` lists the episode ids", e.getMessage());
        }
    }

    @Test
    void theTimelinePairsEachFrameWithTheMessageItsResidualNames() throws Exception {
        EpisodeRow ep = episode("a");
        List<FrameRow> fs = frames("a");
        assertEquals("/joint", Timeline.stream(ep, fs, null));
        NotFoundException unknown = assertThrows(NotFoundException.class, () -> Timeline.stream(ep, fs, "/nope"));
        assertEquals("episode a has no stream '/nope' aligned to /cam; its streams: /joint, /cmd", unknown.getMessage());
        assertThrows(BadInputException.class, () -> Timeline.stream(ep, List.of(), null));

        long[] joint = new long[30];
        for (int j = 0; j < 30; j++) {
            joint[j] = T0 + j * 10 * MS;
        }
        TimelinePlot.Spec s = Timeline.spec(ep, fs, "/joint", joint, null, 500 * MS);
        assertArrayEquals(new int[] {0, 10, 21}, s.matchIndex());
        assertArrayEquals(new long[] {T0 + 5 * MS, T0 + 105 * MS, T0 + 205 * MS}, s.frameTimesNs());
        assertNull(s.trueFrameTimesNs());
        assertEquals(T0 + 5 * MS, s.windowStartNs());
        assertEquals("episode a: /joint against /cam", s.title());

        TimelinePlot.Spec t = Timeline.spec(ep, fs, "/joint", joint, truth(), 500 * MS);
        assertArrayEquals(new long[] {T0, T0 + 100 * MS, T0 + 200 * MS}, t.trueFrameTimesNs());
        assertEquals(T0 + 5 * MS - Timeline.TRUTH_LEAD_NS, t.windowStartNs());
        TimelinePlot.render(t, dir.resolve("t.png"));
        assertTrue(Files.size(dir.resolve("t.png")) > 0);

        // a window later in the episode, shaded on the overview strip of the whole episode (5..205 ms)
        TimelinePlot.Spec later = Timeline.spec(ep, fs, "/joint", joint, null, 100 * MS, 100 * MS);
        assertEquals(T0 + 105 * MS, later.windowStartNs());
        TimelinePlot.render(later, dir.resolve("later.png"));
        java.awt.image.BufferedImage img = javax.imageio.ImageIO.read(dir.resolve("later.png").toFile());
        assertEquals(1200, img.getWidth());
        // the strip maps 200 ms onto x 40..1170: the window 105..205 ms is x 605..1170
        assertEquals(0xffecc8, img.getRGB(800, 76) & 0xffffff, "shaded: inside the window");
        assertEquals(0xffffff, img.getRGB(400, 76) & 0xffffff, "not shaded: before the window");
    }

    /** A 30 Hz master that lost one frame (a 66.7 ms step) and, in another episode, two (100 ms). */
    @Test
    void droppedMasterFramesAreReportedAsGaps() {
        List<FrameRow> fs = new java.util.ArrayList<>();
        long period = 33_333_333L;
        long[] a = {0, 1, 2, 4, 5}; // frame 3 of the camera dropped: frames 0..4 at these ticks
        long[] b = {0, 1, 2, 3, 6, 7};
        for (int k = 0; k < a.length; k++) {
            fs.add(new FrameRow("a", k, T0 + a[k] * period, null, null, null, List.of(), List.of(), List.of()));
        }
        for (int k = 0; k < b.length; k++) {
            fs.add(new FrameRow("b", k, T0 + b[k] * period, null, null, null, List.of(), List.of(), List.of()));
        }
        List<AlignmentReport.MasterGap> g = AlignmentReport.masterGaps(fs);
        assertEquals(2, g.size());
        assertEquals("a", g.get(0).episodeId());
        assertEquals(3, g.get(0).frameIndex());
        assertEquals(66.667, g.get(0).stepMs(), 1e-3);
        assertEquals(33.333, g.get(0).periodMs(), 1e-3);
        assertEquals("b", g.get(1).episodeId());
        assertEquals(4, g.get(1).frameIndex());
        assertEquals(100.0, g.get(1).stepMs(), 1e-3);
        assertEquals(List.of(), AlignmentReport.masterGaps(frames("a"))); // steady 100 ms
    }

    @Test
    void aGroundTruthFileThatIsNotOneIsNamedWithWhereItIsWrong() throws Exception {
        Path cut = Files.writeString(dir.resolve("gt.json"), TRUTH.substring(0, 30));
        BadInputException notJson = assertThrows(BadInputException.class, () -> GroundTruthTimes.read(cut));
        assertTrue(notJson.getMessage().startsWith(cut + ": not JSON at line 1, column "), notJson.getMessage());
        assertTrue(notJson.getMessage().endsWith("; expected a simulator's ground_truth.json"), notJson.getMessage());
        Path none = Files.writeString(dir.resolve("none.json"), "{}");
        assertEquals(none + ": not a simulator ground_truth.json (no \"episodes\" list)",
                assertThrows(BadInputException.class, () -> GroundTruthTimes.read(none)).getMessage());
        Path period = Files.writeString(dir.resolve("period.json"), TRUTH.replace("\"period_ns\": 10000000,", "\"period_ns\": 0,"));
        assertEquals(period + ": episode 0 (ep_00000.mcap), joint_states: \"period_ns\" must be > 0, got 0",
                assertThrows(BadInputException.class, () -> GroundTruthTimes.read(period)).getMessage());
        assertEquals(dir + " is a folder; expected a simulator's ground_truth.json",
                assertThrows(BadInputException.class, () -> GroundTruthTimes.read(dir)).getMessage());
    }
}
