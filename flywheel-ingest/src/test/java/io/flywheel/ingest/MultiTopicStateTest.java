package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapWriter;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * Several state topics make one state vector: a bimanual teleoperation MCAP of our own making (JSON-encoded
 * {@code sensor_msgs/msg/JointState}), two follower arms of 7 joints each and one leader arm. Ground truth: message
 * {@code k} of {@code /left_follow} holds joint {@code j} (0-based) at {@code (j + 1) / 10 + k / 100}, of
 * {@code /right_follow} the same negated, {@code /right_follow} 1 ms before {@code /left_follow} (the master), so
 * that as-of pairs message k with message k; a {@code /robot_state} of a type named {@code *State} (guessed state)
 * holds {@code [k, 2k]}. The frames hold 14 values in the declared order with 14 names, the two arms' shared joint
 * names prefixed by topic; without a profile the JointStates alone make the vector and {@code /robot_state} is named
 * as left out.
 */
class MultiTopicStateTest {
    private static final long T0 = 1_700_000_000_000_000_000L;
    private static final int N = 6;

    /** Left joint j of message k. */
    static double left(int k, int j) {
        return (j + 1) / 10.0 + k / 100.0;
    }

    /** Writes the recording; {@code badAt} >= 0: that message of /right_follow has 6 joints. */
    static Path write(Path file, int badAt) throws IOException {
        try (McapWriter w = McapWriter.builder().build(file)) {
            int js = w.registerSchema("sensor_msgs/msg/JointState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int lf = w.registerChannel("/left_follow", "json", js, Map.of());
            int rf = w.registerChannel("/right_follow", "json", js, Map.of());
            int ll = w.registerChannel("/left_lead", "json", js, Map.of());
            int fs = w.registerSchema("franka_msgs/msg/FrankaState", "jsonschema", "{}".getBytes(StandardCharsets.UTF_8));
            int rs = w.registerChannel("/robot_state", "json", fs, Map.of());
            for (int k = 0; k < N; k++) {
                long t = T0 + k * 100_000_000L;
                w.writeMessage(rf, k, t - 1_000_000, t - 1_000_000, joints(t - 1_000_000, k, -1, k == badAt ? 6 : 7));
                w.writeMessage(lf, k, t, t, joints(t, k, 1, 7));
                w.writeMessage(ll, k, t + 2_000_000, t + 2_000_000, joints(t + 2_000_000, k, 2, 7));
                w.writeMessage(rs, k, t + 3_000_000, t + 3_000_000, ("{\"q\":[" + k + "," + (2 * k) + "]}")
                        .getBytes(StandardCharsets.UTF_8));
            }
        }
        return file;
    }

    private static byte[] joints(long t, int k, double sign, int count) {
        StringBuilder names = new StringBuilder();
        StringBuilder pos = new StringBuilder();
        for (int j = 0; j < count; j++) {
            names.append(j == 0 ? "" : ",").append("\"joint_").append(j + 1).append('"');
            pos.append(j == 0 ? "" : ",").append(sign * left(k, j));
        }
        String hdr = "\"header\":{\"stamp\":{\"sec\":" + (t / 1_000_000_000L) + ",\"nanosec\":" + (t % 1_000_000_000L)
                + "},\"frame_id\":\"base\"}";
        return ("{" + hdr + ",\"name\":[" + names + "],\"position\":[" + pos + "],\"velocity\":[],\"effort\":[]}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A sink keeping what it is given. */
    static final class Rows implements RowSink {
        final List<RecordingRows> rows = new ArrayList<>();

        @Override
        public Set<String> committedRawFiles() {
            return Set.of();
        }

        @Override
        public OptionalLong commit(RecordingRows r) {
            rows.add(r);
            return OptionalLong.of(rows.size());
        }
    }

    static IngestJob.Result ingest(Rows sink, Path file, RobotProfile profile) throws IOException {
        return IngestJob.run(sink, List.of(file), IngestOptions.builder().profile(profile).build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
    }

    private static final List<String> PREFIXED = new ArrayList<>();

    static {
        for (String arm : List.of("left_follow", "right_follow")) {
            for (int j = 1; j <= 7; j++) {
                PREFIXED.add(arm + ".joint_" + j);
            }
        }
    }

    @Test
    void aProfilesStateListIsConcatenatedInItsOrderWithNames(@TempDir Path tmp) throws IOException {
        Path file = write(tmp.resolve("bimanual.mcap"), -1);
        // the declared order (right arm first) is not the channel order
        RobotProfile p = RobotProfile.parse(new StringReader("master: /left_follow\nstate: [/right_follow, /left_follow]\n"
                + "action: /left_lead\n"), "bimanual.yaml");
        Rows sink = new Rows();
        IngestJob.Result r = ingest(sink, file, p);
        assertTrue(r.failed().isEmpty(), r.failed().toString());
        EpisodeRow ep = sink.rows.get(0).episodes().get(0);
        List<String> rightFirst = new ArrayList<>(PREFIXED.subList(7, 14));
        rightFirst.addAll(PREFIXED.subList(0, 7));
        assertEquals(rightFirst, ep.stateNames());
        assertEquals(List.of("joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7"),
                ep.actionNames(), "one action topic: its names as recorded");
        assertTrue(ep.metadataJson().contains("\"value_topics\":{\"state\":{\"/right_follow\":7,\"/left_follow\":7}"),
                ep.metadataJson());
        List<FrameRow> frames = sink.rows.get(0).frames();
        assertEquals(N, frames.size());
        for (int k = 0; k < N; k++) {
            double[] want = new double[14];
            for (int j = 0; j < 7; j++) {
                want[j] = -left(k, j);
                want[7 + j] = left(k, j);
            }
            assertArrayEquals(want, frames.get(k).state(), 1e-12, "frame " + k);
        }
        // each topic keeps its own residual (message time - frame time): the right arm 1 ms before the master
        assertEquals(-1_000_000L, frames.get(2).streams().stream().filter(m -> m.stream().equals("/right_follow"))
                .findFirst().orElseThrow().residualNs());
    }

    @Test
    void withoutAProfileEveryFollowerIsStateAndTheLeaderIsAction(@TempDir Path tmp) throws IOException {
        Path file = write(tmp.resolve("bimanual.mcap"), -1);
        Rows sink = new Rows();
        IngestJob.Result r = ingest(sink, file, null);
        assertTrue(r.failed().isEmpty(), r.failed().toString());
        EpisodeRow ep = sink.rows.get(0).episodes().get(0);
        assertEquals(PREFIXED, ep.stateNames(), "channel order: left, then right; the guessed *State type is not in");
        assertTrue(ep.metadataJson().contains("\"not_in_vector\":{\"state\":[\"/robot_state\"],\"action\":[]}"),
                ep.metadataJson());
        FrameRow f3 = sink.rows.get(0).frames().get(3);
        assertEquals(14, f3.state().length);
        assertEquals(left(3, 6), f3.state()[6], 1e-12);
        assertEquals(-left(3, 0), f3.state()[7], 1e-12);
        assertEquals(7, f3.action().length);
        assertEquals(2 * left(3, 0), f3.action()[0], 1e-12);
        // the first frame: the right arm's first message is 1 ms before it, so all 14 match
        assertEquals(14, sink.rows.get(0).frames().get(0).state().length);
    }

    @Test
    void aTopicWhoseWidthChangesMidEpisodeIsAnErrorNamingIt(@TempDir Path tmp) throws IOException {
        Path file = write(tmp.resolve("bad.mcap"), 3);
        Rows sink = new Rows();
        IngestJob.Result r = ingest(sink, file, null);
        assertTrue(sink.rows.isEmpty(), "nothing committed");
        assertEquals(1, r.failed().size());
        String m = r.failed().get(0).message();
        assertTrue(m.contains(file.toString()) && m.contains("state topic /right_follow of episode rec-")
                && m.contains("message 3 has 6 values, expected 7"), m);
        assertEquals("bad_input", r.failed().get(0).kind());
    }

    @Test
    void namesShareATopicPrefixOnlyWhereTheyClash() {
        assertEquals("left_follow", ValueLayout.basename("/arm/left_follow"));
        StreamData a = stream("/left/joint_states", List.of("shoulder", "gripper"));
        StreamData b = stream("/right/joint_states", List.of("elbow", "gripper"));
        assertEquals(List.of("shoulder", "left/joint_states.gripper", "elbow", "right/joint_states.gripper"),
                ValueLayout.prefixClashes(List.of(a, b), List.of(a.names(), b.names())));
    }

    @Test
    void episodesOfOneRecordingMustAgreeOnTopicsAndWidths() throws IOException {
        StreamData l7 = stream("/left_follow", List.of("a", "b", "c", "d", "e", "f", "g"));
        StreamData l6 = stream("/left_follow", List.of("a", "b", "c", "d", "e", "f"));
        StreamData r7 = stream("/right_follow", List.of("a", "b", "c", "d", "e", "f", "g"));
        ValueLayout first = ValueLayout.of(episode(l7, r7), null, StreamRole.STATE, "rec.tfrecord");
        assertEquals(14, first.width());
        first.checkSameAs(ValueLayout.of(episode(l7, r7), null, StreamRole.STATE, null), "e01", "rec.tfrecord");
        IngestException w = org.junit.jupiter.api.Assertions.assertThrows(IngestException.class, () -> first.checkSameAs(
                ValueLayout.of(episode(l6, r7), null, StreamRole.STATE, null), "e01", "rec.tfrecord"));
        assertEquals("rec.tfrecord: state topic /left_follow of episode e01 has 6 values per message, expected 7 (its"
                + " width in the recording's first episode)", w.getMessage());
        IngestException t = org.junit.jupiter.api.Assertions.assertThrows(IngestException.class, () -> first.checkSameAs(
                ValueLayout.of(episode(l7), null, StreamRole.STATE, null), "e02", "rec.tfrecord"));
        assertTrue(t.getMessage().contains("state of episode e02 is made of /left_follow, expected /left_follow,"
                + " /right_follow"), t.getMessage());
        // an episode with no state stream at all has null vectors, no mixed ones: no error
        first.checkSameAs(ValueLayout.of(episode(), null, StreamRole.STATE, null), "e03", "rec.tfrecord");
    }

    private static Episode episode(StreamData... streams) {
        return new Episode("e", 0, "", "unknown", "", "", "", Map.of(), "", List.of(streams), List.of());
    }

    private static StreamData stream(String topic, List<String> names) {
        long[] t = {T0};
        return new StreamData(topic, 1, StreamRole.STATE, "sensor_msgs/msg/JointState", t, t, t,
                new double[][] {new double[names.size()]}, names, null, null,
                new TimestampReport(topic, io.flywheel.align.TimestampRule.defaults().resolve(t, t, null, false)));
    }
}
