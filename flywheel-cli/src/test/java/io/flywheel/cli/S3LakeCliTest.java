package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.curate.trainset.TrainsetBuilder;
import io.flywheel.curate.trainset.TrainsetSpec;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.lake.Lake;
import io.flywheel.lake.StorageConfig;
import io.flywheel.quality.RuleSet;
import io.flywheel.testkit.SharedData;
import io.flywheel.testkit.S3TestServer;

/**
 * A lake that lives only in an S3 bucket (s3proxy on a loopback port, filesystem blob store, AWS v4 signatures
 * checked), read by real {@code flywheel} processes that get the endpoint from {@code --endpoint} on the command line
 * and nothing else: the environment holds the credentials and region but no {@code AWS_ENDPOINT_URL} and no
 * {@code FLYWHEEL_CONFIG}. The lake: the 25 BridgeData episodes (10 frames each, raw MCAP files stay local), and
 * {@code train-v1}, every episode at every frame (ratio 1, rate 0): 25 episodes, 250 samples.
 */
class S3LakeCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LAKE = "s3://clibucket/fleet/lake";

    @TempDir
    static Path dir;
    private static S3TestServer s3;
    private static String endpoint;

    @BeforeAll
    static void lakeOnS3() throws Exception {
        s3 = S3TestServer.start(dir.resolve("blobs"), "clibucket");
        endpoint = s3.endpoint();
        Lake.Options opts = Lake.Options.defaults().withEnvironment(Map.of()).withStorage(StorageConfig.builder()
                .endpoint(endpoint).region("us-east-1").credentials(S3TestServer.KEY, S3TestServer.SECRET).build());
        try (Lake lake = Lake.init(LAKE, opts)) {
            IngestJob.run(lake, List.of(SharedData.data("camera/bridge-mcap")), IngestOptions.defaults(),
                    IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
            TrainsetBuilder.build(lake, TrainsetSpec.builder("train-v1").baseRatio(1).seed(5).sampleRateHz(0).build(),
                    TrainsetBuilder.Progress.NONE);
        }
        assertTrue(Files.isDirectory(dir.resolve("blobs/clibucket/fleet/lake/episodes.lance")), "the lake is in the bucket");
    }

    @AfterAll
    static void stop() throws Exception {
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void qcReportReadsTheS3LakeWithTheEndpointFromTheCommandLine() throws Exception {
        Result r = flywheel("qc", "report", LAKE, "--endpoint", endpoint, "--json");
        assertEquals(0, r.exit(), r.output());
        JsonNode qc = JSON.readTree(r.stdout());
        assertEquals(25, qc.get("episodes").size());
        assertEquals(25, qc.get("by_status").get("pass").asInt());
    }

    @Test
    void trainsetListAndLoadReadTheS3Lake() throws Exception {
        Result list = flywheel("trainset", "list", LAKE, "--endpoint", endpoint, "--region", "us-east-1", "--json");
        assertEquals(0, list.exit(), list.output());
        JsonNode sets = JSON.readTree(list.stdout()).get("trainsets");
        assertEquals(1, sets.size());
        assertEquals("train-v1", sets.get(0).get("tag").asText());
        assertEquals(25, sets.get(0).get("episodes").asInt());
        assertEquals(250, sets.get(0).get("samples").asInt());

        Result load = flywheel("load", LAKE, "train-v1", "--endpoint", endpoint, "--batch-size", "50", "--batches", "0",
                "--json");
        assertEquals(0, load.exit(), load.output());
        JsonNode l = JSON.readTree(load.stdout());
        assertEquals(250, l.get("samples").asInt());
        assertEquals(25, l.get("episodes").asInt());
        assertEquals(5, l.get("batches_timed").asInt(), "a whole epoch: 250 / 50");
        assertEquals(3, l.get("first_sample").get("images").size(), "three cameras per frame");
    }

    @Test
    void anUnknownTagOnTheS3LakeIsBadInput() throws Exception {
        Result r = flywheel("load", LAKE, "train-v9", "--endpoint", endpoint);
        assertEquals(1, r.exit(), r.output());
        assertTrue(r.stderr().contains("no training set 'train-v9' in " + LAKE + "; tags: [train-v1]"), r.output());
    }

    /** One finished {@code flywheel} process. */
    private record Result(int exit, String stdout, String stderr) {
        String output() {
            return "stdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }

    /**
     * Runs {@code flywheel ARGS} as its own JVM through {@link Main#main}, with the S3 credentials and region in its
     * environment and no endpoint there.
     */
    private static Result flywheel(String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + dir, "-cp", System.getProperty("java.class.path"), "io.flywheel.cli.Main"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("AWS_") || k.equals("FLYWHEEL_CONFIG"));
        env.put("AWS_ACCESS_KEY_ID", S3TestServer.KEY);
        env.put("AWS_SECRET_ACCESS_KEY", S3TestServer.SECRET);
        env.put("AWS_REGION", "us-east-1");
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) { // a guard against a hung process, not a timing assertion
            p.destroyForcibly();
            throw new AssertionError("flywheel " + String.join(" ", args) + " did not finish: "
                    + Files.readString(err, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
