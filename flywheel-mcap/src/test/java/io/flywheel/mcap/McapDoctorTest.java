package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.testkit.SharedData;

/**
 * {@link McapDoctor} and {@link McapSummary} on files of known make: CRCs all zero, no summary section, messages with
 * log time 0, and the real Franka recordings whose /tf starts with a log time of 0.
 */
class McapDoctorTest {
    @TempDir
    Path dir;

    private static final long T0 = 1_700_000_000_000_000_000L;

    /** 10 messages on /a at 10 Hz from T0 (or log time 0 for the indexes in {@code zeroAt}); 1 attachment. */
    private static Path write(Path file, McapWriter.Builder b, int... zeroAt) throws IOException {
        try (McapWriter w = b.build(file)) {
            int s = w.registerSchema("std_msgs/msg/String", "ros2msg", "string data".getBytes(StandardCharsets.UTF_8));
            int c = w.registerChannel("/a", "cdr", s, Map.of());
            for (int i = 0; i < 10; i++) {
                long t = T0 + i * 100_000_000L;
                for (int z : zeroAt) {
                    if (z == i) {
                        t = 0;
                    }
                }
                w.writeMessage(c, i, t, t, new byte[] {0, 1, 0, 0, 1, 0, 0, 0, 'x', 0});
            }
            w.writeAttachment("calib.yaml", "text/yaml", T0, T0, "k: 1".getBytes(StandardCharsets.UTF_8));
        }
        return file;
    }

    private static boolean warns(McapDoctor.Report r, String text) {
        return r.findings().stream().anyMatch(f -> f.severity() == McapDoctor.Severity.WARNING
                && f.message().contains(text));
    }

    @Test
    void allZeroCrcsWarnThatIntegrityCannotBeChecked() throws IOException {
        McapDoctor.Report off = McapDoctor.check(write(dir.resolve("nocrc.mcap"), McapWriter.builder().crcs(false)));
        // one chunk, one attachment, the data section and the summary: four CRC fields, all 0
        assertEquals(4, off.crcs());
        assertEquals(4, off.zeroCrcs());
        assertTrue(off.ok(), "a warning, not an error: the file is readable");
        assertTrue(warns(off, "integrity cannot be checked"), off.findings().toString());

        McapDoctor.Report on = McapDoctor.check(write(dir.resolve("crc.mcap"), McapWriter.builder()));
        assertEquals(4, on.crcs());
        assertEquals(0, on.zeroCrcs());
        assertEquals(List.of(), on.findings());
    }

    @Test
    void aDamagedAttachmentIsOneCrcErrorAndItsIndexAndCountStillMatch() throws IOException {
        Path f = write(dir.resolve("attach.mcap"), McapWriter.builder());
        byte[] b = java.nio.file.Files.readAllBytes(f);
        int at = new String(b, StandardCharsets.ISO_8859_1).indexOf("k: 1");
        b[at + 3] = '2'; // "k: 2": the stored CRC no longer matches
        java.nio.file.Files.write(f, b);
        McapDoctor.Report r = McapDoctor.check(f);
        List<McapDoctor.Finding> errors = r.findings().stream()
                .filter(x -> x.severity() == McapDoctor.Severity.ERROR).toList();
        // the attachment's own CRC, and the data section's, which covers the attachment's bytes too
        assertEquals(2, errors.size(), r.findings().toString());
        assertTrue(errors.get(0).message().startsWith("Attachment \"calib.yaml\" declares crc"), errors.toString());
        assertTrue(errors.get(1).message().startsWith("DataEnd declares data_section_crc"), errors.toString());
        assertFalse(r.findings().stream().anyMatch(x -> x.message().contains("attachment index")
                || x.message().contains("attachment_count")), r.findings().toString());
    }

