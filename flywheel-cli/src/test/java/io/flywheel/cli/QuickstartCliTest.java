package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.curate.trainset.Trainset;
import io.flywheel.curate.trainset.Trainsets;
import io.flywheel.lake.Lake;
import io.flywheel.testkit.SharedData;

/**
 * {@code flywheel quickstart}: the whole loop on the bundled real recordings plus a simulated fleet uploading live into
 * a gateway in the same process, run twice.
 */
class QuickstartCliTest {
    @Test
    void theWholeLoopRunsAndASecondRunAddsNothingButStillSucceeds(@TempDir Path tmp) throws Exception {
        String model = SharedData.shared("models/mobilenet_v2_block10_gap.onnx").toString();
        String[] args = {"quickstart", "--data", SharedData.repoRoot().resolve("examples/data").toString(),
            "--lake", tmp.resolve("lake").toString(),
            "--work", tmp.resolve("work").toString(), "--model", model};
        CliRun r = CliRun.of(args);
        assertEquals(0, r.exitCode(), r.err() + r.out());
        for (String stage : new String[] {"ingest", "sim", "stream run", "enrich", "dedup", "mine", "trainset build",
            "trainset diff", "warm", "load", "export lerobot", "total"}) {
            assertTrue(r.out().contains("  " + stage + " "), "summary lists " + stage + ":\n" + r.out());
        }
        // the stream stage scores its labels: every one of the 20 simulated live episodes labelled as its truth
        assertTrue(r.out().contains("labelled 20/20 episodes (rules label-rules-1)"), r.out());
        assertTrue(r.out().contains("precision") && r.out().contains("100.0%"), r.out());
        // the simulated fleet came through the gateway: uploads landed in raw/<robot>/, telemetry in its table
        assertTrue(r.out().contains("check against " + tmp.resolve("lake") + ": 24/24 episode(s) in raw_files once"),
                r.out());
        assertTrue(Files.isDirectory(tmp.resolve("lake/raw/robot_01")));
        assertTrue(Files.size(tmp.resolve("work/trainset-diff.png")) > 1000);
        assertTrue(Files.size(tmp.resolve("work/embedding-map.png")) > 1000);
        assertTrue(Files.exists(tmp.resolve("work/lerobot-train-v2/meta/info.json")));
        try (Lake l = Lake.open(tmp.resolve("lake").toString())) {
            Trainset v1 = Trainsets.open(l, "train-v1");
            Trainset v2 = Trainsets.open(l, "train-v2");
            assertEquals(0, v1.minedCount());
            assertTrue(v2.minedCount() > 0, "train-v2 holds mined neighbours of the simulated field failures");
            // the same seed and pool: the uniform part of both sets is the same
            assertEquals(v1.baseCount(), v2.baseCount());
        }
        CliRun again = CliRun.of(args);
        assertEquals(0, again.exitCode(), again.err());
        assertTrue(again.out().contains("training set 'train-v1' is already in"), again.out());
        assertTrue(again.out().contains("the simulated fleet is already in"), again.out());
        for (String stage : new String[] {"sim", "trainset build", "mine", "total"}) {
            assertTrue(again.out().contains("  " + stage + " "), "the second summary lists " + stage + ":\n" + again.out());
        }
    }
}
