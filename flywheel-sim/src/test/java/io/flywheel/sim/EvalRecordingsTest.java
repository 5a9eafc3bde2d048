package io.flywheel.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.mcap.McapIndexedReader;
import io.flywheel.mcap.Record;
import io.flywheel.sim.eval.EvalRollouts;

/** {@code sim --eval --mcap}: one small MCAP per rollout, its outcome in a {@code flywheel.eval} Metadata record. */
class EvalRecordingsTest {
    @TempDir
    Path tmp;

    @Test
    void everyRolloutIsARecordingWithItsOutcome() throws Exception {
        EvalRollouts.Result r = EvalRollouts.generate(new EvalRollouts.Options("p1", "run1", 5, 2, List.of(),
                Map.of("robot", "arm-1", "object", "glass_cup")));
        assertEquals(12, r.rollouts().size()); // 2 tasks x 3 lightings x 2 rollouts
        assertEquals(6, r.trueRates().size());
        List<Path> files = EvalRecordings.write(r, tmp, JpegEncoder.Kind.IMAGEIO);
        assertEquals(12, files.size());
        for (int i = 0; i < files.size(); i++) {
            EvalRollouts.Rollout x = r.rollouts().get(i);
            Path f = files.get(i);
            assertEquals(tmp.resolve("arm-1").resolve(x.episodeId() + ".mcap"), f);
            assertTrue(Files.size(f) < 200_000, f + ": " + Files.size(f) + " bytes");
            List<Record.Metadata> eval = new ArrayList<>();
            try (McapIndexedReader in = McapIndexedReader.open(f)) {
                for (Record.MetadataIndex mi : in.metadataIndexes()) {
                    Record.Metadata m = in.readMetadata(mi);
                    if (m.name().equals(EvalRollouts.METADATA_NAME)) {
                        eval.add(m);
                    }
                }
            }
            assertEquals(1, eval.size());
            Map<String, String> m = eval.get(0).metadata();
            assertEquals("run1", m.get("run_id"));
            assertEquals("glass_cup", m.get("object"));
            assertEquals(Boolean.toString(x.success()), m.get("success"));
            assertEquals(Double.toString(x.durationS()), m.get("duration_s"));
            assertEquals(x.failureMode(), m.get("failure_mode"));
        }
    }
}
