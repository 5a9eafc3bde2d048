package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.Node;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code @mcap/core} (npm) reads our files: tools/node/mcap-read.mjs opens each with its
 * McapIndexedReader (CRCs validated, @mcap/support decompressors) and McapStreamReader (CRCs
 * validated) and prints what it saw; this test compares that with what was written.
 */
class McapWriterNodePeerTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(McapWriter.Compression.class)
    void mcapCoreReadsOurFile(McapWriter.Compression compression) throws Exception {
        Path file = dir.resolve("peer-" + compression + ".mcap");
        GeneratedMcap g = GeneratedMcap.write(McapWriter.builder().profile("ros2").library("flywheel-test")
                .compression(compression).chunkSize(64 * 1024).build(file), 200);

        Node.Result res = Node.run("mcap-read.mjs", file.toString());
        assertEquals(0, res.exitCode(), res.stderr());
        JsonNode out = new ObjectMapper().readTree(res.stdout());

        assertEquals("ros2", out.get("header").get("profile").asText());
        assertEquals("flywheel-test", out.get("header").get("library").asText());
        assertEquals(2, out.get("schemas").size());
        assertEquals("pkg/msg/A", out.get("schemas").get(0).get("name").asText());
        assertEquals(sha256(GeneratedMcap.SCHEMA_A), out.get("schemas").get(0).get("dataSha256").asText());
        assertEquals(sha256(GeneratedMcap.SCHEMA_B), out.get("schemas").get(1).get("dataSha256").asText());
        assertEquals(3, out.get("channels").size());
        JsonNode ca = out.get("channels").get(0);
        assertEquals("/a", ca.get("topic").asText());
        assertEquals("cdr", ca.get("messageEncoding").asText());
        assertEquals(1, ca.get("schemaId").asInt());
        assertEquals("✓", ca.get("metadata").get("ünïcode").asText());
        assertEquals(0, out.get("channels").get(2).get("schemaId").asInt());

        JsonNode st = out.get("statistics");
        assertEquals(500, st.get("messageCount").asLong()); // 200 /a + 200 /b + 100 /c
        assertEquals(2, st.get("attachmentCount").asInt());
        assertEquals(2, st.get("metadataCount").asInt());
        assertEquals(out.get("chunkIndexCount").asInt(), st.get("chunkCount").asInt());
        assertTrue(st.get("chunkCount").asInt() > 5);
        assertEquals("1000", st.get("messageStartTime").asText());
        assertEquals(String.valueOf(1005 + 10 * 199), st.get("messageEndTime").asText());

        // indexed messages: per-topic count and digest over (log time, publish time, sequence, data)
        assertTrue(out.get("indexed").get("ordered").asBoolean());
        Map<String, Integer> counts = new TreeMap<>();
        Map<String, MessageDigest> digests = new TreeMap<>();
        for (GeneratedMcap.Msg m : g.inLogTimeOrder()) {
            counts.merge(m.topic(), 1, Integer::sum);
            MessageDigest d = digests.computeIfAbsent(m.topic(), t -> newSha256());
            ByteBuffer head = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
            head.putLong(m.logTime()).putLong(m.publishTime()).putInt((int) m.sequence()).putInt(m.data().length);
            d.update(head.array());
            d.update(m.data());
        }
        assertEquals(Map.of("/a", 200, "/b", 200, "/c", 100), counts);
        JsonNode topics = out.get("indexed").get("topics");
        assertEquals(3, topics.size());
        for (String t : counts.keySet()) {
            assertEquals(counts.get(t), topics.get(t).get("count").asInt(), t);
            assertEquals(HexFormat.of().formatHex(digests.get(t).digest()), topics.get(t).get("digest").asText(), t);
        }

        JsonNode atts = out.get("attachments");
        assertEquals(2, atts.size());
        for (int i = 0; i < 2; i++) {
            GeneratedMcap.Att a = g.attachments.get(i);
            JsonNode n = atts.get(i);
            assertEquals(a.name(), n.get("name").asText());
            assertEquals(a.mediaType(), n.get("mediaType").asText());
            assertEquals(a.logTime(), n.get("logTime").asLong());
            assertEquals(a.createTime(), n.get("createTime").asLong());
            assertEquals(a.data().length, n.get("size").asInt());
            assertEquals(sha256(a.data()), n.get("sha256").asText());
            assertTrue(n.get("crcOk").asBoolean());
        }
        JsonNode md = out.get("metadata");
        assertEquals(2, md.size());
        for (int i = 0; i < 2; i++) {
            String name = List.copyOf(g.metadata.keySet()).get(i);
            assertEquals(name, md.get(i).get("name").asText());
            Map<String, String> got = new LinkedHashMap<>();
            md.get(i).get("metadata").fields().forEachRemaining(e -> got.put(e.getKey(), e.getValue().asText()));
            assertEquals(g.metadata.get(name), got);
        }

        JsonNode stream = out.get("stream");
        assertTrue(stream.get("done").asBoolean());
        for (String t : counts.keySet()) {
            assertEquals(counts.get(t), stream.get("topics").get(t).asInt(), t);
        }
        assertEquals(st.get("chunkCount").asInt(), stream.get("records").get("Chunk").asInt());
        assertEquals(1, stream.get("records").get("DataEnd").asInt());
        assertEquals(2, stream.get("records").get("Attachment").asInt());
        assertEquals(2, stream.get("records").get("Metadata").asInt());

        if (compression == McapWriter.Compression.NONE) {
            // the peer really checks CRCs: one flipped payload byte inside the first chunk makes it fail
            byte[] bytes = java.nio.file.Files.readAllBytes(file);
            long chunkStart;
            try (McapIndexedReader r = McapIndexedReader.open(file)) {
                chunkStart = r.chunkIndexes().get(0).chunkStartOffset();
            }
            int at = (int) chunkStart + 2000;
            bytes[at] ^= 0x55;
            Path bad = dir.resolve("bad.mcap");
            java.nio.file.Files.write(bad, bytes);
            Node.Result badRes = Node.run("mcap-read.mjs", bad.toString());
            assertTrue(badRes.exitCode() != 0);
            assertTrue(badRes.stderr().toLowerCase().contains("crc"), badRes.stderr());
            try (McapIndexedReader r = McapIndexedReader.open(bad)) {
                McapFormatException e = org.junit.jupiter.api.Assertions.assertThrows(McapFormatException.class,
                        () -> r.messages().toList());
                assertEquals(chunkStart, e.offset());
                assertTrue(e.getMessage().contains("chunk CRC32 mismatch"), e.getMessage());
            }
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(byte[] b) {
        return HexFormat.of().formatHex(newSha256().digest(b));
    }
}
