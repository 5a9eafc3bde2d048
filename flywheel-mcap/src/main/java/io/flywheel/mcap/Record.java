package io.flywheel.mcap;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * One MCAP record, as a plain immutable value. Field names, types and opcodes follow the MCAP
 * specification (https://mcap.dev/spec, "Records"). Integers the spec declares unsigned are held in
 * the next wider Java type where that fits ({@code uint16 -> int}, {@code uint32 -> long}); {@code
 * uint64} values are held in a {@code long} and must be read as unsigned
 * ({@link Long#toUnsignedString(long)}, {@link Long#compareUnsigned(long, long)}). Times are
 * nanoseconds, in whatever epoch the recorder used (ROS: Unix epoch).
 *
 * <p>Byte payloads are read-only {@link ByteBuffer}s positioned at 0; they may be views into a
 * decompressed chunk or a mapped file, so copy them if they must outlive the reader.
 */
public sealed interface Record {

    /** @return the record's opcode (0x01-0x0F for the spec's records) */
    int opcode();

    int OP_HEADER = 0x01;
    int OP_FOOTER = 0x02;
    int OP_SCHEMA = 0x03;
    int OP_CHANNEL = 0x04;
    int OP_MESSAGE = 0x05;
    int OP_CHUNK = 0x06;
    int OP_MESSAGE_INDEX = 0x07;
    int OP_CHUNK_INDEX = 0x08;
    int OP_ATTACHMENT = 0x09;
    int OP_ATTACHMENT_INDEX = 0x0A;
    int OP_STATISTICS = 0x0B;
    int OP_METADATA = 0x0C;
    int OP_METADATA_INDEX = 0x0D;
    int OP_SUMMARY_OFFSET = 0x0E;
    int OP_DATA_END = 0x0F;

    /** 0x01: first record of every file. */
    record Header(String profile, String library) implements Record {
        public int opcode() { return OP_HEADER; }
    }

    /**
     * 0x02: last record of every file. {@code summaryStart} and {@code summaryOffsetStart} are
     * absolute file offsets, 0 when absent; {@code summaryCrc} is 0 when not computed.
     */
    record Footer(long summaryStart, long summaryOffsetStart, long summaryCrc) implements Record {
        public int opcode() { return OP_FOOTER; }
    }

    /** 0x03: a message schema. Id 0 is reserved (schemaless channels). */
    record Schema(int id, String name, String encoding, ByteBuffer data) implements Record {
        public int opcode() { return OP_SCHEMA; }
    }

    /** 0x04: a channel (topic); {@code schemaId} 0 means schemaless. */
    record Channel(int id, int schemaId, String topic, String messageEncoding,
                   Map<String, String> metadata) implements Record {
        public int opcode() { return OP_CHANNEL; }
    }

    /** 0x05: one message; {@code sequence} is uint32, times are uint64 nanoseconds. */
    record Message(int channelId, long sequence, long logTime, long publishTime,
                   ByteBuffer data) implements Record {
        public int opcode() { return OP_MESSAGE; }
    }

    /**
     * 0x06: a chunk of records, {@code records} compressed with {@code compression} ("", "zstd",
     * "lz4"). {@code uncompressedCrc} 0 means not computed.
     */
    record Chunk(long messageStartTime, long messageEndTime, long uncompressedSize,
                 long uncompressedCrc, String compression, ByteBuffer records) implements Record {
        public int opcode() { return OP_CHUNK; }
    }

    /** 0x07: per channel, (log time, offset into the uncompressed chunk) of each message. */
    record MessageIndex(int channelId, List<Entry> records) implements Record {
        public int opcode() { return OP_MESSAGE_INDEX; }

        /** One message's log time and its offset inside the decompressed chunk records. */
        public record Entry(long logTime, long offset) {}
    }

    /**
     * 0x08: where a chunk is and what its message indexes cover. Offsets are absolute in the file;
     * {@code messageIndexOffsets} maps channel id to the offset of its MessageIndex record.
     */
    record ChunkIndex(long messageStartTime, long messageEndTime, long chunkStartOffset,
                      long chunkLength, Map<Integer, Long> messageIndexOffsets,
                      long messageIndexLength, String compression, long compressedSize,
                      long uncompressedSize) implements Record {
        public int opcode() { return OP_CHUNK_INDEX; }
    }

    /** 0x09: an attached file; {@code crc} 0 means not computed. */
    record Attachment(long logTime, long createTime, String name, String mediaType,
                      ByteBuffer data, long crc) implements Record {
        public int opcode() { return OP_ATTACHMENT; }
    }

    /** 0x0A: where an attachment record is (absolute offset, record length incl. opcode+length). */
    record AttachmentIndex(long offset, long length, long logTime, long createTime, long dataSize,
                           String name, String mediaType) implements Record {
        public int opcode() { return OP_ATTACHMENT_INDEX; }
    }

    /** 0x0B: counts over the whole file. */
    record Statistics(long messageCount, int schemaCount, long channelCount, long attachmentCount,
                      long metadataCount, long chunkCount, long messageStartTime,
                      long messageEndTime, Map<Integer, Long> channelMessageCounts) implements Record {
        public int opcode() { return OP_STATISTICS; }
    }

    /** 0x0C: named key-value metadata. */
    record Metadata(String name, Map<String, String> metadata) implements Record {
        public int opcode() { return OP_METADATA; }
    }

    /** 0x0D: where a metadata record is. */
    record MetadataIndex(long offset, long length, String name) implements Record {
        public int opcode() { return OP_METADATA_INDEX; }
    }

    /** 0x0E: where the group of summary records with {@code groupOpcode} starts and how long it is. */
    record SummaryOffset(int groupOpcode, long groupStart, long groupLength) implements Record {
        public int opcode() { return OP_SUMMARY_OFFSET; }
    }

    /** 0x0F: end of the data section; {@code dataSectionCrc} 0 means not computed. */
    record DataEnd(long dataSectionCrc) implements Record {
        public int opcode() { return OP_DATA_END; }
    }

    /**
     * A record with an opcode this reader does not know (private opcodes 0x80-0xFF, or a newer
     * spec's). The spec says readers skip them; the streaming reader yields them only on request.
     */
    record Unknown(int opcode, ByteBuffer body) implements Record {}
}
