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
                Arguments.of(new String[] {"enrich", lake, "--model", "resnet9000"},
                        "--model: unknown model 'resnet9000'"),
                Arguments.of(new String[] {"enrich", lake, "--batch-episodes", "0"},
                        "--batch-episodes must be >= 1, got 0"),
                Arguments.of(new String[] {"enrich", lake, "--threads", "0"}, "--threads must be >= 1, got 0"),
                Arguments.of(new String[] {"enrich", lake, "--blur-threshold", "-5"},
                        "--blur-threshold must be a number >= 0, got -5"),
                Arguments.of(new String[] {"enrich", lake, "--static-threshold", "NaN"},
                        "--static-threshold must be a number >= 0, got NaN"),
                Arguments.of(new String[] {"enrich", lake, "--hot-quality", "200"},
                        "--hot-quality must be in 1..100, got 200"),
                Arguments.of(new String[] {"enrich", lake, "--hot-size", "4"}, "--hot-size must be >= 8, got 4"),
                Arguments.of(new String[] {"mine", lake, "--failures", "-k", "0"}, "-k must be >= 1, got 0"),
                Arguments.of(new String[] {"mine", lake, "--failures", "--nprobes", "0"},
                        "--nprobes must be >= 1, got 0"),
                Arguments.of(new String[] {"lake", "compact", lake, "--max-deleted-fraction", "2"},
                        "--max-deleted-fraction must be in [0, 1], got 2.0"),
                Arguments.of(new String[] {"lake", "compact", lake, "--target-rows", "0"},
                        "--target-rows must be >= 1, got 0"),
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
                Arguments.of(new String[] {"load", lake, "train-v1", "--batch-size", "0"},
                        "--batch-size must be >= 1, got 0"),
                Arguments.of(new String[] {"load", lake, "train-v1", "--prefetch", "0"},
                        "--prefetch must be >= 1, got 0"),
                Arguments.of(new String[] {"warm", lake, "train-v1"}, "--cache DIR is needed to warm (or give --list)"),
                Arguments.of(new String[] {"export", "lerobot", lake, "train-v1"}, "Missing required parameter: 'OUT'"),
                Arguments.of(new String[] {"export", "lerobot", lake, "train-v1", tmp.resolve("e").toString(),
                        "--keyframe-interval", "-1"}, "--keyframe-interval must be >= 0, got -1"),
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

    /** Parent commands, run without a subcommand. */
    static Stream<Arguments> parentCommands() {
        return Stream.of(
                Arguments.of((Object) new String[] {}),
                Arguments.of((Object) new String[] {"lake"}),
                Arguments.of((Object) new String[] {"mcap"}),
                Arguments.of((Object) new String[] {"qc"}),
                Arguments.of((Object) new String[] {"align"}),
                Arguments.of((Object) new String[] {"trainset"}),
                Arguments.of((Object) new String[] {"export"}),
                Arguments.of((Object) new String[] {"models"}),
                Arguments.of((Object) new String[] {"gateway", "token"}));
    }

    /** A parent command alone is a missing subcommand: its usage on standard error, nothing on stdout, exit 2. */
    @ParameterizedTest
    @MethodSource("parentCommands")
    void aParentCommandWithoutASubcommandIsWrongUsage(String[] args) {
        CliRun r = CliRun.of(args);
        String cmd = String.join(" ", Stream.concat(Stream.of("flywheel"), Stream.of(args)).toList());
        assertEquals(2, r.exitCode(), cmd + ": " + r.err());
        assertTrue(r.err().startsWith(cmd + ": missing subcommand: expected one of "), cmd + ": " + r.err());
        assertTrue(r.err().contains("Usage: " + cmd + " "), "its usage: " + r.err());
        assertEquals("", r.out(), cmd);
        assertClean(cmd, r);
        CliRun help = CliRun.of(Stream.concat(Stream.of(args), Stream.of("--help")).toArray(String[]::new));
        assertEquals(0, help.exitCode(), cmd + " --help: " + help.err());
        assertTrue(help.out().contains("Usage: " + cmd + " "), help.out());
    }

    @Test
    void theLakeCommandNamesItsSubcommands() {
        CliRun r = CliRun.of("lake");
        assertTrue(r.err().startsWith("flywheel lake: missing subcommand: expected one of versions, log, compact,"
                + " cleanup, migrate\n"), r.err());
    }

    /** --json promises one JSON document on standard output: a failure is one too, and still says why on stderr. */
    @Test
    void aFailureWithJsonPrintsOneJsonDocumentOnStandardOutput() throws Exception {
        CliRun r = CliRun.of("lake", "versions", missing, "--json");
        assertEquals(1, r.exitCode(), r.err());
        com.fasterxml.jackson.databind.JsonNode j = JSON.readTree(r.out());
        assertFalse(j.get("ok").asBoolean());
        assertEquals("not_found", j.get("error").get("kind").asText(), r.out());
        assertTrue(j.get("error").get("message").asText().contains("no Flywheel lake at " + missing), r.out());
        assertEquals("flywheel lake versions: " + j.get("error").get("message").asText(), r.err().strip());
        CliRun text = CliRun.of("lake", "versions", missing);
        assertEquals(1, text.exitCode());
        assertEquals("", text.out(), "without --json, the failure is text on stderr only");
        CliRun bad = CliRun.of("trainset", "build", lake, "--tag", "train-v1", "--ratio", "0.2", "--json");
        assertEquals(1, bad.exitCode(), bad.err());
        assertEquals("conflict", JSON.readTree(bad.out()).get("error").get("kind").asText(),
                "tags are immutable: " + bad.out());
        // a usage error stays text on stderr (the command line was not understood), exit 2
        CliRun usage = CliRun.of("lake", "versions", "--json");
        assertEquals(2, usage.exitCode());
        assertEquals("", usage.out());
        assertTrue(usage.err().contains("Missing required parameter: 'LAKE'"), usage.err());
    }

    /** A file system error whose message is only its path is said in words, also at the end of another message. */
    @Test
    void fileSystemErrorsAreSaidInWords() {
        assertEquals("cannot init lake at /x/lake: permission denied: /x", Main.describe(
                new io.flywheel.error.StorageUnavailableException("cannot init lake at /x/lake: /x",
                        new java.nio.file.AccessDeniedException("/x"))));
        assertEquals("cannot init lake at /x/lake: no such file or folder: /x", Main.describe(
                new io.flywheel.error.StorageUnavailableException("cannot init lake at /x/lake: /x",
                        new java.nio.file.NoSuchFileException("/x"))));
        assertEquals("/x: not a folder", Main.describe(new java.nio.file.NotDirectoryException("/x")));
        assertEquals("/x: the folder is not empty", Main.describe(new java.nio.file.DirectoryNotEmptyException("/x")));
        assertEquals("no such file or folder: /a -> /b", Main.describe(new java.io.UncheckedIOException(
                new java.nio.file.NoSuchFileException("/a", "/b", null))));
    }

    @Test
    void initWhereNoFolderCanBeMadeSaysWhy() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux /proc");
        CliRun r = CliRun.of("init", "/proc/nope/lake");
        assertEquals(1, r.exitCode(), r.err());
        assertEquals("flywheel init: cannot init lake at /proc/nope/lake: no such file or folder: /proc/nope",
                r.err().strip());
    }

    /** No stack trace, and no Java exception class name (the message is for people). */
    private static void assertClean(String cmd, CliRun r) {
        assertTrue(r.noStackTrace(), cmd + ": " + r.err());
        assertFalse(r.err().matches("(?s).*\\b[A-Z][A-Za-z]*(Exception|Error)\\b.*"), cmd + " names a Java class: "
                + r.err());
    }
}
