package io.flywheel.mcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.testkit.SharedData;
import org.junit.jupiter.api.Test;

/**
 * The indexed reader on the 416 foxglove/mcap conformance files: every file with a summary yields
 * the messages listed in its {@code .json} (channel, sequence, log time, publish time, data), sorted
 * by log time with ties in file order; schemas, channels, attachments (by index), metadata (by
 * index) and statistics match too. Files without a summary are rejected with McapFormatException.
 */
class McapIndexedConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Msg(int channel, long sequence, long logTime, long publishTime, byte[] data) {}

    @Test
    void everyConformanceFile() throws IOException {
        Path root = SharedData.data("mcap-conformance");
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.toString().endsWith(".mcap")).sorted().toList();
        }
        assertEquals(416, files.size());
        int viaChunkIndex = 0;
        int viaScan = 0;
        int rejected = 0;
        int messagesChecked = 0;
        int attachmentsChecked = 0;
        int metadataChecked = 0;
        int statisticsChecked = 0;
        for (Path f : files) {
            JsonNode records = JSON.readTree(f.resolveSibling(f.getFileName().toString().replace(".mcap", ".json")).toFile())
                    .get("records");
            List<Msg> want = new ArrayList<>();
            Map<Integer, JsonNode> schemas = new TreeMap<>();
            Map<Integer, JsonNode> channels = new TreeMap<>();
            List<JsonNode> attachments = new ArrayList<>();
            List<JsonNode> metadata = new ArrayList<>();
            JsonNode stats = null;
            JsonNode footer = null;
            for (JsonNode r : records) {
                Map<String, JsonNode> fl = fields(r);
                switch (r.get("type").asText()) {
                    case "Message" -> want.add(new Msg(fl.get("channel_id").asInt(), Long.parseLong(fl.get("sequence").asText()),
                            Long.parseUnsignedLong(fl.get("log_time").asText()),
                            Long.parseUnsignedLong(fl.get("publish_time").asText()), bytes(fl.get("data"))));
                    case "Schema" -> schemas.put(fl.get("id").asInt(), r);
                    case "Channel" -> channels.put(fl.get("id").asInt(), r);
                    case "Attachment" -> attachments.add(r);
                    case "Metadata" -> metadata.add(r);
                    case "Statistics" -> stats = r;
                    case "Footer" -> footer = r;
                    default -> { }
                }
            }
            want.sort(Comparator.comparing(Msg::logTime, Long::compareUnsigned)); // stable: ties keep file order
            String name = f.getFileName().toString();
            boolean hasSummary = !"0".equals(fields(footer).get("summary_start").asText());
            if (!hasSummary) {
                try (McapIndexedReader r = McapIndexedReader.open(f)) {
                    fail(name + ": opened a file without a summary");
                } catch (McapFormatException e) {
                    assertTrue(e.getMessage().contains("no summary section"), e.getMessage());
                    rejected++;
                }
                continue;
            }
            try (McapIndexedReader r = McapIndexedReader.open(f)) {
                if (r.scannedDataSection()) {
                    viaScan++;
                } else {
                    viaChunkIndex++;
                }
                List<MessageView> got = r.messages().toList();
                assertEquals(want.size(), got.size(), name);
                for (int i = 0; i < want.size(); i++) {
                    Msg w = want.get(i);
                    Record.Message m = got.get(i).message();
                    String at = name + " message " + i;
                    assertEquals(w.channel(), m.channelId(), at);
                    assertEquals(w.sequence(), m.sequence(), at);
                    assertEquals(w.logTime(), m.logTime(), at);
                    assertEquals(w.publishTime(), m.publishTime(), at);
                    assertArrayEquals(w.data(), GeneratedMcap.toArray(m.data()), at);
                    assertEquals(w.channel(), got.get(i).channel().id(), at);
                    messagesChecked++;
                }
                if (!want.isEmpty()) {
                    // a topic filter goes through the message indexes where the file has them
                    String topic = got.get(0).topic();
                    assertEquals(want.size(), r.messages(McapIndexedReader.ReadOptions.builder().topic(topic).build())
                            .toList().size(), name);
                }
                assertEquals(schemas.keySet(), r.schemas().keySet(), name);
                for (Map.Entry<Integer, JsonNode> e : schemas.entrySet()) {
                    Map<String, JsonNode> fl = fields(e.getValue());
                    Record.Schema s = r.schemas().get(e.getKey());
                    assertEquals(fl.get("name").asText(), s.name(), name);
                    assertEquals(fl.get("encoding").asText(), s.encoding(), name);
                    assertArrayEquals(bytes(fl.get("data")), GeneratedMcap.toArray(s.data()), name);
                }
                assertEquals(channels.keySet(), r.channels().keySet(), name);
                for (Map.Entry<Integer, JsonNode> e : channels.entrySet()) {
                    Map<String, JsonNode> fl = fields(e.getValue());
                    Record.Channel c = r.channels().get(e.getKey());
                    assertEquals(fl.get("topic").asText(), c.topic(), name);
                    assertEquals(fl.get("message_encoding").asText(), c.messageEncoding(), name);
                    assertEquals(fl.get("schema_id").asInt(), c.schemaId(), name);
                    assertEquals(stringMap(fl.get("metadata")), c.metadata(), name);
                }
                if (name.contains("-ax")) {
                    assertEquals(attachments.size(), r.attachmentIndexes().size(), name);
                    for (int i = 0; i < attachments.size(); i++) {
                        Map<String, JsonNode> fl = fields(attachments.get(i));
                        Record.Attachment a = r.readAttachment(r.attachmentIndexes().get(i));
                        assertEquals(fl.get("name").asText(), a.name(), name);
                        assertEquals(fl.get("media_type").asText(), a.mediaType(), name);
                        assertEquals(Long.parseLong(fl.get("log_time").asText()), a.logTime(), name);
                        assertEquals(Long.parseLong(fl.get("create_time").asText()), a.createTime(), name);
                        assertArrayEquals(bytes(fl.get("data")), GeneratedMcap.toArray(a.data()), name);
                        attachmentsChecked++;
                    }
                }
                if (name.contains("-mdx")) {
                    assertEquals(metadata.size(), r.metadataIndexes().size(), name);
                    for (int i = 0; i < metadata.size(); i++) {
                        Map<String, JsonNode> fl = fields(metadata.get(i));
                        Record.Metadata m = r.readMetadata(r.metadataIndexes().get(i));
                        assertEquals(fl.get("name").asText(), m.name(), name);
                        assertEquals(stringMap(fl.get("metadata")), m.metadata(), name);
                        metadataChecked++;
                    }
                }
                assertEquals(stats != null, r.statistics().isPresent(), name);
                if (stats != null) {
                    Map<String, JsonNode> fl = fields(stats);
                    Record.Statistics st = r.statistics().orElseThrow();
                    assertEquals(fl.get("message_count").asLong(), st.messageCount(), name);
                    assertEquals(fl.get("channel_count").asLong(), st.channelCount(), name);
                    assertEquals(fl.get("chunk_count").asLong(), st.chunkCount(), name);
                    assertEquals(fl.get("message_start_time").asLong(), st.messageStartTime(), name);
                    assertEquals(fl.get("message_end_time").asLong(), st.messageEndTime(), name);
                    assertEquals(want.size(), st.messageCount(), name);
                    statisticsChecked++;
                }
            } catch (McapFormatException e) {
                throw new AssertionError(name + ": " + e.getMessage(), e);
            }
        }
        // counts from the file names / footers: 160 summaries with chunk indexes, 136 chunked files whose
        // summary has none plus 96 unchunked files with a summary (232 scanned), 24 files without a summary
        assertEquals(160, viaChunkIndex);
        assertEquals(232, viaScan);
        assertEquals(24, rejected);
        // Message records in the .json files of the files with a summary; Attachment / Metadata records in
        // the -ax / -mdx files with a summary; files with a Statistics record
        assertEquals(1696, messagesChecked);
        assertEquals(8, attachmentsChecked);
        assertEquals(8, metadataChecked);
        assertEquals(220, statisticsChecked);
    }

    private static Map<String, JsonNode> fields(JsonNode record) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        for (JsonNode pair : record.get("fields")) {
            m.put(pair.get(0).asText(), pair.get(1));
        }
        return m;
    }

    private static byte[] bytes(JsonNode arr) {
        byte[] b = new byte[arr.size()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(arr.get(i).asText());
        }
        return b;
    }

    private static Map<String, String> stringMap(JsonNode obj) {
        Map<String, String> m = new LinkedHashMap<>();
        obj.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }
}
