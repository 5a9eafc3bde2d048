package io.flywheel.mcap;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Test form: a {@link Record} as the MCAP conformance suite writes it in its expected-output JSON
 * ({@code {"type": "Header", "fields": [[name, value], ...]}}, fields sorted by their spec
 * snake_case name, integers as decimal strings (uint64 unsigned), byte fields as arrays of decimal
 * strings, maps as objects with string keys and values). The suite leaves out the attachment crc.
 */
final class ConformanceJson {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private ConformanceJson() {}

    static JsonNode of(Record r) {
        TreeMap<String, JsonNode> f = new TreeMap<>();
        String type;
        if (false) {
            throw new AssertionError();
        } else if (r instanceof Record.Header h) {
            type = "Header";
            f.put("profile", F.textNode(h.profile()));
            f.put("library", F.textNode(h.library()));
        } else if (r instanceof Record.Footer x) {
            type = "Footer";
            f.put("summary_start", u64(x.summaryStart()));
            f.put("summary_offset_start", u64(x.summaryOffsetStart()));
            f.put("summary_crc", u64(x.summaryCrc()));
        } else if (r instanceof Record.Schema x) {
            type = "Schema";
            f.put("id", u64(x.id()));
            f.put("name", F.textNode(x.name()));
            f.put("encoding", F.textNode(x.encoding()));
            f.put("data", bytes(x.data()));
        } else if (r instanceof Record.Channel x) {
            type = "Channel";
            f.put("id", u64(x.id()));
            f.put("schema_id", u64(x.schemaId()));
            f.put("topic", F.textNode(x.topic()));
            f.put("message_encoding", F.textNode(x.messageEncoding()));
            f.put("metadata", stringMap(x.metadata()));
        } else if (r instanceof Record.Message x) {
            type = "Message";
            f.put("channel_id", u64(x.channelId()));
            f.put("sequence", u64(x.sequence()));
            f.put("log_time", u64(x.logTime()));
            f.put("publish_time", u64(x.publishTime()));
            f.put("data", bytes(x.data()));
        } else if (r instanceof Record.Attachment x) {
            type = "Attachment";
            f.put("log_time", u64(x.logTime()));
            f.put("create_time", u64(x.createTime()));
            f.put("name", F.textNode(x.name()));
            f.put("media_type", F.textNode(x.mediaType()));
            f.put("data", bytes(x.data()));
        } else if (r instanceof Record.AttachmentIndex x) {
            type = "AttachmentIndex";
            f.put("offset", u64(x.offset()));
            f.put("length", u64(x.length()));
            f.put("log_time", u64(x.logTime()));
            f.put("create_time", u64(x.createTime()));
            f.put("data_size", u64(x.dataSize()));
            f.put("name", F.textNode(x.name()));
            f.put("media_type", F.textNode(x.mediaType()));
        } else if (r instanceof Record.Statistics x) {
            type = "Statistics";
            f.put("message_count", u64(x.messageCount()));
            f.put("schema_count", u64(x.schemaCount()));
            f.put("channel_count", u64(x.channelCount()));
            f.put("attachment_count", u64(x.attachmentCount()));
            f.put("metadata_count", u64(x.metadataCount()));
            f.put("chunk_count", u64(x.chunkCount()));
            f.put("message_start_time", u64(x.messageStartTime()));
            f.put("message_end_time", u64(x.messageEndTime()));
            f.put("channel_message_counts", longMap(x.channelMessageCounts()));
        } else if (r instanceof Record.Metadata x) {
            type = "Metadata";
            f.put("name", F.textNode(x.name()));
            f.put("metadata", stringMap(x.metadata()));
        } else if (r instanceof Record.MetadataIndex x) {
            type = "MetadataIndex";
            f.put("offset", u64(x.offset()));
            f.put("length", u64(x.length()));
            f.put("name", F.textNode(x.name()));
        } else if (r instanceof Record.ChunkIndex x) {
            type = "ChunkIndex";
            f.put("message_start_time", u64(x.messageStartTime()));
            f.put("message_end_time", u64(x.messageEndTime()));
            f.put("chunk_start_offset", u64(x.chunkStartOffset()));
            f.put("chunk_length", u64(x.chunkLength()));
            f.put("message_index_offsets", longMap(x.messageIndexOffsets()));
            f.put("message_index_length", u64(x.messageIndexLength()));
            f.put("compression", F.textNode(x.compression()));
            f.put("compressed_size", u64(x.compressedSize()));
            f.put("uncompressed_size", u64(x.uncompressedSize()));
        } else if (r instanceof Record.SummaryOffset x) {
            type = "SummaryOffset";
            f.put("group_opcode", u64(x.groupOpcode()));
            f.put("group_start", u64(x.groupStart()));
            f.put("group_length", u64(x.groupLength()));
        } else if (r instanceof Record.DataEnd x) {
            type = "DataEnd";
            f.put("data_section_crc", u64(x.dataSectionCrc()));
        } else {
            throw new IllegalArgumentException("no conformance form for " + r);
        }
        ObjectNode o = F.objectNode();
        o.put("type", type);
        ArrayNode fields = o.putArray("fields");
        f.forEach((k, v) -> fields.addArray().add(k).add(v));
        return o;
    }

    private static JsonNode u64(long v) {
        return F.textNode(Long.toUnsignedString(v));
    }

    private static JsonNode bytes(ByteBuffer b) {
        ArrayNode a = F.arrayNode();
        ByteBuffer d = b.duplicate();
        while (d.hasRemaining()) {
            a.add(Integer.toString(d.get() & 0xFF));
        }
        return a;
    }

    private static JsonNode stringMap(Map<String, String> m) {
        ObjectNode o = F.objectNode();
        m.forEach(o::put);
        return o;
    }

    private static JsonNode longMap(Map<Integer, Long> m) {
        ObjectNode o = F.objectNode();
        m.forEach((k, v) -> o.put(Integer.toString(k), Long.toUnsignedString(v)));
        return o;
    }
}
