package io.flywheel.ros.bag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bag reader on the turtlesim recording from cruise-automation/rosbag.js (shared/data/ros1-bag):
 * the same 8647 messages stored uncompressed, with lz4 chunks and with bz2 chunks.
 */
class BagReaderTest {
    /** Per-topic counts, as listed by the bag's chunk info records (and shared/data/ros1-bag/README.txt). */
    static final Map<String, Long> COUNTS = Map.of(
            "/tf", 2688L, "/turtle1/color_sensor", 1351L, "/turtle2/color_sensor", 1344L,
            "/turtle1/pose", 1344L, "/turtle2/pose", 1344L, "/turtle1/cmd_vel", 357L,
            "/turtle2/cmd_vel", 208L, "/rosout", 10L, "/tf_static", 1L);
    static final int TOTAL = 8647;

    static Path bag(String name) {
        return SharedData.data("ros1-bag/" + name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"example.bag", "example-lz4.bag", "example-bz2.bag"})
    void indexGivesConnectionsAndCounts(String name) throws IOException {
        try (BagReader r = BagReader.open(bag(name))) {
            assertTrue(r.hasIndex(), r.indexProblem());
            assertEquals(1, r.declaredChunkCount());
            assertEquals(1, r.chunkInfos().size());
            // the uncompressed file keeps one connection per (topic, caller); the recompressed ones merged them
            int conns = name.equals("example.bag") ? 12 : 9;
            assertEquals(conns, r.declaredConnectionCount());
            assertEquals(conns, r.connections().size());
            assertEquals(new TreeMap<>(COUNTS), r.messageCountsByTopic());
            ChunkInfo ci = r.chunkInfos().get(0);
            assertEquals(4117, ci.chunkPosition()); // 13-byte magic + 4104-byte padded bag header record
            assertEquals(1_396_293_887_844_783_943L, ci.startTime());
            assertEquals(1_396_293_909_544_870_199L, ci.endTime());
            Connection pose = r.connections().values().stream()
                    .filter(c -> c.topic().equals("/turtle1/pose")).findFirst().orElseThrow();
            assertEquals("turtlesim/Pose", pose.type());
            assertEquals(32, pose.md5sum().length());
            assertTrue(pose.messageDefinition().contains("float32 theta"), pose.messageDefinition());
            if (name.equals("example.bag")) {
                assertEquals("/sim", pose.callerId());
                assertFalse(pose.latching());
                Connection rosout = r.connections().get(0);
                assertEquals("/rosout", rosout.topic());
                assertTrue(rosout.latching());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"example.bag", "example-lz4.bag", "example-bz2.bag"})
    void indexedAndFrontToBackReadsAgree(String name) throws IOException {
        try (BagReader r = BagReader.open(bag(name))) {
            List<BagMessage> byTime = r.readAll(BagReader.Order.LOG_TIME);
            List<BagMessage> byFile = r.readAll(BagReader.Order.FILE);
            assertEquals(TOTAL, byTime.size());
            assertEquals(TOTAL, byFile.size());
            // second method for the counts: the front-to-back scan, which never looks at the index
            Map<String, Long> scanned = new TreeMap<>();
            for (BagMessage m : byFile) {
                scanned.merge(m.topic(), 1L, Long::sum);
            }
            assertEquals(new TreeMap<>(COUNTS), scanned);
            for (int i = 1; i < byTime.size(); i++) {
                assertTrue(byTime.get(i - 1).logTime() <= byTime.get(i).logTime(), "log-time order at " + i);
            }
            // no two messages share a time in this bag, so sorting the file order gives the same list
            List<BagMessage> sorted = new ArrayList<>(byFile);
            sorted.sort(java.util.Comparator.comparingLong(BagMessage::logTime));
            for (int i = 0; i < TOTAL; i++) {
                assertEquals(sorted.get(i).logTime(), byTime.get(i).logTime());
                assertEquals(sorted.get(i).topic(), byTime.get(i).topic());
                assertEquals(sorted.get(i).data(), byTime.get(i).data());
            }
            BagMessage first = byTime.get(0);
            assertEquals("/rosout", first.topic());
            assertEquals(1_396_293_887L, first.sec());
            assertEquals(844_783_943L, first.nsec());
        }
    }

    @Test
    void topicAndTimeFilters() throws IOException {
        try (BagReader r = BagReader.open(bag("example-lz4.bag"))) {
            List<BagMessage> got = new ArrayList<>();
            r.read(BagReader.ReadOptions.builder().topics(Set.of("/turtle1/cmd_vel", "/tf_static")).build(), got::add);
            assertEquals(358, got.size());
            long from = 1_396_293_900_000_000_000L;
            long to = 1_396_293_901_000_000_000L;
            List<BagMessage> window = new ArrayList<>();
            r.read(BagReader.ReadOptions.builder().startTime(from).endTime(to).build(), window::add);
            long expected = r.readAll(BagReader.Order.FILE).stream()
                    .filter(m -> m.logTime() >= from && m.logTime() <= to).count();
            assertTrue(expected > 100, "window holds " + expected);
            assertEquals(expected, window.size());
            List<BagMessage> fileWindow = new ArrayList<>();
            r.read(BagReader.ReadOptions.builder().order(BagReader.Order.FILE).topics(Set.of("/turtle2/pose"))
                    .startTime(from).endTime(to).build(), fileWindow::add);
            assertEquals(window.stream().filter(m -> m.topic().equals("/turtle2/pose")).count(), fileWindow.size());
        }
    }

    /**
     * Ground truth for truncation: the end offsets of the message data records of the uncompressed
     * bag, found by walking the chunk's records here (independently of the reader).
     */
    private static List<Long> messageRecordEnds(byte[] file) {
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int chunkPos = 4117;
        int hl = b.getInt(chunkPos);
        int dataStart = chunkPos + 4 + hl + 4;
        int dataLen = b.getInt(chunkPos + 4 + hl);
        List<Long> ends = new ArrayList<>();
        int p = dataStart;
        while (p < dataStart + dataLen) {
            int h = b.getInt(p);
            String header = new String(file, p + 4, h, StandardCharsets.ISO_8859_1);
            int d = b.getInt(p + 4 + h);
            int end = p + 8 + h + d;
            if (header.contains("op=\u0002")) {
                ends.add((long) end);
            }
            p = end;
        }
        return ends;
    }

    @Test
    void truncatedUncompressedBagGivesEveryCompleteMessageThenTheOffset() throws IOException {
        byte[] full = Files.readAllBytes(bag("example.bag"));
        List<Long> ends = messageRecordEnds(full);
        assertEquals(TOTAL, ends.size());
        List<BagMessage> all;
        try (BagReader r = BagReader.open(bag("example.bag"))) {
            all = r.readAll(BagReader.Order.FILE);
        }
        Random rnd = new Random(42);
        List<Integer> cuts = new ArrayList<>(List.of(4117, 4118, 4121, 4200, 5000, (int) (long) ends.get(0),
                (int) (long) ends.get(0) - 1, (int) (long) ends.get(TOTAL - 1), full.length - 1, 856695, 856700));
        for (int i = 0; i < 60; i++) {
            cuts.add(4117 + rnd.nextInt(full.length - 4117));
        }
        for (int cut : cuts) {
            List<BagMessage> got = new ArrayList<>();
            BagFormatException e;
            try (BagReader r = BagReader.open(ByteBuffer.wrap(full, 0, cut), "cut-" + cut)) {
                e = assertThrows(BagFormatException.class,
                        () -> r.read(BagReader.ReadOptions.builder().order(BagReader.Order.FILE).build(), got::add),
                        "cut at " + cut);
                if (cut <= 856695) {
                    assertFalse(r.hasIndex());
                    assertThrows(BagFormatException.class, () -> r.readAll(BagReader.Order.LOG_TIME));
                }
            }
            long complete = ends.stream().filter(end -> end <= cut).count();
            assertEquals(complete, got.size(), "messages before the cut at " + cut);
            for (int i = 0; i < got.size(); i++) {
                assertEquals(all.get(i).logTime(), got.get(i).logTime());
                assertEquals(all.get(i).data(), got.get(i).data());
            }
            assertTrue(e.getMessage().contains("cut-" + cut) && e.getMessage().contains("at byte "), e.getMessage());
            assertTrue(e.offset() >= 13 && e.offset() <= cut, "offset " + e.offset() + " for cut " + cut);
        }
        // the one chunk (record at 4117, data from 4166) cut at 434200: what is wrong, and where the file ends
        try (BagReader r = BagReader.open(ByteBuffer.wrap(full, 0, 434_200), "half")) {
            BagFormatException e = assertThrows(BagFormatException.class, () -> r.readAll(BagReader.Order.FILE));
            assertEquals(4117, e.offset());
            assertTrue(e.getMessage().contains("the file is truncated: this chunk record needs 748105 data bytes, the"
                    + " file ends 430034 bytes into them (at byte 434200)"), e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"example-lz4.bag", "example-bz2.bag"})
    void truncatedCompressedBagGivesAPrefixThenTheOffset(String name) throws IOException {
        byte[] full = Files.readAllBytes(bag(name));
        List<BagMessage> all;
        long indexPos;
        try (BagReader r = BagReader.open(bag(name))) {
            all = r.readAll(BagReader.Order.FILE);
            indexPos = r.indexPosition();
        }
        Random rnd = new Random(7);
        List<Integer> cuts = new ArrayList<>(List.of(4117, 4130, (int) indexPos - 1, (int) indexPos + 10,
                full.length - 1));
        for (int i = 0; i < (name.equals("example-bz2.bag") ? 8 : 20); i++) {
            cuts.add(4117 + rnd.nextInt(full.length - 4117));
        }
        for (int cut : cuts) {
            List<BagMessage> got = new ArrayList<>();
            try (BagReader r = BagReader.open(ByteBuffer.wrap(full, 0, cut), name)) {
                BagFormatException e = assertThrows(BagFormatException.class,
                        () -> r.read(BagReader.ReadOptions.builder().order(BagReader.Order.FILE).build(), got::add));
                assertTrue(e.offset() >= 13 && e.offset() <= cut, e.getMessage());
            }
            assertTrue(got.size() <= TOTAL);
            for (int i = 0; i < got.size(); i++) {
                assertEquals(all.get(i).logTime(), got.get(i).logTime());
                assertEquals(all.get(i).data(), got.get(i).data());
            }
            if (cut > indexPos) {
                assertEquals(TOTAL, got.size(), "the chunk is whole when the cut is in the index section");
            }
        }
    }

    @Test
    void tooShortOrWrongMagicOrBrokenHeaderFailsOnOpen() throws IOException {
        byte[] full = Files.readAllBytes(bag("example.bag"));
        for (int cut : new int[] {0, 5, 12, 13, 16, 20, 100, 4116}) {
            BagFormatException e = assertThrows(BagFormatException.class,
                    () -> BagReader.open(ByteBuffer.wrap(full, 0, cut), "short.bag"), "cut " + cut);
            assertTrue(e.getMessage().startsWith("short.bag at byte "), e.getMessage());
        }
        byte[] v12 = full.clone();
        v12[10] = '1';
        BagFormatException e = assertThrows(BagFormatException.class,
                () -> BagReader.open(ByteBuffer.wrap(v12), "old.bag"));
        assertTrue(e.getMessage().contains("#ROSBAG V2.0"), e.getMessage());
    }

    @Test
    void unknownCompressionIsNamed() throws IOException {
        byte[] full = Files.readAllBytes(bag("example-lz4.bag"));
        String s = new String(full, StandardCharsets.ISO_8859_1);
        int at = s.indexOf("compression=lz4");
        assertTrue(at > 0);
        full[at + 12] = 'x'; // "compression=xz4"
        try (BagReader r = BagReader.open(ByteBuffer.wrap(full), "x.bag")) {
            BagFormatException e = assertThrows(BagFormatException.class, () -> r.readAll(BagReader.Order.LOG_TIME));
            assertTrue(e.getMessage().contains("xz4") && e.getMessage().contains("at byte 4117"), e.getMessage());
        }
    }

    @Test
    void lz4LinkedBlocksAreNamed() throws IOException {
        byte[] full = Files.readAllBytes(bag("example-lz4.bag"));
        int frame = new String(full, StandardCharsets.ISO_8859_1).indexOf("\u0004\"M\u0018");
        assertTrue(frame > 4117, "LZ4 frame magic inside the chunk");
        assertEquals(0x64, full[frame + 4] & 0xff, "roslz4 FLG: version 1, independent blocks, content checksum");
        full[frame + 4] = 0x44;
        try (BagReader r = BagReader.open(ByteBuffer.wrap(full), "linked.bag")) {
            BagFormatException e = assertThrows(BagFormatException.class, () -> r.readAll(BagReader.Order.FILE));
            assertTrue(e.getMessage().contains("linked blocks") && e.offset() == 4117, e.getMessage());
        }
    }

    /** Random byte flips never give anything but messages or a BagFormatException. */
    @ParameterizedTest
    @ValueSource(strings = {"example.bag", "example-lz4.bag", "example-bz2.bag"})
    void corruptBytesGiveBagFormatExceptionOnly(String name) throws IOException {
        byte[] full = Files.readAllBytes(bag(name));
        Random rnd = new Random(name.hashCode());
        int failures = 0;
        int rounds = name.equals("example-bz2.bag") ? 6 : 25;
        for (int round = 0; round < rounds; round++) {
            byte[] bad = full.clone();
            // hit record headers and lengths: the bag header's fields, the chunk's start, the index section
            for (int k = 0; k < 3; k++) {
                int region = rnd.nextInt(3);
                int pos = region == 0 ? 13 + rnd.nextInt(110) : region == 1 ? 4117 + rnd.nextInt(1200)
                        : full.length - 1 - rnd.nextInt(3000);
                bad[pos] = (byte) rnd.nextInt(256);
            }
            for (BagReader.Order order : BagReader.Order.values()) {
                try (BagReader r = BagReader.open(ByteBuffer.wrap(bad), "bad.bag")) {
                    r.readAll(order);
                } catch (BagFormatException e) {
                    failures++;
                    assertTrue(e.getMessage().startsWith("bad.bag"), e.getMessage());
                } catch (RuntimeException e) {
                    fail("round " + round + " " + order + ": unchecked " + e, e);
                }
            }
        }
        assertTrue(failures > 0, "some corruption must be detected");
    }
}