    @Test
    void aFileWithoutSummarySectionHasNoSummary() throws IOException {
        McapWriter.Builder bare = McapWriter.builder().chunkIndexes(false).statistics(false).summaryOffsets(false)
                .repeatSchemas(false).repeatChannels(false).attachmentIndexes(false).metadataIndexes(false);
        McapDoctor.Report none = McapDoctor.check(write(dir.resolve("bare.mcap"), bare));
        assertFalse(none.hasSummary());
        assertEquals(10, none.messages());
        assertEquals(3, none.crcs(), "chunk, attachment, data section: no summary CRC without a summary");
        assertTrue(McapDoctor.check(write(dir.resolve("full.mcap"), McapWriter.builder())).hasSummary());
        // statistics alone are a summary section too
        assertTrue(McapDoctor.check(write(dir.resolve("stats.mcap"), McapWriter.builder().chunkIndexes(false)
                .summaryOffsets(false).repeatSchemas(false).repeatChannels(false).attachmentIndexes(false)
                .metadataIndexes(false))).hasSummary());
    }

    @Test
    void logTimeZeroOnAWallClockWarnsAndInfoGivesTheSpanOfTheOthers() throws IOException {
        Path f = write(dir.resolve("zero.mcap"), McapWriter.builder(), 0, 5);
        McapDoctor.Report r = McapDoctor.check(f);
        assertEquals(2, r.zeroLogTimeMessages());
        assertTrue(warns(r, "2 message(s) have log time 0"), r.findings().toString());

        McapSummary s = McapSummary.of(f);
        assertEquals(2, s.zeroLogTimeMessages());
        assertEquals(T0 + 100_000_000L, s.startTime(), "the first set log time, not 1970");
        assertEquals(T0 + 900_000_000L, s.endTime());
        assertEquals(800_000_000L, s.durationNanos());
        // the 8 timed messages span 0.8 s in steps of 0.1 s or 0.2 s: 7 intervals over 0.8 s
        assertEquals(7 / 0.8, s.channels().get(0).frequencyHz(), 1e-9);

        Path all = write(dir.resolve("allzero.mcap"), McapWriter.builder(), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        McapDoctor.Report ra = McapDoctor.check(all);
        assertTrue(warns(ra, "every message has log time 0"), ra.findings().toString());
        McapSummary sa = McapSummary.of(all);
        assertEquals(10, sa.zeroLogTimeMessages());
        assertEquals(0, sa.durationNanos());
    }

    @Test
    void aRelativeClockStartingAtZeroIsNotWarnedAbout() throws IOException {
        Path f = dir.resolve("relative.mcap");
        try (McapWriter w = McapWriter.builder().build(f)) {
            int c = w.registerChannel("/a", "json", 0, Map.of());
            for (int i = 0; i < 5; i++) {
                w.writeMessage(c, i, i * 1_000_000L, 0, "{}".getBytes(StandardCharsets.UTF_8));
            }
        }
        McapDoctor.Report r = McapDoctor.check(f);
        assertEquals(1, r.zeroLogTimeMessages());
        assertFalse(warns(r, "log time 0"), r.findings().toString());
        McapSummary s = McapSummary.of(f);
        assertEquals(0, s.startTime(), "on a relative clock 0 is the start");
        assertEquals(4_000_000L, s.durationNanos());
        assertEquals(1000.0, s.channels().get(0).frequencyHz(), 1e-9);
    }

    @Test
    void realFrankaRecordingsWithALogTimeOfZeroOnTf() throws IOException {
        for (String name : new String[] {"trajectory_20250527_003358_00m02s.mcap", "trajectory_20250527_003442_00m02s.mcap"}) {
            Path f = SharedData.data("mcap-real/labelbox-franka/" + name);
            McapDoctor.Report r = McapDoctor.check(f);
            assertTrue(r.zeroLogTimeMessages() >= 1, name);
            assertTrue(warns(r, "have log time 0"), name + ": " + r.findings());
            McapSummary s = McapSummary.of(f);
            assertEquals(r.zeroLogTimeMessages(), s.zeroLogTimeMessages(), name);
            assertTrue(s.startTime() > McapSummary.WALL_CLOCK_NS, name + " starts at " + s.startTime());
            // the recordings are about 2 s long (their names say 00m02s)
            assertTrue(s.durationNanos() > 1_000_000_000L && s.durationNanos() < 4_000_000_000L,
                    name + ": " + s.durationNanos());
        }
    }
}
