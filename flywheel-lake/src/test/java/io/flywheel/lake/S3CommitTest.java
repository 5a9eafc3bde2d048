package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.StorageUnavailableException;

/**
 * The commit protocol on an S3 lake (s3proxy in this JVM, filesystem blob store): a writer killed mid-commit (also
 * while it holds the commit lease), the server dying mid-commit, and two writers committing in turn. s3proxy checks
 * the conditional PUT apart from the write, so these tests show what it can: crash safety and writers in turn, not a
 * race of two writers for one commit point (README says what S3 itself guarantees).
 */
class S3CommitTest {
    static final String KEY = "flywheel-test-key";
    static final String SECRET = "flywheel-test-secret";
    static final int K = 30;
    static final String LAKE = "s3://lakebucket/fleet/lake";

    @TempDir
    Path dir;

    private BlobStoreContext context;
    private S3Proxy proxy;
    private int port;

    @BeforeEach
    void startServer() throws Exception {
        Path blobs = Files.createDirectories(dir.resolve("blobs"));
        Properties props = new Properties();
        props.setProperty("jclouds.filesystem.basedir", blobs.toString());
        context = ContextBuilder.newBuilder("filesystem").credentials("unused", "unused").overrides(props)
                .build(BlobStoreContext.class);
        start(0);
        context.getBlobStore().createContainerInLocation(null, "lakebucket");
    }

    private void start(int onPort) throws Exception {
        proxy = S3Proxy.builder().blobStore(context.getBlobStore()).endpoint(URI.create("http://127.0.0.1:" + onPort))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, KEY, SECRET).build();
        proxy.start();
        while (!AbstractLifeCycle.STARTED.equals(proxy.getState())) {
            Thread.sleep(10);
        }
        port = proxy.getPort();
    }

    @AfterEach
    void stopServer() throws Exception {
        CommitHooks.listen(null);
        System.clearProperty("flywheel.lake.s3-lease-ms");
        if (proxy != null) {
            proxy.stop();
        }
        if (context != null) {
            context.close();
        }
    }

    private Map<String, String> env() {
        return Map.of("AWS_ENDPOINT_URL", "http://127.0.0.1:" + port, "AWS_ACCESS_KEY_ID", KEY,
                "AWS_SECRET_ACCESS_KEY", SECRET, "AWS_REGION", "us-east-1");
    }

    private Lake.Options options() {
        return Lake.Options.defaults().withEnvironment(env());
    }

    @Test
    void writersKilledMidCommitAndWhileHoldingTheLeaseLeaveTheLakeAsItWas() throws Exception {
        System.setProperty("flywheel.lake.s3-lease-ms", "2000");
        try (Lake lake = Lake.init(LAKE, options())) {
            Fixtures.ingest(lake, 0, K);
        }
        for (String step : List.of("table-committed:frames", "locked")) {
            try (ChildProcess child = ChildProcess.start(dir.resolve("tmp"), Map.of("flywheel.lake.pause-at", step,
                    "flywheel.lake.s3-lease-ms", "2000"), env(), CommitWriter.class, LAKE, "1", "2",
                    Integer.toString(K))) {
                assertEquals("PAUSED " + step, child.await("PAUSED", "done"), child.seen.toString());
                child.kill();
            }
            try (Lake lake = Lake.open(LAKE, options())) {
                CommitKillTestSupport.assertFiles(lake, 1, K, "killed at " + step);
            }
        }
        // the dead writer's lease expires; the next writer takes it over and completes the work once
        CommitWriter.run(LAKE, options(), 0, 3, K, null);
        try (Lake lake = Lake.open(LAKE, options())) {
            CommitKillTestSupport.assertFiles(lake, 3, K, "after the re-run");
            assertTrue(lake.snapshot().changes().stream().anyMatch(c -> c.kind().equals("rollback"))
                    || lake.snapshot(lake.snapshot().seq() - 1).changes().stream()
                            .anyMatch(c -> c.kind().equals("rollback")), "the orphan versions were rolled back");
        }
    }

    @Test
    void theServerDyingMidCommitLeavesNothingHalfWritten() throws Exception {
        try (Lake lake = Lake.init(LAKE, options())) {
            Fixtures.ingest(lake, 0, K);
            CommitHooks.listen(step -> {
                if (step.equals("table-committed:episodes")) {
                    try {
                        proxy.stop(); // the server dies between two table commits
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            assertThrows(StorageUnavailableException.class, () -> Fixtures.ingest(lake, 1, K));
            CommitHooks.listen(null);
        }
        start(port);
        try (Lake lake = Lake.open(LAKE, options())) {
            CommitKillTestSupport.assertFiles(lake, 1, K, "after the server came back");
            Fixtures.ingest(lake, 1, K);
            CommitKillTestSupport.assertFiles(lake, 2, K, "after the retry");
        }
    }

    @Test
    void twoWritersInTurnSeeEachOthersCommits() throws Exception {
        try (Lake a = Lake.init(LAKE, options()); Lake b = Lake.open(LAKE, options())) {
            for (int i = 0; i < 6; i++) {
                Lake w = i % 2 == 0 ? a : b;
                Fixtures.ingest(w, i, K); // based on its own older snapshot: commits on top of the other's
            }
            assertEquals(7, b.refresh().seq());
            CommitKillTestSupport.assertFiles(b, 6, K, "after six commits in turn");
            CommitKillTestSupport.assertFiles(a, 5, K, "a reads the snapshot of its own last commit");
        }
    }
}
