package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.lake.TableSchemas;
import io.flywheel.mcap.McapWriter;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;

/**
 * A bimanual robot's two follower arms in the lake and out of it: an MCAP of our own making with two JSON-encoded
 * {@code sensor_msgs/msg/JointState} topics of 7 joints each and a leader arm, ingested with a profile
 * {@code state: [/left_follow, /right_follow]}. Ground truth: message {@code k} of {@code /left_follow} holds joint
 * {@code j} (0-based) at {@code (j + 1) / 10 + k / 100}, {@code /right_follow} the same negated (1 ms earlier). The
 * lake's frames hold 14 state values in that order, the episode 14 names; {@code load} gives them with the sample
 * and {@code export lerobot} writes them as the {@code names} of observation.state.
 */
class MultiTopicStateCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int N = 20;

    private static double left(int k, int j) {
        return (j + 1) / 10.0 + k / 100.0;
    }

    private static byte[] joints(long t, int k, double sign) {
        StringBuilder names = new StringBuilder();
        StringBuilder pos = new StringBuilder();
        for (int j = 0; j < 7; j++) {
            names.append(j == 0 ? "" : ",").append("\"joint_").append(j + 1).append('"');
            pos.append(j == 0 ? "" : ",").append(sign * left(k, j));
        }
        return ("{\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L) + ",\"nanosec\":" + (t % 1_000_000_000L)
                + "},\"frame_id\":\"\"},\"name\":[" + names + "],\"position\":[" + pos + "],\"velocity\":[],"
                + "\"effort\":[]}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void twoFollowerArmsAreFourteenNamedStateValuesInTheLakeLoadAndExport(@TempDir Path tmp) throws Exception {
        Path mcap = tmp.resolve("bimanual.mcap");
        long t0 = 1_700_000_000_000_000_000L;
        try (McapWriter w = McapWriter.builder().build(mcap)) {
            int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int lf = w.registerChannel("/left_follow", "json", js, Map.of());
            int rf = w.registerChannel("/right_follow", "json", js, Map.of());
            int ll = w.registerChannel("/left_lead", "json", js, Map.of());
            for (int k = 0; k < N; k++) {
                long t = t0 + k * 100_000_000L;
                w.writeMessage(rf, k, t - 1_000_000, t - 1_000_000, joints(t - 1_000_000, k, -1));
                w.writeMessage(lf, k, t, t, joints(t, k, 1));
                w.writeMessage(ll, k, t + 1_000_000, t + 1_000_000, joints(t + 1_000_000, k, 2));
            }
        }
        Path profile = Files.writeString(tmp.resolve("bimanual.yaml"),
                "master: /left_follow\nstate: [/left_follow, /right_follow]\naction: /left_lead\n");
        String lake = tmp.resolve("lake").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun ingest = CliRun.of("ingest", lake, mcap.toString(), "--profile", profile.toString(), "--json");
        assertEquals(0, ingest.exitCode(), ingest.err());
        JsonNode vectors = JSON.readTree(ingest.out()).get("recordings").get(0).get("vectors");
        assertEquals("{\"/left_follow\":7,\"/right_follow\":7}", vectors.get("state").toString());
        // the text summary's line, from the same result
        Map<String, Integer> both = new java.util.LinkedHashMap<>();
        both.put("/left_follow", 7);
        both.put("/right_follow", 7);
        io.flywheel.ingest.IngestJob.RecordingResult rr = new io.flywheel.ingest.IngestJob.RecordingResult("r", "MCAP",
                List.of(), false, 1, N, null, List.of(), Map.of(), Map.of(), Map.of("state", both,
                        "action", Map.of("/left_lead", 7)));
        assertEquals(List.of("state vector: /left_follow (7) + /right_follow (7) = 14 values, 1 recording(s)"),
                IngestCommand.vectorLines(List.of(rr)), "one line per vector of several topics");
        // the roles a profile gave are printed as guessed ones are
        Map<String, io.flywheel.ingest.IngestJob.TopicRole> roles = new java.util.LinkedHashMap<>();
        roles.put("/left_follow", new io.flywheel.ingest.IngestJob.TopicRole("state", ""));
        roles.put("/cam", new io.flywheel.ingest.IngestJob.TopicRole("other", "not in profile"));
        io.flywheel.ingest.IngestJob.RecordingResult named = new io.flywheel.ingest.IngestJob.RecordingResult("r",
                "MCAP", List.of("file:/x/arms.mcap"), false, 1, N,
                new io.flywheel.ingest.IngestJob.ProfileSummary("arms.yaml", "/left_follow", roles), List.of(),
                Map.of(), Map.of(), Map.of());
        assertEquals(List.of("roles (profile arms.yaml) for 1 recording(s) (arms.mcap):\n  master: /left_follow\n"
                + "  /left_follow  state\n  /cam          other  (not in profile)\n"), IngestCommand.roleBlocks(List.of(named)));

        List<String> names = new ArrayList<>();
        for (String arm : List.of("left_follow", "right_follow")) {
            for (int j = 1; j <= 7; j++) {
                names.add(arm + ".joint_" + j);
            }
        }
        try (Lake l = Lake.open(lake); LakeTable eps = l.table(TableSchemas.EPISODES);
             LakeTable frames = l.table(TableSchemas.FRAMES)) {
            EpisodeRow ep = eps.episodes(ScanRequest.all()).get(0);
            assertEquals(names, ep.stateNames());
            assertEquals(7, ep.actionNames().size());
            List<FrameRow> rows = frames.frames(ScanRequest.all());
            assertEquals(N, rows.size());
            for (FrameRow f : rows) {
                double[] want = new double[14];
                for (int j = 0; j < 7; j++) {
                    want[j] = left(f.frameIndex(), j);
                    want[7 + j] = -left(f.frameIndex(), j);
                }
                assertArrayEquals(want, f.state(), 1e-12, "frame " + f.frameIndex());
            }
        }

        assertEquals(0, CliRun.of("trainset", "build", lake, "--tag", "t", "--ratio", "1", "--rate-hz", "0")
                .exitCode());
        CliRun load = CliRun.of("load", lake, "t", "--batches", "1", "--images", "none", "--json");
        assertEquals(0, load.exitCode(), load.err());
        JsonNode first = JSON.readTree(load.out()).get("first_sample");
        assertEquals(14, first.get("state").size());
        assertEquals(JSON.valueToTree(names), first.get("state_names"));
        // the set keeps the names it was built with: its lineage holds the one layout of its episodes
        JsonNode kept = JSON.readTree(CliRun.of("trainset", "show", lake, "t", "--json").out()).findValue("value_names");
        assertEquals(1, kept.size(), kept.toString());
        assertEquals(JSON.valueToTree(names), kept.get(0).get("state"));
        CliRun text = CliRun.of("load", lake, "t", "--batches", "1", "--images", "none");
        assertTrue(text.out().contains("  state names: left_follow.joint_1, left_follow.joint_2,"), text.out());

        Path out = tmp.resolve("lerobot");
        CliRun export = CliRun.of("export", "lerobot", lake, "t", out.toString(), "--json");
        assertEquals(0, export.exitCode(), export.err());
        JsonNode features = JSON.readTree(out.resolve("meta/info.json").toFile()).get("features");
        assertEquals(JSON.valueToTree(names), features.get("observation.state").get("names"));
        assertEquals("[14]", features.get("observation.state").get("shape").toString());
        assertEquals("[\"joint_1\",\"joint_2\",\"joint_3\",\"joint_4\",\"joint_5\",\"joint_6\",\"joint_7\"]",
                features.get("action").get("names").toString());
    }
}
