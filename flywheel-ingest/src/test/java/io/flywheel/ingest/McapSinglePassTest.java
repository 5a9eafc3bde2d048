package io.flywheel.ingest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.align.TimestampRule;
import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.testkit.SharedData;

/**
 * The single-pass MCAP read (memory-mapped, SHA-256 computed from the same bytes) against the reference read
 * ({@link McapStreamReader} + a separate {@link Sources#sha256} pass): same streams, values, locators and
 * metadata on every real MCAP file of the shared data, the same SHA-256 and size, and the reference reader's
 * error, word for word, on damaged files.
 */
class McapSinglePassTest {

    private static List<Path> realFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(SharedData.data("mcap-real"))) {
            s.filter(p -> p.toString().endsWith(".mcap")).sorted().forEach(files::add);
        }
        files.add(BridgeData.dir().resolve("bridge_ep00.mcap"));
        files.add(BridgeData.dir().resolve("bridge_ep24.mcap"));
        return files;
    }

    @Test
    void sameRecordingAndHashAsTheReferenceReadOnEveryRealFile() throws Exception {
        List<Path> files = realFiles();
        assertTrue(files.size() >= 13, "files: " + files);
        int compared = 0;
        for (Path f : files) {
            Collector fast = new Collector(IngestOptions.defaults().profile());
            SourceFile sf = McapSource.read(f, fast);
            assertEquals(Sources.sha256(f), sf.sha256(), f.toString());
            assertEquals(Files.size(f), sf.bytes(), f.toString());
            assertEquals(f.toAbsolutePath().normalize().toUri().toString(), sf.uri());
            Collector ref = new Collector(IngestOptions.defaults().profile());
            McapSource.readReference(f, ref);
            assertSameEpisode(f, fast, ref);
            compared++;
        }
        assertEquals(files.size(), compared);
    }

    private static void assertSameEpisode(Path f, Collector fast, Collector ref) {
        assertEquals(ref.recordingMetadata, fast.recordingMetadata, f.toString());
        assertEquals(ref.episodeMetadata, fast.episodeMetadata, f.toString());
        RobotProfile rp = ref.resolvedProfile();
        assertEquals(rp.describe(), fast.resolvedProfile().describe(), f.toString());
        Episode a = fast.episode("rec-x", 0, fast.resolvedProfile(), "", TimestampRule.defaults());
        Episode b = ref.episode("rec-x", 0, rp, "", TimestampRule.defaults());
        assertEquals(b.streams().size(), a.streams().size(), f.toString());
        assertEquals(b.masterTopic(), a.masterTopic());
        assertEquals(b.task(), a.task());
        for (int i = 0; i < b.streams().size(); i++) {
            StreamData x = a.streams().get(i);
            StreamData y = b.streams().get(i);
            String where = f.getFileName() + " " + y.topic();
            assertEquals(y.topic(), x.topic(), where);
            assertEquals(y.role(), x.role(), where);
            assertEquals(y.messageType(), x.messageType(), where);
            assertArrayEquals(y.logTimeNs(), x.logTimeNs(), where);
            assertArrayEquals(y.headerStampNs(), x.headerStampNs(), where);
            assertArrayEquals(y.timeNs(), x.timeNs(), where);
            assertEquals(y.values() == null, x.values() == null, where);
            if (y.values() != null) assertTrue(Arrays.deepEquals(y.values(), x.values()), where);
            assertEquals(y.names(), x.names(), where);
            assertEquals(y.locators() == null ? null : Arrays.asList(y.locators()),
                    x.locators() == null ? null : Arrays.asList(x.locators()), where);
            assertEquals(y.texts(), x.texts(), where);
            assertEquals(y.timestamps().findings(), x.timestamps().findings(), where);
        }
    }

    /** Offsets of the first Chunk and of the DataEnd record of a file (from the reference reader). */
    private static long[] chunkAndDataEnd(Path f) throws IOException {
        long chunk = -1;
        long dataEnd = -1;
        McapStreamReader.Options o = McapStreamReader.Options.builder().emitChunks(true).build();
        try (McapStreamReader r = McapStreamReader.open(f, o)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Chunk && chunk < 0) chunk = r.recordOffset();
                if (rec instanceof Record.DataEnd) dataEnd = r.recordOffset();
            }
        }
        return new long[] {chunk, dataEnd};
    }

    /** Asserts that the single-pass read fails exactly as the reference read does. */
    private static void assertSameError(Path bad) {
        McapFormatException ref = assertThrows(McapFormatException.class,
                () -> McapSource.readReference(bad, new Collector(IngestOptions.defaults().profile())));
        McapFormatException fast = assertThrows(McapFormatException.class,
                () -> McapSource.read(bad, new Collector(IngestOptions.defaults().profile())));
        assertEquals(ref.getMessage(), fast.getMessage());
        assertEquals(ref.offset(), fast.offset());
        assertTrue(fast.getMessage().contains(bad.getFileName().toString()), fast.getMessage());
    }

    @Test
    void damagedFilesFailWithTheReferenceReadersError(@TempDir Path tmp) throws Exception {
        Path src = BridgeData.dir().resolve("bridge_ep00.mcap");
        byte[] b = Files.readAllBytes(src);
        long[] at = chunkAndDataEnd(src);
        assertTrue(at[0] > 0 && at[1] > at[0], Arrays.toString(at));

        // cut inside the data section
        Path cut = tmp.resolve("cut.mcap");
        Files.write(cut, Arrays.copyOf(b, 5000));
        assertSameError(cut);

        // one byte of the first chunk's compressed records changed: zstd error or chunk CRC, at the chunk
        Path flipped = tmp.resolve("flipped.mcap");
        byte[] c = b.clone();
        ByteBuffer chunk = ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN);
        int body = (int) at[0] + 9;
        int compLen = chunk.getInt(body + 28);
        int records = body + 32 + compLen + 8;
        c[records + 200] ^= 0x55;
        Files.write(flipped, c);
        assertSameError(flipped);
        McapFormatException e = assertThrows(McapFormatException.class, () -> Ingest.read(flipped));
        assertEquals(at[0], e.offset(), e.getMessage());

        // DataEnd's data_section_crc off by one
        Path crc = tmp.resolve("crc.mcap");
        byte[] d = b.clone();
        ByteBuffer de = ByteBuffer.wrap(d).order(ByteOrder.LITTLE_ENDIAN);
        int crcAt = (int) at[1] + 9;
        de.putInt(crcAt, de.getInt(crcAt) + 1);
        Files.write(crc, d);
        assertSameError(crc);
        McapFormatException ce = assertThrows(McapFormatException.class, () -> Ingest.read(crc));
        assertTrue(ce.getMessage().contains("data_section_crc"), ce.getMessage());

        // bad closing magic
        Path end = tmp.resolve("end.mcap");
        byte[] m = b.clone();
        m[m.length - 1] = 'X';
        Files.write(end, m);
        assertSameError(end);
    }

    @Test
    void bytesAfterTheClosingMagicAreHashedButNotRead(@TempDir Path tmp) throws Exception {
        Path src = SharedData.data("mcap-real/labelbox-franka/trajectory_20250527_003358_00m02s.mcap");
        byte[] b = Files.readAllBytes(src);
        Path tail = tmp.resolve("tail.mcap");
        byte[] t = Arrays.copyOf(b, b.length + 3);
        t[b.length] = 1;
        t[b.length + 1] = 2;
        t[b.length + 2] = 3;
        Files.write(tail, t);
        Collector fast = new Collector(IngestOptions.defaults().profile());
        SourceFile sf = McapSource.read(tail, fast);
        assertEquals(Sources.sha256(tail), sf.sha256());
        assertEquals(b.length + 3L, sf.bytes());
        assertNotNull(sf.sha256());
        Collector ref = new Collector(IngestOptions.defaults().profile());
        McapSource.readReference(tail, ref);
        assertSameEpisode(tail, fast, ref);
        // the recording id is the hash of the file hashes, as before the single pass
        Recording r = Ingest.read(tail);
        assertEquals(Sources.recordingId(List.of(Sources.sourceFile(tail))), r.recordingId());
    }
}
