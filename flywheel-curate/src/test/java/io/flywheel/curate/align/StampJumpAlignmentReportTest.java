package io.flywheel.curate.align;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.align.StreamTimeline;
import io.flywheel.curate.SourceFiles;
import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.ingest.StampJumpRecording;
import io.flywheel.quality.RuleSet;
import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * The alignment report of a recording whose camera's header stamps jump back 2 s: an MCAP of 4 s with
 * {@code /joint_states} at 100 Hz (message k logged and stamped at T0 + 10k ms) and {@code /cam} at 20 Hz (frame i
 * captured at T0 + 50i ms, logged 3 ms later, stamped with its capture time until frame 40 and 2 s earlier from
 * there). Ingested on the default timeline (log times for /cam), every frame is paired as-of with the state 3 ms
 * before it: the report's residuals are those 3 ms, and it names the discontinuity (episode, /cam, message 40, 2.003 s
 * after the episode start, stamps back 2 s, timeline log times). Forced onto the stamps, the stored pairings (frames
 * 40..79 with the states of 2 s before their capture) all have residual 0: the report shows what was stored.
 */
class StampJumpAlignmentReportTest {
    static final long T0 = StampJumpRecording.T0;
    static final long MS = StampJumpRecording.MS;

    @TempDir
    static Path dir;
    static Path file;

    @BeforeAll
    static void write() throws IOException {
        file = StampJumpRecording.write(dir.resolve("stamp-jump.mcap"));
    }

    static RecordingRows ingest(RobotProfile profile) throws IOException {
        List<RecordingRows> committed = new ArrayList<>();
        RowSink sink = new RowSink() {
            @Override
            public Set<String> committedRawFiles() {
                return Set.of();
            }

            @Override
            public OptionalLong commit(RecordingRows rows) {
                committed.add(rows);
                return OptionalLong.of(committed.size());
            }
        };
        IngestJob.Result r = IngestJob.run(sink, List.of(file), IngestOptions.builder().profile(profile).build(),
                IngestJob.AlignConfig.defaults(), RuleSet.defaults(), line -> { });
        assertEquals(List.of(), r.failed());
        return committed.get(0);
    }

    static AlignmentReport report(RecordingRows rows) {
        Map<String, EpisodeRow> episodes = new LinkedHashMap<>();
        rows.episodes().forEach(e -> episodes.put(e.episodeId(), e));
        return AlignmentReport.of(null, rows.frames(), episodes, null);
    }

    @Test
    void theReportShowsTheStoredPairingAndNamesTheDiscontinuity() throws IOException {
        RecordingRows rows = ingest(RobotProfile.builder().build());
        AlignmentReport a = report(rows);
        assertEquals(80, a.frames().size());
        StreamReport joints = a.streams().get(0);
        assertEquals(new StreamReport("/joint_states", 80, 80, 0, 3.0, 3.0, 3.0, 3.0, null, null), joints);
        assertEquals(1, a.discontinuities().size());
        AlignmentReport.Discontinuity d = a.discontinuities().get(0);
        String episode = a.frames().get(0).episodeId();
        // the episode starts at T0 (the first joint state)
        assertEquals(new AlignmentReport.Discontinuity(episode, "/cam", 40, T0 + 2_003 * MS, 2.003, -2000.0, -1950.0,
                "backward", "log_time"), d);
        assertEquals(List.of(), a.masterGaps());
        // the raw times read again for the timeline plot: the camera's log times, as paired
        EpisodeRow e = rows.episodes().get(0);
        assertEquals(Map.of(), EpisodeStreams.timelines(e.metadataJson()));
        long[] cam = EpisodeStreams.read(e.episodeId(), SourceFiles.uris(e.metadataJson()),
                EpisodeStreams.timelines(e.metadataJson()), SourceFiles::localPath).timesNs("/cam");
        for (int i = 0; i < 80; i++) {
            assertEquals(T0 + i * 50 * MS + 3 * MS, cam[i], "message " + i);
        }
    }

    @Test
    void forcedOntoTheStampsTheReportShowsThoseOtherPairings() throws IOException {
        RecordingRows rows = ingest(RobotProfile.builder().timeline("/cam", StreamTimeline.STAMPS).build());
        AlignmentReport a = report(rows);
        StreamReport joints = a.streams().get(0);
        // sorted by stamp, frames sit at T0 + 50i ms (twice each for i < 40): the as-of state is the one at the same
        // time, residual 0, for every frame
        assertEquals(new StreamReport("/joint_states", 80, 80, 0, 0.0, 0.0, 0.0, 0.0, null, null), joints);
        assertEquals("stamps", a.discontinuities().get(0).timeline());
        // the episode records the timeline set, and reading the raw files again follows it: sorted stamps
        EpisodeRow e = rows.episodes().get(0);
        assertEquals(Map.of("/cam", StreamTimeline.STAMPS), EpisodeStreams.timelines(e.metadataJson()));
        long[] cam = EpisodeStreams.read(e.episodeId(), SourceFiles.uris(e.metadataJson()),
                EpisodeStreams.timelines(e.metadataJson()), SourceFiles::localPath).timesNs("/cam");
        for (int i = 0; i < 80; i++) {
            assertEquals(T0 + (i / 2) * 50 * MS, cam[i], "message " + i + " in stamp order");
        }
    }
}
