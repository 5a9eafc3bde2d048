package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.RecordingRows;

/** {@link Lake#commitRecordings}: many recordings in one commit, the ones in the lake already skipped by content hash. */
class CommitRecordingsTest {
    @TempDir
    Path tmp;

    private static RecordingRows recording(int i, int frames) {
        return new RecordingRows("rec-" + i, List.of(Fixtures.rawFile(i)), List.of(Fixtures.episode(i, frames)),
                Fixtures.frames(i, frames));
    }

    private static long ingestCommits(Lake lake) {
        return lake.log(50).stream().filter(s -> s.operation().equals("ingest")).count();
    }

    @Test
    void manyRecordingsInOneCommitAndTheKnownOnesSkipped() {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            Lake.RecordingsCommit first = lake.commitRecordings(List.of(recording(1, 3), recording(2, 5)));
            assertTrue(first.seq().isPresent());
            assertEquals(List.of("rec-1", "rec-2"), first.committed());
            assertEquals(List.of(), first.skipped());
            assertEquals(1, ingestCommits(lake));
            try (LakeTable f = lake.table(TableSchemas.FRAMES); LakeTable e = lake.table(TableSchemas.EPISODES)) {
                assertEquals(8, f.countRows());
                assertEquals(2, e.countRows());
                assertEquals(Fixtures.frames(2, 5), f.frames(ScanRequest.builder()
                        .filter("episode_id = '" + Fixtures.episodeId(2) + "'").build()).stream()
                        .sorted(java.util.Comparator.comparingInt(io.flywheel.rows.FrameRow::frameIndex)).toList());
            }

            // the same again: nothing is written
            Lake.RecordingsCommit again = lake.commitRecordings(List.of(recording(2, 5), recording(1, 3)));
            assertFalse(again.seq().isPresent());
            assertEquals(List.of("rec-2", "rec-1"), again.skipped());
            assertEquals(1, ingestCommits(lake));

            // one known, one new: the new one alone, in one more commit
            Lake.RecordingsCommit mixed = lake.commitRecordings(List.of(recording(1, 3), recording(3, 4)));
            assertEquals(List.of("rec-3"), mixed.committed());
            assertEquals(List.of("rec-1"), mixed.skipped());
            assertEquals(mixed.seq().getAsLong(), lake.log(1).get(0).seq());
            assertEquals(2, ingestCommits(lake));
            try (LakeTable f = lake.table(TableSchemas.FRAMES); LakeTable r = lake.table(TableSchemas.RAW_FILES)) {
                assertEquals(12, f.countRows());
                assertEquals(3, r.countRows());
            }
        }
    }
}
