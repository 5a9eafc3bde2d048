package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.lake.Lake;
import io.flywheel.testkit.SharedData;

/**
 * Exit codes through the real entry point, command by command: a name the lake or file does not have (an episode id,
 * tag, topic, stream, camera, lake) exits 1 and the message names it; wrong usage (an unknown option, a missing
 * parameter, a value that is not allowed, options that need each other) exits 2, with a "try: ... --help" line. No
 * case prints a stack trace or a Java class name.
 *
 * <p>The lake: the 25 BridgeData episodes ingested (three cameras /camera0..2/image/compressed, streams
 * /robot/eef_state and /robot/action), one training set {@code train-v1}; not enriched.
 */
class ExitCodesCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;
    static String lake;
    static String missing;
    static String episode;
    static String mcap;

    @BeforeAll
    static void build() throws Exception {
        lake = tmp.resolve("lake").toString();
        missing = tmp.resolve("no-lake-here").toString();
        mcap = SharedData.data("camera/bridge-mcap/bridge_ep00.mcap").toString();
        assertEquals(0, CliRun.of("init", lake).exitCode());
        CliRun in = CliRun.of("ingest", lake, SharedData.data("camera/bridge-mcap").toString(), "--json");
        assertEquals(0, in.exitCode(), in.err());
        CliRun b = CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.2", "--seed", "5", "--json");
        assertEquals(0, b.exitCode(), b.err());
        CliRun qc = CliRun.of("qc", "report", lake, "--json");
        episode = JSON.readTree(qc.out()).get("episodes").get(0).get("episode_id").asText();
        Files.writeString(tmp.resolve("mined.json"),
                "[{\"episode_id\": \"no-such-episode\", \"query_episode_id\": \"" + episode
                        + "\", \"distance\": 0.1, \"rank\": 1}]");
    }

    /** Commands and the name each must report as unknown. */
    static Stream<Arguments> unknownNames() {
        String out = tmp.resolve("out").toString();
        return Stream.of(
                Arguments.of(new String[] {"init", lake}, "a lake already exists at " + lake),
                Arguments.of(new String[] {"qc", "report", missing}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"align", "report", lake, "--episode", "no-such-episode"},
                        "no episode 'no-such-episode' in " + lake),
                Arguments.of(new String[] {"align", "report", lake, "--episode", episode, "--stream", "/nope",
                        "--plot", tmp.resolve("a.png").toString()}, "has no stream '/nope' aligned to"
                        + " /camera0/image/compressed; its streams: /camera1/image/compressed"),
                Arguments.of(new String[] {"enrich", missing}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"dedup", missing}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"dedup", "sweep", missing, "--out", out}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"mine", lake, "--failures", "--cameras", "/nope"},
                        "unknown camera topic '/nope'; the cameras of " + lake + " are /camera0/image/compressed,"
                                + " /camera1/image/compressed, /camera2/image/compressed"),
                Arguments.of(new String[] {"trainset", "build", lake, "--tag", "train-x", "--mined",
                        tmp.resolve("mined.json").toString()}, "mined episode 'no-such-episode'"),
                Arguments.of(new String[] {"trainset", "show", lake, "train-v9"},
                        "no training set 'train-v9' in " + lake + "; tags: [train-v1]"),
                Arguments.of(new String[] {"trainset", "list", missing}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"trainset", "diff", lake, "train-v1", "train-v9", "--no-chart"},
                        "no training set 'train-v9'"),
                Arguments.of(new String[] {"load", lake, "train-v9"}, "no training set 'train-v9'"),
                Arguments.of(new String[] {"warm", lake, "train-v9", "--list"}, "no training set 'train-v9'"),
                Arguments.of(new String[] {"export", "lerobot", lake, "train-v9", out}, "no training set 'train-v9'"),
                Arguments.of(new String[] {"map", lake, "--out", tmp.resolve("m.png").toString(), "--trainset",
                        "train-v9"}, "no training set 'train-v9'"),
                Arguments.of(new String[] {"serve", missing, "--port", "0"}, "no Flywheel lake at " + missing),
                Arguments.of(new String[] {"mcap", "cat", mcap, "--topic", "/nope"},
                        "no topic /nope in " + mcap + "; its topics: /camera0/image/compressed"),
                Arguments.of(new String[] {"lake", "migrate", missing}, "no Flywheel lake at " + missing));
    }

    @ParameterizedTest
    @MethodSource("unknownNames")
    void anUnknownNameIsBadInputAndNamed(String[] args, String message) {
        CliRun r = CliRun.of(args);
        String cmd = "flywheel " + String.join(" ", args);
        assertEquals(1, r.exitCode(), cmd + ": " + r.err());
        assertTrue(r.err().contains(message), cmd + ": " + r.err());
        assertClean(cmd, r);
        assertFalse(r.err().contains("try: flywheel"), "bad input gets no usage hint: " + r.err());
    }

    @Test
    void anIngestPolicyForATopicNoRecordingHasIsBadInputAndNothingIsCommitted() {
        String fresh = tmp.resolve("fresh").toString();
        assertEquals(0, CliRun.of("init", fresh).exitCode());
        CliRun r = CliRun.of("ingest", fresh, mcap, "--policy", "/nope=asof:20");
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("policy for topic '/nope': no recording of this run has that stream (streams: ")
                && r.err().contains("/robot/action"), r.err());
        assertClean("ingest --policy", r);
        try (Lake l = Lake.open(fresh)) {
            assertTrue(l.rawFileSha256s().isEmpty(), "nothing committed");
        }
    }

    /** Usage errors and the words each message must hold. */
    static Stream<Arguments> usageErrors() {
        String png = tmp.resolve("u.png").toString();
        return Stream.of(
                Arguments.of(new String[] {"init"}, "Missing required parameter: 'LAKE'"),
                Arguments.of(new String[] {"init", lake, "--bogus"}, "Unknown option: '--bogus'"),
                Arguments.of(new String[] {"ingest", lake, mcap, "--on-miss", "skip"},
                        "--on-miss: unknown miss policy 'skip': expected flag or drop"),
                Arguments.of(new String[] {"ingest", lake, mcap, "--master-rate", "-5"},
                        "--master-rate: fixed master rate must be a positive finite number of Hz, got -5.0"),
                Arguments.of(new String[] {"ingest", lake, mcap, "--policy", "/robot/action=sideways"},
                        "--policy '/robot/action=sideways': unknown alignment method 'sideways'"),
                Arguments.of(new String[] {"qc", "report", lake, "--status", "maybe"},
                        "--status 'maybe': expected pass, warn or fail"),
                Arguments.of(new String[] {"qc", "report", lake, "--apply"}, "--apply needs --rules"),
                Arguments.of(new String[] {"align", "report", lake, "--plot", png}, "--plot needs --episode"),
                Arguments.of(new String[] {"align", "report", lake, "--episode", episode, "--stream", "/robot/action"},
                        "--stream needs --plot"),
                Arguments.of(new String[] {"enrich", lake, "--stride", "often"}, "--stride 'often'"),
                Arguments.of(new String[] {"enrich", lake, "--model", "resnet9000"}, "--model: unknown model 'resnet9000'"),
                Arguments.of(new String[] {"dedup", "--json"}, "Missing required parameter: 'LAKE'"),
                Arguments.of(new String[] {"dedup", lake, "--episode-threshold", "3"},
                        "--episode-threshold is a cosine distance in [0, 2], got 3.0"),
                Arguments.of(new String[] {"dedup", "sweep", lake, "--frame-thresholds", "2,70"},
                        "--frame-thresholds: 70 is not a Hamming distance in [0, 63] bits"),
                Arguments.of(new String[] {"mine", lake}, "nothing to mine for: give --failures, --episode ID or"
                        + " --recording FILE"),
                Arguments.of(new String[] {"mine", lake, "--failures", "--cameras", "/a,/a"},
                        "--cameras: camera topics repeat: [/a, /a]"),
                Arguments.of(new String[] {"trainset", "build", lake, "--tag", "t", "--ratio", "2"},
                        "--ratio is a share of the pool in [0, 1], got 2.0"),
                Arguments.of(new String[] {"trainset", "build", lake, "--tag", "bad tag"},
                        "--tag: training-set tag 'bad tag' must be"),
                Arguments.of(new String[] {"trainset", "show", lake}, "Missing required parameter: 'TAG'"),
                Arguments.of(new String[] {"trainset", "list", lake, "--bogus"}, "Unknown option: '--bogus'"),
                Arguments.of(new String[] {"trainset", "diff", lake, "train-v1", "train-v1", "--hard-case", "colour=red",
                        "--no-chart"}, "--hard-case: unknown composition dimension 'colour'"),
                Arguments.of(new String[] {"load", lake, "train-v1", "--images", "fancy"},
                        "--images 'fancy': expected none, bytes or decoded"),
                Arguments.of(new String[] {"load", lake, "train-v1", "--batch-size", "0"}, "batch size"),
                Arguments.of(new String[] {"warm", lake, "train-v1"}, "--cache DIR is needed to warm (or give --list)"),
                Arguments.of(new String[] {"export", "lerobot", lake, "train-v1"}, "Missing required parameter: 'OUT'"),
                Arguments.of(new String[] {"export", "lerobot", lake, "train-v1", tmp.resolve("e").toString(),
                        "--keyframe-interval", "0"}, "export options out of range"),
                Arguments.of(new String[] {"map", lake}, "Missing required option: '--out=PNG'"),
                Arguments.of(new String[] {"map", lake, "--out", png, "--max-points", "0"},
                        "--max-points must be >= 1, got 0"),
                Arguments.of(new String[] {"serve", lake, "--port", "70000"}, "--port must be in 0..65535, got 70000"),
                Arguments.of(new String[] {"mcap", "cat", mcap, "--limit", "-1"}, "--limit must be at least 0, got -1"),
                Arguments.of(new String[] {"sim", "--out", tmp.resolve("s").toString(), "--jpeg", "gif"},
                        "--jpeg 'gif': expected auto, opencv or imageio"),
                Arguments.of(new String[] {"models", "pull", "--model", "resnet"}, "resnet"),
                Arguments.of(new String[] {"lake", "migrate", lake, "--region"}, "Missing required parameter for option"
                        + " '--region'"));
    }

    @ParameterizedTest
    @MethodSource("usageErrors")
    void wrongUsageExits2WithAHelpHint(String[] args, String message) {
        CliRun r = CliRun.of(args);
        String cmd = "flywheel " + String.join(" ", args);
        assertEquals(2, r.exitCode(), cmd + ": " + r.err());
        assertTrue(r.err().contains(message), cmd + ": " + r.err());
        assertTrue(r.err().contains("try: flywheel "), cmd + ": " + r.err());
        assertClean(cmd, r);
    }

    /** No stack trace, and no Java exception class name (the message is for people). */
    private static void assertClean(String cmd, CliRun r) {
        assertTrue(r.noStackTrace(), cmd + ": " + r.err());
        assertFalse(r.err().matches("(?s).*\\b[A-Z][A-Za-z]*(Exception|Error)\\b.*"), cmd + " names a Java class: "
                + r.err());
    }
}
