package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.quality.RuleSet;
import io.flywheel.rows.RecordingRows;
import io.flywheel.rows.RowSink;

/**
 * What {@link IngestJob#run} reports: a folder's files named as recordings that cannot be read are failures (not
 * skipped silently), each failure has a stable kind, and a recording's progress line comes after its commit and says
 * how the commit went. On two BridgeData recordings (10 frames each, every episode passes the default rules) with an
 * in-memory sink.
 */
class IngestJobReportTest {

    /** A sink that commits in memory, numbering commits from 7, or (when {@code lose}) loses every race. */
    private static final class MemorySink implements RowSink {
        final List<String> events;
        final boolean lose;
        long next = 7;
        final Set<String> committed = new HashSet<>();

        MemorySink(List<String> events, boolean lose) {
            this.events = events;
            this.lose = lose;
        }

        @Override
        public Set<String> committedRawFiles() {
            return Set.copyOf(committed);
        }

        @Override
        public OptionalLong commit(RecordingRows rows) {
            events.add("commit " + rows.recordingId());
            if (lose) { // a concurrent writer committed the same raw files first
                return OptionalLong.empty();
            }
            rows.rawFiles().forEach(f -> committed.add(f.sha256()));
            return OptionalLong.of(next++);
        }
    }

    private static IngestJob.Result run(RowSink sink, List<Path> inputs, List<String> events) throws IOException {
        return IngestJob.run(sink, inputs, IngestOptions.builder().build(), IngestJob.AlignConfig.defaults(),
                RuleSet.defaults(), line -> events.add("progress " + line));
    }

    @Test
    void aFolderReportsItsEmptyAndGarbageRecordingFilesAsFailedAndSkipsOtherFiles(@TempDir Path tmp)
            throws IOException {
        Path in = Files.createDirectories(tmp.resolve("in"));
        Files.copy(BridgeData.dir().resolve("bridge_ep00.mcap"), in.resolve("bridge_ep00.mcap"));
        Files.createFile(in.resolve("empty.mcap"));
        Files.writeString(in.resolve("garbage.mcap"), "hello\n", StandardCharsets.US_ASCII);
        Files.writeString(in.resolve("README.md"), "# notes\n");
        Files.writeString(in.resolve("old.bag"), "#ROSBAG V1.2\n");
        List<String> events = new ArrayList<>();
        IngestJob.Result r = run(new MemorySink(events, false), List.of(in), events);

        assertEquals(1, r.recordings().size(), "the one real recording is read");
        assertEquals(10, r.frames());
        List<String> failedFiles = r.failed().stream().map(f -> Path.of(f.input()).getFileName().toString()).toList();
        assertEquals(List.of("empty.mcap", "garbage.mcap", "old.bag"), failedFiles, "README.md is no recording");
        IngestJob.Failure empty = r.failed().get(0);
        assertTrue(empty.message().startsWith(in.resolve("empty.mcap") + " at byte 0: not a recording: expected the"
                + " MCAP magic 89 4D 43 41 50 30 0D 0A"), empty.message());
        assertTrue(empty.message().endsWith("found an empty file"), empty.message());
        assertTrue(r.failed().get(1).message().endsWith("found 68 65 6C 6C 6F 0A"), "'hello\\n' in hex: "
                + r.failed().get(1).message());
        for (IngestJob.Failure f : r.failed()) {
            assertEquals("bad_input", f.kind(), f.toString());
            assertFalse(f.damagedMcap(), "no MCAP to recover: " + f);
        }
    }

    @Test
    void aTruncatedMcapIsBadInputAndDamagedMcap(@TempDir Path tmp) throws IOException {
        byte[] bytes = Files.readAllBytes(BridgeData.dir().resolve("bridge_ep00.mcap"));
        Path bad = Files.write(tmp.resolve("bad.mcap"), java.util.Arrays.copyOf(bytes, bytes.length / 2));
        List<String> events = new ArrayList<>();
        IngestJob.Result r = run(new MemorySink(events, false), List.of(bad), events);
        assertEquals(1, r.failed().size());
        assertEquals("bad_input", r.failed().get(0).kind());
        assertTrue(r.failed().get(0).damagedMcap(), r.failed().toString());
        List<String> missing = new ArrayList<>();
        IngestJob.Result m = run(new MemorySink(missing, false), List.of(tmp.resolve("gone.mcap")), missing);
        assertEquals("not_found", m.failed().get(0).kind(), m.failed().toString());
    }

    @Test
    void theProgressLineOfARecordingFollowsItsCommitAndNamesIt() throws IOException {
        List<String> events = new ArrayList<>();
        Path ep0 = BridgeData.dir().resolve("bridge_ep00.mcap");
        Path ep1 = BridgeData.dir().resolve("bridge_ep01.mcap");
        IngestJob.Result r = run(new MemorySink(events, false), List.of(ep0, ep1), events);
        assertEquals(List.of(7L, 8L), r.commits());
        assertEquals(4, events.size(), events.toString());
        assertTrue(events.get(0).startsWith("commit rec-"), events.toString());
        assertEquals("progress [1/2] " + ep0 + ": 1 episode(s), 10 frame(s) {pass=1} (lake commit 7)", events.get(1));
        assertTrue(events.get(2).startsWith("commit rec-"), events.toString());
        assertEquals("progress [2/2] " + ep1 + ": 1 episode(s), 10 frame(s) {pass=1} (lake commit 8)", events.get(3));
    }

    @Test
    void aRecordingAConcurrentWriterCommittedFirstIsReportedAsSkipped() throws IOException {
        List<String> events = new ArrayList<>();
        Path ep0 = BridgeData.dir().resolve("bridge_ep00.mcap");
        IngestJob.Result r = run(new MemorySink(events, true), List.of(ep0), events);
        assertEquals(1, r.skipped());
        assertEquals(0, r.frames());
        assertTrue(r.commits().isEmpty());
        assertEquals(2, events.size(), events.toString());
        assertEquals("progress [1/1] skip " + ep0 + ": already in the lake (a concurrent writer committed the same"
                + " content first)", events.get(1));
    }
}
