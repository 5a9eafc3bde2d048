package io.flywheel.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.mcap.McapFormatException;
import io.flywheel.mcap.McapStreamReader;
import io.flywheel.mcap.Record;
import io.flywheel.testkit.SharedData;

/** The {@code flywheel mcap} commands on the real recordings in ../shared/data, and on broken copies. */
class McapCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path bridge(int episode) {
        return SharedData.data(String.format("camera/bridge-mcap/bridge_ep%02d.mcap", episode));
    }

    private static JsonNode expected(int episode) throws IOException {
        JsonNode files = JSON.readTree(SharedData.data("camera/bridge-mcap/expected.json").toFile()).get("files");
        return files.get(episode);
    }

    @Test
    void infoJsonMatchesExpectedContents() throws IOException {
        CliRun r = CliRun.of("mcap", "info", bridge(0).toString(), "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode info = JSON.readTree(r.out());
        JsonNode exp = expected(0);
        assertEquals(exp.get("message_count").asLong(), info.get("message_count").asLong());
        assertEquals("ros2", info.get("profile").asText());
        assertEquals(exp.get("first_log_time_ns").asLong(), info.get("start_time").asLong());
        assertEquals(exp.get("last_log_time_ns").asLong(), info.get("end_time").asLong());
        assertEquals(1, info.get("chunks").get("zstd").get("count").asLong());
        assertEquals(6, info.get("channels").size());
        for (JsonNode ch : info.get("channels")) {
            JsonNode t = exp.get("topics").get(ch.get("topic").asText());
            assertEquals(t.get("count").asLong(), ch.get("message_count").asLong(), ch.toString());
            assertEquals(t.get("schema_name").asText(), ch.get("schema_name").asText());
            if (t.get("count").asLong() == 10) {
                // ten steps at nominal 5 Hz: 9 intervals over 1.8 s
                assertEquals(5.0, ch.get("frequency_hz").asDouble(), 1e-9, ch.toString());
            }
        }
        assertEquals("episode", info.get("metadata").get(0).get("name").asText());
    }

    @Test
    void catJsonGivesTheRecordedStateOfEveryBridgeEpisode() throws IOException {
        for (int ep = 0; ep < 25; ep++) {
            CliRun r = CliRun.of("mcap", "cat", bridge(ep).toString(), "--topic", "/robot/eef_state", "--json");
            assertEquals(0, r.exitCode(), r.err());
            String[] lines = r.out().strip().split("\n");
            JsonNode positions = expected(ep).get("eef_state").get("position");
            assertEquals(positions.size(), lines.length);
            for (int i = 0; i < lines.length; i++) {
                assertTrue(lines[i].startsWith("{\"topic\""), "one bare JSON object per line: " + lines[i]);
                JsonNode m = JSON.readTree(lines[i]);
                assertEquals("/robot/eef_state", m.get("topic").asText());
                assertEquals(expected(ep).get("first_log_time_ns").asLong() + 200_000_000L * i, m.get("log_time").asLong());
                JsonNode pos = m.get("message").get("position");
                for (int j = 0; j < 7; j++) {
                    assertEquals(positions.get(i).get(j).asDouble(), pos.get(j).asDouble(), 0.0, "ep " + ep + " step " + i);
                }
            }
        }
    }

    @Test
    void catSelectsATimeRangeInLogTimeOrder() throws IOException {
        // steps 2, 3 and 4 of episode 0: [t0 + 0.4 s, t0 + 1.0 s), given as seconds and as ISO-8601
        CliRun r = CliRun.of("mcap", "cat", bridge(0).toString(), "--json",
                "--start", "1700000000.4", "--end", "2023-11-14T22:13:21Z");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().strip().split("\n");
        assertEquals(3 * 5, lines.length, "5 topics per step, the task message is at t0");
        long last = 0;
        for (String l : lines) {
            long t = JSON.readTree(l).get("log_time").asLong();
            assertTrue(t >= 1_700_000_000_400_000_000L && t < 1_700_000_001_000_000_000L);
            assertTrue(t >= last);
            last = t;
        }
        assertTrue(r.err().contains("15 message(s) from 5 topic(s)"), r.err());
    }

    @Test
    void catTakesWholeSecondsAsTheReadmeShowsAndNanosecondsWithASuffix() throws IOException {
        // README: --start 1700000000.4 --end 1700000001 is steps 2, 3 and 4 of episode 0 (t0 = 1700000000 s)
        String[][] ranges = {{"1700000000.4", "1700000001"}, {"1700000000400000000ns", "1700000001000000000ns"},
                {"1700000000400ms", "1700000001s"}};
        for (String[] range : ranges) {
            CliRun r = CliRun.of("mcap", "cat", bridge(0).toString(), "--json", "--start", range[0], "--end", range[1]);
            assertEquals(0, r.exitCode(), String.join(" ", range) + ": " + r.err());
            assertEquals(15, r.out().strip().split("\n").length, String.join(" ", range));
        }
        CliRun half = CliRun.of("mcap", "cat", bridge(0).toString(), "--json", "--start", "1700000000", "--end",
                "1700000000.2");
        assertEquals(0, half.exitCode(), half.err());
        assertEquals(6, half.out().strip().split("\n").length, "step 0 and the task message at t0");
        CliRun sub = CliRun.of("mcap", "cat", bridge(0).toString(), "--start", "1700000000.0000000001");
        assertEquals(2, sub.exitCode(), "below a nanosecond is not a time: " + sub.err());
    }

    @Test
    void catJsonLinesStayWholeWhenTheFileBreaksOffMidway(@TempDir Path tmp) throws IOException {
        // 40 messages of ~20 KB JSON each (lines longer than the output buffers), 4 per chunk; the last chunk corrupt
        Path f = tmp.resolve("big.mcap");
        String pad = "x".repeat(20_000);
        try (io.flywheel.mcap.McapWriter w = io.flywheel.mcap.McapWriter.builder().chunkSize(60_000).build(f)) {
            int c = w.registerChannel("/big", "json", 0, java.util.Map.of());
            for (int i = 0; i < 40; i++) {
                w.writeMessage(c, i, 1_700_000_000_000_000_000L + i * 1_000_000L, 0,
                        ("{\"i\":" + i + ",\"pad\":\"" + pad + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        long lastChunk;
        long lastLength;
        int before; // messages in the chunks before the last
        try (io.flywheel.mcap.McapIndexedReader r = io.flywheel.mcap.McapIndexedReader.open(f)) {
            Record.ChunkIndex ci = r.chunkIndexes().get(r.chunkIndexes().size() - 1);
            assertTrue(r.chunkIndexes().size() >= 10, "several chunks: " + r.chunkIndexes().size());
            lastChunk = ci.chunkStartOffset();
            lastLength = ci.chunkLength();
            before = (int) ((ci.messageStartTime() - 1_700_000_000_000_000_000L) / 1_000_000L);
        }
        byte[] bytes = Files.readAllBytes(f);
        for (int k = 40; k < 60; k++) {
            bytes[(int) (lastChunk + lastLength - k)] ^= 0x5A; // inside the compressed records of the last chunk
        }
        Files.write(f, bytes);
        CliRun r = CliRun.of("mcap", "cat", f.toString(), "--json");
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.out().endsWith("\n"), "the last line ends with a newline");
        String[] lines = r.out().split("\n");
        for (int i = 0; i < before; i++) {
            assertEquals(i, JSON.readTree(lines[i]).get("message").get("i").asInt(), "line " + i);
        }
        // then the failure's JSON document (indented, on lines of its own)
        JsonNode failure = JSON.readTree(String.join("\n", java.util.Arrays.copyOfRange(lines, before, lines.length)));
        assertFalse(failure.get("ok").asBoolean());
        assertEquals("bad_input", failure.get("error").get("kind").asText(), failure.toString());
        assertFalse(failure.get("ok").asBoolean());
        assertEquals("bad_input", failure.get("error").get("kind").asText(), lines[before]);
    }

    @Test
    void catDecodesEveryMessageOfEveryRealFile() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(SharedData.data("mcap-real"))) {
            s.filter(p -> p.toString().endsWith(".mcap")).sorted().forEach(files::add);
        }
        assertEquals(11, files.size());
        for (Path f : files) {
            CliRun r = CliRun.of("mcap", "cat", f.toString(), "--json");
            assertEquals(0, r.exitCode(), f + ": " + r.err());
            for (String line : r.out().strip().split("\n")) {
                assertFalse(JSON.readTree(line).has("error"), f + ": " + line);
            }
            assertTrue(r.noStackTrace());
        }
    }

    @Test
    void doctorPassesRealFiles() {
        for (int ep : new int[] {0, 1}) { // zstd and lz4 chunks
            CliRun r = CliRun.of("mcap", "doctor", bridge(ep).toString());
            assertEquals(0, r.exitCode(), r.out());
            assertTrue(r.out().contains("0 error(s), 0 warning(s)"), r.out());
        }
    }

    @Test
    void doctorReportsTruncationAndCorruptionWithOffsets(@TempDir Path tmp) throws IOException {
        byte[] bytes = Files.readAllBytes(bridge(0));
        Path cut = tmp.resolve("cut.mcap");
        Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length * 6 / 10));
        CliRun r = CliRun.of("mcap", "doctor", cut.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.out().contains("no Footer record"), r.out());
        assertTrue(r.out().contains("FAILED"), r.out());

        long chunkOffset = firstChunkOffset(bridge(0));
        byte[] flipped = bytes.clone();
        flipped[(int) chunkOffset + 2000] ^= 0x5A;
        Path bad = tmp.resolve("flipped.mcap");
        Files.write(bad, flipped);
        CliRun d = CliRun.of("mcap", "doctor", bad.toString(), "--json");
        assertEquals(1, d.exitCode());
        JsonNode report = JSON.readTree(d.out());
        boolean named = false;
        for (JsonNode f : report.get("findings")) {
            named |= f.get("severity").asText().equals("ERROR") && f.get("offset").asLong() == chunkOffset;
        }
        assertTrue(named, "an error at the chunk's offset " + chunkOffset + ": " + d.out());
    }

    @Test
    void recoverSalvagesEveryCompleteMessageOfATruncatedFileIntoAValidOne(@TempDir Path tmp) throws IOException {
        Path src = SharedData.data("mcap-real/ros2-rosbag2/multiple_files/multiple_files_0.mcap");
        byte[] bytes = Files.readAllBytes(src);
        // an uncompressed-chunk file cut inside the chunk loses the chunk; cut after it instead
        Path cut = tmp.resolve("cut.mcap");
        int at = (int) summaryStart(src) + 5;
        Files.write(cut, java.util.Arrays.copyOf(bytes, at));
        long readable = readableMessages(cut);
        assertEquals(1324, readable, "every message is before the summary");

        Path out = tmp.resolve("recovered.mcap");
        CliRun r = CliRun.of("mcap", "recover", cut.toString(), out.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("recovered 1324 message(s)"), r.out());
        CliRun doc = CliRun.of("mcap", "doctor", out.toString());
        assertEquals(0, doc.exitCode(), doc.out());
        CliRun info = CliRun.of("mcap", "info", out.toString(), "--json");
        assertEquals(1324, JSON.readTree(info.out()).get("message_count").asLong());
        assertTrue(JSON.readTree(info.out()).get("indexed").asBoolean());
    }

    @Test
    void aChunkFailingItsCrcIsNamedAndRecoveredOnlyOnRequest(@TempDir Path tmp) throws IOException {
        byte[] bytes = Files.readAllBytes(bridge(0));
        long chunkOffset = firstChunkOffset(bridge(0));
        for (int i = 0; i < 64; i++) {
            bytes[(int) chunkOffset + 48_000 + i] ^= 0x5A; // inside the JPEG bytes: zstd stores them nearly raw
        }
        Path bad = tmp.resolve("flipped.mcap");
        Files.write(bad, bytes);
        CliRun info = CliRun.of("mcap", "info", bad.toString());
        assertEquals(1, info.exitCode());
        assertTrue(info.err().contains("at byte " + chunkOffset) && info.err().contains("CRC"), info.err());

        CliRun strict = CliRun.of("mcap", "recover", bad.toString(), tmp.resolve("a.mcap").toString());
        assertEquals(1, strict.exitCode(), "nothing trustworthy was recovered");
        assertTrue(!strict.out().contains("recovered 0 message(s)") && strict.out().contains("--no-crc"), strict.out());
        assertTrue(strict.err().contains("no message could be recovered") && strict.err().contains("was not written"),
                strict.err());
        assertTrue(!java.nio.file.Files.exists(tmp.resolve("a.mcap")), "no output file when nothing was recovered");
        CliRun loose = CliRun.of("mcap", "recover", bad.toString(), tmp.resolve("b.mcap").toString(), "--no-crc");
        assertEquals(0, loose.exitCode(), loose.err());
        assertTrue(loose.out().contains("recovered 51 message(s)"), loose.out());
        assertEquals(0, CliRun.of("mcap", "doctor", tmp.resolve("b.mcap").toString()).exitCode());
    }

    @Test
    void wrongTopicsFoldersAndBagsAreNamed(@TempDir Path tmp) throws IOException {
        CliRun topic = CliRun.of("mcap", "cat", bridge(0).toString(), "--topic", "/nope");
        assertEquals(1, topic.exitCode(), "a topic the file lacks is bad input, not usage");
        assertTrue(topic.err().contains("no topic /nope") && topic.err().contains("/robot/eef_state"), topic.err());
        CliRun folder = CliRun.of("mcap", "info", tmp.toString());
        assertEquals(1, folder.exitCode());
        assertTrue(folder.err().contains(tmp + ": is a folder; expected an MCAP file, or a rosbag2 folder holding its"
                + " metadata.yaml"), folder.err());
        Path db3Only = java.nio.file.Files.createDirectories(tmp.resolve("db3-only"));
        java.nio.file.Files.copy(SharedData.data("rosbag2-sqlite3/talker/talker.db3"), db3Only.resolve("talker.db3"));
        for (String verb : new String[] {"info", "doctor", "cat"}) {
            CliRun noMetadata = CliRun.of("mcap", verb, db3Only.toString());
            assertEquals(1, noMetadata.exitCode(), verb + ": " + noMetadata.err());
            String said = noMetadata.out() + noMetadata.err(); // doctor reports on stdout
            assertTrue(said.contains(db3Only.resolve("metadata.yaml") + ": missing"), said);
        }
        CliRun bag = CliRun.of("mcap", "info", SharedData.data("ros1-bag/example.bag").toString());
        assertTrue(bag.err().contains("this is a ROS 1 bag"), bag.err());
        CliRun range = CliRun.of("mcap", "cat", bridge(0).toString(), "--start", "1700000001", "--end", "1700000000");
        assertEquals(2, range.exitCode());
        assertTrue(range.err().contains("is not before --end"), range.err());
    }

    @Test
    void badInputGetsAClearErrorAndExitCode(@TempDir Path tmp) throws IOException {
        Path empty = Files.createFile(tmp.resolve("empty.mcap"));
        Path jpeg = tmp.resolve("photo.mcap");
        Files.copy(SharedData.data("camera/widowx-tictactoe/over_shoulder_cam/move0.jpg"), jpeg);
        Path missing = tmp.resolve("missing.mcap");
        for (String verb : new String[] {"info", "cat", "doctor"}) {
            for (Path p : new Path[] {empty, jpeg, missing}) {
                CliRun r = CliRun.of("mcap", verb, p.toString());
                assertEquals(1, r.exitCode(), verb + " " + p + ": " + r.out() + r.err());
                assertTrue(r.noStackTrace(), r.err());
                String all = r.out() + r.err();
                assertTrue(all.contains(p.toString()), verb + " names the file: " + all);
            }
        }
        CliRun magic = CliRun.of("mcap", "info", jpeg.toString());
        assertTrue(magic.err().toLowerCase().contains("magic"), magic.err());
        CliRun usage = CliRun.of("mcap", "cat", "--start", "yesterday", jpeg.toString());
        assertEquals(2, usage.exitCode());
        assertTrue(usage.err().contains("is not a time"), usage.err());
    }

    private static long firstChunkOffset(Path f) throws IOException {
        McapStreamReader.Options o = McapStreamReader.Options.builder().emitChunks(true).build();
        try (McapStreamReader r = McapStreamReader.open(f, o)) {
            while (true) {
                long at = r.position();
                Record rec = r.next();
                if (rec == null) {
                    throw new AssertionError("no chunk in " + f);
                }
                if (rec instanceof Record.Chunk) {
                    return at;
                }
            }
        }
    }

    private static long summaryStart(Path f) throws IOException {
        try (McapStreamReader r = McapStreamReader.open(f)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Footer footer) {
                    return footer.summaryStart();
                }
            }
        }
        throw new AssertionError("no footer in " + f);
    }

    private static long readableMessages(Path f) throws IOException {
        long n = 0;
        try (McapStreamReader r = McapStreamReader.open(f)) {
            Record rec;
            while ((rec = r.next()) != null) {
                if (rec instanceof Record.Message) {
                    n++;
                }
            }
        } catch (McapFormatException expected) {
            // the break comes after the last complete message
        }
        return n;
    }
}
