package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.error.StorageUnavailableException;
import io.flywheel.testkit.S3TestServer;

/**
 * The commit protocol on an S3 lake (s3proxy in this JVM, filesystem blob store): a writer killed mid-commit (also
 * while it holds the commit lease), the server dying mid-commit, and two writers committing in turn. s3proxy checks
 * the conditional PUT apart from the write, so these tests show what it can: crash safety and writers in turn, not a
 * race of two writers for one commit point (README says what S3 itself guarantees).
 */
class S3CommitTest {
    static final int K = 30;
    static final String LAKE = "s3://lakebucket/fleet/lake";

    @TempDir
    Path dir;
    private S3TestServer s3;

    @BeforeEach
    void startServer() throws Exception {
        s3 = S3TestServer.start(dir.resolve("blobs"), "lakebucket");
    }

    @AfterEach
    void stopServer() throws Exception {
        CommitHooks.listen(null);
        System.clearProperty("flywheel.lake.s3-lease-ms");
        if (s3 != null) {
            s3.close();
        }
    }

    private Map<String, String> env() {
        return s3.environment();
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
                        s3.stopServer(); // the server dies between two table commits
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            assertThrows(StorageUnavailableException.class, () -> Fixtures.ingest(lake, 1, K));
            CommitHooks.listen(null);
        }
        s3.restart();
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
