package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.StreamMatch;
import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.McapMessages;
import io.flywheel.mcap.MessageView;
import io.flywheel.ros.cdr.CdrFastPaths;
import io.flywheel.sim.FleetSimulator;
import io.flywheel.sim.GroundTruth;

/**
 * Alignment policies of {@code flywheel ingest} checked against a simulated fleet's ground truth: frames dropped
 * by tolerance ({@code --on-miss drop}, a profile's {@code align} entry) are exactly the ones the true capture
 * times and the lost messages imply; {@code interpolate} stores the linear interpolation of the two neighbouring
 * raw messages and never interpolates across a lost message; {@code align report --truth} prints the ground-truth
 * arithmetic redone here.
 *
 * <p>The fleet: preset tiny (6 episodes of ~2 s, 2 robots), seed 42, 30% of the 200 Hz joint-state messages
 * lost, so a 7 ms tolerance leaves about a fifth of the 30 Hz frames without a joint state.
 */
class AlignPolicyCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String JOINTS = "/joint_states";
    private static final String HEAD = "/head_camera/image_raw/compressed";
    private static final long TOL = 7_000_000L;

    @TempDir
    static Path tmp;
    static Path fleet;
    static GroundTruth truth;

    @BeforeAll
    static void simulate() throws IOException {
        fleet = tmp.resolve("fleet");
        CliRun r = CliRun.of("sim", "--preset", "tiny", "--out", fleet.toString(), "--jpeg", "imageio",
                "--message-drop-rate", "0.3", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        truth = FleetSimulator.readGroundTruth(fleet.resolve("ground_truth.json"));
    }

    private static Path ingest(String name, String... options) throws IOException {
        Path lake = tmp.resolve(name);
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        List<String> args = new ArrayList<>(List.of("ingest", lake.toString(), fleet.toString()));
        args.addAll(List.of(options));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, r.exitCode(), r.out() + r.err());
        return lake;
    }

    private static List<FrameRow> frames(Path lake) {
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("frames")) {
            return t.frames(ScanRequest.all());
        }
    }

    private static Map<String, EpisodeRow> episodes(Path lake) {
        Map<String, EpisodeRow> m = new HashMap<>();
        try (Lake l = Lake.open(lake.toString()); LakeTable t = l.table("episodes")) {
            t.episodes(ScanRequest.all()).forEach(e -> m.put(e.episodeId(), e));
        }
        return m;
    }

    /** @return the raw file of a lake episode (its source_files entry) */
    private static Path file(EpisodeRow e) throws IOException {
        return Path.of(URI.create(JSON.readTree(e.metadataJson()).get("source_files").get(0).asText()));
    }

    /** @return the ground truth of the episode written to {@code file} */
    private static GroundTruth.Episode truthOf(Path file) {
        for (GroundTruth.Episode e : truth.episodes()) {
            if (fleet.resolve(e.file()).equals(file)) {
                return e;
            }
        }
        throw new AssertionError("no ground truth for " + file);
    }

    /** Key of a frame across lakes: raw file and master time. */
    private static String key(Path file, long timeNs) {
        return file.getFileName() + "@" + timeNs;
    }

    /**
     * Frames whose as-of joint state within {@link #TOL} is missing, from the ground truth alone: joint message k
     * exists unless lost, and its stamp lies within the stamp jitter bound of its true time plus the clock offset.
     * A frame is expected unmatched when no message's possible stamps reach into [t - TOL, t]; a frame for which
     * some but not all possible stamps would match is "undetermined" (the test requires none).
     */
    @Test
    void framesDroppedByToleranceAreExactlyTheOnesTheGroundTruthImpliesAndFlagKeepsThemFlagged() throws IOException {
        Path flag = ingest("flag", "--policy", JOINTS + "=asof:7");
        Path dropGlobal = ingest("drop-global", "--on-miss", "drop", "--policy", JOINTS + "=asof:7",
                "--policy", "/left_wrist_camera/image_raw/compressed=nearest:1000:flag",
                "--policy", "/right_wrist_camera/image_raw/compressed=nearest:1000:flag",
                "--policy", "/teleop/command=nearest:1000:flag");
        Path profile = tmp.resolve("profile.yaml");
        Files.writeString(profile, "align:\n  " + JOINTS + ": {method: asof, tolerance_ms: 7, on_miss: drop}\n");
        Path dropProfile = ingest("drop-profile", "--profile", profile.toString());

        Set<String> expected = new TreeSet<>();
        Map<String, Integer> expectedPerFile = new TreeMap<>();
        Set<String> all = new HashSet<>();
        Set<String> flagged = new TreeSet<>();
        int undetermined = 0;
        int headFrames = 0;
        Map<String, EpisodeRow> eps = episodes(flag);
        for (EpisodeRow e : eps.values()) {
            GroundTruth.Stream head = truthOf(file(e)).cameras().get("head_camera");
            headFrames += head.count() - head.dropped().length;
        }
        for (FrameRow f : frames(flag)) {
            Path file = file(eps.get(f.episodeId()));
            GroundTruth.Stream js = truthOf(file).jointStates();
            long t = f.timestampNs();
            Set<Integer> lost = new HashSet<>();
            for (int k : js.dropped()) {
                lost.add(k);
            }
            boolean surely = false;
            boolean possibly = false;
            for (int k = 0; k < js.count(); k++) {
                if (lost.contains(k)) {
                    continue;
                }
                long lo = js.trueTimeNs(k) + js.clockOffsetNs() - js.stampJitterMaxNs();
                long hi = js.trueTimeNs(k) + js.clockOffsetNs() + js.stampJitterMaxNs();
                surely |= lo >= t - TOL && hi <= t;
                possibly |= hi >= t - TOL && lo <= t;
            }
            if (possibly && !surely) {
                undetermined++;
            }
            String key = key(file, t);
            all.add(key);
            if (!possibly) {
                expected.add(key);
                expectedPerFile.merge(file.getFileName().toString(), 1, Integer::sum);
            }
            StreamMatch m = f.streams().stream().filter(s -> s.stream().equals(JOINTS)).findFirst().orElseThrow();
            if (!m.matched()) {
                flagged.add(key);
                assertTrue(f.flags().contains("unmatched:" + JOINTS), f.flags().toString());
                assertNull(f.state(), "no state without a joint message");
            } else {
                assertTrue(m.residualNs() <= 0 && m.residualNs() >= -TOL, "as-of never pairs a later message: " + m);
            }
        }
        assertEquals(0, undetermined, "the truth decides every frame (no stamp within the jitter bound of a limit)");
        assertEquals(headFrames, all.size(), "with flag every head-camera frame is a frame row");
        assertTrue(expected.size() > 30 && expected.size() < all.size() / 2, "frames without a joint state: " + expected.size());
        assertEquals(expected, flagged, "flag: exactly the expected frames are flagged unmatched:" + JOINTS);

        for (Path lake : List.of(dropGlobal, dropProfile)) {
            Map<String, EpisodeRow> de = episodes(lake);
            Set<String> kept = new HashSet<>();
            Map<String, List<Integer>> indices = new HashMap<>();
            for (FrameRow f : frames(lake)) {
                kept.add(key(file(de.get(f.episodeId())), f.timestampNs()));
                indices.computeIfAbsent(f.episodeId(), k -> new ArrayList<>()).add(f.frameIndex());
                assertNotNull(f.state(), "a kept frame has its joint state");
                assertTrue(f.flags().stream().noneMatch(x -> x.equals("unmatched:" + JOINTS)), f.flags().toString());
            }
            Set<String> dropped = new TreeSet<>(all);
            dropped.removeAll(kept);
            assertEquals(expected, dropped, lake.getFileName() + ": dropped frames are exactly the expected ones");
            assertTrue(all.containsAll(kept), "no frame appears that the flag run does not have");
            for (EpisodeRow e : de.values()) {
                int n = expectedPerFile.getOrDefault(file(e).getFileName().toString(), 0);
                assertEquals(n, JSON.readTree(e.metadataJson()).get("dropped_frames").asInt(), e.episodeId());
                List<Integer> idx = indices.get(e.episodeId());
                idx.sort(null);
                assertEquals(e.frameCount().intValue(), idx.size());
                for (int i = 0; i < idx.size(); i++) {
                    assertEquals(i, idx.get(i), "kept frames are numbered 0..n-1");
                }
            }
        }

        CliRun bad = CliRun.of("ingest", tmp.resolve("drop-global").toString(), fleet.toString(), "--on-miss", "skip");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--on-miss: unknown miss policy 'skip': expected flag or drop"), bad.err());
    }

    @Test
    void aPolicyForATopicNoRecordingHasIsRejectedAndNothingIsCommitted() throws IOException {
        Path lake = tmp.resolve("misspelled");
        assertEquals(0, CliRun.of("init", lake.toString()).exitCode());
        CliRun r = CliRun.of("ingest", lake.toString(), fleet.toString(), "--policy", "/joint_state=asof:20");
        assertEquals(1, r.exitCode(), "a topic the recordings lack is bad input, not usage: " + r.out() + r.err());
        assertTrue(r.err().contains("policy for topic '/joint_state': no recording of this run has that stream"), r.err());
        assertTrue(r.err().contains(JOINTS), "the streams there are are listed: " + r.err());
        try (Lake l = Lake.open(lake.toString())) {
            assertTrue(l.rawFileSha256s().isEmpty(), "nothing committed");
        }
        // the corrected spelling then ingests everything: nothing of the refused run is skipped as known
        assertEquals(0, CliRun.of("ingest", lake.toString(), fleet.toString(), "--policy", JOINTS + "=asof:20",
                "--json").exitCode());
        try (Lake l = Lake.open(lake.toString())) {
            assertEquals(truth.episodes().size() + 0L, l.rawFileSha256s().size());
        }
    }

    /** One raw stream: times as the lake holds them (header stamp, else log time), MCAP sequence and positions. */
    private record Raw(long[] time, long[] sequence, double[][] position) {}

    private static Raw raw(Path file, String topic, boolean header, boolean joints) {
        List<long[]> rows = new ArrayList<>();
        List<double[]> pos = new ArrayList<>();
        try (McapMessages m = McapMessages.open(file, McapIndexedReader.ReadOptions.builder().topic(topic).build())) {
            MessageView v;
            while ((v = m.next()) != null) {
                long t = header ? CdrFastPaths.headerStamp(v.message().data()) : v.logTime();
                rows.add(new long[] {t, v.message().sequence()});
                if (joints) {
                    pos.add(CdrFastPaths.jointState(v.message().data()).position());
                }
            }
        } catch (Exception e) {
            throw new AssertionError(file + ": " + e.getMessage(), e);
        }
        Integer[] order = new Integer[rows.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Long.compare(rows.get(a)[0], rows.get(b)[0]));
        long[] t = new long[order.length];
        long[] s = new long[order.length];
        double[][] p = new double[order.length][];
        for (int i = 0; i < order.length; i++) {
            t[i] = rows.get(order[i])[0];
            s[i] = rows.get(order[i])[1];
            p[i] = joints ? pos.get(order[i]) : null;
        }
        return new Raw(t, s, p);
    }

    /**
     * Interpolate: the stored state is (1 - w) * lower + w * upper of the raw joint messages around the frame time,
     * w = (t - t_lower) / (t_upper - t_lower); where the neighbours are more than the tolerance apart the state is
     * null and the frame flagged, and the ground truth shows a lost joint message between them, while no matched
     * frame has a lost message between its neighbours.
     */
    @Test
    void interpolateStoresTheLinearInterpolationOfTheTrueNeighboursAndNeverBridgesALostMessage() throws IOException {
        Path lake = ingest("interp", "--policy", JOINTS + "=interpolate:7");
        Map<String, EpisodeRow> eps = episodes(lake);
        Map<Path, Raw> raws = new HashMap<>();
        int interpolated = 0;
        int gaps = 0;
        for (FrameRow f : frames(lake)) {
            Path file = file(eps.get(f.episodeId()));
            Raw r = raws.computeIfAbsent(file, p -> raw(p, JOINTS, true, true));
            GroundTruth.Stream js = truthOf(file).jointStates();
            long t = f.timestampNs();
            int hi = 0;
            while (hi < r.time.length && r.time[hi] <= t) {
                hi++;
            }
            int lo = hi - 1; // latest at or before t; hi: first after t
            StreamMatch m = f.streams().stream().filter(s -> s.stream().equals(JOINTS)).findFirst().orElseThrow();
            String where = f.episodeId() + "#" + f.frameIndex();
            if (lo >= 0 && r.time[lo] == t) {
                assertArrayEquals(r.position[lo], f.state(), 0.0, "exact hit " + where);
                continue;
            }
            if (lo < 0 || hi >= r.time.length) {
                assertNull(f.state(), "outside the stream " + where);
                assertTrue(f.flags().contains("unmatched:" + JOINTS));
                continue;
            }
            // lost messages between the two neighbours, from the truth (MCAP sequence = message index k)
            int lostBetween = 0;
            for (int k : js.dropped()) {
                lostBetween += k > r.sequence[lo] && k < r.sequence[hi] ? 1 : 0;
            }
            if (r.time[hi] - r.time[lo] > TOL) {
                gaps++;
                assertNull(f.state(), "no interpolation across a gap " + where);
                assertTrue(f.flags().contains("unmatched:" + JOINTS), where);
                assertTrue(!m.matched() && m.residualNs() == null, m.toString());
                assertTrue(lostBetween > 0, "a gap over 7 ms at 200 Hz is a lost message " + where);
                continue;
            }
            interpolated++;
            assertEquals(0, lostBetween, "matched frames never span a lost message " + where);
            double w = (double) (t - r.time[lo]) / (r.time[hi] - r.time[lo]);
            double[] exp = new double[r.position[lo].length];
            for (int j = 0; j < exp.length; j++) {
                exp[j] = (1 - w) * r.position[lo][j] + w * r.position[hi][j];
            }
            assertArrayEquals(exp, f.state(), 1e-12, "interpolated state " + where);
            long nearer = Math.min(t - r.time[lo], r.time[hi] - t);
            assertEquals(nearer, Math.abs(m.residualNs()), "residual: the nearer neighbour " + where);
        }
        assertTrue(interpolated > 100, "interpolated frames checked: " + interpolated);
        assertTrue(gaps > 20, "gaps checked: " + gaps);
    }

    /**
     * {@code align report --truth}: the true-error columns equal |true time of the paired message - true capture
     * time of the frame| computed here from the raw files (a message's MCAP sequence is its index k in the
     * ground truth, true time = nominal start + k * period + deviation[k]), as nearest-rank p50 and p99.
     */
    @Test
    void alignReportTruthColumnsEqualTheGroundTruthArithmetic() throws IOException {
        Path lake = ingest("truth");
        CliRun r = CliRun.of("align", "report", lake.toString(), "--truth", fleet.resolve("ground_truth.json").toString(),
                "--json");
        assertEquals(0, r.exitCode(), r.err());
        Map<String, EpisodeRow> eps = episodes(lake);
        Map<String, List<Long>> errors = new TreeMap<>();
        Map<Path, Map<String, Raw>> raws = new HashMap<>();
        for (FrameRow f : frames(lake)) {
            Path file = file(eps.get(f.episodeId()));
            GroundTruth.Episode te = truthOf(file);
            Map<String, GroundTruth.Stream> byTopic = new HashMap<>();
            te.cameras().values().forEach(s -> byTopic.put(s.topic(), s));
            byTopic.put(te.jointStates().topic(), te.jointStates());
            byTopic.put(te.commands().topic(), te.commands());
            Map<String, Raw> rawOf = raws.computeIfAbsent(file, p -> new HashMap<>());
            long frameTrue = trueTime(rawOf, file, byTopic.get(HEAD), f.timestampNs());
            errors.computeIfAbsent(HEAD + " (master stamp)", k -> new ArrayList<>()).add(Math.abs(f.timestampNs() - frameTrue));
            for (StreamMatch m : f.streams()) {
                if (m.matched()) {
                    long msgTrue = trueTime(rawOf, file, byTopic.get(m.stream()), f.timestampNs() + m.residualNs());
                    errors.computeIfAbsent(m.stream(), k -> new ArrayList<>()).add(Math.abs(msgTrue - frameTrue));
                }
            }
        }
        JsonNode streams = JSON.readTree(r.out()).get("streams");
        int checked = 0;
        for (JsonNode s : streams) {
            List<Long> e = errors.get(s.get("stream").asText());
            assertNotNull(e, "a stream the test knows: " + s);
            long[] sorted = e.stream().mapToLong(Long::longValue).sorted().toArray();
            assertEquals(rank(sorted, 50) / 1e6, s.get("true_p50_ms").asDouble(), 0.0, s.toString());
            assertEquals(rank(sorted, 99) / 1e6, s.get("true_p99_ms").asDouble(), 0.0, s.toString());
            checked++;
        }
        assertEquals(5, checked, "4 aligned streams and the master stamp row: " + streams);
    }

    /** Nearest-rank percentile of sorted values. */
    private static long rank(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    /** True time of the message of {@code s} whose time in the lake is {@code timeNs}: found by its MCAP sequence. */
    private static long trueTime(Map<String, Raw> rawOf, Path file, GroundTruth.Stream s, long timeNs) {
        boolean header = !s.topic().equals("/teleop/command"); // Float64MultiArray has no header: log time
        Raw r = rawOf.computeIfAbsent(s.topic(), t -> raw(file, t, header, false));
        int i = java.util.Arrays.binarySearch(r.time, timeNs);
        assertTrue(i >= 0, s.topic() + ": no raw message at " + timeNs);
        return s.trueTimeNs((int) r.sequence[i]);
    }
}
